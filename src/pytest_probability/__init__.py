"""pytest-probability: run nondeterministic tests many times and report pass fractions.

Public API: :func:`record_usage`, :func:`record_cost`, :func:`record_output`, :func:`record_io`, :func:`record_score`,
:func:`judging` and :class:`TokenUsage`; the warnings :class:`ProbabilityGateWarning` (and its subclass
:class:`InfeasibleGateWarning`), :class:`ProbabilityUsageWarning` and :class:`CurtailmentWarning`.

The names are resolved on first use (PEP 562 ``__getattr__``): importing the
package, which pytest does for the plugin at every start-up, imports none of
the modules behind them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.4.0"

if TYPE_CHECKING:
    from .errors import CurtailmentWarning, InfeasibleGateWarning, ProbabilityGateWarning, ProbabilityUsageWarning
    from .run.recording import TokenUsage, judging, record_cost, record_io, record_output, record_score, record_usage

#: Public name -> the module defining it.
_PUBLIC = {
    "CurtailmentWarning": "errors",
    "InfeasibleGateWarning": "errors",
    "ProbabilityGateWarning": "errors",
    "ProbabilityUsageWarning": "errors",
    "judging": "run.recording",
    "record_cost": "run.recording",
    "record_io": "run.recording",
    "record_output": "run.recording",
    "record_score": "run.recording",
    "record_usage": "run.recording",
    "TokenUsage": "run.recording",
}

__all__ = ["__version__", *sorted(_PUBLIC)]


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_PUBLIC})
