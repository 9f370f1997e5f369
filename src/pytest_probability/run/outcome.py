"""A run's outcome: each phase classified, the first that does not pass decides.

A run passes (clean return), fails (``AssertionError`` or ``pytest.fail()`` in
the call) or errors (anything else, or any phase but the call that raised);
``pytest.skip()`` and ``pytest.xfail()`` stop it before it could pass or fail
(no sample). An exception group holding one exception (pytest-trio's) is
classified by that exception (:func:`~pytest_probability.groups.leaf`). A
judged case's failing run is reported as xfailed: its verdict item decides
(:func:`xfail`).
"""

from __future__ import annotations

from typing import Protocol

import pytest

from ..groups import leaf
from ..model.run_state import CurrentRun
from ..text import clip, printable, well_formed
from ..vocabulary import ERROR, FAIL, PASS, SKIP

#: Characters kept of an error's text (``error_text``); longer ones are cut.
TEXT_LIMIT = 4096


def first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


def classify(excinfo: pytest.ExceptionInfo[BaseException] | None, phase: str) -> str:
    """pass on clean return, fail on AssertionError/pytest.fail(), skip on pytest.skip(), else error.

    ``pytest.xfail()`` and ``xfail(run=False)`` stop the run before it could
    pass or fail (pytest reports them as xfailed, i.e. skipped): no sample.
    ``XFailed`` subclasses ``Failed``, so it is checked first.
    """
    if excinfo is None:
        return PASS
    error = leaf(excinfo.value)  # a group of one (pytest-trio's): its exception decides
    if isinstance(error, (pytest.skip.Exception, pytest.xfail.Exception)):
        return SKIP
    if phase == "call" and isinstance(error, (AssertionError, pytest.fail.Exception)):
        return FAIL
    return ERROR


class Phase(Protocol):
    """A phase as :func:`on_phase` reads it: pytest's ``CallInfo``, or the call of a concurrent run whose
    item never reported (``window._Call``)."""

    @property
    def when(self) -> str: ...

    @property
    def duration(self) -> float: ...

    @property
    def excinfo(self) -> pytest.ExceptionInfo[BaseException] | None: ...


def on_phase(run: CurrentRun, call: Phase) -> None:
    """Fold one phase into the run: the first phase that does not pass decides."""
    phase = call.when
    if phase == "call":
        run.duration = call.duration if run.attempt_duration is None else run.attempt_duration
    outcome = classify(call.excinfo, phase)
    if run.outcome not in (None, PASS) or (outcome == PASS and run.outcome is not None):
        return
    if outcome == PASS:
        if phase == "call":
            run.outcome = PASS
        return
    run.outcome = outcome
    run.phase = phase
    assert call.excinfo is not None
    exc = leaf(call.excinfo.value)
    text = well_formed(str(exc))  # a model's answer in an assert's message: any text
    if outcome == SKIP:
        reason = getattr(exc, "msg", None)
        run.message = first_line(well_formed(reason) if isinstance(reason, str) and reason else text)
        if isinstance(exc, pytest.xfail.Exception):
            run.message = f"xfail: {run.message}".strip()
        return
    run.error_type = well_formed(type(exc).__qualname__ if outcome == FAIL else _qualified(exc))
    run.error_text = clip(text, TEXT_LIMIT)
    run.message = first_line(text) or type(exc).__name__
    if phase != "call":
        run.message = f"{phase}: {run.message}"


def _qualified(exc: BaseException) -> str:
    cls = type(exc)
    module = cls.__module__
    return cls.__qualname__ if module in ("builtins", "__main__") else f"{module}.{cls.__qualname__}"


def xfail(report: pytest.TestReport, reason: str) -> None:
    """Report a judged case's failed report as xfailed, with ``reason``
    (:func:`~pytest_probability.vocabulary.xfail_reason`): its verdict item decides."""
    report.outcome = "skipped"
    report.wasxfail = printable(reason)  # pytest prints it as is


def error_summary(run: CurrentRun) -> str:
    """``Type: first line`` of an errored run: what the xfail reason of an error left out of its gate
    (ini ``prob_errors = exclude``) says."""
    text = first_line(run.error_text or "")
    return f"{run.error_type}: {text}" if text else str(run.error_type or "error")
