"""pytest-probability: run nondeterministic tests many times and report pass fractions.

Public API: :func:`record_usage`, :func:`record_cost`, :func:`record_output` and :func:`record_io`.
"""

from __future__ import annotations

__version__ = "0.4.0"

from .gating import ProbabilityGateWarning  # noqa: E402
from .recording import ProbabilityUsageWarning, record_cost, record_io, record_output, record_usage  # noqa: E402

__all__ = [
    "ProbabilityGateWarning", "ProbabilityUsageWarning", "__version__", "record_cost", "record_io", "record_output", "record_usage",
]
