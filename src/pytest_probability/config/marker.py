"""The ``probability`` marker: its keywords, their parsers, and which mark wins.

``@pytest.mark.probability(...)`` may sit on a benchmark, a class, a module
(``pytestmark``) or a single ``pytest.param``; the closest mark giving a
keyword wins (:func:`marker_kwargs`). Every keyword is parsed here, so a bad
value is a collection error that names it, and an unknown keyword too.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ..maths import stats, stopping
from .values import check_score_name, parse_concurrency, parse_runs, parse_score_range, percent_hint, score_number

if TYPE_CHECKING:
    from .settings import Settings

MARKER_LINE = (
    "probability(runs=N, concurrency=K, min_rate=R, min_passes=K, confidence=C, method=M, prior=(a, b), "
    "latency_quantile=Q, max_latency=S, stop=MODE, margin=M, equivalence=B, compare=ARG, baseline=VALUE, "
    "min_score=BAR, score_range=(LOW, HIGH)): "
    "runs, gates and comparisons of this benchmark or pytest.param; "
    "see pytest-probability's reference"
)


class MarkerError(ValueError):
    """A ``@pytest.mark.probability(...)`` with bad arguments."""


def _rate(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"probability(min_rate=...) must be a number in (0, 1], got {value!r}")
    if not 0 < value <= 1:
        raise ValueError(f"probability(min_rate=...) must be in (0, 1], got {value!r}{percent_hint(value)}")
    return float(value)


def _passes(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"probability(min_passes=...) must be a whole number of at least 1, got {value!r}")
    return value


def _seconds(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"probability(max_latency=...) must be a positive number of seconds, got {value!r}")
    return float(value)


def _quantile(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
        raise ValueError(f"probability(latency_quantile=...) must be between 0 and 1 (e.g. 0.95), got {value!r}")
    return float(value)


def _margin(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1:
        raise ValueError(f"probability(margin=...) must be a fraction in [0, 1), e.g. 0.05, got {value!r}")
    return float(value)


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"probability(equivalence=...) must be True or False, got {value!r}")
    return value


def _axis(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"probability(compare=...) must name a parametrize argument, got {value!r}")
    return value.strip()


def _variant(value: Any) -> str:
    if not isinstance(value, (str, int, float)) or isinstance(value, bool):
        raise ValueError(f"probability(baseline=...) must be the baseline variant's value, got {value!r}")
    return str(value)


def _score_range(value: Any) -> tuple[float, float]:
    return parse_score_range(value)


def _min_score(value: Any) -> float | tuple[tuple[str, float], ...]:
    """One bar (the score named ``score``), or bars by score name: ``{"faithfulness": 0.75}``, or those bars as
    the parsed mark holds them and a report's ``cases[].marks`` writes them, ``[[name, bar], ...]``."""
    if isinstance(value, (list, tuple)) and all(isinstance(p, (list, tuple)) and len(p) == 2 for p in value):
        value = dict(value)
    if isinstance(value, dict):
        if not value:
            raise ValueError("probability(min_score={...}) names no score")
        bars = {
            check_score_name(name, "probability(min_score=...)'s score name"): score_number(
                bar, f"probability(min_score=...)'s bar of {name!r}"
            )
            for name, bar in value.items()
        }
        return tuple(sorted(bars.items()))
    return score_number(value, "probability(min_score=...)")


def _named(parse: Callable[[Any], Any], keyword: str) -> Callable[[Any], Any]:
    def wrapped(value: Any) -> Any:
        try:
            return parse(value)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"probability({keyword}=...): {exc}") from None

    return wrapped


#: Marker keyword -> its parser. Runs; the gates, latency and stopping (see docs/user-guide.md,
#: "Gates"); the comparisons (baselines and A/B).
KEYWORDS: dict[str, Callable[[Any], Any]] = {
    "runs": lambda value: parse_runs(value, source="probability(runs=...)"),
    "concurrency": lambda value: parse_concurrency(value, source="probability(concurrency=...)"),
    "min_rate": _rate,
    "min_passes": _passes,
    "confidence": _named(stats.parse_confidence, "confidence"),
    "method": _named(stats.parse_method, "method"),
    "prior": _named(stats.parse_prior, "prior"),
    "latency_quantile": _quantile,
    "max_latency": _seconds,
    "stop": _named(stopping.parse_mode, "stop"),
    "margin": _margin,
    "equivalence": _flag,
    "compare": _axis,
    "baseline": _variant,
    "min_score": _min_score,
    "score_range": _named(_score_range, "score_range"),
}

#: Keywords that are one choice: the closest mark giving any of them decides, and a farther
#: mark's alternative is overridden (min_passes on the function, min_rate on a pytest.param).
EXCLUSIVE_KEYWORDS: tuple[frozenset[str], ...] = (frozenset({"min_rate", "min_passes"}),)


def marker_kwargs(marks: Iterable[Any]) -> dict[str, Any]:
    """Merge ``probability`` marks, closest first (the first mark setting a keyword wins).

    For keywords of one :data:`EXCLUSIVE_KEYWORDS` group the first mark setting
    any of them wins; one mark setting two of them keeps both, so that
    ``spec.case_spec`` reports the contradiction.
    """
    merged: dict[str, Any] = {}
    for mark in marks:
        if mark.name != "probability":
            continue
        if mark.args:
            raise MarkerError(f"@pytest.mark.probability takes keyword arguments only, got positional {mark.args!r}")
        taken = set(merged)
        for key, value in mark.kwargs.items():
            parse = KEYWORDS.get(key)
            if parse is None:
                known = ", ".join(sorted(KEYWORDS))
                raise MarkerError(f"@pytest.mark.probability got an unknown keyword {key!r} (known: {known})")
            if key in taken or any(key in group and group & taken for group in EXCLUSIVE_KEYWORDS):
                continue
            try:
                merged[key] = parse(value)
            except (TypeError, ValueError) as exc:
                raise MarkerError(str(exc)) from None
    return merged


def concurrency_of(settings: Settings, marks: Iterable[tuple[str, Any]]) -> int:
    """A case's runs in flight at once (its parsed marks, ``CaseRef.marks``): as for runs, the command line
    wins over the marker, the marker over the ini key."""
    if settings.cli_concurrency is not None:
        return settings.cli_concurrency
    for key, value in marks:
        if key == "concurrency":
            return int(value)
    return settings.ini_concurrency


def runs_for_case(settings: Settings, kwargs: Mapping[str, Any]) -> int:
    """The command line wins over the marker, the marker over the ini key."""
    if settings.cli_runs is not None:
        return settings.cli_runs
    return kwargs.get("runs", settings.ini_runs)
