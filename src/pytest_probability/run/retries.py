"""``--prob-retry``: a run's call repeated on a provider fault, as one run and one sample.

The call is repeated with the same fixtures (``item.runtest()``, so
``pytest_pyfunc_call`` plugins such as async ones run again); the policy
(which exceptions, how long to wait) is ``config.retry.RetryPolicy``. Usage
the failed attempts recorded stays on the run (it was paid for); only the
last attempt's outcome and duration count (docs/developer-guide.md, "Why
retries repeat the call, not the whole run").
"""

from __future__ import annotations

import sys
import time
from typing import Any

import pytest

from ..collect.items import Run
from ..config.retry import RetryPolicy, describe
from ..model.run_state import CurrentRun
from . import context


def retry_call(item: pytest.Item, run: CurrentRun | None, policy: RetryPolicy | None, error: BaseException) -> None:
    """Call the run again while it raises a listed class; re-raise the last error. A concurrent run was
    retried where it executed (``run.window``): its error is its last attempt's."""
    if policy is None or run is None or run.concurrent or not policy.matches(error):
        raise error
    attempt = 1
    while attempt <= policy.retries:
        wait = policy.wait(error, attempt)
        error_type, text = describe(error)
        entry = {"attempt": attempt, "error_type": error_type, "error": text, "wait": wait}
        run.retries.append(entry)
        retry_event(entry)
        time.sleep(wait)
        attempt += 1
        started = time.perf_counter()
        try:
            item.runtest()
        except BaseException as exc:  # noqa: BLE001 - decided below, re-raised unless retried
            error = exc
        else:
            run.attempt_duration = time.perf_counter() - started
            return
        run.attempt_duration = time.perf_counter() - started
        if not policy.matches(error):
            break
    raise error


def retry_event(entry: dict[str, Any]) -> None:
    """A span event on the run's current span: the run span when export is on. With export off
    the API is loaded only if the user's code loaded it, and its current span is then theirs or a
    no-op one; nothing is imported for this."""
    trace = sys.modules.get("opentelemetry.trace")
    if trace is None:
        return
    try:
        trace.get_current_span().add_event(
            "probability.retry",
            {f"probability.retry.{k}": v for k, v in entry.items()},
        )
    except Exception:  # noqa: BLE001 - an event must never break a run
        pass


class RetryHooks:
    """``--prob-retry``: the call phase repeated on a provider fault; registered only when retries are on."""

    def __init__(self, policy: RetryPolicy) -> None:
        self.policy = policy

    # trylast: inside capture's and logging's wrappers, so a retried call is captured too.
    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Any:
        try:
            return (yield)
        except BaseException as exc:  # noqa: BLE001 - retry_call re-raises what it does not retry
            error = exc
        retry_call(item, context.current_run() if isinstance(item, Run) else None, self.policy, error)
        return None
