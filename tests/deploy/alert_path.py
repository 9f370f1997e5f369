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
2. **Ingest.** Each night's ``--prob-otel-file`` export is translated as
   Prometheus 3's OTLP receiver stores it (``real_export.translate_file``, the
   project's one model of that translation), its samples are placed at the
   night's timestamp (hours before now, as the scenario says), written as
   OpenMetrics and backfilled with ``promtool tsdb create-blocks-from
   openmetrics`` into an empty data directory.
3. **Evaluate.** ``prometheus`` starts on that directory with deploy/'s
   prometheus.yml through an overlay (``prometheus_overlay``: evaluation every
   second, the test's Alertmanagers, no scraping; the Prometheus-3-only
   ``otlp`` section removed for a 2.x server exactly as ``promtool check
   config`` needs it, see ``deploy_tools.accepted_prometheus_config``) and
   copies of deploy/'s rule files that differ only in the group interval and
   in ``for:`` (``rules_overlay``).
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
import math
import os
import re
import socket
import subprocess
import threading
import time
import traceback
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import yaml

from deploy_tools import accepted_prometheus_config, run, tool_version
from promql_names import DEPLOY, PROMETHEUS_CONFIG, RULE_FILES, dashboard_expressions, datasource_expressions
from real_export import run_session, translate_file

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
        "nightly-drop", runs=20, ages_h=[120.5, 96.5, 72.5, 48.5, 24.5, 0.5],
        story="five stable nights, then case classify/drops falls from ~95% to 40% and the judge's "
              "mean score of answer/slips from 0.85 to 0.5; the other cases move by a run or three, as chance does",
        benchmarks=[
            Benchmark("classify", {
                "steady_high": [20, 19, 18, 20, 19, 17],
                "steady_mid": [18, 17, 19, 16, 18, 17],
                "drops": [19, 20, 19, 20, 19, 8],
            }),
            Benchmark("extract", {"": [20, 20, 19, 20, 20, 20]}),
            Benchmark("gated", {"": [20, 19, 20, 20, 19, 20]}, min_rate=0.5),
            # Graded: every run passes; the judge's mean score of answer/slips falls from 0.85 to 0.5 tonight.
            Benchmark("answer", {"steady": [20] * 6, "slips": [20] * 6},
                      scores={"steady": [0.85, 0.84, 0.85, 0.86, 0.85, 0.84], "slips": [0.85] * 5 + [0.5]}),
        ],
        spend=[("m-small", 0.002)] * 6,
    ),
    Suite(
        "nightly-harness", runs=10, ages_h=[96.5, 72.5, 48.5, 24.5, 0.5],
        story="tonight the provider rate-limits benchmark api (6 of lookup's 10 runs error) and the "
              "suite moved to a model that costs four times as much; benchmark hard has two cases "
              "below the bar every night, strict fails its gate every night; chat/stable and "
              "chat/wobbly passed every run for four nights and fail one and four runs tonight",
        benchmarks=[
            Benchmark("api", {
                "lookup": [10, 9, 10, 10, (4, 6)],
                "summarise": [9, 10, 10, 9, 10],
            }),
            Benchmark("hard", {"a": [2, 3, 2, 2, 3], "b": [3, 2, 3, 3, 2]}),
            Benchmark("strict", {"": [5, 5, 5, 5, 5]}, min_rate=0.9),
            Benchmark("chat", {"stable": [10, 10, 10, 10, 9], "wobbly": [10, 10, 10, 10, 6]}),
        ],
        spend=[("m-small", 0.01)] * 4 + [("m-large", 0.04)],
    ),
    Suite(
        "nightly-missed", runs=10, ages_h=[51.0, 27.0],
        story="the night that should have landed 3 h ago is missing: the last session is 27 h old",
        benchmarks=[Benchmark("daily", {"steady": [10, 9], "weak": [5, 5]})],
        spend=[("m-small", 0.01)] * 2,
    ),
]

_BENCH_HEADER = '''
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
'''


def bench_source(suite: Suite) -> str:
    """The suite's benchmark file: one ``bench_<name>`` per Benchmark, reading tonight's plan."""
    parts = [_BENCH_HEADER]
    for b in suite.benchmarks:
        marks = f"@pytest.mark.probability(min_rate={b.min_rate!r})\n" if b.min_rate is not None else ""
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
        "model": model, "cost": cost,
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
    series: list  # otlp_to_prometheus.PromSeries
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
    proc, otlp = run_session(workdir, bench=bench_source(suite), runs=suite.runs, suite=suite.name, env=env,
                             args=[f"--prob-history={history}"])
    report = json.loads((workdir / "report.json").read_text())
    baseline = {i["input"]: {"verdict": i.get("verdict"), "high": (i.get("ci") or {}).get("high"),
                             "p_adjusted": i.get("p_adjusted")}
                for c in (report.get("baseline") or {}).get("comparisons", []) for i in c["inputs"]}
    scores = {i["input"]: {"verdict": i.get("verdict"), "high": (i.get("ci") or {}).get("high"),
                           "p_adjusted": i.get("p_adjusted")}
              for c in (report.get("baseline") or {}).get("comparisons", []) for s in c.get("scores", [])
              for i in s["inputs"]}
    return Night(suite.name, night, timestamp, translate_file(otlp).series, report["rows"], proc.returncode,
                 baseline, scores)


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
        return [run_night(workdir / suite.name / f"night{night}", suite, night, now - age * 3600,
                          4200 + 100 * si + night)
                for night, age in enumerate(suite.ages_h)]

    # Longest suites first, so that two workers share the work evenly.
    order = sorted(enumerate(scenario), key=lambda item: -len(item[1].ages_h))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return [n for nights in pool.map(lambda item: suite_nights(*item), order) for n in nights]


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return repr(float(value))


def openmetrics(nights: list[Night]) -> str:
    """All nights' samples as OpenMetrics text (no metadata: every series is
    written under its stored name, as the OTLP receiver stores it), in time order."""
    lines = []
    for n in sorted(nights, key=lambda n: n.timestamp):
        ts = f"{n.timestamp:.3f}"
        for s in n.series:
            labels = ",".join(f'{k}="{_escape(v)}"' for k, v in sorted(s.labels.items()))
            lines.append(f"{s.name}{{{labels}}} {_number(s.value)} {ts}")
    return "\n".join(lines) + "\n# EOF\n"


def backfill(promtool: str, nights: list[Night], data_dir: Path) -> str:
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir.parent / "nights.om"
    path.write_text(openmetrics(nights))
    out = run([promtool, "tsdb", "create-blocks-from", "openmetrics", path, data_dir], timeout=120)
    assert out.returncode == 0, f"promtool backfill failed:\n{out.stdout}{out.stderr}"
    return out.stdout


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
                        f"{MAX_FOR_SECONDS // 3600}h; nightly data cannot wait that long")
                    rule["for"] = FOR_IN_TEST
        out[path.name] = doc
    return out


def prometheus_overlay(rules_glob: str, alertmanagers: list[str]) -> dict:
    """deploy/'s prometheus.yml for a test server: rules from ``rules_glob``,
    evaluation every EVALUATION_INTERVAL, alerts to ``alertmanagers``
    (host:port), no scraping (the collector and the compose hosts are not
    there; the benchmark data is never scraped anyway). The otlp and storage
    sections stay as shipped."""
    cfg = yaml.safe_load(PROMETHEUS_CONFIG.read_text())
    cfg["global"]["evaluation_interval"] = EVALUATION_INTERVAL
    cfg["rule_files"] = [rules_glob]
    cfg["alerting"]["alertmanagers"] = [{"static_configs": [{"targets": list(alertmanagers)}]}]
    cfg["scrape_configs"] = []
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
    cfg["receivers"] = [{"name": r["name"], "webhook_configs": [{"url": webhook_url(r["name"]), "send_resolved": True}]}
                        for r in cfg["receivers"]]
    return cfg


# ---------------------------------------------------------------------------
# Servers
# ---------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_json(url: str, timeout: float = 5.0) -> Any:
    with urllib.request.urlopen(url, timeout=timeout) as resp:  # noqa: S310 - loopback only
        return json.loads(resp.read())


class Server:
    """A binary started with ``argv``, its output in ``log``; ``stop()`` always."""

    def __init__(self, name: str, argv: list[str], log: Path):
        self.name, self.log = name, log
        self._log_file = log.open("wb")
        self.proc = subprocess.Popen([str(a) for a in argv], stdout=self._log_file, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL)

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def wait_ready(self, url: str, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"{self.name} exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(url, timeout=2) as resp:  # noqa: S310 - loopback only
                    if resp.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.1)
        raise AssertionError(f"{self.name} not ready at {url} after {timeout:.0f}s:\n{self.log_tail()}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self._log_file.close()


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
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.1},
                                        daemon=True)
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
        url = f"{prom}/api/v1/query_range?" + q({"query": expr.expr, "start": t - 30 * 86400, "end": t,
                                                 "step": 3600})
    else:
        url = f"{prom}/api/v1/query?" + q({"query": expr.expr, "time": t})
    try:
        body = http_json(url, timeout=30)
    except urllib.error.HTTPError as e:
        body = json.loads(e.read() or b"{}")
    result = body.get("data") if body.get("status") == "success" else None
    if isinstance(result, dict):
        result = result.get("result")
    return {"source": expr.source, "expr": expr.expr, "query": expr.query, "status": body.get("status"),
            "error": body.get("error"), "series": len(result) if result is not None else None,
            "sample": result[:3] if result else []}


def observe(prom: str, alertmanagers: dict[str, str], webhook: Webhook, started: float,
            timeout: float = 60.0) -> dict[str, Any]:
    """Wait (bounded) until what Prometheus fires is stable and delivered, then collect it."""
    waits: dict[str, float | None] = {}
    t0 = time.monotonic()

    # 1. Three evaluations after start, and the same firing set twice in a row.
    def evaluated():
        groups = http_json(f"{prom}/api/v1/rules")["data"]["groups"]
        return groups and all(g.get("lastEvaluation", "").startswith("2") for g in groups) \
            and time.time() - started > 3 * _seconds(EVALUATION_INTERVAL)

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
    dashboard = [_query(prom, e, t) for e in dashboard_expressions() + datasource_expressions()]
    rules = http_json(f"{prom}/api/v1/rules")["data"]["groups"]
    return {
        "waits": waits,
        "wait_seconds": round(waited, 2),
        "prometheus_alerts": _prometheus_alerts(prom),
        "rules": [{"group": g["name"], "interval": g.get("interval"), "evaluationTime": g.get("evaluationTime"),
                   "rules": [{"name": r["name"], "type": r["type"], "health": r["health"],
                              "lastError": r.get("lastError", "")} for r in g["rules"]]} for g in rules],
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


def run_alert_path(workdir: Path, promtool: str, prometheus: str, alertmanager: str) -> dict[str, Any]:
    timings: dict[str, float] = {}
    start = time.time()
    now = start
    nights = run_nights(workdir / "nights", now)
    timings["sessions"] = time.time() - start

    t = time.time()
    data_dir = workdir / "prometheus" / "data"
    backfill_out = backfill(promtool, nights, data_dir)
    timings["backfill"] = time.time() - t

    servers: list[Server] = []
    webhook = Webhook()
    try:
        am_texts = {"shipped": ALERTMANAGER_CONFIG.read_text(),
                    "example": uncomment_example(ALERTMANAGER_CONFIG.read_text())}
        am_urls: dict[str, str] = {}
        am_configs: dict[str, dict] = {}
        for name, text in am_texts.items():
            port = free_port()
            cfg = alertmanager_overlay(text, lambda receiver, name=name: webhook.url(name, receiver))
            am_configs[name] = cfg
            path = write_yaml(workdir / "alertmanager" / name / "alertmanager.yml", cfg)
            url = f"http://127.0.0.1:{port}"
            server = Server(f"alertmanager ({name})", [
                alertmanager, f"--config.file={path}", f"--storage.path={path.parent / 'data'}",
                f"--web.listen-address=127.0.0.1:{port}", "--cluster.listen-address=",
                f"--web.external-url={url}/", "--log.level=warn",
            ], path.parent / "log.txt")
            servers.append(server)
            am_urls[name] = url
        for server, url in zip(servers, am_urls.values()):
            server.wait_ready(f"{url}/-/ready")

        rules_dir = workdir / "prometheus" / "rules"
        for name, doc in rules_overlay().items():
            write_yaml(rules_dir / name, doc)
        port = free_port()
        prom = f"http://127.0.0.1:{port}"
        cfg = prometheus_overlay(str(rules_dir / "*.yml"), [u.removeprefix("http://") for u in am_urls.values()])
        cfg_path = workdir / "prometheus" / "prometheus.yml"
        cfg, stripped, check_text = accepted_prometheus_config(promtool, cfg, cfg_path)
        prom_server = Server("prometheus", [
            prometheus, f"--config.file={cfg_path}", f"--storage.tsdb.path={data_dir}",
            f"--web.listen-address=127.0.0.1:{port}", f"--web.external-url={prom}/",
            "--storage.tsdb.retention.time=30d", "--log.level=warn",
            # Alerts sent before the notifier has discovered the Alertmanagers
            # are dropped and resent only after this delay (default 1m).
            f"--rules.alert.resend-delay={RESEND_DELAY}",
        ], workdir / "prometheus" / "log.txt")
        servers.append(prom_server)
        t = time.time()
        prom_server.wait_ready(f"{prom}/-/ready")
        timings["prometheus_ready"] = time.time() - t
        t = time.time()
        observed = observe(prom, am_urls, webhook, started=time.time())
        timings["observe"] = time.time() - t
    finally:
        for server in reversed(servers):
            server.stop()
        webhook.close()
    logs = {s.name: s.log_tail(20) for s in servers}
    timings["total"] = time.time() - start
    return {
        **observed,
        "now": now,
        "prometheus_url": prom,
        "alertmanager_urls": am_urls,
        "alertmanager_configs": am_configs,
        "prometheus_config": cfg,
        "prometheus_config_stripped": stripped,
        "promtool_check_config": check_text,
        "versions": {"prometheus": tool_version(prometheus), "alertmanager": tool_version(alertmanager),
                     "promtool": tool_version(promtool)},
        "backfill": backfill_out,
        "nights": [{"suite": n.suite, "night": n.night, "timestamp": n.timestamp, "returncode": n.returncode,
                    "series": len(n.series),
                    "rows": [{k: r.get(k) for k in ("benchmark", "case_id", "passes", "fails", "errors", "status",
                                                    "cost")} for r in n.rows],
                    "baseline": n.baseline, "scores": n.scores} for n in nights],
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
