"""--prob-shard=K/N and ``python -m pytest_probability merge``: shards are real sessions in subprocesses,
the merge runs through its command line, and the merged report is compared with the unsharded session's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from functools import partial

import pytest
import sessions
from otlp_receiver import OtlpReceiver, flatten_metrics, flatten_spans
from sessions import report as load

from pytest_probability.model.case import shard_of

# A gate that passes over all 30 runs (20/30, exact 95% interval [47%, 83%] vs bar 30%) while every run of
# shard 1 of 3 fails (0/10 would FAIL the gate if the shard judged its part); `broken` fails its gate over
# all runs too. `plain` is ungated and always passes.
BENCH = """
import pytest
from pytest_probability.model.case import shard_of


@pytest.mark.probability(runs=30, min_rate=0.3)
def bench_uneven(request):
    assert shard_of(request.node.prob_case.key, request.node.prob_run, 3) != 1


@pytest.mark.probability(runs=6)
@pytest.mark.parametrize("word", ["a", "b"])
def bench_plain(word):
    pass
"""
BROKEN = """

@pytest.mark.probability(runs=9, min_passes=8)
def bench_broken(request):
    assert request.node.prob_run % 3 != 0
"""
#: What differs between two executions of the same run.
VOLATILE = ("duration", "elapsed", "start_time", "trace_id", "span_id")


session = partial(sessions.session, gate_timeout=60, options=("-rs",))


def merge(pytester: pytest.Pytester, *args: str) -> subprocess.CompletedProcess[str]:
    return sessions.command(pytester, "merge", *args)


def stable(entries: list[dict]) -> dict[str, dict]:
    return {e["nodeid"]: {k: v for k, v in e.items() if k not in VOLATILE} for e in entries}


def shards(
    pytester: pytest.Pytester, count: int = 3, extra: dict[int, list[str]] | None = None
) -> list[pytest.RunResult]:
    extra = extra or {}
    return [
        session(pytester, f"--prob-shard={k}/{count}", f"--prob-json=s{k}.json", *extra.get(k, []))
        for k in range(1, count + 1)
    ]


@pytest.mark.parametrize("broken", [False, True], ids=["gates-pass", "a-gate-fails"])
def test_the_merged_shards_are_the_unsharded_session(pytester: pytest.Pytester, broken: bool) -> None:
    pytester.makepyfile(bench_x=BENCH + (BROKEN if broken else ""))
    whole = session(pytester, "--prob-json=whole.json", "--prob-explain", "--prob-metric=pass^2")
    # Shard 2 runs under xdist: a shard is any session, -n included.
    results = shards(
        pytester,
        extra={k: ["--prob-explain", "--prob-metric=pass^2"] + (["-n", "2"] if k == 2 else []) for k in (1, 2, 3)},
    )
    for result in results:
        assert result.ret == 0, result.stdout.str()  # a shard judges no gate: its runs alone decide
    first = results[0].stdout.str()
    assert "decided at the merge" in first
    assert "SKIPPED" in first and "uneven" in first
    assert "Gates:" not in first  # nothing judged on the shard's part

    merged = merge(pytester, "s1.json", "s2.json", "s3.json", "-o", "merged.json", "--html", "merged.html")
    expected = load(pytester, "whole.json")
    assert whole.ret == expected["exit_status"] == (1 if broken else 0)
    assert merged.returncode == expected["exit_status"], merged.stdout + merged.stderr
    report = load(pytester, "merged.json")
    assert report["exit_status"] == expected["exit_status"]
    assert stable(report["records"]) == stable(expected["records"])
    assert stable(report["skipped_runs"]) == stable(expected["skipped_runs"])
    assert report["rows"] == expected["rows"]
    assert report["gates"] == expected["gates"]
    assert report["totals"] == expected["totals"]
    assert report["aggregates"] == expected["aggregates"]
    assert report["stopping"] == expected["stopping"]
    assert report["comparisons"] == expected["comparisons"] == [] and report["baseline"] is None
    assert set(report) ^ set(expected) == {"merged"}
    assert [r.get("explanation") for r in report["rows"]] == [r.get("explanation") for r in expected["rows"]]
    assert report["merged"]["shards"] == 3
    uneven = next(r for r in report["rows"] if r["benchmark"] == "uneven")
    assert (uneven["passes"], uneven["total"], uneven["verdict"]) == (20, 30, "pass")
    if broken:
        assert next(r for r in report["rows"] if r["benchmark"] == "broken")["verdict"] == "fail"
        assert "1 failed" in merged.stdout
    assert (pytester.path / "merged.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    # Each shard ran a third of each case's runs, and together every run once.
    parts = [load(pytester, f"s{k}.json") for k in (1, 2, 3)]
    for part in parts:
        assert len([r for r in part["records"] if "bench_uneven" in r["nodeid"]]) == 10
    assert sum(len(p["records"]) for p in parts) == len(expected["records"])


def test_a_shard_fails_on_its_own_ungated_runs_and_the_merge_too(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        bench_x="""
import pytest

@pytest.mark.probability(runs=4)
def bench_flaky(request):
    assert request.node.prob_run != 3
"""
    )
    results = shards(pytester, count=2)
    statuses = sorted(r.ret for r in results)
    assert statuses == [0, 1]
    merged = merge(pytester, "s1.json", "s2.json", "-o", "merged.json")
    assert merged.returncode == 1 == load(pytester, "merged.json")["exit_status"]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("3", "--prob-shard must be K/N, this shard's number K of N shards, e.g. 2/5; got '3'"),
        ("a/b", "got 'a/b'"),
        ("0/2", "--prob-shard must be K/N with 1 <= K <= N, got '0/2'"),
        ("3/2", "--prob-shard must be K/N with 1 <= K <= N, got '3/2'"),
        ("1/0", "--prob-shard must be K/N with 1 <= K <= N, got '1/0'"),
        ("-1/2", "got '-1/2'"),
    ],
)
def test_bad_shard_values_are_usage_errors(pytester: pytest.Pytester, value: str, message: str) -> None:
    pytester.makepyfile(bench_x="def bench_ok():\n    pass\n")
    result = pytester.runpytest("-p", "no:cacheprovider", f"--prob-shard={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()


def test_a_shard_keeps_no_history(pytester: pytest.Pytester) -> None:
    """A shard's report in the history folder would be a baseline of part of the runs."""
    pytester.makepyfile(bench_x="def bench_ok():\n    pass\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "--prob-shard=1/2", "--prob-history=hist")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--prob-history cannot be used with --prob-shard" in result.stderr.str()
    assert not (pytester.path / "hist").exists() or not list((pytester.path / "hist").iterdir())


def test_a_bad_ini_shard_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nprob_shard = 2/1\n")
    pytester.makepyfile(bench_x="def bench_ok():\n    pass\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "ini prob_shard must be K/N with 1 <= K <= N, got '2/1'" in result.stderr.str()


@pytest.fixture
def two_shards(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(bench_x=BENCH)
    for result in shards(pytester, count=2):
        assert result.ret == 0
    return pytester


def refused(pytester: pytest.Pytester, *files: str) -> str:
    result = merge(pytester, *files, "-o", "merged.json")
    assert result.returncode == 2, result.stdout + result.stderr
    assert not (pytester.path / "merged.json").exists()
    return result.stderr


def test_the_merge_refuses_a_shard_given_twice_or_missing(two_shards: pytest.Pytester) -> None:
    assert "s1.json and s1.json are both shard 1/2" in refused(two_shards, "s1.json", "s1.json")
    assert "shard 2/2 missing: got 1/2 (s1.json)" in refused(two_shards, "s1.json")


def test_the_merge_refuses_overlapping_runs_and_names_them(two_shards: pytest.Pytester) -> None:
    first, second = load(two_shards, "s1.json"), load(two_shards, "s2.json")
    stolen = second["records"][0]
    first["records"].append(stolen)
    (two_shards.path / "s1.json").write_text(json.dumps(first), encoding="utf-8")
    message = refused(two_shards, "s1.json", "s2.json")
    assert f"1 run(s) are in both s1.json and s2.json: {stolen['nodeid']}" in message
    # The same run in its wrong shard only (as a shard run with another N or without deselection would have it).
    second["records"].remove(stolen)
    (two_shards.path / "s2.json").write_text(json.dumps(second), encoding="utf-8")
    message = refused(two_shards, "s1.json", "s2.json")
    assert f"s1.json has 1 run(s) of other shards: {stolen['nodeid']}" in message


def test_the_merge_refuses_different_settings_and_suites(two_shards: pytest.Pytester) -> None:
    pytester = two_shards
    assert session(pytester, "--prob-shard=2/2", "--prob-json=other.json", "--prob-confidence=0.9").ret == 0
    message = refused(pytester, "s1.json", "other.json")
    assert (
        "other.json and s1.json were run with different settings (stats_config: level: 0.95 in s1.json, 0.9 in other.json)"
        in message
    )
    assert session(pytester, "--prob-shard=2/3", "--prob-json=third.json").ret == 0
    assert "s1.json is shard 1/2 and third.json is shard 2/3" in refused(pytester, "s1.json", "third.json")
    assert session(pytester, "--prob-shard=2/2", "--prob-json=suite.json", "--prob-suite=nightly").ret == 0
    assert "s1.json is of suite" in refused(pytester, "s1.json", "suite.json")
    # The same case with other marks is another suite.
    changed = load(pytester, "s2.json")
    case = next(c for c in changed["cases"] if c["key"] == "bench_x.py::bench_uneven")
    case["marks"] = [["min_rate", 0.5]]
    first = load(pytester, "s1.json")
    if not any(c["key"] == case["key"] for c in first["cases"]):
        first["cases"].append({**case, "marks": [["min_rate", 0.3]]})
        (pytester.path / "s1.json").write_text(json.dumps(first), encoding="utf-8")
    (pytester.path / "changed.json").write_text(json.dumps(changed), encoding="utf-8")
    assert "are not shards of one suite: case bench_x.py::bench_uneven differs in marks" in refused(
        pytester, "s1.json", "changed.json"
    )
    (pytester.path / "plain.json").write_text(json.dumps({"records": []}), encoding="utf-8")
    assert "plain.json is not a shard's report" in refused(pytester, "s1.json", "plain.json")


def test_shards_send_counters_and_the_merge_the_whole_case_gauges(pytester: pytest.Pytester, monkeypatch) -> None:
    trace = "4bf92f3577b34da6a3ce929d0e0e4736"
    monkeypatch.setenv("TRACEPARENT", f"00-{trace}-00f067aa0ba902b7-01")
    pytester.makepyfile(bench_x=BENCH)
    for k in (1, 2):
        assert (
            session(pytester, f"--prob-shard={k}/2", f"--prob-json=s{k}.json", f"--prob-otel-file=s{k}.jsonl").ret == 0
        )
    from pytest_probability.otel import otlp_json

    shard_points = [flatten_metrics(list(otlp_json.read_file(pytester.path / f"s{k}.jsonl"))) for k in (1, 2)]
    for points in shard_points:
        assert points and not [p.name for p in points if p.type == "gauge"]
        assert {p.type for p in points} == {"sum", "histogram"}
    # The spans of every shard are in the one trace of the shared TRACEPARENT.
    spans = [s for k in (1, 2) for s in flatten_spans(list(otlp_json.read_file(pytester.path / f"s{k}.jsonl")))]
    assert len([s for s in spans if s.name == "probability.session"]) == 2
    assert {s.trace_id for s in spans} == {trace}

    result = merge(pytester, "s1.json", "s2.json", "-o", "merged.json", "--otel-file", "merged.jsonl")
    assert result.returncode == 0, result.stderr
    points = flatten_metrics(list(otlp_json.read_file(pytester.path / "merged.jsonl")))
    gauges = {p.name for p in points if p.type == "gauge"}
    assert {
        "probability.case.pass_fraction",
        "probability.session.pass_fraction",
        "probability.case.gate.verdict",
        "probability.case.interval.lower",
        "probability.case.interval.upper",
    } <= gauges
    verdict = next(p for p in points if p.name == "probability.case.gate.verdict")
    assert verdict.attributes["probability.benchmark"] == "uneven" and verdict.value == 1
    fraction = next(
        p
        for p in points
        if p.name == "probability.case.pass_fraction" and p.attributes["probability.benchmark"] == "uneven"
    )
    assert fraction.value == pytest.approx(20 / 30)

    assert {p.type for p in points} == {"gauge"}  # the counters came from the shards, which add:
    runs = [sum(p.value for p in part if p.name == "probability.runs") for part in shard_points]
    assert sum(runs) == 42 and all(runs)
    # each shard's counters are series of their own, the same every night
    assert [{p.resource["service.instance.id"] for p in part} for part in shard_points] == [
        {"shard-1-of-2"},
        {"shard-2-of-2"},
    ]
    assert all("service.instance.id" not in p.resource for p in points)


def point_views(points: list) -> list[tuple]:
    return sorted((p.name, p.value, tuple(sorted(p.attributes.items()))) for p in points)


def replay(pytester: pytest.Pytester, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.run(
        [sys.executable, "-m", "pytest_probability.otel", "replay", *args],
        cwd=pytester.path,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_the_merge_sends_its_gauges_and_keeps_what_it_could_not_send(pytester: pytest.Pytester, protocol: str) -> None:
    """``merge --otel-endpoint``: the gauges ``--otel-file`` writes, sent as replay sends them; a refusing
    endpoint leaves them in a spill file for replay, and the merge's exit status is the night's either way."""
    pytester.makepyfile(bench_x=BENCH + BROKEN)
    for k in (1, 2):
        assert session(pytester, f"--prob-shard={k}/2", f"--prob-json=s{k}.json").ret == 0
    wire = "grpc" if protocol == "grpc" else "http/protobuf"
    from pytest_probability.otel import otlp_json

    with OtlpReceiver(protocol) as rx:
        result = merge(
            pytester,
            "s1.json",
            "s2.json",
            "-o",
            "merged.json",
            "--otel-file",
            "merged.jsonl",
            "--otel-endpoint",
            rx.endpoint,
            "--otel-protocol",
            wire,
        )
        assert result.returncode == 1, result.stderr  # broken's gate fails over all runs
        assert f"sent 1 metric requests to http://127.0.0.1:{rx.port}" in result.stdout, result.stdout
        written = flatten_metrics(list(otlp_json.read_file(pytester.path / "merged.jsonl")))
        assert written and point_views(rx.points()) == point_views(written)
        assert rx.counts == {"traces": 0, "metrics": 1, "logs": 0}
        # The file counts as sent: replaying it (the nightly's next step) sends nothing twice.
        again = replay(pytester, "merged.jsonl", "--endpoint", rx.endpoint, "--protocol", wire)
        assert again.returncode == 0 and "nothing to send" in again.stdout, again.stderr
        # Without --otel-file, nothing is left behind once sent.
        rx.clear()
        result = merge(
            pytester, "s1.json", "s2.json", "-o", "merged.json", "--otel-endpoint", rx.endpoint, "--otel-protocol", wire
        )
        assert result.returncode == 1 and point_views(rx.points()) == point_views(written), result.stderr
        assert not list(pytester.path.glob(".pytest-probability/*"))

    with OtlpReceiver(protocol, mode="refuse") as refusing:
        result = merge(
            pytester,
            "s1.json",
            "s2.json",
            "-o",
            "merged.json",
            "--otel-endpoint",
            refusing.endpoint,
            "--otel-protocol",
            wire,
            "--otel-timeout",
            "3",
        )
    assert result.returncode == 1, result.stderr  # exporting never changes the exit status
    spills = list(pytester.path.glob(".pytest-probability/otel-spill-*.jsonl"))
    assert len(spills) == 1, result.stderr
    assert "warning: the merged metrics were not sent (sending to" in result.stderr
    assert f"python -m pytest_probability.otel replay {spills[0]}" in result.stderr
    with OtlpReceiver(protocol) as later:
        sent = replay(pytester, str(spills[0]), "--endpoint", later.endpoint, "--protocol", wire)
        assert sent.returncode == 0, sent.stderr
        assert point_views(later.points()) == point_views(written)


def test_the_merge_reads_the_protocol_from_the_environment_for_a_grpc_host_and_port(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``OTEL_EXPORTER_OTLP_PROTOCOL=grpc`` and ``--otel-endpoint host:port`` (no scheme, as gRPC allows; TLS
    then, unless ``OTEL_EXPORTER_OTLP_INSECURE``, as the SDK reads it)."""
    pytester.makepyfile(bench_x=BENCH)
    for k in (1, 2):
        assert session(pytester, f"--prob-shard={k}/2", f"--prob-json=s{k}.json").ret == 0
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_INSECURE", "true")
    with OtlpReceiver("grpc") as rx:
        result = merge(pytester, "s1.json", "s2.json", "-o", "merged.json", "--otel-endpoint", f"127.0.0.1:{rx.port}")
        assert result.returncode == 0, result.stderr
        assert rx.counts["metrics"] == 1 and rx.points(), result.stdout


def test_a_spill_the_merge_cannot_write_is_a_warning_not_its_exit_status(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(bench_x=BENCH)
    for k in (1, 2):
        assert session(pytester, f"--prob-shard={k}/2", f"--prob-json=s{k}.json").ret == 0
    (pytester.path / ".pytest-probability").write_text("a file where the spill's folder would be")
    result = merge(pytester, "s1.json", "s2.json", "-o", "merged.json", "--otel-endpoint", "http://127.0.0.1:9")
    assert result.returncode == 0, result.stderr  # the night's status: every gate passed
    assert "warning: the merged metrics were not sent: cannot write" in result.stderr
    assert (pytester.path / "merged.json").exists()
    # An --otel-file that cannot be written is an output that failed, as --html: exit 2.
    result = merge(pytester, "s1.json", "s2.json", "-o", "merged.json", "--otel-file", ".pytest-probability/m.jsonl")
    assert result.returncode == 2 and "error: cannot write" in result.stderr, result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--otel-endpoint", "ftp://127.0.0.1:1"],
            "--otel-endpoint: 'ftp://127.0.0.1:1' is not an http:// or https:// URL",
        ),
        (["--otel-send", "--otel-timeout", "0"], "--otel-timeout must be a number of seconds > 0, got 0.0"),
        (["--otel-send", "--otel-timeout", "nan"], "--otel-timeout must be a number of seconds > 0, got nan"),
        (["--otel-timeout", "5"], "--otel-timeout applies to sending the merged metrics: add --otel-send"),
        (
            ["--otel-protocol", "grpc", "--otel-timeout", "5"],
            "--otel-protocol and --otel-timeout apply to sending the merged metrics: add --otel-send",
        ),
    ],
    ids=["endpoint", "timeout-zero", "timeout-nan", "timeout-alone", "protocol-and-timeout-alone"],
)
def test_the_merges_otlp_options_are_checked_before_anything_is_written(
    pytester: pytest.Pytester, args: list[str], message: str
) -> None:
    pytester.makepyfile(bench_x=BENCH)
    for k in (1, 2):
        assert session(pytester, f"--prob-shard={k}/2", f"--prob-json=s{k}.json").ret == 0
    result = merge(pytester, "s1.json", "s2.json", "-o", "merged.json", *args)
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert not (pytester.path / "merged.json").exists()


AB = """
import pytest


@pytest.mark.probability(runs=10, compare="style", baseline="terse", margin=0.1)
@pytest.mark.parametrize("style", ["cot", "terse"])
@pytest.mark.parametrize("q", list("abcdefghijkl"))
def bench_ab(style, q, request):
    if style == {worse!r}:
        assert request.node.prob_run <= 6
"""


@pytest.mark.parametrize("worse", ["terse", "cot"], ids=["arm-passes", "arm-fails"])
def test_the_merge_compares_ab_arms_as_the_session(pytester: pytest.Pytester, worse: str) -> None:
    pytester.makepyfile(bench_ab=AB.format(worse=worse))
    whole = session(pytester, "--prob-json=whole.json")
    results = shards(pytester, count=2)
    assert [r.ret for r in results] == [0, 0]  # a shard compares nothing
    assert "decided at the merge" in results[0].stdout.str() and results[0].parseoutcomes()["skipped"] == 1
    merged = merge(pytester, "s1.json", "s2.json", "-o", "merged.json")
    expected, report = load(pytester, "whole.json"), load(pytester, "merged.json")
    assert merged.returncode == whole.ret == expected["exit_status"] == (1 if worse == "cot" else 0), merged.stderr
    assert report["comparisons"] == expected["comparisons"]
    assert report["comparisons"][0]["verdict"] == ("fail" if worse == "cot" else "pass")
    assert "ab [style] cot vs terse" in merged.stdout
    # A baseline the shards were not judged by is refused.
    pytester.path.joinpath("base.json").write_text(pytester.path.joinpath("whole.json").read_text())
    refused = merge(pytester, "s1.json", "s2.json", "-o", "other.json", "--prob-baseline=base.json")
    assert refused.returncode == 2 and "the shards were run without a baseline (s1.json)" in refused.stderr


NIGHT = """
import pytest


@pytest.mark.probability(runs=10)
@pytest.mark.parametrize("case", [f"c{{i:02d}}" for i in range(12)])
def bench_cls(case, request):
    assert {night} == 1 or request.node.prob_run <= 3, "dropped"
"""


def test_the_merge_compares_with_a_baseline_as_the_session(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(bench_x=NIGHT.format(night=1))
    assert session(pytester, "--prob-json=night1.json").ret == 0
    pytester.makepyfile(bench_x=NIGHT.format(night=2))
    baseline = ["--prob-baseline=night1.json", "--prob-margin=0.05"]
    whole = session(pytester, "--prob-json=whole.json", *baseline)
    assert whole.ret == 1
    results = shards(pytester, count=2, extra={1: baseline, 2: baseline})
    assert [r.ret for r in results] == [0, 0]  # the baseline judges the cases (their failures xfail): the merge decides
    merged = merge(pytester, "s1.json", "s2.json", "-o", "merged.json", "--prob-baseline=night1.json")
    expected, report = load(pytester, "whole.json"), load(pytester, "merged.json")
    assert merged.returncode == 1
    strip = lambda b: {k: v for k, v in b.items() if k not in ("paths",)}  # noqa: E731
    assert strip(report["baseline"]) == strip(expected["baseline"])
    assert report["baseline"]["verdicts"]["fail"] == 12
    # Without the baseline the merge cannot compare, and says so.
    without = merge(pytester, "s1.json", "s2.json", "-o", "merged.json")
    assert without.returncode == 2 and "--prob-baseline" in without.stderr


def test_a_shard_whose_runs_are_all_in_other_shards_exits_0_and_writes_its_report(pytester: pytest.Pytester) -> None:
    """More shards than runs: the empty shards executed nothing (pytest's exit status 5), but they are
    shards all the same; the merge needs every one. A shard that collected no run at all keeps its 5."""
    pytester.makepyfile(
        bench_x='import pytest\n\n\n@pytest.mark.parametrize("w", ["a", "b"])\ndef bench_one(w):\n    pass\n'
    )
    whole = session(pytester, "--prob-json=whole.json")
    assert whole.ret == 0
    # Shards 1 and 2 under xdist: the worker tells its controller what it deselected.
    results = shards(pytester, 5, extra={k: ["-n", "2"] for k in (1, 2)})
    assert [r.ret for r in results] == [0] * 5, [r.stdout.str() for r in results]
    empty = [k for k in range(1, 6) if not load(pytester, f"s{k}.json")["records"]]
    assert len(empty) >= 3
    result = merge(pytester, *[f"s{k}.json" for k in range(1, 6)], "-o", "merged.json")
    assert result.returncode == 0, result.stderr
    assert stable(load(pytester, "merged.json")["records"]) == stable(load(pytester, "whole.json")["records"])
    nothing = session(pytester, "--prob-shard=1/5", "--prob-json=none.json", "-k", "no_such_case")
    assert nothing.ret == 5 and not (pytester.path / "none.json").exists()


# -- issue 36: shards of another suite, malformed reports, bounds and path clashes -------------------------------

OTHER_FILE = """
import pytest


@pytest.mark.probability(runs=4, min_rate=0.5)
def bench_b(request):
    assert request.node.prob_run % 2
"""


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_shards_of_two_versions_of_the_suite_are_refused(pytester: pytest.Pytester, xdist: list[str]) -> None:
    """Issue 36, defect 1: shard 1/2 ran without bench_b.py and shard 2/2 with it (same suite name, same
    settings). Merged, bench_b would be judged on the runs of one shard; the merge refuses, naming both files."""
    pytester.makepyfile(bench_a=BENCH)
    assert session(pytester, *xdist, "--prob-shard=1/2", "--prob-json=s1.json").ret == 0
    pytester.makepyfile(bench_b=OTHER_FILE)
    assert session(pytester, *xdist, "--prob-shard=2/2", "--prob-json=s2.json").ret == 0
    message = refused(pytester, "s1.json", "s2.json")
    assert message.startswith(
        "error: s2.json and s1.json are not shards of one suite: they collected different "
        "cases (3 cases, 42 runs in s1.json; 4 cases, 46 runs in s2.json)"
    ), message
    # The same suite in both: merged, as the unsharded session.
    assert session(pytester, *xdist, "--prob-shard=1/2", "--prob-json=s1.json").ret == 0
    whole = session(pytester, "--prob-json=whole.json")
    merged = merge(pytester, "s1.json", "s2.json", "-o", "merged.json")
    assert merged.returncode == whole.ret == 1, merged.stderr  # bench_b's gate: 2/4 against 0.5, UNDECIDED
    assert load(pytester, "merged.json")["rows"] == load(pytester, "whole.json")["rows"]


def shard_report(pytester: pytest.Pytester) -> dict:
    """A real shard's report (1/2 of BENCH), with a record, a skipped run and a case of each kind."""
    return load(pytester, "s1.json")


def _set(report: dict, path: tuple, value: object) -> None:
    *inner, last = path
    target = report
    for part in inner:
        target = target[part]
    if value is DELETE:
        del target[last]
    else:
        target[last] = value


DELETE = object()
MALFORMED = {
    # what: (the field's path in the report, the value put there (DELETE: removed), what the error names)
    "no-shard-count": (("shard", "count"), DELETE, "shard.count is missing"),
    "no-shard-index": (("shard", "index"), DELETE, "shard.index is missing"),
    "shard-index-text": (("shard", "index"), "1", "shard.index must be a whole number from 1 to"),
    "shard-count-float": (("shard", "count"), 2.0, "shard.count must be a whole number from 1 to 1000"),
    "shard-index-above-count": (("shard", "index"), 3, "shard.index must be a whole number from 1 to 2 (shard.count)"),
    "shard-count-huge": (
        ("shard", "count"),
        10**9,
        "shard.count must be a whole number from 1 to 1000, got 1000000000",
    ),
    "shard-suite": (("shard", "suite"), 7, "shard.suite must be text"),
    "runs-selected": (("shard", "runs_selected"), [], "shard.runs_selected must be an object"),
    "runs-selected-value": (
        ("shard", "runs_selected", "bench_x.py::bench_uneven"),
        "ten",
        "shard.runs_selected['bench_x.py::bench_uneven'] must be a whole number",
    ),
    "collected": (("shard", "collected"), "abc", "shard.collected must be an object, got 'abc'"),
    "compare": (("shard", "compare"), [1], "shard.compare must be an object or null"),
    "no-cases": (("cases",), DELETE, "cases is missing"),
    "cases-object": (("cases",), {}, "cases must be an array"),
    "case-not-object": (("cases", 0), "bench_x.py::bench_uneven", "cases[0] must be an object"),
    "no-case-key": (("cases", 0, "key"), DELETE, "cases[0].key is missing"),
    "case-key-number": (("cases", 0, "key"), 3, "cases[0].key must be text"),
    "case-runs": (("cases", 0, "runs"), "30", "cases[0].runs must be a whole number of at least 1"),
    "case-params": (("cases", 0, "params"), [["word"]], "cases[0].params[0] must be a pair [name, text]"),
    "case-marks": (
        ("cases", 0, "marks"),
        [["min_rate", 7]],
        "cases[0].marks[0]: probability(min_rate=...) must be in (0, 1]",
    ),
    "case-mark-unknown": (
        ("cases", 0, "marks"),
        [["nope", 1]],
        "cases[0].marks[0]: 'nope' is no probability() keyword",
    ),
    "no-records": (("records",), DELETE, "records is missing"),
    "records-object": (("records",), {}, "records must be an array"),
    "skipped-runs": (("skipped_runs",), 3, "skipped_runs must be an array"),
    "record-not-object": (("records", 0), None, "records[0] must be an object"),
    "no-record-nodeid": (("records", 0, "nodeid"), DELETE, "records[0].nodeid is missing"),
    "no-record-run": (("records", 0, "run"), DELETE, "records[0].run is missing"),
    "record-run-text": (("records", 0, "run"), "one", "records[0].run must be a whole number of at least 1, got 'one'"),
    "record-run-zero": (("records", 0, "run"), 0, "records[0].run must be a whole number of at least 1, got 0"),
    "no-record-case-key": (("records", 0, "case_key"), DELETE, "records[0].case_key is missing"),
    "record-outcome": (
        ("records", 0, "outcome"),
        "maybe",
        "records[0].outcome must be one of pass, fail, error, skip, got 'maybe'",
    ),
    "record-duration": (("records", 0, "duration"), "1s", "records[0].duration must be a number of at least 0"),
    "record-phase": (("records", 0, "phase"), "lunch", "records[0].phase must be one of setup, call, teardown"),
    "record-message": (("records", 0, "message"), 5, "records[0].message must be text or null"),
    "record-usage": (
        ("records", 0, "usage"),
        [{"model": "m", "input_tokens": "many"}],
        "records[0].usage[0].input_tokens must be a whole number of at least 0",
    ),
    "record-usage-list": (("records", 0, "usage"), {"model": "m"}, "records[0].usage must be an array"),
    "record-retries": (("records", 0, "retries"), [3], "records[0].retries[0] must be an object"),
    "record-stopped": (("records", 0, "stopped"), "bored", "records[0].stopped must be one of decided, budget or null"),
    "record-scores": (("records", 0, "scores"), {"name": "score"}, "records[0].scores must be an array"),
    "record-score-value": (
        ("records", 0, "scores"),
        [{"name": "score", "value": "high"}],
        "records[0].scores[0].value must be a finite number",
    ),
    "record-score-name": (
        ("records", 0, "scores"),
        [{"name": "", "value": 0.5}],
        "records[0].scores[0].name must be text, not empty",
    ),
    "record-score-threshold": (
        ("records", 0, "scores"),
        [{"name": "score", "value": 0.5, "threshold": "x"}],
        "records[0].scores[0].threshold must be a finite number or null",
    ),
    "no-settings": (("settings",), DELETE, "settings is missing"),
    "settings-budget": (("settings", "max_cost"), "5", "settings.max_cost must be a number of at least 0 or null"),
    "no-stats-config": (("stats_config",), DELETE, "stats_config is missing"),
    "stats-config-level": (("stats_config", "level"), "high", "stats_config.level"),
    "stats-config-missing-key": (("stats_config", "method"), DELETE, "stats_config.method is missing"),
    "exit-status": (("exit_status",), "0", "exit_status must be a whole number"),
}


@pytest.mark.parametrize("what", list(MALFORMED))
def test_a_malformed_shard_report_is_refused_naming_the_file_and_the_field(
    two_shards: pytest.Pytester, what: str
) -> None:
    """Issue 36, defect 2: every malformed input is exit 2 with ``error:``, the file and the field; never a
    traceback (exit 1, which the documented CI script tolerates)."""
    field, value, named = MALFORMED[what]
    report = shard_report(two_shards)
    assert report["records"] and report["cases"]
    _set(report, field, value)
    (two_shards.path / "bad.json").write_text(json.dumps(report), encoding="utf-8")
    result = merge(two_shards, "bad.json", "s2.json", "-o", "merged.json")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("error: bad.json: "), result.stderr
    assert named in result.stderr, result.stderr
    assert not (two_shards.path / "merged.json").exists()


def test_a_shard_count_beyond_the_bound_is_a_usage_error(pytester: pytest.Pytester) -> None:
    """Issue 36, defect 3: N is at most 1000 (a shard per CI job)."""
    pytester.makepyfile(bench_x="def bench_ok():\n    pass\n")
    for value in ("1/1000000000", "1/1001"):
        result = pytester.runpytest("-p", "no:cacheprovider", f"--prob-shard={value}")
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        assert f"--prob-shard must be K/N with 1 <= K <= N <= 1000, got '{value}'" in result.stderr.str()
    assert pytester.runpytest("-p", "no:cacheprovider", "--prob-shard=1000/1000").ret == 0


def test_missing_shards_are_counted_not_listed(two_shards: pytest.Pytester) -> None:
    """Issue 36, defect 3: the missing-shard message of a report of shard 1/1000 counts the other 999."""
    report = load(two_shards, "s1.json")
    report["shard"]["count"] = 1000
    report["records"] = [r for r in report["records"] if shard_of(r["case_key"], r["run"], 1000) == 1]
    report["skipped_runs"] = []
    (two_shards.path / "one.json").write_text(json.dumps(report), encoding="utf-8")
    message = refused(two_shards, "one.json")
    assert (
        "999 shards missing (2/1000, 3/1000, 4/1000, 5/1000, 6/1000 and 994 more): got 1/1000 (one.json); "
        "merge all 1000 shards" in message
    ), message
    assert len(message) < 300
    # A hand-edited N far beyond the bound is refused as such, at once.
    report["shard"]["count"] = 10**9
    (two_shards.path / "huge.json").write_text(json.dumps(report), encoding="utf-8")
    result = merge(two_shards, "huge.json", "-o", "merged.json")
    assert result.returncode == 2 and "huge.json: shard.count must be a whole number from 1 to 1000" in result.stderr


@pytest.mark.parametrize(
    "output",
    [
        ["-o", "s1.json"],
        ["-o", "./s2.json"],
        ["-o", "link.json"],
        ["-o", "merged.json", "--html", "s2.json"],
        ["-o", "merged.json", "--otel-file", "s1.json"],
        ["-o", "merged.json", "--html", "merged.json"],
    ],
    ids=["output", "output-spelled-otherwise", "output-symlink", "html", "otel-file", "html-is-output"],
)
def test_an_output_of_the_merge_that_is_one_of_its_inputs_is_refused(
    two_shards: pytest.Pytester, output: list[str]
) -> None:
    """Issue 36, defect 4: ``merge … -o`` equal to one of its inputs would overwrite that shard's report, so the
    merge could not be run again."""
    (two_shards.path / "link.json").symlink_to("s1.json")
    before = {name: (two_shards.path / name).read_bytes() for name in ("s1.json", "s2.json")}
    result = merge(two_shards, "s1.json", "s2.json", *output)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.startswith("error: "), result.stderr
    assert "give the merged" in result.stderr, result.stderr
    assert {name: (two_shards.path / name).read_bytes() for name in before} == before
    assert not (two_shards.path / "merged.json").exists()


PRICED = """
from pytest_probability import record_usage
import pytest


@pytest.mark.probability(runs=6, min_rate=0.1)
def bench_priced():
    record_usage(model="m", input_tokens=1000, output_tokens=100)
"""


def test_shards_run_in_different_checkout_folders_merge(pytester: pytest.Pytester) -> None:
    """Issue 36, defect 5: each shard's report held the absolute path of its prices file, so shards of two CI
    workspaces were refused as of other settings. The prices' content is compared (``settings.prices_digest``)."""
    checkouts = [pytester.path / "runner-1" / "proj", pytester.path / "runner-2" / "proj"]
    for k, checkout in enumerate(checkouts, start=1):
        checkout.mkdir(parents=True)
        (checkout / "bench_x.py").write_text(PRICED, encoding="utf-8")
        (checkout / "prices.toml").write_text("[m]\ninput = 1.0\noutput = 2.0\n", encoding="utf-8")
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-p",
                "no:cacheprovider",
                f"--prob-shard={k}/2",
                "--prob-prices=prices.toml",
                f"--prob-json={pytester.path / f's{k}.json'}",
            ],
            cwd=checkout,
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        )
        assert result.returncode == 0, result.stdout + result.stderr
    first, second = load(pytester, "s1.json"), load(pytester, "s2.json")
    assert first["settings"]["prices"] == str(checkouts[0] / "prices.toml")  # where it was, as before
    assert first["settings"]["prices_digest"] == second["settings"]["prices_digest"]
    assert first["settings"]["prices_digest"].startswith("sha256:")
    merged = merge(pytester, "s1.json", "s2.json", "-o", "merged.json")
    assert merged.returncode == 0, merged.stderr
    assert load(pytester, "merged.json")["totals"]["cost"] == pytest.approx(6 * (1000 * 1.0 + 100 * 2.0) / 1e6)
    # Other prices are other settings.
    (pytester.path / "merged.json").unlink()
    (checkouts[1] / "prices.toml").write_text("[m]\ninput = 1.5\noutput = 2.0\n", encoding="utf-8")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "--prob-shard=2/2",
            "--prob-prices=prices.toml",
            f"--prob-json={pytester.path / 's2.json'}",
        ],
        cwd=checkouts[1],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    message = refused(pytester, "s1.json", "s2.json")
    assert "s2.json and s1.json were run with different settings (settings: prices_digest: 'sha256:" in message, message


RICH = """
import pytest
from pytest_probability import record_output, record_usage


@pytest.mark.probability(runs=6, min_rate=0.3, max_latency=5.0)
def bench_gated(request):
    record_usage(model="m", input_tokens=10, output_tokens=3, cost=0.01)
    record_output("hello", prompt="p")
    assert request.node.prob_run % 3


@pytest.mark.probability(runs=4, compare="style", baseline="a", margin=0.1)
@pytest.mark.parametrize("style", ["a", "b"])
@pytest.mark.parametrize("q", list("abcdefghijkl"))
def bench_ab(style, q, request):
    if request.node.prob_run == 2:
        pytest.skip("skipped on purpose")
    assert style == "a" or request.node.prob_run != 3
"""
JUNK = [None, 0, -1, 1.5, float("nan"), 10**30, "", "x", [], {}, [1], {"a": 1}, True, ["a", "b"], [["a"]]]


def paths_in(value: object, prefix: tuple = ()):
    """Every path into a JSON value (the first three items of each array)."""
    if prefix:
        yield prefix
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from paths_in(inner, prefix + (key,))
    elif isinstance(value, list):
        for i, inner in enumerate(value[:3]):
            yield from paths_in(inner, prefix + (i,))


def mutated(value: object, rng, junk: list) -> object:
    """``value`` with one or two fields removed or replaced by junk of another kind."""
    value = json.loads(json.dumps(value))
    paths = list(paths_in(value))
    for _ in range(rng.choice([1, 1, 2])):
        *inner, last = rng.choice(paths)
        target = value
        try:
            for part in inner:
                target = target[part]
            if isinstance(target, dict) and rng.random() < 0.3:
                target.pop(last, None)
            else:
                target[last] = json.loads(json.dumps(rng.choice(junk)))
        except (KeyError, IndexError, TypeError):
            continue
    return value


def test_no_malformed_shard_report_gives_a_traceback(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 36, defect 2, at large: 300 shard reports each with a field or two removed or replaced by a value
    of another kind (seeded). The merge refuses each with its error (exit 2) or merges it; nothing else
    escapes it, nor the writing of what it merged."""
    import argparse
    import random

    from pytest_probability.features.compare.feature import ComparisonFeature
    from pytest_probability.features.shards.merge import gate_lines
    from pytest_probability.features.shards.merge import merge as merge_reports
    from pytest_probability.features.spend.feature import Spend
    from pytest_probability.report import html_report, json_report

    pytester.makepyfile(bench_x=RICH)
    for k in (1, 2):
        assert session(pytester, f"--prob-shard={k}/2", f"--prob-json=s{k}.json", "--prob-max-cost=100").ret == 0
    base = load(pytester, "s1.json")
    assert base["records"] and base["skipped_runs"] and base["shard"]["compare"] and base["cases"]
    monkeypatch.chdir(pytester.path)
    rng = random.Random(36)
    for _ in range(300):
        (pytester.path / "bad.json").write_text(json.dumps(mutated(base, rng, JUNK)), encoding="utf-8")
        try:
            merged = merge_reports(
                ["bad.json", "s2.json"], (Spend(), ComparisonFeature(on=False)), argparse.Namespace(prob_baseline=[])
            )
        except ValueError:  # the merge's errors (MergeError among them): exit 2 with error:
            continue
        json_report.dumps(merged.report)
        html_report.render(merged.report, trace_url=None)
        gate_lines(merged)
