"""A real pytest-probability session, as a nightly job runs it.

``run_session()`` runs pytest with the installed plugin in a subprocess on a
small benchmark file, as a nightly job would (GitHub Actions variables set, a
git checkout, ``--prob-suite``), and writes the OTLP export with
``--prob-otel-file`` (and sends it where ``env`` says, e.g. the real Collector
of stack_runs.py). What the real Prometheus 3 stores from it (stored.py) is
what the tests compare the rules, the dashboards and the promtool unit tests
with, not a list kept by hand.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SUITE = "nightly-demo"
RUNS = 4

#: Every run outcome, every row status a pass fraction can carry, tokens and
#: cost with and without a model, and gates whose verdicts are 1, 0 and -1.
BENCH = """
import itertools

import pytest
from pytest_probability import record_cost, record_score, record_usage

_runs = {}


def nth(key):
    return next(_runs.setdefault(key, itertools.count()))


@pytest.fixture
def broken():
    raise RuntimeError("fixture could not start")


# Gate passes: 4/4, exact 95% interval [39.8%, 100%] >= 0.3.
@pytest.mark.probability(min_rate=0.3)
def bench_answer():
    record_usage(model="m-small", input_tokens=100, output_tokens=20, cached_input_tokens=5, cost=0.01)


# Gate undecided: 4/4, [39.8%, 100%] straddles 0.9.
@pytest.mark.probability(min_rate=0.9)
def bench_unsure():
    record_usage(model="m-small", input_tokens=10, output_tokens=2, cost=0.001)


# Gate fails: 0/4, [0%, 60.2%] < 0.95.
@pytest.mark.probability(min_rate=0.95)
def bench_gated_fail():
    record_usage(model="m-large", input_tokens=10, output_tokens=2, cost=0.05)
    assert False


# A gate with its own confidence: 2/4 passes. Its 50% exact interval
# [24.3%, 75.7%] is below 0.8 (fail); the session's 95% interval [6.8%, 93.2%]
# would straddle it. The interval gauges carry the gate's interval.
@pytest.mark.probability(min_rate=0.8, confidence=0.5)
def bench_strict():
    assert nth("strict") % 2 == 0


@pytest.mark.parametrize("kind", ["flaky", "errored", "fail", "error", "skip"])
def bench_mixed(kind):
    n = nth(kind)
    record_cost(0.001)  # spend without a model
    if kind == "flaky":
        assert n % 2 == 0
    elif kind == "errored":
        if n % 2:
            raise RuntimeError("harness")
    elif kind == "fail":
        assert False
    elif kind == "error":
        raise RuntimeError("harness")
    else:
        pytest.skip("not today")


def bench_setup_error(broken):
    pass


# Graded: a judge's score per run (0.6, 0.7, 0.8, 0.9), compared with the baseline's (0.95 each run).
def bench_graded():
    record_score(0.6 + nth("graded") / 10, "judge")


# A score gate fails: every score 0.1, its betting 95% interval [0, 0.70] below the bar 0.9.
@pytest.mark.probability(min_score={"judge": 0.9})
def bench_graded_gate():
    record_score(0.1, "judge")
"""
#: Cases of BENCH; with RUNS runs each, all of them count in probability.session.runs.
BENCH_CASES = 12

#: A baseline for three cases of BENCH, in 0.3.0's row shape (label, passes,
#: total), so the session exports the baseline gauges: "unsure" 4/4 against
#: 400/400 is undecided (0), "mixed::error" 0/4 against 400/400 fails (-1);
#: "graded" with its runs' scores (this version's records), so the score
#: comparison's gauges are exported too.
BASELINE = {
    "rows": [
        {"case": "unsure", "passes": 400, "fails": 0, "errors": 0, "total": 400, "pass_rate": 100.0},
        {"case": "mixed::error", "passes": 400, "fails": 0, "errors": 0, "total": 400, "pass_rate": 100.0},
        {"case": "graded", "passes": 4, "fails": 0, "errors": 0, "total": 4, "pass_rate": 100.0},
    ],
    "records": [
        {"case": "graded", "run": n, "outcome": "pass", "scores": [{"name": "judge", "value": 0.95}]}
        for n in range(1, 5)
    ],
}

#: A session whose every run is skipped: no pass fraction, but a heartbeat.
SKIPPED_BENCH = """
import pytest


@pytest.mark.parametrize("kind", ["a", "b"])
def bench_later(kind):
    pytest.skip("not tonight")
"""
SKIPPED_CASES = 2

_CI_SYSTEM_VARIABLES = (
    "GITLAB_CI",
    "BUILDKITE",
    "CIRCLECI",
    "JENKINS_URL",
    "TF_BUILD",
    "CI_PIPELINE_ID",
    "CI_PIPELINE_URL",
    "CI_PIPELINE_NAME",
    "CI_PROJECT_PATH",
    "BUILD_ID",
    "BUILD_NUMBER",
    "BUILD_BUILDID",
    "SYSTEM_COLLECTIONURI",
)

GITHUB = {
    "GITHUB_RUN_ID": "4242",
    "GITHUB_WORKFLOW": "nightly",
    "GITHUB_REPOSITORY": "example/benchmarks",
    "GITHUB_SERVER_URL": "https://github.com",
}


def session_env(workdir: Path) -> dict[str, str]:
    """The environment of a nightly GitHub Actions job, nothing else OTel-related."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OTEL_", "GITHUB_", "PYTEST_", "COV_"))
        and k not in _CI_SYSTEM_VARIABLES
        and k != "TRACEPARENT"
    }
    env.update(GITHUB)
    env["GIT_CEILING_DIRECTORIES"] = str(workdir.parent)
    return env


def _git(workdir: Path, *args: str) -> None:
    base = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false"]
    subprocess.run([*base, *args], cwd=workdir, check=True, capture_output=True, timeout=60)


def run_session(
    workdir: Path,
    bench: str = BENCH,
    runs: int = RUNS,
    suite: str = SUITE,
    env: dict[str, str] | None = None,
    args=(),
    ini: str = "[pytest]\n",
    files: dict[str, str] | None = None,
) -> tuple[subprocess.CompletedProcess, Path]:
    """Run the plugin on ``bench`` in ``workdir`` (a fresh git checkout); return the process and its OTLP file.

    ``env`` adds to (or overrides) the nightly job's environment, e.g. another
    ``GITHUB_RUN_ID`` per night, an OTLP endpoint, or what the benchmark file
    reads; ``args`` are more pytest options; ``ini`` is pytest.ini's text;
    ``files`` more files of the checkout ({name: text}, e.g. a conftest.py)."""
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "bench_nightly.py").write_text(bench)
    (workdir / "pytest.ini").write_text(ini)
    for name, text in (files or {}).items():
        (workdir / name).write_text(text)
    _git(workdir, "init", "-q")
    _git(workdir, "add", "bench_nightly.py", "pytest.ini", *(files or {}))
    _git(workdir, "commit", "-q", "-m", "benchmarks")
    otlp = workdir / "otlp.jsonl"
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "-q",
        "--tb=no",
        f"--prob-runs={runs}",
        f"--prob-suite={suite}",
        f"--prob-otel-file={otlp}",
        f"--prob-json={workdir / 'report.json'}",
        *map(str, args),
    ]
    if bench == BENCH:
        (workdir / "baseline.json").write_text(json.dumps(BASELINE))
        # The baseline's gauges, and (a history folder, empty before the first night) the states' gauges.
        cmd += [f"--prob-baseline={workdir / 'baseline.json'}", f"--prob-history={workdir / 'history'}"]
    proc = subprocess.run(
        cmd, cwd=workdir, env={**session_env(workdir), **(env or {})}, capture_output=True, text=True, timeout=300
    )
    # 1: some cases failed, which is data; anything else is a broken session.
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    assert otlp.is_file() and otlp.stat().st_size, f"no OTLP file\n{proc.stdout}{proc.stderr}"
    return proc, otlp
