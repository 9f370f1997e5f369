"""End to end: --prob-html writes one self-contained page, checked in a real headless chromium.

The page is loaded with ``--dump-dom``, which prints the DOM after its
scripts ran: the scripts mark ``<html>`` with ``data-ready``, the number of
charts and failed runs it found, any script error (``data-errors``) and any
request the page's Content-Security-Policy blocked (``data-blocked``).
Without chromium the browser tests skip, naming the Debian package; with
``CI`` set they fail instead.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import sessions
from browser import dump_dom, parse

BENCH = """
import pytest
from pytest_probability import record_cost, record_io, record_usage


@pytest.mark.parametrize("prompt", ["ok", "bad", "flaky"])
def bench_answer(prompt, n):
    answer = "no" if prompt == "bad" or (prompt == "flaky" and n % 2) else "yes"
    record_usage(model="m-small", input_tokens=10, output_tokens=2, cost=0.01 if prompt != "bad" else 0.03)
    record_io(prompt=f"<question> is it {prompt}? run {n}", output=f"ANSWER-{prompt}-{n}: {answer}")
    assert answer == "yes", f"wanted yes, got {answer}"


@pytest.mark.probability(min_rate=0.9)
def bench_gated(n):
    record_cost(0.001)
    raise RuntimeError(f"provider down in run {n}")
"""


@pytest.fixture(autouse=True)
def sessions_conftest(clean_env: None, pytester: pytest.Pytester) -> None:
    """The clean environment, with the sessions' conftest (fixture ``n``, exact durations)."""
    pytester.makeconftest(sessions.CONFTEST)


def session(pytester: pytest.Pytester, *args: str, ini: str = "") -> Path:
    pytester.makeini("[pytest]\n" + ini)
    pytester.makepyfile(bench_page=BENCH)
    sessions.session(
        pytester, "--prob-runs=4", "--prob-html=out/report.html", "--prob-json=report.json", *args, ret=1, timeout=120
    )
    return pytester.path / "out" / "report.html"


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_page_has_table_charts_failed_runs_and_transcripts(pytester: pytest.Pytester, xdist: list[str]) -> None:
    page = session(pytester, *xdist).read_text(encoding="utf-8")
    report = json.loads((pytester.path / "report.json").read_text(encoding="utf-8"))
    parsed = parse(page)
    assert {tag for tag, _ in parsed.tags} >= {"svg", "table", "details", "script", "style"}
    charts = [attrs["data-chart"] for tag, attrs in parsed.tags if tag == "svg"]
    assert charts.count("pass-fraction") == 1 and charts.count("cost") == 1
    for row in report["rows"]:
        assert f'data-case="{row["label"]}"' in page
    # Every failed or errored run, with its message and transcript; no passing run's transcript.
    for record in report["records"]:
        text = f"ANSWER-{record['case'].split('::')[-1]}-{record['run']}"
        if record["case"].startswith("answer"):
            assert (text in page) == (record["outcome"] == "fail"), text
    assert page.count('class="run"') == sum(r["outcome"] in ("fail", "error") for r in report["records"]) == 4 + 2 + 4
    assert "provider down in run 3" in page and "&lt;question&gt; is it bad? run 2" in page
    assert "<question>" not in page  # escaped
    assert "FLAKY" in page.upper() and "≥ 90%" in page
    # Self-contained: no external resource is referenced at all.
    assert not re.search(r"<(script|link|img|iframe)[^>]+(src|href)=", page)


def test_trace_links_follow_the_template(pytester: pytest.Pytester) -> None:
    page = session(
        pytester,
        "--prob-otel-file=otel.jsonl",
        ini="prob_trace_url = http://127.0.0.1:16686/trace/{trace_id}?span={span_id}\n",
    ).read_text(encoding="utf-8")
    report = json.loads((pytester.path / "report.json").read_text(encoding="utf-8"))
    failed = [r for r in report["records"] if r["outcome"] in ("fail", "error")]
    assert failed and all(r["trace_id"] for r in failed)
    links = re.findall(r'<a class="trace" href="([^"]+)"', page)
    assert sorted(links) == sorted(
        f"http://127.0.0.1:16686/trace/{r['trace_id']}?span={r['span_id']}".replace("&", "&amp;") for r in failed
    )


def test_bad_trace_url_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nprob_trace_url = http://jaeger/trace/\n")
    pytester.makepyfile(bench_page="def bench_x():\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--prob-html=r.html")
    assert result.ret == 4
    assert "ini prob_trace_url must be an http(s) URL containing {trace_id}" in result.stderr.str()


def test_in_a_real_browser(pytester: pytest.Pytester) -> None:
    path = session(pytester)
    dom, log = dump_dom(path)
    body = parse(dom).body
    assert body.get("data-ready") == "1", dom[:2000]  # the page's script ran to its end
    assert "data-errors" not in body, body["data-errors"]
    assert "data-blocked" not in body, body["data-blocked"]  # no request was even attempted
    assert body["data-charts"] == "2"
    assert body["data-failed-runs"] == "10"
    assert "ANSWER-bad-2: no" in dom and "provider down in run 4" in dom
    console = [line for line in log.splitlines() if "CONSOLE" in line or "Uncaught" in line]
    assert not console, console
    assert dom.count("<rect") >= 4 + 4  # bars of both charts are in the DOM


def test_the_browser_check_sees_script_errors_and_blocked_requests(tmp_path: Path) -> None:
    """The check above could not pass on a broken page: a failing script and a request are recorded."""
    from pytest_probability.report import html_report as report_html

    page = report_html.render({"rows": [], "records": []})
    broken = page.replace("<main>", '<main><img src="http://127.0.0.1:9/x.png"><script>nosuch();</script>', 1)
    (tmp_path / "broken.html").write_text(broken, encoding="utf-8")
    dom, log = dump_dom(tmp_path / "broken.html")
    root = parse(dom).body
    assert "nosuch is not defined" in root["data-errors"]
    assert root["data-blocked"] == "http://127.0.0.1:9/x.png"
    assert root["data-ready"] == "1" and root["data-charts"] == "0"
    assert "Uncaught ReferenceError" in log
