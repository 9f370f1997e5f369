"""What graded results cost: ``record_score()`` per call, and a session of N runs with 3 scores each against none.

Side by side, in fresh processes, variants alternating (``_measure.order``), medians of --repetitions:

- ``plain``: ``--prob-runs=N`` of a benchmark that records no score;
- ``scores``: the same benchmark recording 3 scores per run (``record_score(v, "a")``, ``"b"``, ``"c"``),
  one of them with a threshold it passes, so every output has each case's 3 summaries and intervals;
- ``gated``: ``scores`` with a score gate on each name (``--prob-min-score``), so the gate is judged too.

The goal (issue 31): ``scores`` / ``plain`` at most 1.10 at 10,000 runs. And, in this process: the cost of
one ``record_score()`` call with export off (the goal: at most 5 µs), beside ``record_usage()``'s, the
floor of any recording call (a ``CurrentRun`` lookup and a list append under a lock).

    .venv/bin/python benchmarks/scores_overhead.py                  # N = 10,000 trivial runs, 5 repetitions
    .venv/bin/python benchmarks/scores_overhead.py -n 1000 -r 3     # quicker
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import timeit
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _measure import (  # noqa: E402
    add_session_arguments,
    describe_machine,
    loadavg,
    machine,
    order,
    paired_median,
    parse_session_arguments,
    run_session,
    write_folder,
)

PLAIN = "def bench_graded():\n    pass\n"
SCORES = """
from pytest_probability import record_score


def bench_graded():
    record_score(0.9, "a")
    record_score(0.8, "b", threshold=0.5)
    record_score(0.7, "c")
"""


def call_costs(calls: int = 200_000) -> dict[str, float]:
    """µs per call of record_score() and record_usage() on a current run, export off, best of 5."""
    from pytest_probability.model.case import CaseRef
    from pytest_probability.run import context
    from pytest_probability.run.recording import record_score, record_usage

    case = CaseRef(key="b.py::bench_x", benchmark="x", case="", label="x", order=0, runs=1)
    run = context.start(case, 1, "b.py::bench_x")
    try:
        costs = {}
        for name, call in (
            ("record_score", lambda: record_score(0.5, "judge")),
            ("record_score_threshold", lambda: record_score(0.5, "judge", threshold=0.25)),
            ("record_usage", lambda: record_usage(model="m", input_tokens=3)),
        ):
            best = min(timeit.repeat(call, number=calls, repeat=5)) / calls * 1e6
            costs[name] = best
            run.scores.clear()
            run.usage.clear()
        return costs
    finally:
        context.finish()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_session_arguments(parser)
    parser.set_defaults(runs=[10000])
    args = parse_session_arguments(parser, argv)
    info = machine(args.python)
    print(describe_machine(info))
    costs = call_costs()
    print("per call, export off (best of 5 × 200,000): " + ", ".join(f"{k} {v:.2f} µs" for k, v in costs.items()))
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.runs:
            folders = {
                name: write_folder(Path(tmp) / f"{name}{n}", {"bench_graded.py": text})
                for name, text in (("plain", PLAIN), ("scores", SCORES), ("gated", SCORES))
            }
            extra = {
                "plain": [],
                "scores": [],
                "gated": ["--prob-min-score=a=0.1", "--prob-min-score=b=0.1", "--prob-min-score=c=0.1"],
            }
            variants = ("plain", "scores", "gated")
            walls: dict[str, list[float]] = {v: [] for v in variants}
            cpus: dict[str, list[float]] = {v: [] for v in variants}
            # a gated case gets a [gate] item: one item more
            items = {"plain": n, "scores": n, "gated": n + 1}
            for repetition in range(args.warmup + args.repetitions):
                for variant in order(variants, repetition):
                    sample = run_session(
                        folders[variant],
                        [f"--prob-runs={n}", *extra[variant]],
                        python=args.python,
                        autoload=args.autoload,
                        expected_items=items[variant],
                    )
                    if repetition >= args.warmup:
                        walls[variant].append(sample.wall)
                        cpus[variant].append(sample.cpu)
                    if not args.quiet:
                        print(f"  n={n} {variant}: {sample.wall:.3f} s", file=sys.stderr)
            plain = statistics.median(walls["plain"])
            row = {
                "runs": n,
                "wall": {v: statistics.median(walls[v]) for v in variants},
                "cpu": {v: statistics.median(cpus[v]) for v in variants},
                "ratio_scores": statistics.median(walls["scores"]) / plain,
                "ratio_gated": statistics.median(walls["gated"]) / plain,
                "per_run_scores_us": paired_median(walls["scores"], walls["plain"]) / n * 1e6,
            }
            results.append(row)
    info["loadavg_end"] = loadavg()
    if args.json:
        print(json.dumps({"machine": info, "calls_us": costs, "sessions": results}, indent=2))
        return 0
    print(f"load average at the end: {info['loadavg_end']}")
    print(
        f"{'runs':>7}  {'plain s':>8}  {'scores s':>8}  {'gated s':>8}  {'scores/plain':>12}  {'gated/plain':>11}  "
        f"{'µs/run (3 scores)':>17}"
    )
    for row in results:
        wall = row["wall"]
        print(
            f"{row['runs']:>7}  {wall['plain']:8.3f}  {wall['scores']:8.3f}  {wall['gated']:8.3f}  "
            f"{row['ratio_scores']:12.3f}  {row['ratio_gated']:11.3f}  {row['per_run_scores_us']:17.1f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
