"""Provider faults: which exceptions mean "retry this run", and how long to wait.

Pure and pytest-free. ``--prob-retry=N`` with ``--prob-retry-on=CLASSES``
retries a run's call phase up to N times when it raises one of CLASSES
(matched on the exception's MRO, by bare class name or by dotted path).
The wait honours the exception's Retry-After (an attribute ``retry_after``
in seconds, or a ``Retry-After`` header on an HTTP response attached as
``exc.response``, as httpx, requests and openai exceptions do); otherwise it
is exponential backoff with "full jitter" (Brooker, *Exponential Backoff And
Jitter*, AWS Architecture Blog, 2015): uniform in ``[0, min(cap, base *
2**(attempt-1))]``. Every wait is capped at ``max_wait``. Assertion failures
are never retried: they are the benchmark's verdict, not a provider fault.
"""

from __future__ import annotations

import datetime as _dt
import email.utils
import importlib
import math
import random
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..groups import leaf
from ..text import well_formed

#: Never retried, whatever the list says: a wrong answer, or pytest's own outcomes.
NEVER = (AssertionError, KeyboardInterrupt, SystemExit, GeneratorExit)


def split_names(value: Any) -> list[str]:
    """``"RateLimitError, httpx.HTTPStatusError"`` -> the two names."""
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        value = " ".join(str(v) for v in value)
    return [name for name in re.split(r"[\s,]+", str(value)) if name]


def import_class(path: str) -> type:
    """The class a dotted path names (``package.module.Class`` or ``module.Outer.Inner``)."""
    parts = path.split(".")
    if not all(part.isidentifier() for part in parts):
        raise ValueError(f"{path!r} is not a dotted path of a class")
    error: Exception | None = None
    for split in range(len(parts) - 1, 0, -1):
        module_name = ".".join(parts[:split])
        try:
            obj: Any = importlib.import_module(module_name)
        except ImportError as exc:
            error = error or exc
            continue
        try:
            for attribute in parts[split:]:
                obj = getattr(obj, attribute)
        except AttributeError:
            raise ValueError(f"cannot import {path!r}: {module_name} has no {'.'.join(parts[split:])}") from None
        if not (isinstance(obj, type) and issubclass(obj, BaseException)):
            raise ValueError(f"{path!r} is not an exception class")
        return obj
    raise ValueError(f"cannot import {path!r}: {error}") from None


def _seconds(value: Any) -> float | None:
    """Seconds from a Retry-After value: a number, or an HTTP date (RFC 9110 §10.2.3)."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        number = float(value)
    else:
        text = str(value).strip()
        try:
            number = float(text)
        except ValueError:
            try:
                when = email.utils.parsedate_to_datetime(text)
            except (TypeError, ValueError, IndexError):
                return None
            if when.tzinfo is None:
                when = when.replace(tzinfo=_dt.timezone.utc)
            number = (when - _dt.datetime.now(_dt.timezone.utc)).total_seconds()
    if not math.isfinite(number):
        return None
    return max(number, 0.0)


def retry_after(exc: BaseException) -> float | None:
    """The wait the exception asks for, in seconds, or None."""
    seconds = _seconds(getattr(exc, "retry_after", None))
    if seconds is not None:
        return seconds
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    try:
        value = headers.get("Retry-After")
        if value is None and isinstance(headers, dict):
            value = next((v for k, v in headers.items() if str(k).lower() == "retry-after"), None)
    except Exception:  # an odd headers object: no Retry-After
        return None
    return _seconds(value)


@dataclass(frozen=True)
class RetryPolicy:
    retries: int
    names: tuple[str, ...]  # as given
    bare: frozenset[str]  # bare class names
    classes: tuple[type, ...]  # imported dotted paths
    backoff: float = 1.0
    max_wait: float = 60.0
    rng: random.Random = field(default_factory=random.Random, compare=False, repr=False)

    @classmethod
    def build(cls, retries: int, names: Iterable[str], *, backoff: float = 1.0, max_wait: float = 60.0) -> RetryPolicy:
        """Import every dotted path now: a bad one is a usage error before any run."""
        names = tuple(names)
        bare = frozenset(n for n in names if "." not in n)
        for name in bare:
            if not name.isidentifier():
                raise ValueError(f"{name!r} is not a class name")
        classes = tuple(import_class(n) for n in names if "." in n)
        return cls(retries, names, bare, classes, backoff, max_wait)

    def matches(self, exc: BaseException) -> bool:
        """Whether ``exc`` means "retry": listed (MRO) and not an assertion or pytest outcome; in a group
        of one (pytest-trio's), its one exception is matched."""
        exc = leaf(exc)
        if isinstance(exc, NEVER) or _is_pytest_outcome(exc):
            return False
        if self.classes and isinstance(exc, self.classes):
            return True
        return any(klass.__name__ in self.bare for klass in type(exc).__mro__)

    def wait(self, exc: BaseException, attempt: int) -> float:
        """Seconds to wait after failed ``attempt`` (1-based)."""
        asked = retry_after(exc)
        if asked is None:
            asked = self.rng.uniform(0.0, min(self.max_wait, self.backoff * 2.0 ** (attempt - 1)))
        return min(asked, self.max_wait)

    def to_dict(self) -> dict[str, Any]:
        return {"retries": self.retries, "on": list(self.names), "backoff": self.backoff, "max_wait": self.max_wait}


def _is_pytest_outcome(exc: BaseException) -> bool:
    # pytest.fail / skip / xfail / exit derive from _pytest.outcomes.OutcomeException (a BaseException).
    return any(
        klass.__name__ == "OutcomeException" and klass.__module__.startswith("_pytest") for klass in type(exc).__mro__
    )


def describe(exc: BaseException) -> tuple[str, str]:
    """(qualified type, first line of the message) of a failed attempt (of the one exception of a group of one)."""
    exc = leaf(exc)
    klass = type(exc)
    module = klass.__module__
    name = klass.__qualname__ if module in ("builtins", "__main__") else f"{module}.{klass.__qualname__}"
    text = well_formed(str(exc)).strip().splitlines()
    return well_formed(name), (text[0][:500] if text else klass.__name__)
