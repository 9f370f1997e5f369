"""The warnings and exceptions the plugin raises: public names users filter on (``-W``).

A leaf: imports only pytest.
"""

from __future__ import annotations

import pytest


class ProbabilityGateWarning(pytest.PytestWarning):
    """A gate or a benchmark's verdict that cannot pass with what its case or benchmark has: the parent
    of the plugin's collection-time warnings (``-W ignore::pytest_probability.ProbabilityGateWarning``)."""


class InfeasibleGateWarning(ProbabilityGateWarning):
    """A gate that cannot pass even if every run passes (too few runs for its bar at its confidence),
    or a benchmark's baseline verdict that cannot pass (fewer paired cases than ``prob_min_inputs``).
    Issued at collection, pointing at the benchmark."""


class CurtailmentWarning(pytest.PytestWarning):
    """Never issued: cases stop early under any xdist scheduling, so there is nothing to warn of. The
    class exists so that ``-W`` and ``filterwarnings`` entries naming it keep working."""


class ProbabilityUsageWarning(pytest.PytestWarning):
    """Usage recorded after its run had ended (from a thread or task that outlived the run)."""


class ProbabilityConcurrencyWarning(pytest.PytestWarning):
    """Runs asked to be in flight together (``--prob-concurrency``) that execute one at a time instead: a
    benchmark using a fixture that each run sets up in its own item (the warning names the benchmark and the
    fixture), or an xdist scheduling that cannot tell a worker which runs it will receive."""


class GateFailed(Exception):
    """Raised by a verdict item whose verdict fails its case."""


class ProbabilityQuarantineWarning(pytest.PytestWarning):
    """An entry of ``--prob-quarantine`` whose until-date has passed: its cases gate again (the warning names
    the entry and its owner)."""
