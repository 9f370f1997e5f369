"""Value parsers shared by the command line, ini keys and markers, and the one way to read an option.

Each parser takes a value as given (text from the command line or an ini
file, or a Python value from a marker) and returns it validated, or raises
``ValueError`` with a message naming the value. :func:`pick` is how every
option with an ini key is read: the command line's value when given (an
empty one included), else the ini key's, with where it came from for the
message.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import Any, Literal, overload

import pytest

from ..text import well_formed


def pick(config: pytest.Config, name: str, ini: str | None = None) -> tuple[Any, str]:
    """The command line's value of option ``name`` (its dest), else ini key ``ini`` (default: the
    same name), with where it came from (``--prob-max-cost``, ``ini prob_max_cost``)."""
    value = config.getoption(name)
    if value is not None:
        return value, "--" + name.replace("_", "-")
    key = ini or name
    return config.getini(key), f"ini {key}"


def sourced(parse: Callable[[Any], Any], value: Any, source: str) -> Any:
    """``parse(value)``, its error prefixed with where the value came from."""
    try:
        return parse(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{source}: {exc}") from None


def argparse_type(parse: Callable[..., Any]) -> Callable[[str], Any]:
    """A parser as an argparse ``type=``: its ValueError becomes argparse's usage error."""

    def convert(text: str) -> Any:
        try:
            return parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    convert.__name__ = parse.__name__.replace("parse_", "")
    return convert


def _whole(value: Any, source: str, kind: str) -> int:
    """``value`` as an int: an int as is, text parsed; a bool or other text is ``{source} must be {kind}``."""
    if isinstance(value, bool):
        raise ValueError(f"{source} must be {kind}, got {value!r}")
    if isinstance(value, int):
        return value
    text = str(value).strip()
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{source} must be {kind}, got {text!r}") from None


def parse_runs(value: Any, *, source: str = "--prob-runs") -> int:
    """A positive whole number of runs."""
    number = _whole(value, source, "a positive whole number")
    if number < 1:
        raise ValueError(f"{source} must be at least 1, got {number}")
    return number


def parse_whole(value: Any, *, source: str, least: int | None = None) -> int:
    """A whole number (``least`` or more when given): ``--prob-bootstrap``, ``--prob-seed``,
    ``prob_min_inputs``; the errors say ``must be an integer`` and ``must be at least N``."""
    number = _whole(value, source, "an integer")
    if least is not None and number < least:
        raise ValueError(f"{source} must be at least {least}, got {value!r}")
    return number


#: Most shards of one session (``--prob-shard=K/N``, N at most this): one CI job each, and more jobs than
#: any CI runs at once. The merge refuses a report of more, rather than count what it lacks for hours.
MAX_SHARDS = 1000


def parse_shard(value: Any, *, source: str = "--prob-shard") -> tuple[int, int] | None:
    """``K/N``: this session is shard K of N (whole numbers, 1 <= K <= N <= :data:`MAX_SHARDS`); empty: not
    sharded."""
    text = str(value if value is not None else "").strip()
    if not text:
        return None
    index, slash, count = text.partition("/")
    if not slash or not index.strip().isdigit() or not count.strip().isdigit():
        raise ValueError(f"{source} must be K/N, this shard's number K of N shards, e.g. 2/5; got {text!r}")
    k, n = int(index), int(count)
    if n < 1 or not 1 <= k <= n:
        raise ValueError(f"{source} must be K/N with 1 <= K <= N, got {text!r}")
    if n > MAX_SHARDS:
        raise ValueError(f"{source} must be K/N with 1 <= K <= N <= {MAX_SHARDS}, got {text!r}")
    return k, n


#: Most runs one process keeps in flight at once (``--prob-concurrency``): a thread or a task each, and a
#: connection each to the provider. More than any provider's rate limit allows one client.
MAX_CONCURRENCY = 1000


def parse_concurrency(value: Any, *, source: str = "--prob-concurrency") -> int:
    """A whole number of runs in flight at once, 1 to :data:`MAX_CONCURRENCY`."""
    number = _whole(value, source, "a whole number")
    if number < 1:
        raise ValueError(f"{source} must be at least 1, got {number}")
    if number > MAX_CONCURRENCY:
        raise ValueError(f"{source} must be at most {MAX_CONCURRENCY} (runs in flight in one process), got {number}")
    return number


def parse_delay(value: Any, *, source: str = "--prob-delay") -> float:
    """A non-negative, finite number of seconds."""
    try:
        number = float(str(value).strip())
    except ValueError:
        raise ValueError(f"{source} must be a number of seconds, got {value!r}") from None
    if not math.isfinite(number) or number < 0:
        raise ValueError(f"{source} must be zero or more seconds, got {value!r}")
    return number


def parse_bool(value: Any, source: str = "") -> bool:
    """An ini flag: true/false, yes/no, on/off, 1/0 (empty is false)."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("", "0", "false", "no", "off"):
        return False
    raise ValueError(f"{source or 'value'} must be true or false, got {value!r}")


def parse_choice(value: Any, choices: tuple[str, ...], source: str) -> str:
    text = str(value).strip().lower()
    if text not in choices:
        raise ValueError(f"{source} must be one of {', '.join(choices)}, got {value!r}")
    return text


def percent_hint(number: float, percent_sign: bool = False) -> str:
    """The hint for a bar that reads as a percentage: ``" (did you mean 0.9?)"`` for ``90`` or ``90%``.

    A value reads as a percentage when it has a ``%`` sign and lies in (0, 100], or lies in [2, 100]
    without one. Values between 1 and 2 (``1.5``) get no hint: 1.5 % is no plausible bar, and such a
    value is more often a slip than a percentage (the reference's rule, docs/reference.md).
    """
    try:
        if not math.isfinite(number):
            return ""
    except OverflowError:  # an integer past a float (a marker's min_rate=10**400)
        return ""
    if (percent_sign and 0 < number <= 100) or 2 <= number <= 100:
        return f" (did you mean {number / 100:g}?)"
    return ""


def parse_rate(value: Any) -> float:
    """A pass-rate bar in (0, 1]; a value that reads as a percentage gets a hint (:func:`percent_hint`)."""
    text = str(value).strip()
    percent_sign = text.endswith("%")
    try:
        number = float(text[:-1] if percent_sign else text)
    except ValueError:
        raise ValueError(f"the bar must be a rate in (0, 1], got {value!r}") from None
    if percent_sign or not 0 < number <= 1:
        raise ValueError(f"the bar must be a rate in (0, 1], got {value!r}{percent_hint(number, percent_sign)}")
    return number


def parse_fraction(value: Any) -> float:
    """A number strictly between 0 and 1 (a quantile, a power)."""
    try:
        number = float(str(value).strip())
    except ValueError:
        raise ValueError(f"must be between 0 and 1 (e.g. 0.95), got {value!r}") from None
    if not 0 < number < 1:
        raise ValueError(f"must be between 0 and 1 (e.g. 0.95), got {value!r}")
    return number


def parse_margin(value: Any) -> float:
    """The drop a comparison tolerates: a fraction in [0, 1)."""
    try:
        number = float(str(value).strip())
    except ValueError:
        raise ValueError(f"the margin must be a fraction in [0, 1), e.g. 0.05, got {value!r}") from None
    if not 0 <= number < 1 or math.isnan(number):
        hint = f" (did you mean {number / 100:g}?)" if 1 <= number < 100 else ""
        raise ValueError(f"the margin must be a fraction in [0, 1), e.g. 0.05, got {value!r}{hint}")
    return number


@overload
def parse_limit(value: Any, *, source: str, whole: Literal[False] = False) -> float | None: ...


@overload
def parse_limit(value: Any, *, source: str, whole: Literal[True]) -> int | None: ...


def parse_limit(value: Any, *, source: str, whole: bool = False) -> float | int | None:
    """A budget limit of zero or more (``None`` for empty)."""
    if value is None:
        return None
    text = str(value).strip()
    if text == "":
        return None
    try:
        number: float | int = int(text) if whole else float(text)
    except ValueError:
        kind = "a whole number" if whole else "a number"
        raise ValueError(f"{source} must be {kind} of zero or more, got {text!r}") from None
    if (isinstance(number, float) and not math.isfinite(number)) or number < 0:
        raise ValueError(f"{source} must be zero or more, got {text!r}")
    return number


def check_trace_url(template: str, *, source: str = "ini prob_trace_url") -> str:
    """``prob_trace_url`` (``source``: ``--trace-url`` for the ``report`` and ``merge`` commands): an http(s)
    URL template naming ``{trace_id}``."""
    text = template.strip()
    if "{trace_id}" not in text or not text.startswith(("http://", "https://")):
        raise ValueError(f"{source} must be an http(s) URL containing {{trace_id}}, got {template!r}")
    return text


def too_many_runs(total: int, limit: int, what: str) -> str:
    """The error for a session that would collect more than ``prob_max_runs`` runs."""
    return (
        f"{what} (cases × runs), more than the limit of {limit:,} runs per session; "
        "lower the runs, select fewer cases, or raise the ini key prob_max_runs"
    )


#: A score's name: what ``record_score(name=...)``, ``min_score={...}`` and ``--prob-min-score NAME=V`` call it.
SCORE_NAME_LIMIT = 100


#: The plugin's own names: a score named ``probability.…`` (in any case) is refused. Its evaluation record of a
#: run's outcome is named ``probability.outcome`` (``run.attributes.OUTCOME_EVALUATION``), beside one record per
#: score named as the score: a score of that name could not be told apart from it.
RESERVED_SCORE_PREFIX = "probability."


def check_score_name(name: Any, source: str = "the score's name") -> str:
    """A score's name: non-empty text of at most :data:`SCORE_NAME_LIMIT` characters, no control character, not
    in the plugin's own namespace (:data:`RESERVED_SCORE_PREFIX`); well-formed
    (:func:`~pytest_probability.text.well_formed`: a lone surrogate becomes U+FFFD)."""
    if not isinstance(name, str):
        raise TypeError(f"{source} must be text, got {name!r}")
    text = well_formed(name.strip())
    if not text or len(text) > SCORE_NAME_LIMIT or any(ord(c) < 32 or ord(c) == 127 for c in text):
        raise ValueError(f"{source} must be 1 to {SCORE_NAME_LIMIT} printable characters, got {name!r}")
    if text.lower().startswith(RESERVED_SCORE_PREFIX):
        raise ValueError(
            f"{source} must not start with {RESERVED_SCORE_PREFIX!r}, the plugin's own names (its evaluation record "
            f"of a graded run's outcome is 'probability.outcome'), got {name!r}"
        )
    return text


#: The largest magnitude of a score range's ends (so of every score, threshold and bar): 10**15, where a
#: float still holds every whole number, and far below where any sum the statistics make of a session's
#: scores (their squares included, over any number of runs) could overflow a float.
SCORE_LIMIT = 1e15


def score_number(value: Any, what: str) -> float:
    """A finite real number, for a score, a threshold or a bar: any ``numbers.Real`` (``int``, ``float``,
    ``fractions.Fraction``, NumPy's scalars such as ``float32`` and ``int64``) or ``decimal.Decimal``, but not a
    bool (nor NumPy's) and not text."""
    if isinstance(value, bool) or not _real(value):  # NumPy's bool_ is no numbers.Real
        raise TypeError(f"{what} must be a number, got {value!r}")
    try:
        number = float(value)
    except (OverflowError, ArithmeticError, ValueError):  # past a float (an int, a Fraction), or a Decimal NaN
        raise ValueError(f"{what} must be a finite number, got {_shown_number(value)}") from None
    if not math.isfinite(number):
        raise ValueError(f"{what} must be a finite number, got {_shown_number(value)}")
    return number


def _real(value: Any) -> bool:
    import decimal
    import numbers

    return isinstance(value, (numbers.Real, decimal.Decimal))


def _shown_number(value: Any) -> str:
    """A number as a message shows it: a whole number too long to read by its digits."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**30:
        return f"an integer of {len(str(abs(value)))} digits"
    text = repr(value)
    return text if len(text) <= 60 else text[:59] + "…"


def parse_min_scores(values: Any, source: str = "--prob-min-score") -> tuple[tuple[str, float], ...]:
    """Score bars from the command line (``NAME=V``, repeatable) or ini ``prob_min_score`` (``NAME=V`` items
    separated by commas or lines); a bare ``V`` is the bar of the score named ``score``. The first bar of a name
    wins. Sorted by name."""
    items = values if isinstance(values, (list, tuple)) else [values]
    bars: dict[str, float] = {}
    for item in items:
        for part in (p.strip() for p in str(item).replace("\n", ",").split(",")):
            if not part:
                continue
            name, _, text = part.rpartition("=")
            name = check_score_name(name or "score", f"{source}: the score's name in {part!r}")
            try:
                bar = score_number(float(text), f"{source}: the bar of {name!r}")
            except ValueError as exc:
                raise ValueError(f"{source}: {part!r} must be NAME=BAR with a number as BAR ({exc})") from None
            bars.setdefault(name, bar)
    return tuple(sorted(bars.items()))


def parse_score_range(value: Any) -> tuple[float, float]:
    """A score range: ``"LOW,HIGH"`` text or a pair of numbers, finite, with LOW < HIGH."""
    if isinstance(value, str):
        parts = [part.strip() for part in value.split(",")]
        try:
            if len(parts) != 2:
                raise ValueError
            low, high = float(parts[0]), float(parts[1])
        except ValueError:
            raise ValueError(f"a score range is two numbers separated by a comma, such as 0,1; got {value!r}") from None
    elif isinstance(value, (tuple, list)) and len(value) == 2:
        low, high = (score_number(v, "the score range's ends") for v in value)
    else:
        raise TypeError(f"a score range is 'low,high' text or a pair of numbers, got {value!r}")
    if not (math.isfinite(low) and math.isfinite(high)) or not low < high:
        raise ValueError(f"the score range needs finite low < high, got {low:g}, {high:g}")
    if max(-low, high) > SCORE_LIMIT:
        raise ValueError(f"the score range's ends must be within ±{SCORE_LIMIT:,.0f} (10**15), got {low:g}, {high:g}")
    return low, high
