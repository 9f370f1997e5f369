"""How long ``python -m pytest_probability merge`` takes: N shard reports of a suite, merged into one.

Writes the shard reports as a shard session does (``json_report.build`` with
the ``ShardFacet``, the runs split by ``model.case.shard_of``), gated cases
included, then times the merge itself (read, check, rebuild the records,
aggregate, analyse, build and write the merged JSON report), as the command
line runs it. Prints the median of --reps timings.

    .venv/bin/python benchmarks/merge.py --shards 100 --cases 1000 --runs 10      # 10,000 runs
    .venv/bin/python benchmarks/merge.py --shards 100 --cases 10000 --runs 100   # 1,000,000 runs
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from pytest_probability.aggregate.cases import aggregate
from pytest_probability.config.settings import Settings, StatsConfig
from pytest_probability.features.shards.feature import ShardFacet, collected_suite
from pytest_probability.features.shards.merge import merge
from pytest_probability.features.spend.facet import SpendFacet
from pytest_probability.model.case import CaseRef, shard_of
from pytest_probability.model.run import RunRecord, Usage
from pytest_probability.protocols import Registry
from pytest_probability.report import json_report
from pytest_probability.report.intervals import StatsFacet


class _Results:
    def __init__(self, summary, analysis):
        self._summary, self._analysis = summary, analysis

    def summary(self):
        return self._summary

    def analysis(self):
        return self._analysis


def shard_reports(folder: Path, shards: int, cases: int, runs: int) -> list[Path]:
    from pytest_probability.config.spec import Specs
    from pytest_probability.decide.analysis import analyze
    from pytest_probability.decide.results import ungated

    stats = StatsConfig()
    refs = [
        CaseRef(
            key=f"bench_x.py::bench_t::c{c}",
            benchmark="t",
            case=f"c{c}",
            order=c,
            runs=runs,
            path="bench_x.py",
            lineno=3,
            function="bench_t",
            marks=(("min_rate", 0.5),) if c % 2 else (),
        )
        for c in range(cases)
    ]
    parts: list[list[RunRecord]] = [[] for _ in range(shards)]
    for case in refs:
        for r in range(1, runs + 1):
            failed = (case.order + r) % 4 == 0
            parts[shard_of(case.key, r, shards) - 1].append(
                RunRecord(
                    case=case,
                    run=r,
                    nodeid=f"{case.key}[run{r}]",
                    outcome="fail" if failed else "pass",
                    duration=0.5,
                    error_type="AssertionError" if failed else "",
                    error_text="no" if failed else "",
                    usage=(Usage("m-small", 120, 8, 0, 0.0004),),
                    start_time=1_800_000_000.0 + r,
                )
            )
    paths = []
    collected = collected_suite(refs)
    settings = Settings(cli_runs=runs, ini_runs=1, transpose=False, delay=0.0, json_path=None, pattern="bench_*.py")
    for index, records in enumerate(parts, 1):
        summary = aggregate(records)
        specs = Specs(stats)
        analysis = analyze(summary, stats, ungated(specs.of))
        results = _Results(summary, analysis)
        own = {r.case.key: r.case for r in records}
        selected: dict[str, int] = {}
        for r in records:
            selected[r.case.key] = selected.get(r.case.key, 0) + 1
        facets = [
            StatsFacet(results, stats),
            SpendFacet(results, None, None),
            ShardFacet((index, shards), own, selected, "bench", Registry(), lambda: collected),
        ]
        shard_settings = Settings(**{**settings.__dict__, "shard": (index, shards)})
        report = json_report.build(summary, settings=shard_settings.to_dict(), exit_status=0, facets=facets)
        path = folder / f"shard-{index}.json"
        json_report.write(path, report)
        paths.append(path)
    return paths


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shards", type=int, default=100)
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        paths = shard_reports(folder, args.shards, args.cases, args.runs)
        size = sum(p.stat().st_size for p in paths)
        timings = []
        for _ in range(args.reps):
            start = time.perf_counter()
            merged = merge(paths)
            json_report.write(folder / "merged.json", merged.report)
            timings.append(time.perf_counter() - start)
        runs = args.cases * args.runs
        print(
            f"{args.shards} shards, {args.cases:,} cases x {args.runs} runs = {runs:,} runs "
            f"({size / 1e6:.1f} MB of shard reports): merged in {statistics.median(timings):.2f} s "
            f"(median of {args.reps}; gates {merged.report['gates']})"
        )


if __name__ == "__main__":
    main()
