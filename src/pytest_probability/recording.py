"""Recording: the current run, its usage, its outcome, its record.

While a run executes (setup, call and teardown) it is this process's
*current run*; ``record_usage()`` and ``record_cost()`` attribute to it.
Each phase's outcome is classified here, and at teardown the finished
:class:`~pytest_probability.model.RunRecord` is attached to the teardown
report as plain builtins (``report.prob_record``), which is how it reaches
the aggregating process, serial or under xdist.
"""

from __future__ import annotations

import contextvars
import decimal
import json
import math
import numbers
import re
import threading
import time
import warnings
import weakref
from typing import Any, Mapping

import pytest

from .model.case import CaseRef
from .text import clip
from .model.run import CurrentRun, RunRecord, Usage
from .vocabulary import ERROR, FAIL, PASS, SKIP, UNKNOWN_MODEL

#: Attribute of the teardown report that carries the run's record.
REPORT_ATTRIBUTE = "prob_record"
#: Attribute of a teardown report carrying usage recorded after its run had ended.
LATE_ATTRIBUTE = "prob_late_usage"
TEXT_LIMIT = 4096
#: Characters kept of each transcript value (``record_output``/``record_io``); longer ones are cut.
TRANSCRIPT_LIMIT = 16384
#: Largest cost one ``record_usage()`` or ``record_cost()`` call may record (in your currency).
#: With it, no sum of a session's costs can overflow a float (that would take 10**296 calls),
#: so the table and the JSON report only ever hold finite numbers.
MAX_COST = 1e12
#: Largest token count of one call, per field; sums stay exact and within 64-bit integers.
MAX_TOKENS = 10**12


class ProbabilityUsageWarning(pytest.PytestWarning):
    """Usage recorded after its run had ended (from a thread or task that outlived the run)."""

_USAGE_FIELDS = ("input_tokens", "output_tokens", "cached_input_tokens")


_lock = threading.Lock()
_current: CurrentRun | None = None
#: The run of the calling context: set in the thread executing the runs, and inherited by
#: what copies the context (asyncio tasks, ``asyncio.to_thread``, ``contextvars.copy_context``).
_context_run: contextvars.ContextVar[CurrentRun | None] = contextvars.ContextVar("pytest_probability_run", default=None)
#: Threads started during a run (and still alive when it ended) -> that run.
_thread_runs: weakref.WeakKeyDictionary[threading.Thread, CurrentRun] = weakref.WeakKeyDictionary()
#: Usage recorded after its run had ended, waiting to travel to the aggregating process:
#: (node id, usage or None, extra cost).
_late: list[tuple[str, Usage | None, float]] = []
#: Thread pools serve whichever run submits work: their threads belong to no run.
_POOL_MODULES = ("concurrent.futures.thread", "multiprocessing.pool")


def current_run() -> CurrentRun | None:
    """The run executing in this process, if any."""
    return _current


def start(case: CaseRef, run: int, nodeid: str) -> CurrentRun:
    # Alone, the thread running the run needs no set: close() never binds the current thread.
    threads = frozenset(threading.enumerate()) if threading.active_count() > 1 else frozenset()
    current = CurrentRun(case=case, run=run, nodeid=nodeid, threads_at_start=threads)
    resume(current)
    return current


def resume(run: CurrentRun | None) -> None:
    """Make ``run`` (or no run) current in this process and this context."""
    global _current
    _current = run
    _context_run.set(run)


def finish() -> None:
    resume(None)


def close(run: CurrentRun) -> RunRecord:
    """Build the run's record; usage recorded for ``run`` after this is late.

    Threads started during the run and still alive stay bound to it, so
    that what they record later is charged to it, not to whichever run is
    current then.
    """
    with _lock:
        record = run.to_record()
        run.closed = True
    if threading.active_count() == 1:
        return record  # only the thread running the run: no thread to bind to it
    for thread in threading.enumerate():
        if thread not in run.threads_at_start and thread is not threading.current_thread() and not _is_pool_worker(thread):
            _thread_runs[thread] = run
    return record


def _is_pool_worker(thread: threading.Thread) -> bool:
    return getattr(getattr(thread, "_target", None), "__module__", None) in _POOL_MODULES


def _require_current(function: str) -> CurrentRun:
    """The run usage is charged to: the calling context's, else the calling thread's, else the current one."""
    run = _context_run.get()
    if run is None:
        run = _thread_runs.get(threading.current_thread())
    if run is None:
        run = _current
    if run is None:
        raise RuntimeError(
            f"{function}() was called outside a benchmark run; call it from a bench_* "
            "function or a fixture it uses, while the run executes"
        )
    return run


def _charge(function: str, run: CurrentRun, usage: Usage | None, extra_cost: float) -> None:
    """Add usage to its run, or, once the run's record was built, queue it as late usage."""
    with _lock:
        late = run.closed
        if late:
            _late.append((run.nodeid, usage, extra_cost))
        elif usage is not None:
            run.usage.append(usage)
        else:
            run.extra_cost += extra_cost
    if late:
        warnings.warn(
            ProbabilityUsageWarning(
                f"{function}() was called after run {run.nodeid} had ended (from a thread or task that "
                "outlived it); charged to that run, not to the run executing now"
            ),
            stacklevel=3,
        )


def take_late() -> list[dict[str, Any]]:
    """Late usage recorded so far, as plain builtins, for the aggregating process."""
    with _lock:
        items = list(_late)
        _late.clear()
    return [
        {"nodeid": nodeid, "usage": usage.to_dict() if usage is not None else None, "extra_cost": extra}
        for nodeid, usage, extra in items
    ]


# -- public API ---------------------------------------------------------------


def _tokens(name: str, value: Any) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise TypeError(f"record_usage(): {name} must be a whole number of tokens, got {value!r}")
    if value < 0:
        raise ValueError(f"record_usage(): {name} must not be negative, got {value!r}")
    if value > MAX_TOKENS:
        raise ValueError(f"record_usage(): {name} must be at most {MAX_TOKENS:,} per call, got {value!r}")
    return int(value)


def _money(function: str, name: str, value: Any) -> float:
    if value is None:
        return 0.0
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, decimal.Decimal)):
        raise TypeError(f"{function}(): {name} must be a number, got {value!r}")
    if isinstance(value, decimal.Decimal) and not value.is_finite():
        # float(Decimal("sNaN")) raises an InvalidOperation that names no argument.
        raise ValueError(f"{function}(): {name} must be finite, got {value!r}")
    try:
        number = float(value)
    except (ArithmeticError, ValueError):  # too large for a float (int, Fraction, Decimal)
        raise ValueError(f"{function}(): {name} must be at most {MAX_COST:g} per call, got {value!r}") from None
    if math.isnan(number) or (math.isinf(number) and isinstance(value, float)):
        raise ValueError(f"{function}(): {name} must be finite, got {value!r}")
    if number < 0:
        raise ValueError(f"{function}(): {name} must not be negative, got {value!r}")
    if number > MAX_COST:  # infinity here is a finite value too large for a float
        raise ValueError(f"{function}(): {name} must be at most {MAX_COST:g} per call, got {value!r}")
    return number


def _from_source(source: Any, name: str) -> Any:
    if isinstance(source, Mapping):
        return source.get(name)
    return getattr(source, name, None)


def record_usage(
    usage: Any = None,
    /,
    *,
    model: str | None = None,
    input_tokens: int | None = None,
    output_tokens: int | None = None,
    cached_input_tokens: int | None = None,
    cost: float | None = None,
) -> Usage:
    """Attribute tokens (and optionally spend) of one model call to the current run.

    Pass the fields as keywords, or one dict or object that has them
    (``model``, ``input_tokens``, ``output_tokens``, ``cached_input_tokens``,
    ``cost``); keywords win over the object's values. Usage survives failed
    asserts, errors and skips of the run. Returns what was recorded.
    """
    run = _require_current("record_usage")
    values: dict[str, Any] = {}
    if usage is not None:
        for name in ("model", *_USAGE_FIELDS, "cost"):
            values[name] = _from_source(usage, name)
    given = {
        "model": model,
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cached_input_tokens": cached_input_tokens,
        "cost": cost,
    }
    values.update({k: v for k, v in given.items() if v is not None})
    model_name = values.get("model")
    if model_name is None or model_name == "":
        model_name = UNKNOWN_MODEL
    elif not isinstance(model_name, str):
        raise TypeError(f"record_usage(): model must be a string, got {model_name!r}")
    recorded = Usage(
        model=model_name,
        input_tokens=_tokens("input_tokens", values.get("input_tokens")),
        output_tokens=_tokens("output_tokens", values.get("output_tokens")),
        cached_input_tokens=_tokens("cached_input_tokens", values.get("cached_input_tokens")),
        cost=_money("record_usage", "cost", values.get("cost")),
    )
    _charge("record_usage", run, recorded, 0.0)
    if not run.closed:
        for listener in run.listeners:
            listener(recorded)
    return recorded


def record_cost(amount: float) -> float:
    """Attribute spend (in your currency, conventionally USD) to the current run."""
    run = _require_current("record_cost")
    value = _money("record_cost", "amount", amount)
    _charge("record_cost", run, None, value)
    return value


def _transcript_text(value: Any) -> str:
    """A value as text: a string as is, anything else as its JSON (``repr`` for what JSON cannot hold)."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=repr)
    except (TypeError, ValueError):  # e.g. a circular structure
        return repr(value)


def _transcript_entry(function: str, values: dict[str, Any]) -> dict[str, Any]:
    run = _require_current(function)
    entry: dict[str, Any] = {}
    cut: dict[str, int] = {}
    for name, value in values.items():
        if value is None:
            continue
        if name == "truncated":
            raise ValueError(f"{function}(): 'truncated' is the name the record uses for cut values; pick another")
        text = _transcript_text(value)
        if len(text) > TRANSCRIPT_LIMIT:
            cut[name] = len(text)
            text = text[: TRANSCRIPT_LIMIT - 1] + "…"
        entry[name] = text
    if cut:
        entry["truncated"] = cut
    with _lock:
        run.transcript.append(entry)
    for listener in run.listeners:
        listener(entry)
    return entry


def record_output(output: Any, /, **fields: Any) -> dict[str, Any]:
    """Attach what the current run produced (and any named fields, e.g. ``tool_calls=``) to its record.

    Values are kept as text: a string as is, anything else as its JSON. Each
    value longer than :data:`TRANSCRIPT_LIMIT` characters is cut, and the
    entry's ``truncated`` maps its name to the original length. Survives
    failed asserts and errors of the run. Returns the entry recorded.
    """
    return _transcript_entry("record_output", {"output": output, **fields})


def record_io(*, prompt: Any = None, output: Any = None, **fields: Any) -> dict[str, Any]:
    """Attach one exchange of the current run: the prompt, the output and any named fields.

    Same rules as :func:`record_output`; a field left ``None`` is not recorded.
    """
    return _transcript_entry("record_io", {"prompt": prompt, "output": output, **fields})


# -- outcomes -----------------------------------------------------------------


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


def _clip(text: str) -> str:
    return clip(text, TEXT_LIMIT)


def classify(excinfo: pytest.ExceptionInfo[BaseException] | None, phase: str) -> str:
    """pass on clean return, fail on AssertionError/pytest.fail(), skip on pytest.skip(), else error.

    ``pytest.xfail()`` and ``xfail(run=False)`` stop the run before it could
    pass or fail (pytest reports them as xfailed, i.e. skipped): no sample.
    ``XFailed`` subclasses ``Failed``, so it is checked first.
    """
    if excinfo is None:
        return PASS
    if excinfo.errisinstance((pytest.skip.Exception, pytest.xfail.Exception)):
        return SKIP
    if phase == "call" and excinfo.errisinstance((AssertionError, pytest.fail.Exception)):
        return FAIL
    return ERROR


def on_phase(run: CurrentRun, call: pytest.CallInfo[None]) -> None:
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
    exc = call.excinfo.value
    text = str(exc)
    if outcome == SKIP:
        run.message = _first_line(getattr(exc, "msg", None) or text)
        if isinstance(exc, pytest.xfail.Exception):
            run.message = f"xfail: {run.message}".strip()
        return
    run.error_type = type(exc).__qualname__ if outcome == FAIL else _qualified(exc)
    run.error_text = _clip(text)
    run.message = _first_line(text) or type(exc).__name__
    if phase != "call":
        run.message = f"{phase}: {run.message}"


def _qualified(exc: BaseException) -> str:
    cls = type(exc)
    module = cls.__module__
    return cls.__qualname__ if module in ("builtins", "__main__") else f"{module}.{cls.__qualname__}"


def attach(report: pytest.TestReport, run: CurrentRun, local: bool = False) -> None:
    """Put the finished record on the teardown report, as plain builtins.

    ``local``: this process aggregates (a serial session), so the report will be read back
    here: :func:`record_from_report` then returns the record itself instead of rebuilding it,
    and the record names its case by key (this process has the case: ``State.cases``).
    """
    global _attached
    record = close(run)
    data = record.to_dict(case=not local)
    setattr(report, REPORT_ATTRIBUTE, data)
    _attached = (data, record) if local else None
    if run.run >= run.case.runs:
        run.case.release_dict()
    for name, value in run.report_extras.items():
        setattr(report, name, value)
    if _late:
        setattr(report, LATE_ATTRIBUTE, take_late())


#: A run's node id: ``<case key>[runN]`` or ``<case key>::runN``.
RUN_ID = re.compile(r"^(?P<key>.*?)(?:\[run(?P<a>\d+)\]|::run(?P<b>\d+))$")


def crash_record(nodeid: str, cases: dict[str, CaseRef], text: str, phase: str) -> RunRecord | None:
    """The record of a run whose process died while executing it (an xdist worker crash).

    An errored run: what was recorded in the dead process (usage, the span)
    is lost with it. None when ``nodeid`` is no run of a known case.
    """
    match = RUN_ID.match(nodeid)
    if match is None or match.group("key") not in cases:
        return None
    return RunRecord(
        case=cases[match.group("key")],
        run=int(match.group("a") or match.group("b")),
        nodeid=nodeid,
        outcome=ERROR,
        message=_first_line(f"{phase}: worker crashed: {text}" if phase != "call" else f"worker crashed: {text}"),
        error_type=CRASH_ERROR_TYPE,
        error_text=_clip(text),
        phase=phase,
        start_time=time.time(),
    )


#: ``error_type`` of a crashed run's record.
CRASH_ERROR_TYPE = "WorkerCrashed"


def record_from_report(report: pytest.TestReport, cases: dict[str, CaseRef] | None = None) -> RunRecord | None:
    global _attached
    data = getattr(report, REPORT_ATTRIBUTE, None)
    if data is None or report.when != "teardown":
        return None
    attached, _attached = _attached, None
    if attached is not None and attached[0] is data and (cases is None or cases.get(attached[1].case.key) is attached[1].case):
        return attached[1]  # attached by this process to this very report: its record, not a copy
    return RunRecord.from_dict(data, cases)


#: (report data, record) of the last record attached in a process that aggregates (see :func:`attach`).
_attached: tuple[dict[str, Any], RunRecord] | None = None
