"""End to end: ``python -m pytest_probability report`` over three saved sessions of a --prob-history folder."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from test_html_report import dump_dom, parse

BENCH = '''
import pytest
from pytest_probability import record_cost

PASSES = {passes}


@pytest.mark.parametrize("c", ["steady", "drops"])
def bench_t(c, n):
    record_cost(0.01 * {session})
    assert c == "steady" or n <= PASSES
'''


@pytest.fixture
def history(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    for name in list(os.environ):
        if name.startswith(("OTEL_", "PYTEST_XDIST", "PYTEST_ADDOPTS")):
            monkeypatch.delenv(name, raising=False)
    from sessions import CONFTEST

    pytester.makeconftest(CONFTEST)
    pytester.makeini("[pytest]\n")
    for session, passes in enumerate((8, 8, 1), start=1):
        pytester.makepyfile(bench_h=BENCH.format(passes=passes, session=session))
        result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--prob-runs=8", "--prob-history=hist", timeout=120)
        assert result.ret in (0, 1), result.stdout.str()
    assert len(list((pytester.path / "hist").glob("*.json"))) == 3
    return pytester


def build(pytester: pytest.Pytester, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest_probability", "report", *args], cwd=pytester.path,
        capture_output=True, text=True, timeout=120, check=False,
    )


def test_history_from_three_sessions(history: pytest.Pytester) -> None:
    done = build(history, "hist", "-o", "out/history.html")
    assert done.returncode == 0, done.stderr
    assert "wrote out/history.html (3 sessions)" in done.stdout
    page = (history.path / "out" / "history.html").read_text(encoding="utf-8")
    assert page.count('data-chart="history"') == 2  # one per case
    assert page.count('class="band"') == 2 and page.count('class="fraction"') == 2
    # The third session's drop is a baseline FAIL, marked on the drops case's chart.
    verdicts = re.findall(r'data-verdict="(\w*)"', page)
    assert "fail" in verdicts
    drops = page[page.index('<figure data-case="t::drops">'):]
    assert 'data-verdict="fail"' in drops[: drops.index("</figure>")]
    # Spend over sessions: one bar per session.
    spend = page[page.index('data-chart="spend"'):]
    assert spend[: spend.index("</svg>")].count('class="bar"') == 3
    # The case that changed most comes first: drops went from 100% to 12%.
    changed = page[page.index('id="changed"'):]
    assert changed.index("t::drops") < changed.index("t::steady")
    assert "-88%" in changed
    # The newest session in full, with its failed runs.
    assert 'data-chart="pass-fraction"' in page and page.count('class="run"') == 7
    dom, log = dump_dom(history.path / "out" / "history.html")
    root = parse(dom).body
    assert root.get("data-ready") == "1" and "data-errors" not in root and "data-blocked" not in root
    assert root["data-charts"] == str(2 + 1 + 1 + 1 + 1)  # trends, spend; newest session: fraction, cost, baseline difference


def test_bad_input_is_an_error(history: pytest.Pytester) -> None:
    (history.path / "junk.json").write_text(json.dumps({"no": "rows"}), encoding="utf-8")
    done = build(history, "junk.json")
    assert done.returncode == 2 and "not a pytest-probability JSON report" in done.stderr
    done = build(history, "missing")
    assert done.returncode == 2 and "missing: no such file or folder" in done.stderr


def test_the_output_path_is_written_as_the_session_reports_are(history: pytest.Pytester) -> None:
    """-o follows a symlink to its target (the link stays), and an unwritable path is an error, not a traceback."""
    (history.path / "site").mkdir()
    target = history.path / "site" / "history.html"
    target.write_text("old page", encoding="utf-8")
    (history.path / "latest.html").symlink_to("site/history.html")
    done = build(history, "hist", "-o", "latest.html")
    assert done.returncode == 0, done.stderr
    assert (history.path / "latest.html").is_symlink()
    assert target.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    (history.path / "a_file").write_text("", encoding="utf-8")
    done = build(history, "hist", "-o", "a_file/history.html")
    assert done.returncode == 2 and "error: cannot write a_file/history.html" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(("command", "output"), [("report", "out.html"), ("merge", "out.json")])
def test_a_bad_trace_url_names_the_commands_own_option(pytester: pytest.Pytester, command: str, output: str) -> None:
    """Issue 36, defect 13: the message named the ini key prob_trace_url, which these commands do not read."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest_probability", command, "a.json", "-o", output, "--trace-url", "http://jaeger/trace/"],
        cwd=pytester.path, capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode == 2
    assert done.stderr == "error: --trace-url must be an http(s) URL containing {trace_id}, got 'http://jaeger/trace/'\n"
    assert not (pytester.path / output).exists()
