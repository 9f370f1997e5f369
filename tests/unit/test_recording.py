"""Unit tests of the run stage: record_usage/record_cost validation (run/recording.py), outcome
classification (run/outcome.py), records on reports (run/report.py and record/wire.py)."""

from __future__ import annotations

import decimal
import fractions
import json
import types

import pytest

from pytest_probability import record_cost, record_usage
from pytest_probability.model.case import CaseRef
from pytest_probability.model.run import RunRecord, Usage
from pytest_probability.record.wire import record_from_report
from pytest_probability.run import context, outcome
from pytest_probability.run import recording as api
from pytest_probability.run import report as run_report
from pytest_probability.vocabulary import ERROR, FAIL, LATE_ATTRIBUTE, PASS, RECORD_ATTRIBUTE, SKIP, UNKNOWN_MODEL

CASE = CaseRef(key="bench_x.py::bench_a", benchmark="a", case="", label="a", order=0, runs=1)


@pytest.fixture
def run():
    current = context.start(CASE, 1, "bench_x.py::bench_a::run1")
    try:
        yield current
    finally:
        context.finish()


# -- outside a run ------------------------------------------------------------


def test_no_current_run_outside_a_benchmark():
    assert context.current_run() is None


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: record_usage(model="m", input_tokens=1), "record_usage"),
        (lambda: record_usage({"model": "m"}), "record_usage"),
        (lambda: record_cost(0.1), "record_cost"),
        # Outside a run comes first, even for values that are wrong too.
        (lambda: record_cost(-1), "record_cost"),
        (api.current_run, "current_run"),
    ],
)
def test_outside_a_run_is_a_runtime_error_that_says_so(call, name):
    with pytest.raises(RuntimeError) as info:
        call()
    assert str(info.value).startswith(f"{name}() was called outside a benchmark run")


def test_start_and_finish_set_the_current_run():
    current = context.start(CASE, 2, "id")
    try:
        assert context.current_run() is current
        assert (current.case, current.run, current.nodeid) == (CASE, 2, "id")
    finally:
        context.finish()
    assert context.current_run() is None


def test_current_run_is_the_calling_contexts_run_else_the_processs():
    import contextvars

    from pytest_probability import RunInfo, current_run

    context.start(CASE, 2, "bench_x.py::bench_a::run2")
    try:
        assert current_run() == RunInfo("a", "bench_x.py::bench_a", 2, "bench_x.py::bench_a::run2")
        ahead = context.make(CASE, 5, "bench_x.py::bench_a::run5")  # a run executing ahead, in its own context

        def in_its_context() -> RunInfo:
            context.enter(ahead)
            return current_run()

        assert contextvars.copy_context().run(in_its_context).run == 5
        assert current_run().run == 2  # the process's is unchanged
    finally:
        context.finish()


# -- record_usage inputs --------------------------------------------------------------


def test_keywords(run):
    usage = record_usage(model="m", input_tokens=1200, output_tokens=80, cached_input_tokens=640, cost=0.001)
    assert usage == Usage("m", 1200, 80, 640, 0.001)
    assert run.usage == [usage]


def test_dict(run):
    record_usage({"model": "m", "input_tokens": 5, "output_tokens": 6, "cached_input_tokens": 7, "cost": 0.5, "x": 1})
    assert run.usage == [Usage("m", 5, 6, 7, 0.5)]


def test_object_with_attributes(run):
    response = types.SimpleNamespace(model="m", input_tokens=5, output_tokens=6, cached_input_tokens=0, cost=0.25)
    record_usage(response)
    assert run.usage == [Usage("m", 5, 6, 0, 0.25)]


def test_object_missing_attributes_defaults_to_zero(run):
    record_usage(types.SimpleNamespace(output_tokens=3))
    assert run.usage == [Usage(UNKNOWN_MODEL, 0, 3, 0, 0.0)]


def test_keywords_win_over_the_dict_and_the_object(run):
    source = {"model": "from-dict", "input_tokens": 5, "output_tokens": 6, "cached_input_tokens": 7, "cost": 0.5}
    record_usage(source, model="kw", input_tokens=0, cost=0.0)
    record_usage(types.SimpleNamespace(**source), output_tokens=1, cached_input_tokens=2)
    assert run.usage == [Usage("kw", 0, 6, 7, 0.0), Usage("from-dict", 5, 1, 2, 0.5)]


def test_missing_model_and_none_values_default(run):
    record_usage(input_tokens=1)
    record_usage(model="", input_tokens=None, cost=None)
    record_usage({"model": None})
    assert run.usage == [Usage(UNKNOWN_MODEL, 1), Usage(UNKNOWN_MODEL), Usage(UNKNOWN_MODEL)]


def test_whole_floats_and_integral_numbers_accepted(run):
    record_usage(model="m", input_tokens=3.0, output_tokens=4, cost=decimal.Decimal("0.5"))
    record_usage(model="m", cost=fractions.Fraction(1, 4))
    assert run.usage == [Usage("m", 3, 4, 0, 0.5), Usage("m", 0, 0, 0, 0.25)]
    assert type(run.usage[0].input_tokens) is int
    assert type(run.usage[0].cost) is float


def test_listeners_see_each_usage(run):
    seen = []
    run.listeners.append(seen.append)
    usage = record_usage(model="m", input_tokens=1)
    assert seen == [usage]


TOKEN_FIELDS = ("input_tokens", "output_tokens", "cached_input_tokens")


@pytest.mark.parametrize("field", TOKEN_FIELDS)
@pytest.mark.parametrize("value", ["12", 1.5, True, float("nan"), float("inf"), [1], object()])
@pytest.mark.parametrize("style", ["keyword", "dict", "object"])
def test_bad_token_type_is_a_type_error_naming_the_field(run, field, value, style):
    with pytest.raises(TypeError) as info:
        call_with(style, {field: value})
    message = str(info.value)
    assert message.startswith(f"record_usage(): {field} must be a whole number of tokens, got ")
    assert run.usage == []


@pytest.mark.parametrize("field", TOKEN_FIELDS)
@pytest.mark.parametrize("value", [-1, -2.0])
@pytest.mark.parametrize("style", ["keyword", "dict", "object"])
def test_negative_tokens_are_a_value_error_naming_the_field(run, field, value, style):
    with pytest.raises(ValueError) as info:
        call_with(style, {field: value})
    assert str(info.value) == f"record_usage(): {field} must not be negative, got {int(value)}"
    assert run.usage == []


@pytest.mark.parametrize("value", ["0.1", True, [0.1]])
@pytest.mark.parametrize("style", ["keyword", "dict", "object"])
def test_bad_cost_type_is_a_type_error_naming_cost(run, value, style):
    with pytest.raises(TypeError) as info:
        call_with(style, {"cost": value})
    assert str(info.value) == f"record_usage(): cost must be a number, got {value!r}"
    assert run.usage == []


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (-0.01, "record_usage(): cost must not be negative, got -0.01"),
        (float("nan"), "record_usage(): cost must be finite, got nan"),
        (float("inf"), "record_usage(): cost must be finite, got inf"),
        (decimal.Decimal("-1"), "record_usage(): cost must not be negative, got Decimal('-1')"),
    ],
)
def test_bad_cost_value_is_a_value_error_naming_cost(run, value, expected):
    with pytest.raises(ValueError) as info:
        record_usage(model="m", cost=value)
    assert str(info.value) == expected
    assert run.usage == []


@pytest.mark.parametrize("style", ["keyword", "dict", "object"])
def test_non_string_model_is_a_type_error_naming_model(run, style):
    with pytest.raises(TypeError) as info:
        call_with(style, {"model": 42})
    assert str(info.value) == "record_usage(): model must be a string, got 42"
    assert run.usage == []


def test_one_bad_field_records_nothing_even_when_others_are_good(run):
    with pytest.raises(ValueError, match="output_tokens"):
        record_usage(model="m", input_tokens=10, output_tokens=-1, cost=0.5)
    assert run.usage == []


def test_a_keyword_replaces_a_bad_value_of_the_object(run):
    record_usage({"input_tokens": "bad"}, input_tokens=4)
    assert run.usage == [Usage(UNKNOWN_MODEL, 4)]


def call_with(style, values):
    if style == "keyword":
        return record_usage(**values)
    if style == "dict":
        return record_usage(dict(values))
    return record_usage(types.SimpleNamespace(**values))


# -- record_cost ---------------------------------------------------------------------


def test_record_cost_accumulates(run):
    assert record_cost(0.25) == 0.25
    assert record_cost(1) == 1.0
    assert record_cost(decimal.Decimal("0.125")) == 0.125
    assert run.extra_cost == 1.375
    assert run.to_record().cost == 1.375


@pytest.mark.parametrize(
    ("value", "error", "expected"),
    [
        ("0.1", TypeError, "record_cost(): amount must be a number, got '0.1'"),
        (None, None, None),
        (False, TypeError, "record_cost(): amount must be a number, got False"),
        (-1, ValueError, "record_cost(): amount must not be negative, got -1"),
        (float("nan"), ValueError, "record_cost(): amount must be finite, got nan"),
    ],
)
def test_record_cost_validation_names_amount(run, value, error, expected):
    if error is None:
        assert record_cost(value) == 0.0
    else:
        with pytest.raises(error) as info:
            record_cost(value)
        assert str(info.value) == expected
    assert run.extra_cost == 0.0


# -- classification ------------------------------------------------------------------


def excinfo_of(exc: BaseException) -> pytest.ExceptionInfo[BaseException]:
    try:
        raise exc
    except BaseException:
        return pytest.ExceptionInfo.from_current()


def fail_exc():
    try:
        pytest.fail("nope")
    except pytest.fail.Exception as exc:
        return exc


def skip_exc():
    try:
        pytest.skip("later")
    except pytest.skip.Exception as exc:
        return exc


def xfail_exc():
    try:
        pytest.xfail("known")
    except pytest.xfail.Exception as exc:
        return exc


@pytest.mark.parametrize(
    ("make", "phase", "expected"),
    [
        (None, "call", PASS),
        (None, "setup", PASS),
        (lambda: AssertionError("x"), "call", FAIL),
        (fail_exc, "call", FAIL),
        (lambda: ValueError("x"), "call", ERROR),
        (lambda: KeyError("x"), "call", ERROR),
        (lambda: SystemExit(3), "call", ERROR),
        # In a fixture, even an assert or pytest.fail() is an error of the run.
        (lambda: AssertionError("x"), "setup", ERROR),
        (fail_exc, "setup", ERROR),
        (fail_exc, "teardown", ERROR),
        (lambda: ValueError("x"), "teardown", ERROR),
        (skip_exc, "setup", SKIP),
        (skip_exc, "call", SKIP),
        # pytest.xfail() and xfail(run=False) stop the run: no sample (XFailed subclasses Failed).
        (xfail_exc, "call", SKIP),
        (xfail_exc, "setup", SKIP),
    ],
)
def test_classify(make, phase, expected):
    excinfo = None if make is None else excinfo_of(make())
    assert outcome.classify(excinfo, phase) == expected


def phase(when: str, exc: BaseException | None = None, duration: float = 0.0) -> pytest.CallInfo[None]:
    def func():
        if exc is not None:
            raise exc

    info = pytest.CallInfo.from_call(func, when)
    info.duration = duration
    return info


def fold(*calls) -> RunRecord:
    current = context.start(CASE, 1, "n")
    try:
        for call in calls:
            outcome.on_phase(current, call)
        return current.to_record()
    finally:
        context.finish()


def test_on_phase_pass():
    record = fold(phase("setup"), phase("call", duration=0.5), phase("teardown"))
    assert (record.outcome, record.phase, record.duration, record.message, record.error_type) == (
        PASS,
        "call",
        0.5,
        "",
        "",
    )


def test_on_phase_assertion_failure():
    record = fold(phase("setup"), phase("call", AssertionError("assert 1 == 2\n  where ...")), phase("teardown"))
    assert (record.outcome, record.phase, record.message, record.error_type) == (
        FAIL,
        "call",
        "assert 1 == 2",
        "AssertionError",
    )
    assert record.error_text == "assert 1 == 2\n  where ..."


def test_on_phase_pytest_fail():
    record = fold(phase("setup"), phase("call", fail_exc()), phase("teardown"))
    assert (record.outcome, record.message, record.error_type, record.error_text) == (FAIL, "nope", "Failed", "nope")


class CustomError(Exception):
    pass


def test_on_phase_error_type_is_qualified_outside_builtins():
    record = fold(phase("setup"), phase("call", CustomError("bad")), phase("teardown"))
    assert (record.outcome, record.error_type, record.message) == (ERROR, f"{__name__}.CustomError", "bad")
    record = fold(phase("setup"), phase("call", ValueError()), phase("teardown"))
    assert (record.outcome, record.error_type, record.message, record.error_text) == (
        ERROR,
        "ValueError",
        "ValueError",
        "",
    )


def test_on_phase_setup_error_decides_and_names_the_phase():
    record = fold(phase("setup", RuntimeError("db down")), phase("teardown"))
    assert (record.outcome, record.phase, record.message, record.error_type) == (
        ERROR,
        "setup",
        "setup: db down",
        "RuntimeError",
    )


def test_on_phase_teardown_error_after_a_pass_is_an_error():
    record = fold(phase("setup"), phase("call"), phase("teardown", KeyError("td")))
    assert (record.outcome, record.phase, record.message, record.error_type) == (
        ERROR,
        "teardown",
        "teardown: 'td'",
        "KeyError",
    )


def test_on_phase_first_failing_phase_wins_over_a_teardown_error():
    record = fold(phase("setup"), phase("call", AssertionError("first")), phase("teardown", KeyError("td")))
    assert (record.outcome, record.phase, record.message) == (FAIL, "call", "first")


def test_on_phase_skip_keeps_the_reason():
    record = fold(phase("setup"), phase("call", skip_exc()), phase("teardown"))
    assert (record.outcome, record.message, record.error_type, record.error_text) == (SKIP, "later", "", "")


def test_on_phase_xfail_is_no_sample():
    record = fold(phase("setup"), phase("call", xfail_exc()), phase("teardown"))
    assert (record.outcome, record.message, record.error_type) == (SKIP, "xfail: known", "")


def test_long_error_text_is_clipped():
    record = fold(phase("setup"), phase("call", ValueError("x" * 10_000)), phase("teardown"))
    assert len(record.error_text) == outcome.TEXT_LIMIT
    assert record.error_text.endswith("…")


# -- the record on the report ---------------------------------------------------------


def test_attach_and_record_from_report_round_trip(run):
    record_usage(model="m", input_tokens=3, cost=0.5)
    record_cost(0.25)
    outcome.on_phase(run, phase("call", AssertionError("no")))
    report = types.SimpleNamespace(when="teardown")
    run_report.attach(report, run, context.LateQueue())
    data = getattr(report, RECORD_ATTRIBUTE)
    assert json.loads(json.dumps(data)) == data  # plain builtins
    record = record_from_report(report, {})
    assert record == run.to_record()
    assert (record.outcome, record.cost, record.usage) == (FAIL, 0.75, (Usage("m", 3, cost=0.5),))


def test_a_serial_session_reads_back_the_record_it_attached_not_a_rebuilt_copy(run):
    outcome.on_phase(run, phase("call", None))
    report = types.SimpleNamespace(when="teardown")
    late = context.LateQueue()
    kept = run_report.attach(report, run, late, local=True)
    assert getattr(report, RECORD_ATTRIBUTE)["case"] == {"key": run.case.key}  # this process has the case
    cases: dict = {}
    first = record_from_report(report, cases, lambda: kept)
    assert first is kept[1] and first == run.to_record()
    assert cases == {run.case.key: run.case}  # the session learns the case from the record itself
    # Read once (RunPhases.take_attached): a second read (or another report with equal data) rebuilds it.
    again = record_from_report(report, cases)
    assert again == first and again is not first
    copied = types.SimpleNamespace(when="teardown")
    attached = run_report.attach(report, run, late, local=True)
    setattr(copied, RECORD_ATTRIBUTE, dict(getattr(report, RECORD_ATTRIBUTE)))
    rebuilt = record_from_report(copied, {}, lambda: attached)
    assert rebuilt is not attached[1] and rebuilt == attached[1] and rebuilt.case is run.case
    # A worker (local=False) keeps nothing: the controller rebuilds the record from the report.
    remote = types.SimpleNamespace(when="teardown")
    run_report.attach(remote, run, late)
    assert record_from_report(remote, {}) == first


def test_late_usage_waiting_travels_on_the_next_teardown_report(run):
    late = context.LateQueue()
    late.add(run, Usage("m", 5, 0, 0, 0.5), 0.0)
    report = types.SimpleNamespace(when="teardown")
    run_report.attach(report, run, late)
    assert getattr(report, LATE_ATTRIBUTE) == [
        {"nodeid": run.nodeid, "usage": Usage("m", 5, 0, 0, 0.5).to_dict(), "extra_cost": 0.0}
    ]
    assert not late.pending
    quiet = types.SimpleNamespace(when="teardown")
    run_report.attach(quiet, run, late)
    assert not hasattr(quiet, LATE_ATTRIBUTE)


def test_record_from_report_ignores_other_reports():
    assert record_from_report(types.SimpleNamespace(when="teardown"), {}) is None
    data = RunRecord(case=CASE, run=1, nodeid="n", outcome=PASS).to_dict()
    call_report = types.SimpleNamespace(when="call", **{RECORD_ATTRIBUTE: data})
    assert record_from_report(call_report, {}) is None


# -- transcripts (record_output / record_io) ----------------------------------


def test_transcript_outside_a_run_raises():
    with pytest.raises(RuntimeError, match=r"record_output\(\) was called outside a benchmark run"):
        api.record_output("x")
    with pytest.raises(RuntimeError, match=r"record_io\(\) was called outside a benchmark run"):
        api.record_io(prompt="p")


def test_transcript_values_become_text_and_reach_the_record(run):
    from pytest_probability import record_io, record_output

    record_io(prompt="p", output={"answer": 42, "ok": True}, model=None)
    record_output(("a", 1), score=0.5, obj=object)
    record = RunRecord.from_dict(json.loads(json.dumps(run.to_record().to_dict())))
    first, second = record.transcript
    assert first == {"prompt": "p", "output": '{"answer": 42, "ok": true}'}  # None fields are left out
    assert second["output"] == '["a", 1]' and second["score"] == "0.5"
    assert second["obj"] == json.dumps(repr(object))  # what JSON cannot hold, by repr


def test_transcript_cut_at_the_limit_and_says_so(run):
    exact = "y" * api.TRANSCRIPT_LIMIT
    entry = api.record_output(exact, long="z" * (api.TRANSCRIPT_LIMIT + 1))
    assert entry["output"] == exact  # exactly at the limit: kept whole
    assert len(entry["long"]) == api.TRANSCRIPT_LIMIT and entry["long"].endswith("…")
    assert entry["truncated"] == {"long": api.TRANSCRIPT_LIMIT + 1}


def test_transcript_field_named_truncated_is_refused(run):
    with pytest.raises(ValueError, match="'truncated' is the name the record uses"):
        api.record_output("x", truncated="no")
    assert run.transcript == []
