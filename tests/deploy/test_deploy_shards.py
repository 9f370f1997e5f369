"""A sharded night through the real stack (stack_runs.run_sharded_night): two
shards (``--prob-shard=K/2``) export their counters to the Collector, then
``python -m pytest_probability merge ... --otel-send`` sends the whole-case
gauges. In Prometheus 3: one value per case for each whole-case gauge, equal
to the merged report's, and counters that add up over the shards
(docs/nightly.md, "Nightly at scale").
"""

from __future__ import annotations

from collections import defaultdict

import pytest
from alert_path import shared
from backends import require_backends
from stack_runs import SHARD_RUNS, run_sharded_night

WHOLE_CASE_GAUGES = (
    "probability_case_pass_fraction_ratio",
    "probability_case_interval_lower_ratio",
    "probability_case_interval_upper_ratio",
)
CASES = {("sharded", "x"), ("sharded", "y"), ("sharded", "z"), ("gated", "")}


@pytest.fixture(scope="module")
def night(tmp_path_factory):
    backends = require_backends()
    return shared(tmp_path_factory, "sharded_night", lambda d: run_sharded_night(d, backends))


def case_of(labels: dict) -> tuple[str, str]:
    return labels["probability_benchmark"], labels.get("probability_case", "")


def rows(night) -> dict[tuple[str, str], dict]:
    return {(r["benchmark"], r["case_id"]): r for r in night["merged_report"]["rows"]}


def test_the_shards_and_the_merge_ran(night):
    assert [s["returncode"] for s in night["shards"]] in ([0, 0], [0, 1], [1, 0], [1, 1])
    assert all(s["notes"] == [] for s in night["shards"]), night["shards"]
    assert night["merge"]["returncode"] in (0, 1), night["merge"]
    assert "sent 1 metric requests to" in night["merge"]["output"], night["merge"]["output"]
    assert night["delivered"]["failed_points"] == 0
    assert set(rows(night)) == CASES
    assert all(r["passes"] + r["fails"] + r["errors"] == SHARD_RUNS for r in rows(night).values())


def test_one_value_per_case_for_the_whole_case_gauges(night):
    expected = {
        "probability_case_pass_fraction_ratio": lambda r: r["passes"] / SHARD_RUNS,
        "probability_case_interval_lower_ratio": lambda r: (r["gate"] or r["ci"])["low"],
        "probability_case_interval_upper_ratio": lambda r: (r["gate"] or r["ci"])["high"],
    }
    by_case = rows(night)
    for name in WHOLE_CASE_GAUGES:
        got = defaultdict(list)
        for s in night["series"]:
            if s["name"] == name:
                assert "instance" not in s["labels"], s  # the merge's, not a shard's
                got[case_of(s["labels"])].append(s["value"])
        assert set(got) == CASES, (name, dict(got))
        for case, values in got.items():
            assert len(values) == 1, (name, case, values)
            assert values[0] == pytest.approx(expected[name](by_case[case])), (name, case)
    verdicts = [s for s in night["series"] if s["name"] == "probability_case_gate_verdict"]
    assert len(verdicts) == 1 and case_of(verdicts[0]["labels"]) == ("gated", "")
    assert verdicts[0]["value"] == {"pass": 1, "undecided": 0, "fail": -1}[by_case[("gated", "")]["gate"]["verdict"]]


def test_counters_add_up_over_the_shards(night):
    by_case = rows(night)
    runs = defaultdict(float)
    instances = set()
    for s in night["series"]:
        if s["name"] == "probability_runs_total":
            instances.add(s["labels"].get("instance"))
            runs[(case_of(s["labels"]), s["labels"]["probability_outcome"])] += s["value"]
    assert instances == {"shard-1-of-2", "shard-2-of-2"}
    for case, row in by_case.items():
        assert runs[(case, "pass")] == row["passes"], case
        assert runs[(case, "fail")] == row["fails"], case
        assert runs[(case, "error")] == row["errors"], case
    heartbeat = [s for s in night["series"] if s["name"] == "probability_session_runs_total"]
    assert sorted(s["labels"]["instance"] for s in heartbeat) == ["shard-1-of-2", "shard-2-of-2"]
    assert sum(s["value"] for s in heartbeat) == len(CASES) * SHARD_RUNS
    cost = sum(s["value"] for s in night["series"] if s["name"] == "probability_cost_total")
    assert cost == pytest.approx(night["merged_report"]["totals"]["cost"])
