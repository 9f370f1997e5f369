"""The alert path with the real programs (alert_path.py): real nightly sessions,
sent through the real Collector (deploy/'s config) into a real Prometheus 3
(its OTLP receiver, deploy/'s prometheus.yml and rules), alerts routed by a
real Alertmanager running deploy/'s config to a webhook in the test.

One run of the path per test session (``alert_path`` fixture, shared by the
xdist workers); the tests read what it observed. Which alert each scenario
must raise is written out in EXPECTED_FIRING and documented in
docs/nightly.md ("What fires when").
"""

from __future__ import annotations

import re
from collections import Counter

import deploy_tools
import pytest
import yaml
from alert_path import (
    ALERTMANAGER_CONFIG,
    EVALUATION_INTERVAL,
    FOR_IN_TEST,
    SCENARIO,
    alertmanager_overlay,
    night_plan,
    prometheus_overlay,
    rules_overlay,
    shared,
    uncomment_example,
)
from backends import require_backends
from deploy_tools import require_tool
from promql_names import PROMETHEUS_CONFIG, RULE_FILES

# The drop alert: the plugin's per-case FAIL verdict against its baseline (the
# nights before, --prob-history), Fisher's exact test adjusted over the
# session's compared cases (issue 10). Below-bar and newly-flaky judge the
# upper bound of the case's interval, not its observed fraction.
DROP_ALERT = "ProbabilityCaseFractionDropped"
#: The same for a mean score (record_score()): Welch's t-test adjusted over the compared cases.
SCORE_DROP_ALERT = "ProbabilityCaseScoreDropped"

#: Cases whose pass rate really changed tonight; every other case only moved by chance.
CHANGED = {
    ("nightly-drop", "classify", "drops"),
    ("nightly-harness", "api", "lookup"),
    ("nightly-harness", "chat", "wobbly"),
}

#: (alertname, suite, benchmark, case) of every alert the scenario must fire in
#: Prometheus; "" where the alert has no such label.
EXPECTED_FIRING = {
    # nightly-drop: the dropped case (8/20 after five nights of 19-20/20), and
    # nothing for the cases that moved by chance.
    (DROP_ALERT, "nightly-drop", "classify", "drops"),
    ("ProbabilityCaseBelowBar", "nightly-drop", "classify", "drops"),
    # ... and the case whose judge's mean score fell (every run still passes: no fraction alert).
    (SCORE_DROP_ALERT, "nightly-drop", "answer", "slips"),
    # nightly-harness: errors in api mute api's case alerts (in Alertmanager, not here) ...
    ("ProbabilityErroredRunsHigh", "nightly-harness", "api", ""),
    ("ProbabilityCaseBelowBar", "nightly-harness", "api", "lookup"),
    (DROP_ALERT, "nightly-harness", "api", "lookup"),
    # ... but not those of the benchmarks next to it: two cases far below the
    # bar every night, a gate failed every night,
    ("ProbabilityCaseBelowBar", "nightly-harness", "hard", "a"),
    ("ProbabilityCaseBelowBar", "nightly-harness", "hard", "b"),
    ("ProbabilityCaseBelowGate", "nightly-harness", "strict", ""),
    # chat/wobbly, perfect for four nights, 6/10 tonight: really worse (its
    # interval reaches 88%: above the bar, below 95%). chat/stable's one failed
    # run in ten is chance (its interval reaches 99.7%) and raises nothing.
    ("ProbabilityCaseNewlyFlaky", "nightly-harness", "chat", "wobbly"),
    (DROP_ALERT, "nightly-harness", "chat", "wobbly"),
    # and the new model's bill.
    ("ProbabilitySpendHigh", "nightly-harness", "", ""),
    # The state across nights (--prob-history): the three cases that became worse tonight are flaky by
    # the since-clean rule (their runs since three clean nights pass below 95%); none is broken.
    ("ProbabilityCaseStateFlaky", "nightly-drop", "classify", "drops"),
    ("ProbabilityCaseStateFlaky", "nightly-harness", "api", "lookup"),
    ("ProbabilityCaseStateFlaky", "nightly-harness", "chat", "wobbly"),
    # nightly-missed: the night that did not come.
    ("ProbabilityNoSession", "nightly-missed", "", ""),
}

#: Muted by ProbabilityErroredRunsHigh (same suite, pipeline and benchmark).
EXPECTED_INHIBITED = {
    ("ProbabilityCaseBelowBar", "nightly-harness", "api", "lookup"),
    (DROP_ALERT, "nightly-harness", "api", "lookup"),
    ("ProbabilityCaseStateFlaky", "nightly-harness", "api", "lookup"),
}


@pytest.fixture(scope="module")
def alert_path(tmp_path_factory):
    require_tool("git")
    backends = require_backends()
    from alert_path import run_alert_path

    return shared(tmp_path_factory, "alert_path", lambda d: run_alert_path(d, backends))


def key(labels: dict) -> tuple[str, str, str, str]:
    return (
        labels["alertname"],
        labels.get("test_suite_name", ""),
        labels.get("probability_benchmark", ""),
        labels.get("probability_case", ""),
    )


def notifications(observed, alertmanager: str) -> list[dict]:
    """Webhook bodies from one Alertmanager ("shipped" or "example"), with their receiver."""
    out = []
    for n in observed["notifications"]:
        am, receiver = n["path"].strip("/").split("/", 1)
        if am == alertmanager:
            assert n["body"]["receiver"] == receiver
            out.append(n["body"])
    return out


def notified(observed, alertmanager: str) -> dict[tuple, dict]:
    """{alert key: the alert as notified} of firing notifications."""
    out = {}
    for body in notifications(observed, alertmanager):
        if body["status"] == "firing":
            for a in body["alerts"]:
                out[key(a["labels"])] = a
    return out


def firing(observed) -> dict[tuple, dict]:
    return {key(a["labels"]): a for a in observed["prometheus_alerts"] if a["state"] == "firing"}


def _explain(observed) -> str:
    return (
        f"timings {observed['timings']}, waits {observed['waits']}, "
        f"versions {observed['versions']}, logs {observed['logs']}"
    )


def test_missing_tools_skip_naming_the_debian_package(monkeypatch):
    monkeypatch.setattr(deploy_tools.shutil, "which", lambda name: None)
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"apt-get install .* prometheus-alertmanager\)$"):
        require_tool("amtool")
    with pytest.raises(pytest.skip.Exception, match=r"apt-get install .* prometheus\)$"):
        require_tool("promtool")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI is set"):
        require_tool("promtool")


# ---------------------------------------------------------------------------
# The overlays change only what a test must
# ---------------------------------------------------------------------------
def test_rule_overlay_changes_only_the_interval_and_for():
    overlay = rules_overlay()
    assert sorted(overlay) == sorted(p.name for p in RULE_FILES)
    for path in RULE_FILES:
        shipped, test = yaml.safe_load(path.read_text()), overlay[path.name]
        for g_shipped, g_test in zip(shipped["groups"], test["groups"], strict=True):
            assert g_test.pop("interval") == EVALUATION_INTERVAL
            g_shipped.pop("interval", None)
            for r_shipped, r_test in zip(g_shipped["rules"], g_test["rules"], strict=True):
                if "for" in r_shipped:
                    assert r_test.pop("for") == FOR_IN_TEST
                    r_shipped.pop("for")
        assert shipped == test


def test_rule_overlay_refuses_a_for_longer_than_nightly_data_can_wait(tmp_path):
    rules = tmp_path / "r.yml"
    doc = {
        "groups": [
            {
                "name": "g",
                "interval": "2m",
                "rules": [
                    {"alert": "A", "expr": "vector(1)", "for": "1h"},
                    {"alert": "B", "expr": "vector(1)", "for": "3h"},
                ],
            }
        ]
    }
    rules.write_text(yaml.safe_dump(doc))
    with pytest.raises(AssertionError, match="B has for: 3h"):
        rules_overlay([rules])
    doc["groups"][0]["rules"].pop()
    rules.write_text(yaml.safe_dump(doc))
    assert rules_overlay([rules])["r.yml"]["groups"][0]["rules"][0]["for"] == FOR_IN_TEST


def test_prometheus_overlay_changes_only_the_addresses_and_adds_an_alertmanager():
    from backends import deploy_stack

    ports = deploy_stack.free_ports()
    shipped = yaml.safe_load(PROMETHEUS_CONFIG.read_text())
    rewritten = yaml.safe_load(deploy_stack.prometheus_config(ports))
    test = prometheus_overlay(
        deploy_stack.prometheus_config(ports), [f"127.0.0.1:{ports['alertmanager']}", "127.0.0.1:1"]
    )
    changed = {k for k in shipped.keys() | test.keys() if shipped.get(k) != test.get(k)}
    assert changed == {"alerting", "scrape_configs"}
    assert test["scrape_configs"] == rewritten["scrape_configs"]
    assert test["alerting"] == {
        "alertmanagers": [{"static_configs": [{"targets": [f"127.0.0.1:{ports['alertmanager']}", "127.0.0.1:1"]}]}]
    }
    assert rewritten["alerting"]["alertmanagers"][0]["static_configs"][0]["targets"] == [
        f"127.0.0.1:{ports['alertmanager']}"
    ]
    assert shipped["rule_files"] == ["rules/*.yml"]


@pytest.mark.parametrize("variant", ["shipped", "example"])
def test_alertmanager_overlay_keeps_routes_grouping_and_inhibition(variant):
    text = ALERTMANAGER_CONFIG.read_text()
    if variant == "example":
        text = uncomment_example(text)
    shipped = yaml.safe_load(text)
    test = alertmanager_overlay(text, lambda r: f"http://127.0.0.1:1/{r}")
    assert test["inhibit_rules"] == shipped["inhibit_rules"]
    assert [r["name"] for r in test["receivers"]] == [r["name"] for r in shipped["receivers"]]
    assert all(r["webhook_configs"][0]["url"].endswith("/" + r["name"]) for r in test["receivers"])

    def without_timings(route):
        route = {k: v for k, v in route.items() if k not in ("group_wait", "group_interval")}
        if "routes" in route:
            route["routes"] = [without_timings(r) for r in route["routes"]]
        return route

    assert without_timings(test["route"]) == without_timings(shipped["route"])
    assert test["route"]["repeat_interval"] == shipped["route"]["repeat_interval"]


# ---------------------------------------------------------------------------
# The servers ran what deploy/ ships, on what the sessions exported
# ---------------------------------------------------------------------------
def test_the_sessions_did_what_each_night_planned(alert_path):
    by_suite = {s.name: s for s in SCENARIO}
    assert {(n["suite"], n["night"]) for n in alert_path["nights"]} == {
        (s.name, i) for s in SCENARIO for i in range(len(s.ages_h))
    }
    for n in alert_path["nights"]:
        suite = by_suite[n["suite"]]
        plan = night_plan(suite, n["night"])
        assert n["returncode"] in (0, 1)
        rows = {(r["benchmark"], r["case_id"]): r for r in n["rows"]}
        for bench, cases in plan["cases"].items():
            for case, (passes, errors) in cases.items():
                row = rows[(bench, case)]
                assert (row["passes"], row["errors"], row["fails"]) == (passes, errors, suite.runs - passes - errors), (
                    n["suite"],
                    n["night"],
                    bench,
                    case,
                )
                assert row["cost"] == pytest.approx(suite.runs * plan["cost"])


def test_the_nights_went_through_the_collector(alert_path):
    """Every night's export, replayed at its night's time, sent whole by the Collector to Prometheus 3."""
    assert alert_path["versions"]["prometheus"] == "3.13.3"
    assert all(r["returncode"] == 0 for r in alert_path["replays"]), alert_path["replays"]
    assert len(alert_path["replays"]) == sum(len(s.ages_h) for s in SCENARIO)
    delivered = alert_path["delivered"]
    assert delivered["failed_points"] == 0 and delivered["failed_spans"] == 0, delivered
    assert delivered["points"] >= alert_path["exported"]["points"]
    loaded = alert_path["prometheus_loaded_config"]
    assert loaded["otlp"]["translation_strategy"] == "UnderscoreEscapingWithSuffixes"


def test_every_recording_rule_returns_series_on_the_nights(alert_path):
    """With nights of history even the 7-day median spend has data (one session cannot have it)."""
    empty = [r["record"] for r in alert_path["recording"] if not r["series"]]
    assert not empty, empty


def test_prometheus_ran_every_shipped_rule_without_errors(alert_path):
    waits = alert_path["waits"]
    assert all(v is not None for v in waits.values()), f"a bounded wait ran out: {_explain(alert_path)}"
    shipped = [
        (g["name"], [r.get("record") or r.get("alert") for r in g["rules"]])
        for p in RULE_FILES
        for g in yaml.safe_load(p.read_text())["groups"]
    ]
    running = [(g["group"], [r["name"] for r in g["rules"]]) for g in alert_path["rules"]]
    assert running == shipped
    bad = [(g["group"], r) for g in alert_path["rules"] for r in g["rules"] if r["health"] != "ok" or r["lastError"]]
    assert not bad, bad


def test_prometheus_fires_exactly_the_scenarios_alerts(alert_path):
    fired = firing(alert_path)
    assert set(fired) == EXPECTED_FIRING, (
        f"missing {sorted(EXPECTED_FIRING - set(fired))}, unexpected {sorted(set(fired) - EXPECTED_FIRING)}; "
        f"{_explain(alert_path)}"
    )
    assert not [a for a in alert_path["prometheus_alerts"] if a["state"] != "firing"], "pending alerts left"


# ---------------------------------------------------------------------------
# What reaches the webhook
# ---------------------------------------------------------------------------
def test_plugin_verdicts_behind_the_drop_alert(alert_path):
    """The sessions' own verdicts: every night after the first compares every
    case with the nights before; FAIL exactly for the changed cases, tonight."""
    by_suite = {s.name: s for s in SCENARIO}
    for n in alert_path["nights"]:
        suite = by_suite[n["suite"]]
        labels = {f"{b.name}::{c}" if c else b.name for b in suite.benchmarks for c in b.cases}
        assert set(n["baseline"]) == (labels if n["night"] else set()), (n["suite"], n["night"])
        failed = {label for label, v in n["baseline"].items() if v["verdict"] == "fail"}
        tonight = n["night"] == len(suite.ages_h) - 1
        want = {f"{b}::{c}" for s, b, c in CHANGED if s == suite.name} if tonight else set()
        assert failed == want, (n["suite"], n["night"], n["baseline"])


def test_drop_alert_for_the_dropped_case(alert_path):
    got = notified(alert_path, "shipped")
    alert = got.get((DROP_ALERT, "nightly-drop", "classify", "drops"))
    assert alert, f"no {DROP_ALERT} for classify/drops; notified {sorted(got)}"
    assert alert["labels"] == {
        "alertname": DROP_ALERT,
        "severity": "warning",
        "job": "pytest-probability",
        "test_suite_name": "nightly-drop",
        "cicd_pipeline_name": "nightly",
        "probability_benchmark": "classify",
        "probability_case": "drops",
        "test_case_name": "bench_nightly.py::classify::drops",
    }
    ann = alert["annotations"]
    assert ann["summary"] == "classify/drops dropped below its baseline"
    assert "suite nightly-drop" in ann["description"] and "the plugin's verdict is fail" in ann["description"]
    # The value shown is the upper bound of tonight - baseline, from the session's report.
    tonight = next(n for n in alert_path["nights"] if n["suite"] == "nightly-drop" and n["night"] == 5)
    high = tonight["baseline"]["classify::drops"]["high"]
    shown = re.search(r"is at most (-?[\d.]+)%", ann["description"])
    assert shown and float(shown.group(1)) == pytest.approx(high * 100, rel=1e-3), (ann["description"], high)
    assert high < 0
    assert "Latest sessions" in ann["runbook"], "the runbook leads to the session's revision"
    assert alert["generatorURL"].startswith(alert_path["prometheus_url"] + "/graph?")


def test_score_drop_alert_for_the_case_whose_score_fell(alert_path):
    """answer/slips: every run passes every night, but tonight the judge's mean score fell from 0.85 to
    0.5. The session's per-case score verdict is FAIL (answer/steady's is not), and the alert shows its
    interval's upper bound."""
    tonight = next(n for n in alert_path["nights"] if n["suite"] == "nightly-drop" and n["night"] == 5)
    assert {label: v["verdict"] for label, v in tonight["scores"].items()} == {
        "answer::steady": "undecided",
        "answer::slips": "fail",
    }
    earlier = [n for n in alert_path["nights"] if n["suite"] == "nightly-drop" and 0 < n["night"] < 5]
    assert all(v["verdict"] != "fail" for n in earlier for v in n["scores"].values())
    alert = notified(alert_path, "shipped").get((SCORE_DROP_ALERT, "nightly-drop", "answer", "slips"))
    assert alert, "no score drop alert for answer/slips"
    assert alert["labels"]["probability_score_name"] == "judge"
    assert alert["annotations"]["summary"] == "answer/slips scores lower on judge than its baseline"
    shown = re.search(r"is at most (-?[\d.]+) \(", alert["annotations"]["description"])
    high = tonight["scores"]["answer::slips"]["high"]
    assert shown and float(shown.group(1)) == pytest.approx(high, abs=5e-3), (alert["annotations"], high)
    assert high < -0.05
    assert any("slips" in u for u in _trace_links(alert["annotations"]))


def _trace_links(annotations: dict) -> list[str]:
    urls = [u for v in annotations.values() for u in re.findall(r"https?://\S+", v)]
    return [u for u in urls if "pytest-probability" in u and ("trace" in u or "search" in u)]


def test_drop_alert_links_to_the_cases_traces(alert_path):
    alert = notified(alert_path, "shipped")[(DROP_ALERT, "nightly-drop", "classify", "drops")]
    links = _trace_links(alert["annotations"])
    assert links and all("drops" in u for u in links), alert["annotations"]


def test_no_drop_alert_for_the_unchanged_cases(alert_path):
    changed = CHANGED
    unchanged = {(s.name, b.name, c) for s in SCENARIO for b in s.benchmarks for c in b.cases} - changed
    assert len(unchanged) == 13
    for am in ("shipped", "example"):
        got = notified(alert_path, am)
        dropped = {k[1:] for k in got if k[0] == DROP_ALERT}
        assert not dropped & unchanged, (am, sorted(dropped & unchanged))
        # api/lookup's is muted by the errored-runs alert.
        assert dropped == changed - {("nightly-harness", "api", "lookup")}, (am, dropped)
    # The drop suite's unchanged cases raise nothing at all.
    quiet = {k for k in firing(alert_path) if k[1] == "nightly-drop" and k[3] not in ("drops", "slips")}
    assert not quiet, quiet


def test_no_session_alert_after_a_missed_night(alert_path):
    got = notified(alert_path, "shipped")
    alert = got.get(("ProbabilityNoSession", "nightly-missed", "", ""))
    assert alert, sorted(got)
    assert alert["labels"] == {
        "alertname": "ProbabilityNoSession",
        "severity": "critical",
        "job": "pytest-probability",
        "test_suite_name": "nightly-missed",
    }
    # The age comes from the annotation's own query: the last session, 27 h ago.
    assert re.search(r"reached Prometheus 1d 3h \d+m \d+s ago", alert["annotations"]["description"]), alert[
        "annotations"
    ]["description"]
    assert "replay" in alert["annotations"]["runbook"]
    assert {k[1] for k in got if k[0] == "ProbabilityNoSession"} == {"nightly-missed"}
    # A suite whose latest data is 27 h old raises nothing else (its weak case included).
    assert {k for k in firing(alert_path) if k[1] == "nightly-missed"} == {
        ("ProbabilityNoSession", "nightly-missed", "", "")
    }


def test_errored_runs_alert(alert_path):
    got = notified(alert_path, "shipped")
    alert = got.get(("ProbabilityErroredRunsHigh", "nightly-harness", "api", ""))
    assert alert, sorted(got)
    assert alert["labels"]["severity"] == "warning"
    # 6 errored of api's 20 executed runs.
    assert alert["annotations"]["summary"] == "30% of the runs of benchmark api errored"
    assert {k for k in got if k[0] == "ProbabilityErroredRunsHigh"} == {
        ("ProbabilityErroredRunsHigh", "nightly-harness", "api", "")
    }


def test_spend_alert(alert_path):
    got = notified(alert_path, "shipped")
    alert = got.get(("ProbabilitySpendHigh", "nightly-harness", "", ""))
    assert alert, sorted(got)
    # 70 runs at 0.04 USD tonight; 70 runs at 0.01 USD the four nights before.
    assert alert["annotations"]["summary"] == "Suite nightly-harness spent 2.80 USD in its latest session"
    assert "(0.70 USD)" in alert["annotations"]["description"]
    assert {k for k in got if k[0] == "ProbabilitySpendHigh"} == {("ProbabilitySpendHigh", "nightly-harness", "", "")}


def test_errored_runs_mute_that_benchmarks_case_alerts(alert_path):
    """Inhibition as alertmanager.yml documents it: the per-case alerts of the
    benchmark whose runs errored are firing in Prometheus but not notified;
    those of the suite's other benchmarks are."""
    fired = firing(alert_path)
    assert EXPECTED_INHIBITED <= set(fired)
    for am in ("shipped", "example"):
        got = notified(alert_path, am)
        assert not EXPECTED_INHIBITED & set(got), (am, sorted(EXPECTED_INHIBITED & set(got)), _explain(alert_path))
        states = {key(a["labels"]): a for a in alert_path["alertmanager_alerts"][am]}
        source = states[("ProbabilityErroredRunsHigh", "nightly-harness", "api", "")]
        for k in EXPECTED_INHIBITED:
            assert states[k]["status"]["state"] == "suppressed"
            assert states[k]["status"]["inhibitedBy"] == [source["fingerprint"]]
        muted = {k for k, a in states.items() if a["status"]["state"] != "active"}
        assert muted == EXPECTED_INHIBITED, (am, muted)
        # Same suite, another benchmark: not muted.
        assert ("ProbabilityCaseBelowBar", "nightly-harness", "hard", "a") in got
        assert ("ProbabilityCaseBelowGate", "nightly-harness", "strict", "") in got
        assert set(got) == EXPECTED_FIRING - EXPECTED_INHIBITED, am


def test_one_notification_per_alert_suite_and_benchmark(alert_path):
    """group_by [alertname, test_suite_name, probability_benchmark]: one
    notification per group, listing its cases; each alert in one group."""
    for am in ("shipped", "example"):
        bodies = [b for b in notifications(alert_path, am) if b["status"] == "firing"]
        groups = Counter(tuple(sorted(b["groupLabels"].items())) for b in bodies)
        assert all(n == 1 for n in groups.values()), (am, groups)
        for b in bodies:
            assert set(b["groupLabels"]) <= {"alertname", "test_suite_name", "probability_benchmark"}
            for a in b["alerts"]:
                assert all(a["labels"].get(k) == v for k, v in b["groupLabels"].items()), (am, b["groupLabels"])
        hard = [
            b
            for b in bodies
            if b["groupLabels"]
            == {
                "alertname": "ProbabilityCaseBelowBar",
                "test_suite_name": "nightly-harness",
                "probability_benchmark": "hard",
            }
        ]
        assert len(hard) == 1 and sorted(a["labels"]["probability_case"] for a in hard[0]["alerts"]) == ["a", "b"]
        # Suite-level alerts have no benchmark: their group is the suite.
        spend = [b for b in bodies if b["groupLabels"].get("alertname") == "ProbabilitySpendHigh"]
        assert [b["groupLabels"] for b in spend] == [
            {"alertname": "ProbabilitySpendHigh", "test_suite_name": "nightly-harness"}
        ]


def test_shipped_config_sends_everything_to_the_null_receiver(alert_path):
    bodies = notifications(alert_path, "shipped")
    assert bodies
    assert {b["receiver"] for b in bodies} == {"null"}


def test_example_routes_by_severity(alert_path):
    """With the commented Slack/e-mail example switched on: critical to
    slack-benchmarks, warning and info to email-benchmarks."""
    bodies = notifications(alert_path, "example")
    seen = set()
    for b in bodies:
        for a in b["alerts"]:
            want = "slack-benchmarks" if a["labels"]["severity"] == "critical" else "email-benchmarks"
            assert b["receiver"] == want, (b["receiver"], a["labels"])
            seen.add(b["receiver"])
    assert seen == {"slack-benchmarks", "email-benchmarks"}


# ---------------------------------------------------------------------------
# The dashboard's queries on the same nights
# ---------------------------------------------------------------------------
def test_every_dashboard_query_parses_and_shows_data(alert_path):
    results = alert_path["dashboard"]
    assert results
    failed = [r for r in results if r["status"] != "success"]
    assert not failed, failed
    # The Jaeger data source's trace-to-metrics link is filled in by Grafana
    # with a span's own tags; with the placeholder values it only has to parse.
    empty = [
        (r["source"], r["query"], r["expr"]) for r in results if r["query"] != "trace_to_metrics" and not r["series"]
    ]
    assert not empty, empty
    assert {r["query"] for r in results} == {"instant", "range", "label_values", "trace_to_metrics"}


def test_dashboard_latest_panels_show_the_scenario(alert_path):
    by_source = {r["source"].split(": ", 1)[1]: r for r in alert_path["dashboard"]}
    suites = by_source["variable suite"]
    assert suites["series"] == len(SCENARIO)
    latest = by_source["panel 'Session pass fraction (latest)' A"]
    # nightly-missed has no session in the last 26 h: no latest value.
    assert sorted(s["metric"]["test_suite_name"] for s in latest["sample"]) == ["nightly-drop", "nightly-harness"]
    alerts = by_source["annotation 'Firing alerts'"]
    assert alerts["series"] == len(EXPECTED_FIRING)
