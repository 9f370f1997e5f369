"""pytest-probability: run nondeterministic tests many times and report pass fractions.

Public API: :func:`record_usage`, :func:`record_cost`, :func:`record_output`, :func:`record_io`, :func:`record_score`,
:func:`judging`, :func:`current_run` (with :class:`RunInfo`) and :class:`TokenUsage`; the warnings :class:`ProbabilityGateWarning` (and its subclass
:class:`InfeasibleGateWarning`), :class:`ProbabilityUsageWarning`, :class:`ProbabilityConcurrencyWarning` and
:class:`CurtailmentWarning`.

The names are resolved on first use (PEP 562 ``__getattr__``): importing the
package, which pytest does for the plugin at every start-up, imports none of
the modules behind them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.4.0"

if TYPE_CHECKING:
    from .errors import CurtailmentWarning as CurtailmentWarning
    from .errors import InfeasibleGateWarning as InfeasibleGateWarning
    from .errors import ProbabilityConcurrencyWarning as ProbabilityConcurrencyWarning
    from .errors import ProbabilityGateWarning as ProbabilityGateWarning
    from .errors import ProbabilityUsageWarning as ProbabilityUsageWarning
    from .run.recording import RunInfo as RunInfo
    from .run.recording import TokenUsage as TokenUsage
    from .run.recording import current_run as current_run
    from .run.recording import judging as judging
    from .run.recording import record_cost as record_cost
    from .run.recording import record_io as record_io
    from .run.recording import record_output as record_output
    from .run.recording import record_score as record_score
    from .run.recording import record_usage as record_usage

#: Public name -> the module defining it.
_PUBLIC = {
    "CurtailmentWarning": "errors",
    "InfeasibleGateWarning": "errors",
    "ProbabilityConcurrencyWarning": "errors",
    "ProbabilityGateWarning": "errors",
    "ProbabilityUsageWarning": "errors",
    "judging": "run.recording",
    "current_run": "run.recording",
    "RunInfo": "run.recording",
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
