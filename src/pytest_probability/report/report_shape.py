"""What a JSON report must be for the history page to show it (:func:`problem`).

Every field the page reads, its newest session's sections included, must have the
type the JSON report writes it with (:data:`SHAPE`), so rendering never meets another.
Pure: read by :mod:`.history` when it loads a report.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..text import clip


@dataclass(frozen=True)
class _Kind:
    """A leaf type of the report: its name in a message, and its test."""

    name: str
    test: Callable[[Any], bool]


def _finite(value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an integer beyond a float's range: every chart and percentage would raise
        return False


_NUMBER = _Kind("a number", _finite)
#: A count: an integer a float holds exactly (a report's counts are runs and characters, never near 2**53).
_WHOLE = _Kind(
    "a whole number", lambda value: isinstance(value, int) and not isinstance(value, bool) and abs(value) < 2**53
)
_TEXT = _Kind("a string", lambda value: isinstance(value, str))


@dataclass(frozen=True)
class _Values:
    """An object whose every value is ``kind``: a leaf (a transcript entry's ``truncated``) or a shape
    (a row's ``scores``, by score name)."""

    kind: Any


#: What the history page and the newest session's sections (:func:`.html_report.sections`)
#: read of a report as more than text, by the type the JSON report writes it with: an
#: object (a dict: the keys listed are checked), an array of one shape (a list of one), or
#: a leaf. Each may be absent or null (the page shows "–" or nothing); every field not
#: listed is only shown as text, escaped. tests/e2e/test_history_report.py checks that
#: the page reads nothing else, and fuzzes every field.
_CI = {"low": _NUMBER, "high": _NUMBER}
_COMPARISON = {
    "ci": _CI,
    "difference": _NUMBER,
    "margin": _NUMBER,
    "p_adjusted": _NUMBER,
    "cost_ratio": _NUMBER,
    "verdict": _TEXT,
    "inputs": [{}],
}
_SCORES = _Values({"mean": _NUMBER, "ci": _CI, "min_score": _NUMBER})
SHAPE = {
    "rows": [
        {
            "pass_fraction": _NUMBER,
            "pass_rate": _NUMBER,
            "ci": _CI,
            "status": _TEXT,
            "cost": _NUMBER,
            "passes": _WHOLE,
            "total": _WHOLE,
            "gate": {"min_rate": _NUMBER, "verdict": _TEXT},
            "stopped": {},
            "scores": _SCORES,
            "count": _WHOLE,
            "history": {"state": _TEXT, "since": _TEXT, "first_flaky": _TEXT},
        }
    ],
    "totals": {"passes": _WHOLE, "count": _WHOLE, "pass_fraction": _NUMBER, "cost": _NUMBER, "statuses": {}},
    "records": [{"transcript": [{"truncated": _Values(_WHOLE)}], "scores": [{"value": _NUMBER, "threshold": _NUMBER}]}],
    "comparisons": [_COMPARISON],
    "baseline": {"comparisons": [_COMPARISON]},
    "stopping": {},
    "budget": {"runs_after_reached": _WHOLE, "spent_after_reached": _NUMBER},
    "states": {"rule": {}},
    "concurrency": {
        **dict.fromkeys(("limit", "processes", "runs", "peak_in_flight", "faults", "window_cuts"), _WHOLE),
        **dict.fromkeys(("finished_unreported", "cancelled"), _WHOLE),
        **dict.fromkeys(("call_seconds", "wall_seconds", "in_flight_seconds", "busy_seconds"), _NUMBER),
        "one_at_a_time": [_TEXT],
    },
}


def problem(report: Mapping[str, Any]) -> str | None:
    """What makes ``report`` no report the page can show (the first field that is wrong), or None."""
    if not isinstance(report.get("rows"), list):
        return f"rows must be an array, got {_shown(report.get('rows'))}"
    why = _mismatch(report, SHAPE, "")
    if why is not None:
        return why
    for index, row in enumerate(report["rows"]):
        if not isinstance(row.get("label"), str) and not isinstance(row.get("case"), str):
            return f"rows[{index}] has no label (nor case, as 0.3.0 named it)"
    return None


def _mismatch(value: Any, shape: Any, path: str) -> str | None:
    if isinstance(shape, dict):
        if not isinstance(value, dict):
            return f"{path} must be an object, got {_shown(value)}"
        for key, inner in shape.items():
            if value.get(key) is not None:
                why = _mismatch(value[key], inner, f"{path}.{key}" if path else key)
                if why is not None:
                    return why
        return None
    if isinstance(shape, list):
        if not isinstance(value, list):
            return f"{path} must be an array, got {_shown(value)}"
        for index, item in enumerate(value):
            why = _mismatch(item, shape[0], f"{path}[{index}]")
            if why is not None:
                return why
        return None
    if isinstance(shape, _Values):
        if not isinstance(value, dict):
            return f"{path} must be an object, got {_shown(value)}"
        if not isinstance(shape.kind, _Kind):
            return next(
                (
                    why
                    for key, inner in value.items()
                    if (why := _mismatch(inner, shape.kind, f"{path}.{key}")) is not None
                ),
                None,
            )
        return next(
            (
                f"{path}.{key} must be {shape.kind.name}, got {_shown(inner)}"
                for key, inner in value.items()
                if not shape.kind.test(inner)
            ),
            None,
        )
    return None if shape.test(value) else f"{path} must be {shape.name}, got {_shown(value)}"


def _shown(value: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 1024:
        return f"an integer of {len(str(abs(value)))} digits"
    return clip(repr(value), 60)
