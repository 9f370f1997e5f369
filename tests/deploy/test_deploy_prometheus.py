"""promtool checks of the Prometheus rules, their unit tests, the Prometheus
configuration and every PromQL expression of the Grafana dashboards."""

from __future__ import annotations

import re

import pytest
import yaml
from deploy_tools import accepted_prometheus_config, run, tool_version
from metric_contract import ENUMERATED_LABELS
from promql_names import (
    DEPLOY,
    PROMETHEUS_CONFIG,
    RULE_FILES,
    all_expressions,
    dashboard_expressions,
    datasource_expressions,
)

RULES_DIR = DEPLOY / "prometheus" / "rules"
RULE_TEST_FILES = sorted((DEPLOY / "prometheus" / "tests").glob("*.yml"))


def test_rule_files_exist():
    assert RULE_FILES, "no rule files in deploy/prometheus/rules"
    assert RULE_TEST_FILES, "no promtool unit tests in deploy/prometheus/tests"


def test_promtool_check_rules(promtool):
    out = run([promtool, "check", "rules", *RULE_FILES])
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.parametrize("test_file", RULE_TEST_FILES, ids=lambda p: p.name)
def test_promtool_test_rules(promtool, test_file):
    out = run([promtool, "test", "rules", test_file.name], cwd=test_file.parent, timeout=600)
    assert out.returncode == 0, f"promtool {tool_version(promtool)}:\n{out.stdout}{out.stderr}"


def test_promtool_check_config(promtool, tmp_path):
    """`promtool check config` on prometheus.yml (and through it the rules).

    The rule_files glob is pointed at the repository's rules. If this promtool
    predates Prometheus 3 and rejects a Prometheus-3-only key (the `otlp`
    section), that key is removed from a copy and the copy is checked: every
    other key must be accepted as written.
    """
    cfg = yaml.safe_load(PROMETHEUS_CONFIG.read_text())
    assert cfg["rule_files"] == ["rules/*.yml"], "rules are mounted at /etc/prometheus/rules"
    cfg["rule_files"] = [str(RULES_DIR / "*.yml")]
    _, stripped, text = accepted_prometheus_config(promtool, cfg, tmp_path / "prometheus.yml")
    assert f"{len(RULE_FILES)} rule files found" in text, text
    if stripped:
        print(f"promtool {tool_version(promtool)} cannot read {stripped}: checked without them")


def test_prometheus_otlp_settings():
    """What promtool 2.x cannot check in the otlp section, checked here."""
    cfg = yaml.safe_load(PROMETHEUS_CONFIG.read_text())
    otlp = cfg["otlp"]
    assert set(otlp) <= {
        "promote_resource_attributes",
        "promote_all_resource_attributes",
        "ignore_resource_attributes",
        "translation_strategy",
        "keep_identifying_resource_attributes",
        "convert_histograms_to_nhcb",
        "promote_scope_metadata",
        "label_name_underscore_sanitization",
        "label_name_preserve_multiple_underscores",
    }, otlp
    # The metric names in rules and dashboards are the escaped, suffixed ones.
    assert otlp["translation_strategy"] == "UnderscoreEscapingWithSuffixes"
    assert otlp.get("convert_histograms_to_nhcb", False) is False, "rules read classic _bucket series"
    assert not otlp.get("promote_all_resource_attributes", False)
    promoted = otlp["promote_resource_attributes"]
    assert len(promoted) == len(set(promoted))
    assert "test.suite.name" in promoted
    for per_session in (
        "vcs.ref.head.revision",
        "cicd.pipeline.run.id",
        "cicd.pipeline.run.url.full",
        "service.instance.id",
    ):
        assert per_session not in promoted, f"{per_session} changes every session"
    assert cfg["storage"]["tsdb"]["out_of_order_time_window"], "replayed spill files need it"


def _rule_groups():
    for path in RULE_FILES:
        for group in yaml.safe_load(path.read_text())["groups"]:
            yield path, group


def test_recording_rules_and_alerts_share_one_group():
    groups = [g for _, g in _rule_groups()]
    assert len(groups) == 1, "recording rules and the alerts reading them belong in one group"
    rules = groups[0]["rules"]
    first_alert = next(i for i, r in enumerate(rules) if "alert" in r)
    assert all("record" in r for r in rules[:first_alert]), "alerts come after the rules they read"
    assert all("alert" in r for r in rules[first_alert:])


REQUIRED_ALERTS = {
    "ProbabilityCaseBelowBar",
    "ProbabilityCaseBelowGate",
    "ProbabilityCaseFractionDropped",
    "ProbabilityCaseScoreDropped",
    "ProbabilityCaseScoreBelowGate",
    "ProbabilityCaseNewlyFlaky",
    "ProbabilityErroredRunsHigh",
    "ProbabilitySpendHigh",
    "ProbabilityNoSession",
}


def _alerts():
    return {r["alert"]: r for _, g in _rule_groups() for r in g["rules"] if "alert" in r}


def test_alerts_have_severity_and_annotations():
    alerts = _alerts()
    assert REQUIRED_ALERTS <= set(alerts)
    for name, rule in alerts.items():
        assert rule["labels"]["severity"] in {"critical", "warning", "info"}, name
        assert {"summary", "description", "runbook"} <= set(rule["annotations"]), name


def test_no_rate_on_once_per_session_series():
    """One sample per series per night: rate()/increase()/irate()/delta() see nothing."""
    for e in all_expressions():
        assert not re.search(r"\b(rate|irate|increase|delta|idelta|deriv)\s*\(", e.expr), e.source


def _alert_tests():
    found = {}
    for path in RULE_TEST_FILES:
        for test in yaml.safe_load(path.read_text())["tests"]:
            for case in test.get("alert_rule_test", []):
                kind = "firing" if case.get("exp_alerts") else "silent"
                found.setdefault(case["alertname"], set()).add(kind)
    return found


def test_every_alert_has_a_firing_and_a_silent_unit_test():
    found = _alert_tests()
    for name in _alerts():
        assert found.get(name) == {"firing", "silent"}, (
            f"{name}: needs alert_rule_test cases where it fires and where it stays silent, "
            f"has {sorted(found.get(name, []))}"
        )


def expand_values(values: str) -> list[float | None]:
    """promtool's series notation: 'a', 'axn', 'a+bxn', 'a-bxn', '_', '_xn', 'stale'."""
    out: list[float | None] = []
    for tok in values.split():
        if tok in ("_", "stale"):
            out.append(None)
        elif m := re.fullmatch(r"_x(\d+)", tok):
            out.extend([None] * int(m.group(1)))
        elif m := re.fullmatch(r"(-?\d+(?:\.\d+)?)(?:([+-])(\d+(?:\.\d+)?))?x(\d+)", tok):
            start, step = float(m.group(1)), float(m.group(3) or 0) * (-1 if m.group(2) == "-" else 1)
            out.extend(start + i * step for i in range(int(m.group(4)) + 1))
        elif re.fullmatch(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?", tok):
            out.append(float(tok))
        else:
            raise ValueError(f"cannot read {tok!r} in {values!r}")
    return out


def test_expand_values():
    assert expand_values("1x2 _ 0.5+0.25x2 _x2 -1") == [1, 1, 1, None, 0.5, 0.75, 1.0, None, None, -1]


def _seconds(duration: str) -> int:
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    return sum(int(n) * units[u] for n, u in re.findall(r"(\d+)([smhd])", duration))


def test_unit_test_series_follow_the_metric_contract(real_export):
    """The series fed to promtool look like what Prometheus 3 stored from the plugin's
    real export (names, label names, enumerated label values, job, no instance),
    with one sample per nightly session (>= 20h apart)."""
    exported = real_export.names_and_labels()
    # An attribute the export sent empty (an unparametrized case's probability.case) is no
    # label in Prometheus; a parametrized case of the unit tests has it.
    for name, labels in real_export.empty_labels().items():
        exported.setdefault(name, set()).update(labels)
    values: dict[str, set[str]] = {}
    for (_metric, label), vals in real_export.label_values().items():
        values.setdefault(label, set()).update(vals)
    name_re = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)\{(.*)\}$")
    label_re = re.compile(r'(\w+)="((?:\\.|[^"\\])*)"')
    for path in RULE_TEST_FILES:
        for test in yaml.safe_load(path.read_text())["tests"]:
            step = _seconds(test["interval"])
            for series in test["input_series"]:
                times = [i * step for i, v in enumerate(expand_values(series["values"])) if v is not None]
                assert times, series["series"]
                gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
                assert all(g >= 20 * 3600 for g in gaps), f"{path.name}: {series['series']} has samples {gaps} s apart"
                m = name_re.match(series["series"])
                assert m, series["series"]
                name, labels = m.group(1), dict(label_re.findall(m.group(2)))
                assert name in exported, f"{path.name}: the plugin exports no {name}"
                assert labels.get("job") in values["job"], series["series"]
                assert "test_suite_name" in labels, series["series"]
                assert set(labels) <= exported[name], (
                    f"{path.name}: {name} has labels {sorted(set(labels) - exported[name])} "
                    "that the exported series do not have"
                )
                for label in ENUMERATED_LABELS & set(labels):
                    assert labels[label] in values[label], series["series"]


def test_dashboard_expressions_pass_promtool(promtool, tmp_path):
    """promtool has no 'parse this expression' command: every dashboard and
    data source query becomes a recording rule in a scratch file, which
    `promtool check rules` parses."""
    exprs = dashboard_expressions() + datasource_expressions()
    assert exprs
    rules = [{"record": f"dashboard:expr_{i}:check", "expr": e.expr} for i, e in enumerate(exprs)]
    path = tmp_path / "dashboard_exprs.yml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}))
    out = run([promtool, "check", "rules", path])
    if out.returncode != 0:
        text = out.stdout + out.stderr
        bad = sorted({int(i) for i in re.findall(r"dashboard:expr_(\d+):check", text)})
        pytest.fail("\n".join([text] + [f"{exprs[i].source}: {exprs[i].expr}" for i in bad]))
    assert f"SUCCESS: {len(rules)} rules found" in out.stdout, out.stdout
