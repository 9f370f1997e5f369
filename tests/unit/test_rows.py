"""Unit tests of model.py (records, usage, counts) and rows.py (aggregation, statuses)."""

from __future__ import annotations

import itertools
import json

import pytest

from pytest_probability.aggregate.cases import aggregate, row_status
from pytest_probability.model.case import PARAM_VALUE_LIMIT, CaseRef
from pytest_probability.model.rows import Counts, UsageTotals, sum_usage
from pytest_probability.model.run import RunRecord, Usage
from pytest_probability.vocabulary import (
    ERROR,
    FAIL,
    PASS,
    SKIP,
    STATUS_ERROR,
    STATUS_ERRORED,
    STATUS_FAIL,
    STATUS_FLAKY,
    STATUS_PASS,
    STATUS_SKIP,
    STATUSES,
    UNKNOWN_MODEL,
)


def case(label: str = "classify::a", order: int = 0, runs: int = 3, key: str | None = None) -> CaseRef:
    benchmark, _, case_id = label.partition("::")
    return CaseRef(
        key=key or f"bench_x.py::bench_{benchmark}::{case_id}",
        benchmark=benchmark,
        case=case_id,
        label=label,
        order=order,
        runs=runs,
    )


def record(ref: CaseRef, run: int, outcome: str = PASS, usage=(), extra_cost: float = 0.0, **kw) -> RunRecord:
    return RunRecord(
        case=ref,
        run=run,
        nodeid=f"{ref.key}[run{run}]",
        outcome=outcome,
        usage=tuple(usage),
        extra_cost=extra_cost,
        **kw,
    )


# -- Counts and row_status ------------------------------------------------------


def test_counts_total_excludes_skipped_and_pass_rate():
    counts = Counts()
    for outcome in (PASS, PASS, FAIL, ERROR, SKIP, SKIP):
        counts.add(outcome)
    assert (counts.passes, counts.fails, counts.errors, counts.skipped) == (2, 1, 1, 2)
    assert counts.total == 4
    assert counts.pass_rate == 0.5


def test_counts_pass_rate_none_without_counted_runs():
    counts = Counts(skipped=3)
    assert counts.total == 0
    assert counts.pass_rate is None


# Every combination of (passes, fails, errors) being zero or not, with and without skips.
STATUS_TABLE = {
    (0, 0, 0): STATUS_SKIP,
    (1, 0, 0): STATUS_PASS,
    (0, 1, 0): STATUS_FAIL,
    (0, 0, 1): STATUS_ERROR,
    (1, 1, 0): STATUS_FLAKY,
    (1, 0, 1): STATUS_ERRORED,
    (0, 1, 1): STATUS_FAIL,
    (1, 1, 1): STATUS_FLAKY,
}


@pytest.mark.parametrize("skipped", [0, 2])
@pytest.mark.parametrize("scale", [1, 7])
@pytest.mark.parametrize("present", list(itertools.product((0, 1), repeat=3)))
def test_row_status_every_combination(present, scale, skipped):
    passes, fails, errors = (scale * p for p in present)
    counts = Counts(passes=passes, fails=fails, errors=errors, skipped=skipped)
    assert row_status(counts) == STATUS_TABLE[present]


def test_statuses_tuple_lists_every_status_once():
    assert sorted(STATUSES) == sorted(set(STATUS_TABLE.values()))


# -- Usage and UsageTotals -----------------------------------------------------


def test_sum_usage_per_model_in_order_of_first_appearance():
    usages = [
        Usage("m-large", 10, 1, 0, 0.5),
        Usage("m-small", 1000, 20, 300, 0.25),
        Usage("m-large", 5, 2, 4, 0.25),
    ]
    totals = sum_usage(usages)
    assert list(totals) == ["m-large", "m-small"]
    assert totals["m-large"] == UsageTotals("m-large", 15, 3, 4, 0.75, calls=2)
    assert totals["m-small"].to_dict() == {
        "model": "m-small",
        "input_tokens": 1000,
        "output_tokens": 20,
        "cached_input_tokens": 300,
        "cost": 0.25,
        "calls": 1,
    }


def test_usage_defaults_and_from_dict_ignores_unknown_keys():
    assert Usage() == Usage(UNKNOWN_MODEL, 0, 0, 0, 0.0)
    assert Usage.from_dict({"model": "m", "input_tokens": 3, "future_field": 1}) == Usage("m", 3)


# -- RunRecord -------------------------------------------------------------------


def full_record() -> RunRecord:
    ref = CaseRef(
        key="bench_x.py::bench_classify::identify_pii",
        benchmark="classify",
        case="identify_pii",
        label="classify::identify_pii",
        order=4,
        runs=10,
        params=(("text", "my card"), ("prompt", "terse")),
        path="bench_x.py",
        lineno=12,
        function="bench_classify",
    )
    return RunRecord(
        case=ref,
        run=3,
        nodeid="bench_x.py::bench_classify::identify_pii[run3]",
        outcome=ERROR,
        duration=0.125,
        message="setup: boom",
        error_type="ValueError",
        error_text="boom",
        phase="setup",
        usage=(Usage("m-small", 1200, 80, 640, 0.001), Usage("m-large", 1, 2, 0, 0.0)),
        extra_cost=0.5,
        trace_id="ab" * 16,
        span_id="cd" * 8,
        start_time=1700000000.5,
    )


def test_run_record_round_trips_through_json():
    original = full_record()
    data = json.loads(json.dumps(original.to_dict()))
    assert RunRecord.from_dict(data) == original


def test_run_record_to_dict_is_plain_builtins():
    def check(value):
        if isinstance(value, dict):
            assert all(isinstance(k, str) for k in value)
            for v in value.values():
                check(v)
        elif isinstance(value, list):
            for v in value:
                check(v)
        else:
            assert value is None or type(value) in (str, int, float, bool), repr(value)

    data = full_record().to_dict()
    check(data)
    assert data["case"]["params"] == [["text", "my card"], ["prompt", "terse"]]
    assert data["usage"][0] == {
        "model": "m-small",
        "input_tokens": 1200,
        "output_tokens": 80,
        "cached_input_tokens": 640,
        "cost": 0.001,
        "cache_creation_input_tokens": 0,
        "reasoning_tokens": 0,
        "source": "record",
        "request_model": "",
        "priced": False,
        "role": "system",
    }


def test_run_record_names_its_case_by_key_for_a_process_that_has_it():
    ref = case()
    rec = record(ref, 2, FAIL)
    data = rec.to_dict(case=False)
    assert data["case"] == {"key": ref.key}
    assert json.loads(json.dumps(data)) == data
    back = RunRecord.from_dict(data, {ref.key: ref})
    assert back == rec and back.case is ref
    with pytest.raises(ValueError, match="by key only"):
        RunRecord.from_dict(data, {})
    with pytest.raises(ValueError, match="by key only"):
        RunRecord.from_dict(data)


def test_run_record_from_dict_ignores_unknown_fields():
    data = full_record().to_dict()
    data["added_in_a_later_version"] = 1
    assert RunRecord.from_dict(data) == full_record()


def test_case_ref_label_is_derived_unless_given():
    plain = CaseRef(key="b.py::bench_a", benchmark="a", case="")
    param = CaseRef(key="b.py::bench_a::x", benchmark="a", case="x")
    own = CaseRef(key="b.py::bench_a::x", benchmark="a", case="x", label="custom")
    assert (plain.label, param.label, own.label) == ("a", "a::x", "custom")
    assert param == CaseRef(key="b.py::bench_a::x", benchmark="a", case="x", label="a::x")
    assert param != own and hash(param) != hash(own)


class _Unprintable:
    def __repr__(self) -> str:
        raise RuntimeError("no repr")


def test_case_ref_params_from_a_mapping_read_as_texts():
    values = {"n": 3, "s": "yes", "f": 0.5, "b": True, "none": None}
    lazy = CaseRef(key="k", benchmark="a", case="c", params=values)
    texts = (("n", "3"), ("s", "yes"), ("f", "0.5"), ("b", "True"), ("none", "None"))
    assert lazy.params == texts
    eager = CaseRef(key="k", benchmark="a", case="c", params=texts)
    assert lazy == eager and hash(lazy) == hash(eager)
    assert lazy.to_dict()["params"] == [list(p) for p in texts]
    assert CaseRef.from_dict(json.loads(json.dumps(lazy.to_dict()))) == lazy
    assert CaseRef(key="k", benchmark="a", case="c", params={}).params == ()


def test_case_ref_params_of_other_types_are_texts_from_construction():
    """A mutable or user-defined value is described as it was at collection, once."""
    listed = [1, 2]
    case = CaseRef(
        key="k",
        benchmark="a",
        case="c",
        params={"xs": listed, "n": 1, "bad": _Unprintable(), "long": "x" * (PARAM_VALUE_LIMIT + 10)},
    )
    listed.append(3)
    params = dict(case.params)
    assert params["xs"] == "[1, 2]" and params["n"] == "1"
    assert params["bad"] == "<_Unprintable object: repr() raised RuntimeError>"
    assert len(params["long"]) == PARAM_VALUE_LIMIT and params["long"].endswith("…")


def test_case_ref_is_frozen_and_its_repr_names_every_field():
    case = CaseRef(key="k", benchmark="a", case="c", params={"n": 1})
    with pytest.raises(AttributeError):
        case.key = "other"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del case.order  # type: ignore[misc]
    assert repr(case) == (
        "CaseRef(key='k', benchmark='a', case='c', label='a::c', order=0, runs=0, "
        "params=(('n', '1'),), path='', lineno=0, function='', marks=())"
    )
    import copy
    import pickle

    assert copy.deepcopy(case) == case and pickle.loads(pickle.dumps(case)) == case


def test_run_record_cost_is_extra_cost_plus_usage_cost():
    ref = case()
    rec = record(ref, 1, usage=[Usage("m", cost=0.25), Usage("n", cost=0.5)], extra_cost=1.0)
    assert rec.cost == 1.75
    assert record(ref, 2).cost == 0.0


# -- aggregate ---------------------------------------------------------------------


def test_aggregate_rows_in_collection_order_records_by_run():
    first, second, third = case("zeta", order=0), case("alpha::x", order=1), case("alpha::a", order=2)
    records = [
        record(third, 2),
        record(second, 1, FAIL),
        record(first, 3),
        record(third, 1, ERROR),
        record(first, 1, SKIP),
        record(first, 2, FAIL),
    ]
    summary = aggregate(records)
    assert [row.label for row in summary.rows] == ["zeta", "alpha::x", "alpha::a"]
    assert [[r.run for r in row.records] for row in summary.rows] == [[1, 2, 3], [1], [1, 2]]
    assert [r.nodeid for r in summary.records] == [
        "bench_x.py::bench_zeta::[run1]",
        "bench_x.py::bench_zeta::[run2]",
        "bench_x.py::bench_zeta::[run3]",
        "bench_x.py::bench_alpha::x[run1]",
        "bench_x.py::bench_alpha::a[run1]",
        "bench_x.py::bench_alpha::a[run2]",
    ]
    assert [row.status for row in summary.rows] == [STATUS_FLAKY, STATUS_FAIL, STATUS_ERRORED]
    assert summary.counts == Counts(passes=2, fails=2, errors=1, skipped=1)


def test_aggregate_equal_order_falls_back_to_case_key():
    b = case("b", order=5, key="k/b")
    a = case("a", order=5, key="k/a")
    summary = aggregate([record(b, 1), record(a, 1)])
    assert [row.label for row in summary.rows] == ["a", "b"]


def test_aggregate_is_independent_of_arrival_order():
    refs = [case(f"c::{i}", order=i) for i in range(4)]
    records = [record(ref, run, (PASS, FAIL, ERROR, SKIP)[(run + ref.order) % 4]) for ref in refs for run in (1, 2, 3)]
    forward = aggregate(records)
    backward = aggregate(reversed(records))
    assert forward.records == backward.records
    assert [(r.label, r.counts, r.status) for r in forward.rows] == [
        (r.label, r.counts, r.status) for r in backward.rows
    ]


def test_aggregate_counts_a_run_recorded_twice_once_last_wins():
    ref = case()
    summary = aggregate([record(ref, 1, FAIL), record(ref, 2), record(ref, 1, PASS)])
    (row,) = summary.rows
    assert row.counts == Counts(passes=2)
    assert [r.outcome for r in row.records] == [PASS, PASS]
    assert summary.counts.total == 2


def test_aggregate_keeps_the_last_of_each_run_reported_again_among_other_cases():
    a, b = case("a", order=0), case("b", order=1)
    summary = aggregate(
        [
            record(a, 2, FAIL),
            record(b, 1),
            record(a, 1, ERROR),
            record(a, 2, SKIP),
            record(b, 1, FAIL),
            record(a, 2, PASS),
            record(a, 3),
        ]
    )
    row_a, row_b = summary.rows
    assert [(r.run, r.outcome) for r in row_a.records] == [(1, ERROR), (2, PASS), (3, PASS)]
    assert [(r.run, r.outcome) for r in row_b.records] == [(1, FAIL)]
    assert summary.duplicates == 3
    assert summary.counts == Counts(passes=2, fails=1, errors=1)
    assert (row_a.counts, row_b.counts) == (Counts(passes=2, errors=1), Counts(fails=1))


def test_aggregate_rows_with_equal_counts_share_one_counts():
    refs = [case(f"c::{i}", order=i, runs=2) for i in range(4)]
    outcomes = [(PASS, PASS), (PASS, FAIL), (PASS, PASS), (FAIL, PASS)]
    summary = aggregate(
        record(ref, n + 1, o) for ref, pair in zip(refs, outcomes, strict=False) for n, o in enumerate(pair)
    )
    rows = summary.rows
    assert [(r.counts.passes, r.counts.fails) for r in rows] == [(2, 0), (1, 1), (2, 0), (1, 1)]
    assert rows[0].counts is rows[2].counts and rows[1].counts is rows[3].counts
    assert rows[0].counts is not rows[1].counts
    assert all(summary.counts is not r.counts for r in rows)
    assert (summary.counts.passes, summary.counts.fails) == (6, 2)


def test_aggregate_costs_and_usage_per_row_and_session():
    a, b = case("a", order=0), case("b", order=1)
    records = [
        record(a, 1, usage=[Usage("m-small", 100, 10, 0, 0.001)], extra_cost=0.002),
        record(a, 2, SKIP, usage=[Usage("m-large", 50, 5, 7, 0.004)]),
        record(b, 1, FAIL, usage=[Usage("m-small", 1, 1, 1, 0.0005)]),
        record(b, 2, ERROR, extra_cost=0.25),
    ]
    summary = aggregate(records)
    row_a, row_b = summary.rows
    assert row_a.cost == pytest.approx(0.007)  # a skipped run's spend still counts
    assert row_b.cost == pytest.approx(0.2505)
    assert summary.cost == pytest.approx(0.2575)
    assert list(row_a.usage) == ["m-small", "m-large"]
    assert row_a.usage["m-large"] == UsageTotals("m-large", 50, 5, 7, 0.004, calls=1)
    assert list(row_b.usage) == ["m-small"]
    assert list(summary.usage) == ["m-small", "m-large"]
    assert summary.usage["m-small"].input_tokens == 101
    assert summary.usage["m-small"].cached_input_tokens == 1
    assert summary.usage["m-small"].calls == 2
    assert summary.usage["m-small"].cost == pytest.approx(0.0015)


def test_has_cost_only_when_spend_was_recorded():
    ref = case()
    assert not aggregate([record(ref, 1)]).has_cost
    # Tokens without a cost record no spend: no cost column.
    assert not aggregate([record(ref, 1, usage=[Usage("m", 10, 2)])]).has_cost
    assert aggregate([record(ref, 1, usage=[Usage("m", 10, 2, cost=0.01)])]).has_cost
    assert aggregate([record(ref, 1, extra_cost=0.01)]).has_cost
    other = case("b", order=1)
    summary = aggregate([record(ref, 1), record(other, 1, SKIP, extra_cost=0.5)])
    assert summary.has_cost
    assert [row.has_cost for row in summary.rows] == [False, True]


def test_status_counts_cover_every_status():
    refs = [case(f"c::{i}", order=i) for i in range(4)]
    summary = aggregate(
        [
            record(refs[0], 1),
            record(refs[1], 1, PASS),
            record(refs[1], 2, FAIL),
            record(refs[2], 1, SKIP),
            record(refs[3], 1, ERROR),
        ]
    )
    assert summary.status_counts == {
        STATUS_PASS: 1,
        STATUS_FLAKY: 1,
        STATUS_ERRORED: 0,
        STATUS_FAIL: 0,
        STATUS_ERROR: 1,
        STATUS_SKIP: 1,
    }


def test_aggregate_of_nothing_is_empty():
    summary = aggregate([])
    assert summary.rows == []
    assert summary.counts == Counts()
    assert summary.cost == 0.0
    assert summary.usage == {}
    assert not summary.has_cost
