"""Every metric and label the rules and dashboards read is one the plugin
actually emits: compared with what a real Prometheus 3 stored from a real
export of the plugin (a nightly session run in a subprocess, see
real_export.py, sent through the real Collector with deploy/'s files into
Prometheus's OTLP receiver: the ``real_export`` fixture, stored.py). Also tests
the PromQL reader behind used_metric_names_and_labels()."""

from __future__ import annotations

import json
import re

import promql_names as pn
import pytest
from metric_contract import ENUMERATED_LABELS, PER_SESSION_RESOURCE_ATTRIBUTES, SERVER_SIDE_LABELS
from promql_names import DEPLOY

from pytest_probability.vocabulary import OUTCOMES, STATUSES

# Read by nothing on purpose: the histogram's _sum and _count.
UNREAD = {
    "probability_run_duration_seconds_sum",
    "probability_run_duration_seconds_count",
    "probability_run_score_sum",
    "probability_run_score_count",
}


def test_every_expression_parses():
    exprs = pn.all_expressions()
    assert len(exprs) > 30
    for e in exprs:
        pn.parse(e.expr)


def test_used_metric_names_and_labels_listing():
    used = pn.used_metric_names_and_labels()
    # Printed so that `pytest -s` shows the list.
    for name, labels in sorted(used.items()):
        print(name, sorted(labels))
    assert "probability_case_pass_fraction_ratio" in used
    assert all(":" not in name for name in used)
    assert "ALERTS" not in used


# --- against the real export --------------------------------------------------
def test_real_export_is_what_the_rules_assume(real_export):
    """Cumulative sums and histograms (one sample per series per session), every
    series with job and the promoted resource labels, no instance."""
    assert real_export.instruments, "the session exported no metrics"
    for name, (kind, _unit, temporality) in real_export.instruments.items():
        if kind in ("counter", "sum", "histogram"):
            assert temporality == "cumulative", f"{name}: {temporality}"
    promoted = pn.promoted_resource_labels()
    for s in real_export.series:
        assert s.labels.get("job") == "pytest-probability", s
        assert "instance" not in s.labels, s
        assert promoted <= set(s.labels), f"{s.name} lacks {sorted(promoted - set(s.labels))}"


def test_used_names_and_labels_are_exported(real_export):
    exported = real_export.names_and_labels()
    problems = []
    for name, labels in sorted(pn.used_metric_names_and_labels().items()):
        if name not in exported:
            problems.append(f"{name}: the plugin exports no such series (it has {sorted(exported)})")
            continue
        # An attribute sent empty (an unparametrized case's probability.case) is no
        # label in Prometheus, and the same as a missing one in PromQL.
        unknown = labels - exported[name] - SERVER_SIDE_LABELS - real_export.empty_labels().get(name, set())
        if unknown:
            problems.append(
                f"{name}: labels {sorted(unknown)} are not on the exported series ({sorted(exported[name])})"
            )
    assert not problems, "\n".join(problems)


def test_every_exported_metric_is_used(real_export):
    unused = set(real_export.names_and_labels()) - set(pn.used_metric_names_and_labels()) - UNREAD
    assert not unused, f"nothing reads {sorted(unused)}"


def _exported_values(real_export) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for (_name, label), values in real_export.label_values().items():
        out.setdefault(label, set()).update(values)
    return out


def test_label_values_are_exported(real_export):
    """`=` must name a value the plugin exports; `!=` a value of the plugin's
    domain (a defensive filter such as probability_status!="skip" is fine)."""
    exported = _exported_values(real_export)
    domain = {"probability_outcome": set(OUTCOMES), "probability_status": set(STATUSES)}
    problems = []
    for op in ("=", "!="):
        for (metric, label), values in sorted(pn.used_label_values(ops=(op,)).items()):
            if label not in ENUMERATED_LABELS:
                continue
            allowed = exported.get(label, set()) | (domain.get(label, set()) if op == "!=" else set())
            if not values <= allowed:
                problems.append(f"{metric}: {label}{op}{sorted(values - allowed)} is never exported")
    assert not problems, "\n".join(problems)


def test_the_export_covers_every_enumerated_value(real_export):
    """The session behind these tests exercises every outcome, every status a
    pass fraction can carry and every token type, so the checks above are complete."""
    exported = _exported_values(real_export)
    assert exported["probability_outcome"] == set(OUTCOMES)
    assert exported["probability_status"] == set(STATUSES) - {"skip"}  # all-skipped cases have no fraction
    assert exported["gen_ai_token_type"] == {"input", "output"}  # the semantic conventions define no other
    assert {s.value for s in real_export.find("probability_case_gate_verdict")} == {1.0, 0.0, -1.0}


def test_heartbeat_counts_every_run(real_export):
    from real_export import BENCH_CASES, RUNS

    (heartbeat,) = real_export.find("probability_session_runs_total")
    assert heartbeat.value == BENCH_CASES * RUNS  # skipped runs included
    assert set(heartbeat.labels) == {"job"} | pn.promoted_resource_labels()


def test_heartbeat_of_a_session_whose_runs_were_all_skipped(skipped_export):
    """The premise of ProbabilityNoSession's "only skipped runs" unit test: such a
    session sends the heartbeat but no session pass fraction."""
    from real_export import RUNS, SKIPPED_CASES

    export = skipped_export
    (heartbeat,) = export.find("probability_session_runs_total")
    assert heartbeat.value == SKIPPED_CASES * RUNS
    assert not export.find("probability_session_pass_fraction_ratio")
    assert not export.find("probability_case_pass_fraction_ratio")
    assert {s.labels["probability_outcome"] for s in export.find("probability_runs_total")} == {
        "pass",
        "fail",
        "error",
        "skip",
    }


def test_gate_gauges_carry_the_gates_interval(real_export, nightly_session):
    """For gated cases the interval gauges are the gate's own interval (its
    confidence and method), so "upper bound below the bar" agrees with the
    verdict; the row's interval (at the session's confidence) may not."""
    rows = {r["benchmark"]: r for r in json.loads((nightly_session / "report.json").read_text())["rows"]}

    def value(name, benchmark):
        (s,) = real_export.find(name, probability_benchmark=benchmark)
        return s.value

    gated = {s.labels["probability_benchmark"] for s in real_export.find("probability_case_min_rate_ratio")}
    assert gated == {b for b, r in rows.items() if r["gate"]}
    for benchmark in sorted(gated):
        gate = rows[benchmark]["gate"]
        lower, upper = (
            value("probability_case_interval_lower_ratio", benchmark),
            value("probability_case_interval_upper_ratio", benchmark),
        )
        bar, verdict = (
            value("probability_case_min_rate_ratio", benchmark),
            value("probability_case_gate_verdict", benchmark),
        )
        assert (lower, upper, bar) == (gate["low"], gate["high"], gate["min_rate"]), benchmark
        assert (upper < bar) == (verdict == -1), benchmark
        assert (lower >= bar) == (verdict == 1), benchmark
    # The case where it matters: the row's 95% interval straddles the bar,
    # the gate's 50% interval is below it.
    strict = rows["strict"]
    assert strict["ci"]["high"] >= 0.8 > value("probability_case_interval_upper_ratio", "strict")
    assert value("probability_case_gate_verdict", "strict") == -1


def test_baseline_gauges_agree_with_the_verdict(real_export, nightly_session):
    """The drop alert reads probability_case_baseline_verdict == -1 and shows the
    upper bound: both must be the report's, and the bound below 0 (margin 0)
    exactly when the verdict is fail."""
    report = json.loads((nightly_session / "report.json").read_text())
    inputs = {i["input"]: i for c in report["baseline"]["comparisons"] for i in c["inputs"]}

    def value(name, benchmark, case):
        (s,) = real_export.find(name, probability_benchmark=benchmark, probability_case=case)
        return s.value

    for label, (benchmark, case) in {"unsure": ("unsure", ""), "mixed::error": ("mixed", "error")}.items():
        entry = inputs[label]
        verdict = value("probability_case_baseline_verdict", benchmark, case)
        upper = value("probability_case_baseline_difference_upper_ratio", benchmark, case)
        assert verdict == {"pass": 1, "undecided": 0, "fail": -1}[entry["verdict"]]
        assert upper == entry["ci"]["high"] and (upper < 0) == (verdict == -1)
        assert value("probability_case_baseline_p_adjusted_ratio", benchmark, case) == entry["p_adjusted"]
        assert value("probability_case_baseline_pass_fraction_ratio", benchmark, case) == 1.0
    assert {s.value for s in real_export.find("probability_case_baseline_verdict")} == {0.0, -1.0}
    # Named like every per-case series, so two files' bench_x::c1 never share one.
    names = {s.labels["test_case_name"] for s in real_export.find("probability_case_baseline_verdict")}
    assert names >= {"bench_nightly.py::unsure", "bench_nightly.py::mixed::error"}


def test_series_per_case_as_docs_nightly_says(real_export):
    """docs/nightly.md, "Series per case": 24 for a case with one model (or
    record_cost() only) and one outcome, 26 gated, 40 with two outcomes."""
    per_case: dict[tuple[str, str], int] = {}
    for s in real_export.series:
        if "test_case_name" in s.labels:  # per-case series; an unparametrized case has no probability_case
            key = (s.labels["probability_benchmark"], s.labels.get("probability_case", ""))
            per_case[key] = per_case.get(key, 0) + 1
    state = 2  # the session runs with --prob-history, as the nightly job does: state and changed
    assert per_case[("mixed", "fail")] == 24 + state  # ungated, record_cost(), all runs fail
    assert per_case[("gated_fail", "")] == 26 + state  # gated, one model, all runs fail
    assert per_case[("answer", "")] == 26 + state  # gated, one model, all runs pass
    assert per_case[("mixed", "flaky")] == 40 + state  # ungated, passes and fails
    assert per_case[("mixed", "skip")] == 4 + 1  # all skipped: runs and cost only, no state
    text = (DEPLOY.parent / "docs" / "nightly.md").read_text()
    assert "**24 series**" in text and "**26** gated" in text and "40 and 42" in text
    assert "`--prob-history`\nadds 2 (its state)" in text


def _readme_contract_table() -> list[list[str]]:
    text = (DEPLOY / "README.md").read_text()
    section = text.split("## The metric contract", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `probability.")]
    return [[c.strip() for c in row.strip("|").split("|")] for row in rows]


def test_readme_contract_table_matches_the_export(real_export):
    rows = _readme_contract_table()
    assert rows
    instruments, series = {}, set()
    for instrument, unit, prom, _labels in rows:
        name = re.match(r"`([\w.]+)`", instrument).group(1)
        instruments[name] = unit.strip("`") if unit != '`""`' else ""
        series |= set(re.findall(r"`(\w+)`", prom))
    assert set(instruments) == set(real_export.instruments)
    for name, unit in instruments.items():
        assert unit == real_export.instruments[name][1], f"README: {name} has unit {unit!r}"
    assert series == set(real_export.names_and_labels()) - {"target_info"}


# --- policy ---------------------------------------------------------------------
def test_promoted_labels_are_stable_resource_attributes():
    promoted = pn.promoted_resource_labels()
    assert "test_suite_name" in promoted
    per_session = {a.replace(".", "_") for a in PER_SESSION_RESOURCE_ATTRIBUTES}
    assert not promoted & per_session, "a per-session label would split every series each night"


def test_recorded_names_used_are_defined():
    defined = pn.recording_rule_names()
    for name in pn.used_recorded_names_and_labels():
        assert name in defined, f"{name} is read but no recording rule defines it"


# --- the PromQL reader itself ----------------------------------------------
def usage(expr, required=()):
    return {k: v for k, v in pn.label_usage(pn.parse(expr), set(required)).items()}


def test_parser_precedence_and_modifiers():
    tree = pn.parse("a + b * c > bool 2 and on (x) d unless ignoring (y) group_left (z) e")
    assert isinstance(tree, pn.Binary) and tree.op == "unless"
    assert tree.on is False and tree.labels == ["y"] and tree.card == "group_left" and tree.include == ["z"]
    assert pn.parse("-2 ^ 2").op == "-"  # unary minus binds looser than ^
    sub = pn.parse("max_over_time(timestamp(m)[26h:5m]) + 600").lhs.args[0]
    assert isinstance(sub, pn.Subquery) and sub.range == "26h" and sub.step == "5m"


def test_parser_aggregation_grouping_before_or_after():
    assert usage("sum by (a) (m)") == {"m": {"a"}}
    assert usage("sum (m) by (a)") == {"m": {"a"}}
    assert usage('quantile(0.5, m{b="1"}) without (a)') == {"m": {"a", "b"}}


def test_label_usage_follows_the_data():
    # Matchers, grouping and legend labels.
    assert usage('sum by (le, a) (last_over_time(m_bucket{b!="x"}[1h]))', {"a"}) == {"m_bucket": {"a", "b", "le"}}
    # histogram_quantile needs le.
    assert usage("histogram_quantile(0.9, m)") == {"m": {"le"}}
    # label_replace reads src, creates dst.
    assert usage('label_replace(m, "dst", "$1", "src", "(.*)")', {"dst", "k"}) == {"m": {"src", "k"}}
    # on(): both sides; group_left(extra): extra from the right.
    assert usage("a * on (j) group_left (e) b", {"k"}) == {"a": {"j", "k"}, "b": {"j", "e"}}
    # ignoring(): ignored labels are the many side's.
    assert usage("a >= ignoring (x) group_left b", {"k"}) == {"a": {"x", "k"}, "b": {"k"}}
    # Default matching: both sides carry the same labels.
    assert usage("a unless b", {"k"}) == {"a": {"k"}, "b": {"k"}}
    # An aggregation without grouping has no labels to hand on.
    assert usage("sum(m)", {"k"}) == {"m": set()}
    # Scalars on one side.
    assert usage("time() - m", {"k"}) == {"m": {"k"}}


def test_grafana_macros_become_promql():
    assert (
        pn.grafana_to_promql('last_over_time(m{a=~"$suite", b=~"${bench:regex}"}[$__interval])')
        == 'last_over_time(m{a=~".*", b=~".*"}[1h])'
    )


@pytest.mark.parametrize("bad", ["sum(", "m{a=}", "m[5m", "a +", 'm{a="x"} offset'])
def test_parser_rejects_broken_expressions(bad):
    with pytest.raises(pn.PromQLSyntaxError):
        pn.parse(bad)
