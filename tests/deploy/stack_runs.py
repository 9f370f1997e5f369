"""Sessions of the plugin exported into the real stack (deploy/stack.py's
``Stack``: the Collector, Jaeger v2, Prometheus 3 and Alertmanager as
``make backends`` builds them, with deploy/'s files, on free loopback ports),
and what the programs then hold.

Each ``run_*`` function starts its own stack in its own folder, runs real
sessions against it, waits (bounded) until the Collector reports every span
and metric point sent, reads back what Jaeger and Prometheus hold, stops the
stack and returns a JSON-able dict; the tests only read that dict
(``alert_path.shared`` runs each once per test session, also under xdist).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml
from alert_path import rules_overlay, run_dashboard_queries, write_yaml
from backends import (
    collector_metric,
    deploy_stack,
    http_json,
    http_status,
    jaeger_traces,
    prom_query,
    stored_series,
    wait_for,
)
from promql_names import rule_expressions
from real_export import SKIPPED_BENCH, run_session, session_env
from stored import read_points, span_ids

#: Span batches leave the plugin every 200 ms (the SDK's default is 5 s).
FAST_BATCHES = {"OTEL_BSP_SCHEDULE_DELAY": "200"}
#: The Collector's exporters, as named in deploy/otel-collector/config.yaml.
TRACES_EXPORTER = "otlp_grpc/jaeger"
METRICS_EXPORTER = "otlp_http/prometheus"


def start_stack(workdir: Path, backends: Path, rules_dir: Path | None = None, **kwargs) -> deploy_stack.Stack:
    stack = deploy_stack.Stack(workdir, deploy_stack.free_ports(), backends, rules_dir=rules_dir, **kwargs)
    try:
        stack.start()
    except BaseException:
        stack.stop()
        raise
    return stack


def short_rules(folder: Path) -> Path:
    """deploy/'s rule files with the group interval and every for: at 1 s (alert_path.rules_overlay)."""
    for name, doc in rules_overlay().items():
        write_yaml(folder / name, doc)
    return folder


def sent(stack) -> dict[str, float]:
    """What the Collector's exporters report: sent and failed spans and metric points."""
    return {
        "spans": collector_metric(stack, "otelcol_exporter_sent_spans", exporter=TRACES_EXPORTER),
        "points": collector_metric(stack, "otelcol_exporter_sent_metric_points", exporter=METRICS_EXPORTER),
        "failed_spans": collector_metric(stack, "otelcol_exporter_send_failed_spans", exporter=TRACES_EXPORTER),
        "failed_points": collector_metric(
            stack, "otelcol_exporter_send_failed_metric_points", exporter=METRICS_EXPORTER
        ),
        "queued": collector_metric(stack, "otelcol_exporter_queue_size"),
    }


def wait_sent(stack, spans: int, points: int, timeout: float = 90.0) -> dict[str, float]:
    """Until the Collector has sent at least ``spans`` spans to Jaeger and ``points`` metric points to
    Prometheus (its own counters, since it started) and its queues are empty."""
    return wait_for(
        lambda: (s := sent(stack))["spans"] >= spans and s["points"] >= points and not s["queued"] and s,
        timeout,
        f"the Collector sending {spans} spans and {points} metric points ({sent(stack)})",
    )


def export_counts(otlp: Path) -> tuple[int, int]:
    return len(span_ids(otlp)), len(read_points(otlp)[1])


def evaluations_after(prom: str, t: float, n: int = 3, timeout: float = 60.0) -> None:
    """Until every rule group has been evaluated ``n`` times after ``t`` (a 1 s group interval)."""

    def evaluated():
        groups = http_json(f"{prom}/api/v1/rules")["data"]["groups"]
        return groups and all(g.get("lastEvaluation", "") > _iso(t + n * g["interval"]) for g in groups)

    wait_for(evaluated, timeout, f"{n} rule evaluations after the export")


def _iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int((t % 1) * 1e6):06d}"


def plugin_notes(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines() if line.startswith("OpenTelemetry:")]


# ---------------------------------------------------------------------------
# One nightly session (real_export.BENCH), and one whose runs were all skipped
# ---------------------------------------------------------------------------
def run_one_session(workdir: Path, backends: Path) -> dict[str, Any]:
    stack = start_stack(workdir / "stack", backends, rules_dir=short_rules(workdir / "rules"))
    try:
        env = {"OTEL_EXPORTER_OTLP_ENDPOINT": stack.otlp_http, **FAST_BATCHES}
        proc, otlp = run_session(workdir / "nightly", env=env)
        skipped_proc, skipped_otlp = run_session(
            workdir / "skipped", bench=SKIPPED_BENCH, suite="nightly-skipped", env=env
        )
        spans, points = (a + b for a, b in zip(export_counts(otlp), export_counts(skipped_otlp), strict=False))
        delivered = wait_sent(stack, spans, points)
        t = time.time()
        evaluations_after(stack.prometheus, t)
        series = stored_series(stack.prometheus)
        rules = http_json(f"{stack.prometheus}/api/v1/rules")["data"]["groups"]
        recording, alert_exprs = [], []
        for e in rule_expressions():
            got = len(prom_query(stack.prometheus, e.expr))
            if e.record:
                recording.append(
                    {
                        "record": e.record,
                        "source": e.source,
                        "expr": e.expr,
                        "series": got,
                        "stored": len(prom_query(stack.prometheus, e.record)),
                    }
                )
            else:
                alert_exprs.append({"source": e.source, "expr": e.expr, "series": got})
        dashboard = run_dashboard_queries(stack.prometheus, time.time())
        buildinfo = http_json(f"{stack.prometheus}/api/v1/status/buildinfo")["data"]
        config = http_json(f"{stack.prometheus}/api/v1/status/config")["data"]["yaml"]
        return {
            "session_dir": str(otlp.parent),
            "otlp_file": str(otlp),
            "skipped_otlp_file": str(skipped_otlp),
            "notes": plugin_notes(proc.stdout) + plugin_notes(skipped_proc.stdout),
            "exported": {"spans": spans, "points": points},
            "delivered": delivered,
            "final_sent": sent(stack),
            "series": series,
            "rules": [
                {
                    "group": g["name"],
                    "rules": [
                        {
                            "name": r["name"],
                            "type": r["type"],
                            "health": r["health"],
                            "lastError": r.get("lastError", ""),
                        }
                        for r in g["rules"]
                    ],
                }
                for g in rules
            ],
            "recording": recording,
            "alert_exprs": alert_exprs,
            "dashboard": dashboard,
            "prometheus_version": buildinfo["version"],
            "prometheus_config": yaml.safe_load(config),
            "logs": stack.logs(20),
        }
    finally:
        stack.stop()


# ---------------------------------------------------------------------------
# The errored run, found as a user would
# ---------------------------------------------------------------------------
OPENAI_CONFTEST = """
import os

import genai_server
from opentelemetry.instrumentation.genai.openai import OpenAIInstrumentor

os.environ["OPENAI_BASE_URL"] = genai_server.start()
os.environ["OPENAI_API_KEY"] = "test-key"
OpenAIInstrumentor().instrument()  # no tracer provider of its own: the plugin's
"""

#: triage::chain_of_thought times out in every other run, after its model call.
TRIAGE_BENCH = """
import itertools

import openai
import pytest

MESSAGES = [{"role": "user", "content": "Is the outage in eu-west?"}]
_calls = itertools.count()


@pytest.mark.parametrize("prompt", ["plain", "chain_of_thought"])
def bench_triage(prompt):
    reply = openai.OpenAI().chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)
    if prompt == "chain_of_thought" and next(_calls) % 2 == 0:
        raise TimeoutError("request to m-large timed out after 30 s")
    assert reply.choices[0].message.content in ("yes", "no", "maybe")
"""
GENAI_SERVER = Path(__file__).resolve().parents[1] / "genai_server.py"


def run_errored_run(workdir: Path, backends: Path) -> dict[str, Any]:
    stack = start_stack(workdir / "stack", backends)
    try:
        bench = workdir / "triage"
        # docs/observability.md, "From the HTML report": the Jaeger UI's trace page.
        ini = f"[pytest]\nprob_trace_url = {stack.jaeger}/trace/{{trace_id}}\n"
        proc, otlp = run_session(
            bench,
            bench=TRIAGE_BENCH,
            runs=4,
            suite="nightly-triage",
            ini=ini,
            files={"conftest.py": OPENAI_CONFTEST, "genai_server.py": GENAI_SERVER.read_text()},
            env={"OTEL_EXPORTER_OTLP_ENDPOINT": stack.otlp_http, **FAST_BATCHES},
            args=[f"--prob-html={bench / 'report.html'}"],
        )
        spans, points = export_counts(otlp)
        delivered = wait_sent(stack, spans, points)
        jaeger = stack.jaeger
        found = wait_for(
            lambda: _search(jaeger, {"probability.outcome": "error"}), 30, "Jaeger finding the errored runs' trace"
        )
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=bench, capture_output=True, text=True, check=True
        ).stdout.strip()
        return {
            "jaeger": jaeger,
            "report": json.loads((bench / "report.json").read_text()),
            "html": (bench / "report.html").read_text(),
            "otlp_span_ids": span_ids(otlp),
            "head": head,
            "notes": plugin_notes(proc.stdout),
            "delivered": delivered,
            "by_outcome": found,
            "by_outcome_and_case": _search(
                jaeger, {"probability.outcome": "error", "probability.case": "chain_of_thought"}
            ),
            "by_outcome_plain": _search(jaeger, {"probability.outcome": "error", "probability.case": "plain"}),
            "by_operation": _search(jaeger, None, operation="probability.run triage::chain_of_thought"),
            "services": http_json(f"{jaeger}/api/services")["data"],
            "operations": http_json(f"{jaeger}/api/services/pytest-probability/operations")["data"],
            # Each trace link of the HTML report, through Jaeger's API and as a page.
            "links": _links(jaeger, (bench / "report.html").read_text()),
        }
    finally:
        stack.stop()


def _search(jaeger: str, tags: dict | None, operation: str | None = None) -> list[dict]:
    return jaeger_traces(jaeger, "pytest-probability", tags, operation, limit=20)


def _links(jaeger: str, html: str) -> list[dict]:
    out = []
    for href in re.findall(r'<a class="trace" href="([^"]+)"', html):
        href = href.replace("&amp;", "&")
        page_status, page = http_status(href)
        trace_id = href.rstrip("/").rsplit("/", 1)[-1]
        api_status, body = http_status(f"{jaeger}/api/traces/{trace_id}")
        out.append(
            {
                "href": href,
                "page_status": page_status,
                "page_is_html": b"<html" in page[:500].lower(),
                "api_status": api_status,
                "api": json.loads(body) if api_status == 200 else None,
            }
        )
    return out


# ---------------------------------------------------------------------------
# Plumbing shared with the other runs
# ---------------------------------------------------------------------------
def replay(path: Path, endpoint: str, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    return subprocess.run(
        [sys.executable, "-m", "pytest_probability.otel", "replay", str(path), "--endpoint", endpoint],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


# ---------------------------------------------------------------------------
# The Collector down during a session, then up: spill and replay
# ---------------------------------------------------------------------------
#: 12 runs of three cases. At the 7th run the benchmark itself waits until the
#: Collector has sent some spans to Jaeger (so that part of the session got
#: through), then stops the Collector (SIGTERM, as a restart would) and waits
#: until its port is closed; the remaining runs' spans and the session's
#: metrics then fail to export and go to the spill file.
OUTAGE_BENCH = """
import itertools
import os
import signal
import socket
import time
import urllib.request

import pytest

_n = itertools.count()


def _collector_sent_spans():
    try:
        with urllib.request.urlopen(os.environ["COLLECTOR_METRICS"], timeout=2) as resp:
            text = resp.read().decode()
    except OSError:
        return 0.0
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith("otelcol_exporter_sent_spans"))


def _stop_the_collector():
    deadline = time.monotonic() + 30
    while _collector_sent_spans() == 0 and time.monotonic() < deadline:
        time.sleep(0.1)
    os.kill(int(os.environ["COLLECTOR_PID"]), signal.SIGTERM)
    port = int(os.environ["COLLECTOR_PORT"])
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
        except OSError:
            return
        time.sleep(0.1)


@pytest.mark.parametrize("case", ["a", "b", "c"])
def bench_outage(case):
    n = next(_n)
    if n == 6:
        _stop_the_collector()
    assert n % 4 != 3, "every fourth run fails"
"""


def run_collector_outage(workdir: Path, backends: Path) -> dict[str, Any]:
    stack = start_stack(workdir / "stack", backends)
    try:
        collector = stack.program("otelcol-probability")
        spill = workdir / "spill.jsonl"
        env = {
            "OTEL_EXPORTER_OTLP_ENDPOINT": stack.otlp_http,
            **FAST_BATCHES,
            "COLLECTOR_PID": str(collector.proc.pid),
            "COLLECTOR_PORT": str(stack.ports["otlp_http"]),
            "COLLECTOR_METRICS": f"http://127.0.0.1:{stack.ports['collector_metrics']}/metrics",
        }
        proc, otlp = run_session(
            workdir / "outage",
            bench=OUTAGE_BENCH,
            suite="nightly-outage",
            env=env,
            args=[f"--prob-otel-spill={spill}", "--prob-otel-timeout=5"],
        )
        collector.proc.wait(timeout=30)
        before = {"collector_exit": collector.proc.returncode, "jaeger_spans": _jaeger_span_ids(stack.jaeger)}
        # Up again (its counters start from zero), then the replay the note names.
        stack.start(["otelcol-probability"])
        spill_spans, spill_points = export_counts(spill) if spill.is_file() else (0, 0)
        first = replay(spill, stack.otlp_http)
        delivered = wait_sent(stack, spill_spans, spill_points)
        wait_for(
            lambda: len(_jaeger_span_ids(stack.jaeger)) >= len(span_ids(otlp)),
            30,
            "Jaeger holding every span of the session",
        )
        second = replay(spill, stack.otlp_http)  # a replay that has sent everything sends nothing
        time.sleep(2)  # what a second send would have needed to reach Jaeger (nothing should come)
        return {
            "stdout": proc.stdout[-4000:],
            "stderr": proc.stderr[-4000:],
            "notes": plugin_notes(proc.stdout),
            "spill": str(spill),
            "spill_exists": spill.is_file(),
            "spill_counts": [spill_spans, spill_points],
            "otlp_file": str(otlp),
            "exported_span_ids": span_ids(otlp),
            "before": before,
            "replays": [{"returncode": r.returncode, "output": (r.stdout + r.stderr)[-2000:]} for r in (first, second)],
            "delivered": delivered,
            "sent_after": sent(stack),
            "jaeger_span_ids": _jaeger_span_ids(stack.jaeger),
            "series": stored_series(stack.prometheus, extra=',test_suite_name="nightly-outage"'),
            "logs": stack.logs(20),
        }
    finally:
        stack.stop()


def _jaeger_span_ids(jaeger: str) -> list[str]:
    """Every span id of every trace of service pytest-probability that Jaeger holds, repeats kept."""
    return [s["spanID"] for t in jaeger_traces(jaeger, "pytest-probability", limit=100) for s in t["spans"]]


# ---------------------------------------------------------------------------
# A sharded night: 2 shards, then the merge with its gauges sent
# ---------------------------------------------------------------------------
#: Outcomes fixed by each run's node id (so the shards and the merge agree
#: whatever shard a run lands in); one gated case.
SHARD_BENCH = """
import zlib

import pytest
from pytest_probability import record_usage


def _passes(request, every):
    return zlib.crc32(request.node.nodeid.encode()) % every != 0


@pytest.mark.parametrize("case", ["x", "y", "z"])
def bench_sharded(case, request):
    record_usage(model="m-small", input_tokens=10, output_tokens=2, cost=0.001)
    assert _passes(request, 3)


@pytest.mark.probability(min_rate=0.5)
def bench_gated(request):
    record_usage(model="m-small", input_tokens=10, output_tokens=2, cost=0.001)
    assert _passes(request, 4)
"""
SHARD_RUNS = 8


def run_sharded_night(workdir: Path, backends: Path) -> dict[str, Any]:
    stack = start_stack(workdir / "stack", backends)
    try:
        env = {"OTEL_EXPORTER_OTLP_ENDPOINT": stack.otlp_http, **FAST_BATCHES}
        shards, spans, points = [], 0, 0
        for k in (1, 2):
            folder = workdir / f"shard{k}"
            proc, otlp = run_session(
                folder,
                bench=SHARD_BENCH,
                runs=SHARD_RUNS,
                suite="nightly-sharded",
                env=env,
                args=[f"--prob-shard={k}/2"],
            )
            shards.append(
                {
                    "returncode": proc.returncode,
                    "notes": plugin_notes(proc.stdout),
                    "report": str(folder / "report.json"),
                    "otlp_file": str(otlp),
                }
            )
            s, p = export_counts(otlp)
            spans, points = spans + s, points + p
        merged = workdir / "merged"
        merged.mkdir()
        merge = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest_probability",
                "merge",
                *(s["report"] for s in shards),
                "-o",
                str(merged / "report.json"),
                "--otel-file",
                str(merged / "merged.otlp.jsonl"),
                "--otel-send",
            ],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=merged,
            env={**session_env(merged), "OTEL_EXPORTER_OTLP_ENDPOINT": stack.otlp_http},
        )
        s, p = export_counts(merged / "merged.otlp.jsonl")
        delivered = wait_sent(stack, spans + s, points + p)
        return {
            "shards": shards,
            "merge": {"returncode": merge.returncode, "output": (merge.stdout + merge.stderr)[-3000:]},
            "merged_report": json.loads((merged / "report.json").read_text()),
            "merged_otlp_file": str(merged / "merged.otlp.jsonl"),
            "delivered": delivered,
            "series": stored_series(stack.prometheus, extra=',test_suite_name="nightly-sharded"'),
            "logs": stack.logs(20),
        }
    finally:
        stack.stop()
