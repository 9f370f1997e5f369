"""pytest-probability: run nondeterministic tests many times and report pass fractions.

Public API: :func:`record_usage`, :func:`record_cost`, :func:`record_output` and :func:`record_io`.

The names are resolved on first use (PEP 562 ``__getattr__``): importing the
package, which pytest does for the plugin at every start-up, imports none of
the modules behind them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.4.0"

if TYPE_CHECKING:
    from .gating import ProbabilityGateWarning
    from .recording import ProbabilityUsageWarning, record_cost, record_io, record_output, record_usage

#: Public name -> the module defining it.
_PUBLIC = {
    "ProbabilityGateWarning": "gating",
    "ProbabilityUsageWarning": "recording",
    "record_cost": "recording",
    "record_io": "recording",
    "record_output": "recording",
    "record_usage": "recording",
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
