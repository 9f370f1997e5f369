"""The alert path end to end, with real servers: nights of real plugin sessions,
Prometheus evaluating deploy/'s rules on them, Alertmanager routing what fires
to a webhook inside the test.

``run_alert_path()`` does, in order:

1. **Nights.** For every suite of ``SCENARIO``, one real session of the plugin
   per night (``real_export.run_session``: a subprocess, a git checkout,
   GitHub Actions variables, ``--prob-suite``, ``--prob-otel-file``, and
   ``--prob-history`` in a folder per suite, so that each night is compared
   with the nights before it, as docs/nightly.md sets the job up). A suite's
   nights run in order. The benchmark file is the same every night; what each
   run does (pass, fail, error) and what it costs comes from that night's
   plan, in the environment.
2. **Ingest, through the Collector.** The stack of deploy/stack.py starts
   (the real Collector, Jaeger v2, Prometheus 3 and Alertmanager that ``make
   backends`` builds, with deploy/'s files, on free loopback ports). Each
   night's ``--prob-otel-file`` export is moved in time to its night (every
   ``*UnixNano`` timestamp shifted by the same amount: the session ran that
   many hours ago) and sent with ``python -m pytest_probability.otel replay``
   to the Collector, which sends the metrics to Prometheus's OTLP receiver
   (deploy/'s translation and promotion settings; the nights are days old, so
   Prometheus takes them in its out-of-order window, as it takes a spill
   file replayed days late), oldest night first. No rules are loaded yet.
3. **Evaluate.** Once the Collector has sent every point, copies of deploy/'s
   rule files that differ only in the group interval and in ``for:``
   (``rules_overlay``) are put in place and Prometheus reloads
   (``POST /-/reload``, deploy's ``--web.enable-lifecycle``). Its
   prometheus.yml is deploy/'s with the addresses rewritten and a second
   Alertmanager added (``prometheus_overlay``), and
   ``--rules.alert.resend-delay=2s``.
4. **Deliver.** Two ``alertmanager`` servers: deploy/'s alertmanager.yml as
   shipped ("shipped": every alert to the receiver ``null``) and with its
   commented Slack/e-mail example switched on ("example": routes by severity).
   ``alertmanager_overlay`` shortens group_wait/group_interval and points
   every receiver at a webhook on 127.0.0.1 (path ``/<alertmanager>/<receiver>``);
   routes, grouping and inhibition stay as written.
5. **Observe.** Once Prometheus's firing alerts are stable, reached both
   Alertmanagers and every alert that is not muted has been notified (bounded
   waits), the webhook's notifications, both servers' view of the alerts, the
   rules' health and the result of every dashboard query are collected into
   one JSON-able dict, and the servers are stopped.

The tests (test_deploy_alert_path.py) only read that dict. Everything listens on
127.0.0.1, on free ports, in temporary directories.
"""

from __future__ import annotations

import http.server
import json
import os
import re
import threading
import time
import traceback
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from backends import deploy_stack, http_json, post
from promql_names import DEPLOY, RULE_FILES, dashboard_expressions, datasource_expressions
from real_export import run_session

ALERTMANAGER_CONFIG = DEPLOY / "alertmanager" / "alertmanager.yml"

#: Evaluation interval of the rule group, and what every ``for:`` becomes, in
#: the test's copies of the rule files.
EVALUATION_INTERVAL = "1s"
FOR_IN_TEST = "1s"
#: A ``for:`` longer than this could not fire on nightly data in time to matter
#: (the per-case alerts stay true for about a day): rules_overlay refuses it.
MAX_FOR_SECONDS = 2 * 3600
#: Alertmanager timings in the overlay (shipped: 1m, 10m; repeat_interval kept).
#: Alertmanager flushes a new group at once when its first alert started more
#: than group_wait ago. Prometheus drops what it sends before its notifier has
#: discovered the Alertmanagers (up to 5 s after start) and resends only after
#: --rules.alert.resend-delay, so the first alerts arrive up to ~8 s after they
#: started. group_wait must be longer than that, or a group is notified the
#: moment its first alert arrives: a per-case alert would then go out before
#: the ProbabilityErroredRunsHigh that mutes it, sent by a later rule of the
#: same evaluation milliseconds afterwards, has arrived.
GROUP_WAIT = "15s"
GROUP_INTERVAL = "2s"
#: Prometheus's --rules.alert.resend-delay in the test (default 1m).
RESEND_DELAY = "2s"


# ---------------------------------------------------------------------------
# The scenario
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Benchmark:
    """One ``bench_<name>`` function. ``cases``: case id ("" when not
    parametrized) -> per night, oldest first, passes or (passes, errors); the
    rest of the suite's runs fail with an AssertionError."""

    name: str
    cases: dict[str, list[int | tuple[int, int]]]
    min_rate: float | None = None
    #: case id -> per night, oldest first, the mean of the "judge" score its runs record (record_score():
    #: each run that mean -0.1, -0.05, 0, +0.05 or +0.1 in turn); no score for a case not listed.
    scores: dict[str, list[float]] = field(default_factory=dict)
    #: The bar of its "judge" score (a score gate, min_score); none when None.
    min_score: float | None = None


@dataclass(frozen=True)
class Suite:
    name: str
    runs: int
    #: Age of each night's session in hours when the scenario starts, oldest first.
    ages_h: list[float]
    benchmarks: list[Benchmark]
    #: Per night: (model, cost in USD of each run).
    spend: list[tuple[str, float]]
    #: What the suite shows; for messages and the docs.
    story: str = ""


#: Three suites, each its own story, evaluated together by one Prometheus.
#: A suite's sessions are 24 h apart; "tonight's" landed half an hour before
#: the test started (any time of day: the rules do not depend on it).
SCENARIO = [
    Suite(
        "nightly-drop",
        runs=20,
        ages_h=[120.5, 96.5, 72.5, 48.5, 24.5, 0.5],
        story="five stable nights, then case classify/drops falls from ~95% to 40% and the judge's "
        "mean score of answer/slips from 0.85 to 0.5; the other cases move by a run or three, as chance does",
        benchmarks=[
            Benchmark(
                "classify",
                {
                    "steady_high": [20, 19, 18, 20, 19, 17],
                    "steady_mid": [18, 17, 19, 16, 18, 17],
                    "drops": [19, 20, 19, 20, 19, 8],
                },
            ),
            Benchmark("extract", {"": [20, 20, 19, 20, 20, 20]}),
            Benchmark("gated", {"": [20, 19, 20, 20, 19, 20]}, min_rate=0.5),
            # Graded: every run passes; the judge's mean score of answer/slips falls from 0.85 to 0.5 tonight,
            # which its score gate at 0.3 still passes (the score gate's recording rules have series, and no
            # gate alert fires: the drop is the score drop alert's).
            Benchmark(
                "answer",
                {"steady": [20] * 6, "slips": [20] * 6},
                scores={"steady": [0.85, 0.84, 0.85, 0.86, 0.85, 0.84], "slips": [0.85] * 5 + [0.5]},
                min_score=0.3,
            ),
        ],
        spend=[("m-small", 0.002)] * 6,
    ),
    Suite(
        "nightly-harness",
        runs=10,
        ages_h=[96.5, 72.5, 48.5, 24.5, 0.5],
        story="tonight the provider rate-limits benchmark api (6 of lookup's 10 runs error) and the "
        "suite moved to a model that costs four times as much; benchmark hard has two cases "
        "below the bar every night, strict fails its gate every night; chat/stable and "
        "chat/wobbly passed every run for four nights and fail one and four runs tonight",
        benchmarks=[
            Benchmark(
                "api",
                {
                    "lookup": [10, 9, 10, 10, (4, 6)],
                    "summarise": [9, 10, 10, 9, 10],
                },
            ),
            Benchmark("hard", {"a": [2, 3, 2, 2, 3], "b": [3, 2, 3, 3, 2]}),
            Benchmark("strict", {"": [5, 5, 5, 5, 5]}, min_rate=0.9),
            Benchmark("chat", {"stable": [10, 10, 10, 10, 9], "wobbly": [10, 10, 10, 10, 6]}),
        ],
        spend=[("m-small", 0.01)] * 4 + [("m-large", 0.04)],
    ),
    Suite(
        "nightly-missed",
        runs=10,
        ages_h=[51.0, 27.0],
        story="the night that should have landed 3 h ago is missing: the last session is 27 h old",
        benchmarks=[Benchmark("daily", {"steady": [10, 9], "weak": [5, 5]})],
        spend=[("m-small", 0.01)] * 2,
    ),
]

_BENCH_HEADER = """
import itertools
import json
import os

import pytest
from pytest_probability import record_score, record_usage

PLAN = json.loads(os.environ["ALERT_PATH_PLAN"])
_runs = {}


def _run(benchmark, case):
    n = next(_runs.setdefault((benchmark, case), itertools.count()))
    record_usage(model=PLAN["model"], input_tokens=100, output_tokens=20, cost=PLAN["cost"])
    mean = PLAN["scores"].get(benchmark, {}).get(case)
    if mean is not None:
        record_score(round(mean + 0.05 * (n % 5 - 2), 4), "judge")
    passes, errors = PLAN["cases"][benchmark][case]
    if n < passes:
        return
    if n < passes + errors:
        raise RuntimeError("provider answered 429: rate limited")
    assert False, "wrong answer"
"""


def bench_source(suite: Suite) -> str:
    """The suite's benchmark file: one ``bench_<name>`` per Benchmark, reading tonight's plan."""
    parts = [_BENCH_HEADER]
    for b in suite.benchmarks:
        given = {"min_rate": b.min_rate, "min_score": {"judge": b.min_score} if b.min_score is not None else None}
        keywords = ", ".join(f"{k}={v!r}" for k, v in given.items() if v is not None)
        marks = f"@pytest.mark.probability({keywords})\n" if keywords else ""
        if list(b.cases) == [""]:
            parts.append(f"\n\n{marks}def bench_{b.name}():\n    _run({b.name!r}, '')\n")
        else:
            marks += f"@pytest.mark.parametrize('case', {list(b.cases)!r})\n"
            parts.append(f"\n\n{marks}def bench_{b.name}(case):\n    _run({b.name!r}, case)\n")
    return "".join(parts)


def _outcome(spec: int | tuple[int, int]) -> tuple[int, int]:
    return (spec, 0) if isinstance(spec, int) else spec


def night_plan(suite: Suite, night: int) -> dict[str, Any]:
    model, cost = suite.spend[night]
    return {
        "model": model,
        "cost": cost,
        "cases": {b.name: {c: _outcome(nights[night]) for c, nights in b.cases.items()} for b in suite.benchmarks},
        "scores": {b.name: {c: nights[night] for c, nights in b.scores.items()} for b in suite.benchmarks if b.scores},
    }


# ---------------------------------------------------------------------------
# Nights -> Prometheus samples
# ---------------------------------------------------------------------------
@dataclass
class Night:
    suite: str
    night: int
    timestamp: float  # seconds since the epoch
    otlp: Path  # the session's --prob-otel-file
    rows: list[dict[str, Any]]  # the session's --prob-json rows, for checks and messages
    returncode: int
    #: The session's per-case comparisons with its baseline (the nights before):
    #: {case label: {verdict, high, p_adjusted}} from the report's baseline comparisons.
    baseline: dict[str, dict[str, Any]]
    #: The same for the cases' mean scores: {case label: {verdict, high, p_adjusted}} of the "judge" score.
    scores: dict[str, dict[str, Any]] = field(default_factory=dict)


def run_night(workdir: Path, suite: Suite, night: int, timestamp: float, run_id: int) -> Night:
    env = {"ALERT_PATH_PLAN": json.dumps(night_plan(suite, night)), "GITHUB_RUN_ID": str(run_id)}
    # The nights before are the baseline, as docs/nightly.md sets the job up.
    history = workdir.parent / "history"
    proc, otlp = run_session(
        workdir,
        bench=bench_source(suite),
        runs=suite.runs,
        suite=suite.name,
        env=env,
        args=[f"--prob-history={history}"],
    )
    report = json.loads((workdir / "report.json").read_text())
    baseline = {
        i["input"]: {
            "verdict": i.get("verdict"),
            "high": (i.get("ci") or {}).get("high"),
            "p_adjusted": i.get("p_adjusted"),
        }
        for c in (report.get("baseline") or {}).get("comparisons", [])
        for i in c["inputs"]
    }
    scores = {
        i["input"]: {
            "verdict": i.get("verdict"),
            "high": (i.get("ci") or {}).get("high"),
            "p_adjusted": i.get("p_adjusted"),
        }
        for c in (report.get("baseline") or {}).get("comparisons", [])
        for s in c.get("scores", [])
        for i in s["inputs"]
    }
    return Night(suite.name, night, timestamp, otlp, report["rows"], proc.returncode, baseline, scores)


def run_nights(workdir: Path, now: float, scenario=SCENARIO, workers: int = 2) -> list[Night]:
    """Every suite's nights; a suite's nights one after the other, oldest
    first (as a nightly job runs them: a session may read the nights before
    it), the suites side by side."""
    for suite in scenario:
        assert len(suite.ages_h) == len(suite.spend), suite.name
        for b in suite.benchmarks:
            for case, nights in b.cases.items():
                assert len(nights) == len(suite.ages_h), (suite.name, b.name, case)

    def suite_nights(si: int, suite: Suite) -> list[Night]:
        return [
            run_night(workdir / suite.name / f"night{night}", suite, night, now - age * 3600, 4200 + 100 * si + night)
            for night, age in enumerate(suite.ages_h)
        ]

    # Longest suites first, so that two workers share the work evenly.
    order = sorted(enumerate(scenario), key=lambda item: -len(item[1].ages_h))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return [n for nights in pool.map(lambda item: suite_nights(*item), order) for n in nights]


def _session_time_ns(lines: list[dict]) -> int:
    """The session's export time: the newest metric point's timeUnixNano."""
    newest = 0

    def walk(node):
        nonlocal newest
        if isinstance(node, dict):
            for k, v in node.items():
                if k == "timeUnixNano":
                    newest = max(newest, int(v))
                else:
                    walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    for line in lines:
        if "resourceMetrics" in line:
            walk(line)
    assert newest, "the export has no metric points"
    return newest


def shift_export(source: Path, target: Path, at: float) -> Path:
    """``source`` (an OTLP JSON-lines file) as if its session had ended at ``at``
    (seconds since the epoch): every ``*UnixNano`` value moved by the same amount."""
    lines = [json.loads(line) for line in source.read_text().splitlines() if line.strip()]
    delta = int(at * 1e9) - _session_time_ns(lines)

    def moved(value):
        return str(int(value) + delta) if int(value) else value  # an unset time (0) stays unset

    def shift(node):
        if isinstance(node, dict):
            return {k: moved(v) if k.endswith("UnixNano") else shift(v) for k, v in node.items()}
        if isinstance(node, list):
            return [shift(v) for v in node]
        return node

    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("".join(json.dumps(shift(line), separators=(",", ":")) + "\n" for line in lines))
    return target


# ---------------------------------------------------------------------------
# Overlays: deploy/'s files, changed only where a test must
# ---------------------------------------------------------------------------
def _seconds(duration: str) -> float:
    units = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 365 * 86400}
    parts = re.findall(r"(\d+)(ms|s|m|h|d|w|y)", str(duration))
    assert parts and "".join(n + u for n, u in parts) == str(duration), f"not a duration: {duration!r}"
    return sum(int(n) * units[u] for n, u in parts)


def rules_overlay(rule_files=RULE_FILES) -> dict[str, dict]:
    """{file name: rules} of deploy/'s rule files with each group's interval
    set to EVALUATION_INTERVAL and each ``for:`` to FOR_IN_TEST; nothing else
    changes. A ``for:`` longer than MAX_FOR_SECONDS is refused: on nightly
    data it would hold the alert back for hours of a day-long window."""
    out = {}
    for path in rule_files:
        doc = yaml.safe_load(path.read_text())
        for group in doc["groups"]:
            group["interval"] = EVALUATION_INTERVAL
            for rule in group["rules"]:
                if "for" in rule:
                    assert _seconds(rule["for"]) <= MAX_FOR_SECONDS, (
                        f"{path.name}: {rule['alert']} has for: {rule['for']}, longer than "
                        f"{MAX_FOR_SECONDS // 3600}h; nightly data cannot wait that long"
                    )
                    rule["for"] = FOR_IN_TEST
        out[path.name] = doc
    return out


def prometheus_overlay(text: str, alertmanagers: list[str]) -> dict:
    """deploy/'s prometheus.yml, its addresses already rewritten (``text``), for
    the test's server: alerts to every one of ``alertmanagers`` (host:port, the
    stack's own first). Everything else stays as shipped: the evaluation
    interval is the rule group's (rules_overlay), and the scrape jobs, now on
    loopback, scrape the real Collector and Alertmanager."""
    cfg = yaml.safe_load(text)
    cfg["alerting"]["alertmanagers"] = [{"static_configs": [{"targets": list(alertmanagers)}]}]
    return cfg


def uncomment_example(text: str) -> str:
    """alertmanager.yml with its commented example ("#| " lines) switched on."""
    return re.sub(r"(?m)^(\s*)#\| ", r"\1", text)


def alertmanager_overlay(text: str, webhook_url: Callable[[str], str]) -> dict:
    """An Alertmanager config with group_wait/group_interval shortened wherever
    set and every receiver replaced by a webhook to ``webhook_url(name)``
    (resolved notifications included). Routes, matchers, group_by,
    repeat_interval and inhibit_rules stay as written."""
    cfg = yaml.safe_load(text)

    def shorten(route):
        if "group_wait" in route:
            route["group_wait"] = GROUP_WAIT
        if "group_interval" in route:
            route["group_interval"] = GROUP_INTERVAL
        for sub in route.get("routes") or []:
            shorten(sub)

    shorten(cfg["route"])
    cfg["receivers"] = [
        {"name": r["name"], "webhook_configs": [{"url": webhook_url(r["name"]), "send_resolved": True}]}
        for r in cfg["receivers"]
    ]
    return cfg


# ---------------------------------------------------------------------------
# Servers
# ---------------------------------------------------------------------------
class Webhook:
    """Alertmanager's webhook receiver: every POST kept as (path, JSON body)."""

    def __init__(self):
        self.received: list[tuple[str, dict, float]] = []
        self._lock = threading.Lock()
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with outer._lock:
                    outer.received.append((self.path, json.loads(body), time.time()))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args):
                pass

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
        self._thread.start()

    def url(self, alertmanager: str, receiver: str) -> str:
        return f"http://127.0.0.1:{self._server.server_port}/{alertmanager}/{urllib.parse.quote(receiver)}"

    def notifications(self) -> list[tuple[str, dict, float]]:
        with self._lock:
            return list(self.received)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)


# ---------------------------------------------------------------------------
# Observing
# ---------------------------------------------------------------------------
def _labels_key(labels: dict[str, str]) -> tuple:
    return tuple(sorted(labels.items()))


def _wait(check: Callable[[], bool], timeout: float, interval: float = 0.25) -> float | None:
    """Seconds until ``check()`` held, None when it did not within ``timeout``."""
    start = time.monotonic()
    while time.monotonic() < start + timeout:
        if check():
            return round(time.monotonic() - start, 2)
        time.sleep(interval)
    return None


def _prometheus_alerts(prom: str) -> list[dict]:
    return http_json(f"{prom}/api/v1/alerts")["data"]["alerts"]


def _firing(prom: str) -> set[tuple]:
    return {_labels_key(a["labels"]) for a in _prometheus_alerts(prom) if a["state"] == "firing"}


def _query(prom: str, expr, t: float) -> dict[str, Any]:
    """Run one dashboard expression as Grafana would; {status, error, series}."""
    q = urllib.parse.urlencode
    if expr.query == "label_values":
        (label,) = expr.required
        url = f"{prom}/api/v1/label/{label}/values?" + q({"match[]": expr.expr, "start": t - 30 * 86400, "end": t})
    elif expr.query == "range" or expr.query == "trace_to_metrics":
        url = f"{prom}/api/v1/query_range?" + q({"query": expr.expr, "start": t - 30 * 86400, "end": t, "step": 3600})
    else:
        url = f"{prom}/api/v1/query?" + q({"query": expr.expr, "time": t})
    try:
        body = http_json(url, timeout=30)
    except urllib.error.HTTPError as e:
        body = json.loads(e.read() or b"{}")
    result = body.get("data") if body.get("status") == "success" else None
    if isinstance(result, dict):
        result = result.get("result")
    return {
        "source": expr.source,
        "expr": expr.expr,
        "query": expr.query,
        "status": body.get("status"),
        "error": body.get("error"),
        "series": len(result) if result is not None else None,
        "sample": result[:3] if result else [],
    }


def run_dashboard_queries(prom: str, t: float) -> list[dict[str, Any]]:
    """Every PromQL expression of grafana/ (panels, variables, annotations, data sources), as Grafana sends it."""
    return [_query(prom, e, t) for e in dashboard_expressions() + datasource_expressions()]


def observe(
    prom: str, alertmanagers: dict[str, str], webhook: Webhook, started: float, timeout: float = 60.0
) -> dict[str, Any]:
    """Wait (bounded) until what Prometheus fires is stable and delivered, then collect it."""
    waits: dict[str, float | None] = {}
    t0 = time.monotonic()

    # 1. Three evaluations after start, and the same firing set twice in a row.
    def evaluated():
        groups = http_json(f"{prom}/api/v1/rules")["data"]["groups"]
        return (
            groups
            and all(g.get("lastEvaluation", "").startswith("2") for g in groups)
            and time.time() - started > 3 * _seconds(EVALUATION_INTERVAL)
        )

    waits["rules evaluated"] = _wait(evaluated, timeout)
    previous: list[set] = []

    def stable():
        previous.append(_firing(prom))
        return len(previous) >= 2 and previous[-1] == previous[-2]

    waits["firing stable"] = _wait(stable, timeout, interval=1.5)
    firing = previous[-1] if previous else set()

    # 2. Each Alertmanager knows every firing alert.
    def am_alerts(url):
        return http_json(f"{url}/api/v2/alerts")

    def delivered_to_all():
        return all(firing <= {_labels_key(a["labels"]) for a in am_alerts(u)} for u in alertmanagers.values())

    waits["alertmanagers have them"] = _wait(delivered_to_all, timeout)

    # 3. Every alert an Alertmanager does not mute has been notified by it.
    def notified():
        by_am: dict[str, set] = {}
        for path, body, _ in webhook.notifications():
            am = path.strip("/").split("/")[0]
            by_am.setdefault(am, set()).update(_labels_key(a["labels"]) for a in body["alerts"])
        for name, url in alertmanagers.items():
            active = {_labels_key(a["labels"]) for a in am_alerts(url) if a["status"]["state"] == "active"}
            if not active <= by_am.get(name, set()):
                return False
        return True

    waits["notified"] = _wait(notified, timeout)
    # 4. The groups all started with the first alerts; what else they would
    #    notify (a muted alert that was not muted after all) has had two
    #    group intervals to arrive.
    time.sleep(2 * _seconds(GROUP_INTERVAL))
    waited = time.monotonic() - t0

    t = time.time()
    dashboard = run_dashboard_queries(prom, t)
    rules = http_json(f"{prom}/api/v1/rules")["data"]["groups"]
    return {
        "waits": waits,
        "wait_seconds": round(waited, 2),
        "prometheus_alerts": _prometheus_alerts(prom),
        "rules": [
            {
                "group": g["name"],
                "interval": g.get("interval"),
                "evaluationTime": g.get("evaluationTime"),
                "rules": [
                    {"name": r["name"], "type": r["type"], "health": r["health"], "lastError": r.get("lastError", "")}
                    for r in g["rules"]
                ],
            }
            for g in rules
        ],
        "alertmanager_alerts": {name: am_alerts(url) for name, url in alertmanagers.items()},
        "notifications": [{"path": p, "body": b, "received": t} for p, b, t in webhook.notifications()],
        "dashboard": dashboard,
        "query_time": t,
    }


# ---------------------------------------------------------------------------
# The whole path
# ---------------------------------------------------------------------------
def write_yaml(path: Path, doc: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def run_alert_path(workdir: Path, backends: Path) -> dict[str, Any]:
    import stack_runs

    timings: dict[str, float] = {}
    start = time.time()
    now = start
    nights = run_nights(workdir / "nights", now)
    timings["sessions"] = time.time() - start

    webhook = Webhook()
    ports = deploy_stack.free_ports()
    example_port = deploy_stack.free_port()
    rules_dir = workdir / "rules"
    rules_dir.mkdir(parents=True)  # empty until every night is in
    am_texts = {
        "shipped": ALERTMANAGER_CONFIG.read_text(),
        "example": uncomment_example(ALERTMANAGER_CONFIG.read_text()),
    }
    am_configs = {
        name: alertmanager_overlay(text, lambda receiver, name=name: webhook.url(name, receiver))
        for name, text in am_texts.items()
    }
    am_urls = {"shipped": f"http://127.0.0.1:{ports['alertmanager']}", "example": f"http://127.0.0.1:{example_port}"}
    prom_cfg = prometheus_overlay(
        deploy_stack.prometheus_config(ports), [u.removeprefix("http://") for u in am_urls.values()]
    )
    stack = deploy_stack.Stack(
        workdir / "stack",
        ports,
        backends,
        rules_dir=rules_dir,
        prometheus_text=yaml.safe_dump(prom_cfg, sort_keys=False),
        alertmanager_text=yaml.safe_dump(am_configs["shipped"], sort_keys=False),
        # Alerts sent before the notifier has discovered the Alertmanagers
        # are dropped and resent only after this delay (default 1m).
        prometheus_flags=deploy_stack.PROMETHEUS_FLAGS + [f"--rules.alert.resend-delay={RESEND_DELAY}"],
        log_level="warn",
    )
    example_cfg = write_yaml(workdir / "alertmanager-example" / "alertmanager.yml", am_configs["example"])
    example = deploy_stack.Program(
        "alertmanager (example)",
        [
            str(stack.binary("alertmanager")),
            f"--config.file={example_cfg}",
            f"--storage.path={example_cfg.parent / 'data'}",
            f"--web.listen-address=127.0.0.1:{example_port}",
            f"--web.external-url={am_urls['example']}",
            *deploy_stack.ALERTMANAGER_FLAGS,
            "--log.level=warn",
        ],
        example_cfg.parent / "log.txt",
        [f"{am_urls['example']}/-/ready"],
    )
    prom = stack.prometheus
    replays = []
    try:
        example.start()
        stack.start()
        example.wait_ready()
        t = time.time()
        spans = points = 0
        for n in sorted(nights, key=lambda n: n.timestamp):
            shifted = shift_export(n.otlp, workdir / "shifted" / n.suite / f"night{n.night}.otlp.jsonl", n.timestamp)
            out = stack_runs.replay(shifted, stack.otlp_http)
            replays.append(
                {
                    "suite": n.suite,
                    "night": n.night,
                    "returncode": out.returncode,
                    "output": (out.stdout + out.stderr)[-2000:],
                }
            )
            assert out.returncode == 0, replays[-1]
            s, p = stack_runs.export_counts(shifted)
            spans, points = spans + s, points + p
        delivered = stack_runs.wait_sent(stack, spans, points, timeout=120)
        timings["ingest"] = time.time() - t

        for name, doc in rules_overlay().items():
            write_yaml(rules_dir / name, doc)
        assert post(f"{prom}/-/reload") == 200
        observed = observe(prom, am_urls, webhook, started=time.time())
        from promql_names import rule_expressions

        recording = [
            {
                "record": e.record,
                "series": len(
                    http_json(f"{prom}/api/v1/query?" + urllib.parse.urlencode({"query": e.record}))["data"]["result"]
                ),
            }
            for e in rule_expressions()
            if e.record
        ]
        buildinfo = {
            "prometheus": http_json(f"{prom}/api/v1/status/buildinfo")["data"]["version"],
            "alertmanager": http_json(f"{am_urls['shipped']}/api/v2/status")["versionInfo"]["version"],
        }
        loaded = yaml.safe_load(http_json(f"{prom}/api/v1/status/config")["data"]["yaml"])
    finally:
        stack.stop()
        example.stop()
        webhook.close()
    logs = {**stack.logs(20), "alertmanager (example)": example.log_tail(20)}
    timings["total"] = time.time() - start
    return {
        **observed,
        "now": now,
        "prometheus_url": prom,
        "alertmanager_urls": am_urls,
        "alertmanager_configs": am_configs,
        "prometheus_config": prom_cfg,
        "prometheus_loaded_config": loaded,
        "versions": buildinfo,
        "replays": replays,
        "recording": recording,
        "delivered": delivered,
        "exported": {"spans": spans, "points": points},
        "nights": [
            {
                "suite": n.suite,
                "night": n.night,
                "timestamp": n.timestamp,
                "returncode": n.returncode,
                "rows": [
                    {k: r.get(k) for k in ("benchmark", "case_id", "passes", "fails", "errors", "status", "cost")}
                    for r in n.rows
                ],
                "baseline": n.baseline,
                "scores": n.scores,
            }
            for n in nights
        ],
        "logs": logs,
        "timings": {k: round(v, 2) for k, v in timings.items()},
    }


def shared(tmp_path_factory, name: str, compute: Callable[[Path], dict]) -> dict:
    """``compute(dir)`` once per test run, also under pytest-xdist: the first
    worker computes and writes JSON next to the workers' temp dirs, under a
    file lock; the others read it (the servers are long gone by then)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if not worker:
        return json.loads(json.dumps(compute(tmp_path_factory.mktemp(name))))
    import fcntl

    root = tmp_path_factory.getbasetemp().parent
    result = root / f"{name}.json"
    with (root / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not result.is_file():
            try:
                out = {"result": compute(root / name)}
            except Exception:  # the other workers report it instead of running it again
                out = {"error": traceback.format_exc()}
            tmp = result.with_suffix(".tmp")
            tmp.write_text(json.dumps(out))
            tmp.replace(result)
        out = json.loads(result.read_text())
    if "error" in out:
        raise AssertionError(f"the {name} run failed (on the first worker to run it):\n{out['error']}")
    return out["result"]
