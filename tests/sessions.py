"""Pieces shared by the pytester sessions of the gate and interval tests."""

from __future__ import annotations

import re

ANSI = re.compile(r"\x1b\[[0-9;]*m")
SEPARATOR = re.compile(r"^=+( .* =+)?$")

#: A conftest for test sessions: fixture ``n`` is the run index; a module-level
#: ``DURATION(run)`` sets each run's measured call duration, so latency is exact.
CONFTEST = r"""
import pytest


@pytest.fixture
def n(request):
    return request.node.prob_run


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    duration = getattr(getattr(item, "module", None), "DURATION", None)
    if duration is not None and call.when == "call" and hasattr(item, "prob_run"):
        call.duration = duration(item.prob_run)
    return (yield)
"""
