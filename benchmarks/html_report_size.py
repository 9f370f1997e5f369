"""How big the --prob-html page is, and how long it takes to render and write, at 1,000 cases x 10 runs.

Builds a real session Summary from synthetic records (a third of the cases
flaky, failed runs carrying a prompt and a 400-character output transcript),
turns it into the report dict with report_json.build, as the plugin does,
then renders and writes the page. Prints the median of --reps timings.

    .venv/bin/python benchmarks/html_report_size.py --cases 1000 --runs 10
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from pytest_probability import files
from pytest_probability.aggregate.cases import aggregate
from pytest_probability.model.case import CaseRef
from pytest_probability.model.run import RunRecord, Usage
from pytest_probability.report import html_report as report_html
from pytest_probability.report import json_report as report_json


def records(cases: int, runs: int) -> list[RunRecord]:
    out = []
    for c in range(cases):
        case = CaseRef(
            key=f"bench_x.py::bench_t[c{c}]", benchmark="t", case=f"c{c}", label=f"t::c{c}", order=c, runs=runs
        )
        for r in range(1, runs + 1):
            failed = c % 3 == 0 and r % 2 == 0
            out.append(
                RunRecord(
                    case=case,
                    run=r,
                    nodeid=f"{case.key}[run{r}]",
                    outcome="fail" if failed else "pass",
                    message="wanted yes" if failed else "",
                    error_type="AssertionError" if failed else "",
                    error_text="wanted yes, got no" if failed else "",
                    usage=(Usage("m-small", 120, 8, 0, 0.0004),),
                    trace_id=f"{c:016x}{r:016x}",
                    span_id=f"{r:016x}",
                    transcript=({"prompt": f"question {c}", "output": "x" * 400},) if failed else (),
                )
            )
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    summary = aggregate(records(args.cases, args.runs))
    timings = []
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "report.html"
        for _ in range(args.reps):
            start = time.perf_counter()
            report = report_json.build(summary, settings={}, exit_status=1)
            files.write_atomic(path, report_html.render(report, trace_url="http://127.0.0.1:16686/trace/{trace_id}"))
            timings.append(time.perf_counter() - start)
        size = path.stat().st_size
    print(
        f"{args.cases} cases x {args.runs} runs: {size / 1e6:.2f} MB, median {statistics.median(timings):.3f} s "
        f"(report dict + render + write, {args.reps} reps)"
    )


if __name__ == "__main__":
    main()
