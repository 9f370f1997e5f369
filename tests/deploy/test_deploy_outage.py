"""The Collector down during a session, then up (stack_runs.run_collector_outage):
the session's spans before the outage reach Jaeger, the rest and the metrics
go to the spill file, and ``python -m pytest_probability.otel replay`` (as the
note says) sends them through the restarted Collector. In the end Jaeger holds
every span of the session exactly once, by span id, and Prometheus every
metric point; a second replay sends nothing.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import yaml
from alert_path import shared
from backends import require_backends
from promql_names import PROMETHEUS_CONFIG
from stack_runs import run_collector_outage
from stored import Series, read_points, unstored_points


@pytest.fixture(scope="module")
def outage(tmp_path_factory):
    backends = require_backends()
    return shared(tmp_path_factory, "collector_outage", lambda d: run_collector_outage(d, backends))


def test_the_collector_went_down_mid_session(outage):
    exported = outage["exported_span_ids"]
    assert len(exported) == 1 + 12  # the session span and 12 runs
    assert outage["before"]["collector_exit"] == 0  # a clean stop (SIGTERM)
    before = outage["before"]["jaeger_spans"]
    # Part of the session got through before the outage, not all of it.
    assert 0 < len(before) < len(exported), before
    assert set(before) <= set(exported)


def test_the_note_names_the_spill_file_and_the_replay(outage):
    notes = "\n".join(outage["notes"]) or f"no note; stdout:\n{outage['stdout']}\nstderr:\n{outage['stderr']}"
    assert outage["spill_exists"]
    assert f"kept in {outage['spill']}; replay: python -m pytest_probability.otel replay {outage['spill']}" in notes, (
        notes
    )
    spans, points = outage["spill_counts"]
    assert spans > 0 and points > 0
    assert f"{spans} spans and {points} metric points kept in" in notes, notes


def test_replay_sends_the_rest_and_a_second_replay_nothing(outage):
    first, second = outage["replays"]
    assert first["returncode"] == 0, first
    assert second["returncode"] == 0, second
    assert outage["sent_after"]["failed_spans"] == outage["sent_after"]["failed_points"] == 0
    spans, points = outage["spill_counts"]
    # The Collector's counters since its restart: the spill file's content, once.
    assert outage["sent_after"]["spans"] == spans
    assert outage["sent_after"]["points"] == points


def test_every_span_is_in_jaeger_exactly_once(outage):
    stored = Counter(outage["jaeger_span_ids"])
    assert set(stored) == set(outage["exported_span_ids"])
    assert {k: n for k, n in stored.items() if n != 1} == {}


def test_every_metric_point_is_in_prometheus(outage):
    _, points = read_points(Path(outage["otlp_file"]))
    assert points
    series = [Series(s["name"], s["labels"], s["value"]) for s in outage["series"]]
    promoted = yaml.safe_load(PROMETHEUS_CONFIG.read_text())["otlp"]["promote_resource_attributes"]
    problems = unstored_points(points, series, promoted)
    assert not problems, "\n".join(problems[:20])
