"""Unit tests of report_html: the page rendered from a hand-built report dict (the JSON report's shape)."""

from __future__ import annotations

import re

import pytest

from pytest_probability.config.values import check_trace_url
from pytest_probability.report import html_report as report_html

ROWS = [
    {
        "label": "t::ok",
        "nodeid": "b.py::bench_t[ok]",
        "passes": 10,
        "total": 10,
        "pass_fraction": 1.0,
        "ci": {"low": 0.69, "high": 1.0},
        "status": "pass",
        "cost": 0.5,
        "gate": None,
        "stopped": None,
    },
    {
        "label": "t::<b>",
        "nodeid": "b.py::bench_t[b]",
        "passes": 3,
        "total": 10,
        "pass_fraction": 0.3,
        "ci": {"low": 0.07, "high": 0.65},
        "status": "flaky",
        "cost": 2.0,
        "gate": {"rule": "rate", "min_rate": 0.9, "verdict": "fail"},
        "stopped": {"reason": "FAIL decided after 10 of 20 runs (curtail)"},
    },
    {
        "label": "t::none",
        "nodeid": "b.py::bench_t[none]",
        "passes": 0,
        "total": 0,
        "pass_fraction": None,
        "ci": None,
        "status": "error",
        "cost": 0.0,
    },
]
RECORDS = [
    {
        "case": "t::<b>",
        "run": 1,
        "outcome": "fail",
        "phase": "call",
        "error": "AssertionError: wanted yes",
        "trace_id": "a" * 32,
        "span_id": "b" * 16,
        "transcript": [{"prompt": "p1", "output": "o" * 5 + "…", "truncated": {"output": 20000}}],
    },
    {"case": "t::<b>", "run": 2, "outcome": "pass", "phase": "call", "transcript": [{"output": "PASSED-OUTPUT"}]},
    {"case": "t::<b>", "run": 3, "outcome": "error", "phase": "setup", "message": "setup: boom", "trace_id": None},
]
REPORT = {
    "created": "2026-12-01T09:00:00+00:00",
    "versions": {"pytest_probability": "0.4.0"},
    "exit_status": 1,
    "totals": {
        "passes": 13,
        "count": 20,
        "pass_fraction": 0.65,
        "rows": 3,
        "cost": 2.5,
        "statuses": {"pass": 1, "flaky": 1},
    },
    "rows": ROWS,
    "records": RECORDS,
    "stopping": {"mode": "curtail", "active": True, "cases_stopped": 1, "runs_saved": 10, "runs_executed": 30},
    "budget": {"reason": "cost budget $5 reached ($5.0120 spent)", "runs_not_executed": 4},
    "comparisons": [
        {
            "function": "t",
            "arm": "cot",
            "baseline": "terse",
            "pairs": 3,
            "difference": -0.2,
            "ci": {"low": -0.5, "high": 0.1},
            "p_adjusted": 0.25,
            "verdict": "undecided",
            "margin": 0.05,
            "cost_ratio": 1.8,
        }
    ],
}


def test_page_holds_table_charts_decisions_and_failed_runs():
    page = report_html.render(REPORT, trace_url="http://127.0.0.1:16686/trace/{trace_id}")
    assert page.startswith("<!DOCTYPE html>") and "default-src 'none'" in page
    assert re.findall(r'data-chart="([a-z-]+)"', page) == ["pass-fraction", "cost", "difference"]
    assert "t::&lt;b&gt;" in page and "t::<b>" not in page
    assert "[7%, 65%]" in page and "≥ 90%" in page and "FAIL decided after 10 of 20 runs" in page
    assert "Early stopping (curtail): 1 cases stopped, 10 runs saved" in page
    assert "cost budget $5 reached" in page and "1.80×" in page and "-20% [-50%, 10%]" in page
    # Failed and errored runs, with messages, transcripts, the cut noted, and a trace link only where there is an id.
    assert page.count('class="run"') == 2
    assert "AssertionError: wanted yes" in page and "setup: boom" in page
    assert "cut from 20,000 characters" in page and "ooooo…" in page
    assert "PASSED-OUTPUT" not in page
    assert re.findall(r'class="trace" href="([^"]+)"', page) == ["http://127.0.0.1:16686/trace/" + "a" * 32]
    # Interval bars: one per row with an interval.
    assert page.count('class="interval"') == 2 + 1


def test_runs_shown_per_case_are_capped_and_the_rest_counted():
    records = [
        {"case": "t::<b>", "run": i, "outcome": "fail", "error": f"E{i}"} for i in range(1, report_html.RUNS_SHOWN + 6)
    ]
    page = report_html.render({**REPORT, "records": records})
    assert page.count('class="run"') == report_html.RUNS_SHOWN
    assert "5 more failed or errored runs in the JSON report." in page


def test_empty_report_renders():
    page = report_html.render({"rows": [], "records": []})
    assert "<svg" not in page and "<table" in page


@pytest.mark.parametrize("template", ["http://j/trace/", "jaeger/{trace_id}", "ftp://j/{trace_id}"])
def test_trace_url_needs_http_and_trace_id(template):
    with pytest.raises(ValueError, match="prob_trace_url"):
        check_trace_url(template)


def test_trace_link():
    record = {"trace_id": "ab", "span_id": "cd"}
    assert report_html.trace_link("https://x/{trace_id}/{span_id}", record) == "https://x/ab/cd"
    assert report_html.trace_link(None, record) == "" and report_html.trace_link("https://x/{trace_id}", {}) == ""


def test_gate_totals_shown_only_when_a_gate_counted():
    quiet = report_html.render({"rows": [], "records": [], "gates": {"passed": 0, "failed": 0}})
    assert 'id="decisions"' not in quiet
    loud = report_html.render({"rows": [], "records": [], "gates": {"passed": 1, "failed": 2}})
    assert "Gates: passed 1, failed 2" in loud


def test_history_series_reads_old_reports_and_ranks_changes():
    from pytest_probability.report import history as report_history

    old = {"created": "2026-01-01", "rows": [{"case": "t::a", "pass_rate": 90.0}, {"case": "t::b", "pass_rate": 50.0}]}
    new = {
        "created": "2026-01-02",
        "rows": [
            {"label": "t::a", "pass_fraction": 0.2, "ci": {"low": 0.05, "high": 0.5}},
            {"label": "t::c", "pass_fraction": 1.0},
        ],
        "comparisons": [{"kind": "baseline", "inputs": [{"input": "t::a", "verdict": "fail"}]}],
    }
    cases = report_history.series([old, new])
    assert [p and p["fraction"] for p in cases["t::a"]["points"]] == [0.9, 0.2]
    assert cases["t::a"]["points"][1]["verdict"] == "fail"
    assert cases["t::b"]["points"][1] is None and report_history.change(cases["t::b"]["points"]) is None
    assert report_history.change(cases["t::a"]["points"]) == pytest.approx(-0.7)
    page = report_history.render([old, new])
    changed = page[page.index('id="changed"') : page.index('id="trends"')]
    assert "t::a" in changed and "-70%" in changed and "t::b" not in changed
    assert page.count('data-chart="history"') == 3 and 'data-verdict="fail"' in page


def test_the_history_page_is_built_from_the_session_pages_templates():
    """Issue 23, item 15: the history page's newest session is the session page's own sections, and
    both pages share one shell (its Content-Security-Policy, style, script), not a slice of the HTML."""
    from pytest_probability.report import history as report_history

    old = {"created": "2026-01-01", "rows": [{"label": "t::a", "pass_fraction": 0.9}]}
    new = {
        "created": "2026-01-02",
        "rows": [{"label": "t::a", "pass_fraction": 0.2, "cost": 0.5}],
        "records": [{"case": "t::a", "run": 1, "outcome": "fail", "phase": "call", "message": "</main><b>x"}],
        "totals": {"passes": 1, "count": 5, "cost": 0.5},
    }
    page = report_history.render([old, new])
    assert report_html.sections(new, case_filter=False) in page
    assert page.count('id="filter"') == 1  # the history page's own, before its charts
    session = report_html.render(new)
    shell_end = session.index("<main>") + len("<main>")
    assert page[: page.index("<title>")] == session[: session.index("<title>")]  # the same head, CSP included
    assert page.endswith(session[session.index("</main>") :])
    assert session[shell_end : session.index("</main>", shell_end + 1)] == report_html.sections(new)
    assert "&lt;/main&gt;&lt;b&gt;x" in page and page.count("</main>") == 1
