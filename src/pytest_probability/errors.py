"""The warnings and exceptions the plugin raises: public names users filter on (``-W``).

A leaf: imports only pytest.
"""

from __future__ import annotations

import pytest


class ProbabilityGateWarning(pytest.PytestWarning):
    """A gate (or baseline comparison) that cannot pass, or cannot detect its margin, with the runs its case has."""


class ProbabilityUsageWarning(pytest.PytestWarning):
    """Usage recorded after its run had ended (from a thread or task that outlived the run)."""


class GateFailed(Exception):
    """Raised by a verdict item whose verdict fails its case."""
