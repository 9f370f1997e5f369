"""Simulated score gates: the sequential rule's error rate, and the runs it saves against fixed N.

A simulated case is gated at ``min_score`` = bar (0.5, 0.75, 0.9) with at most N
runs (``--runs``, 50 and 200); its scores come from the shapes of
``score_coverage.py`` (Beta κ=5, two-point, skewed) with a true mean μ = bar +
offset, offsets −0.2 … +0.2 (clipped to 0.01–0.99). Every case draws one
sequence of N scores, and every policy sees that same sequence:

* ``fixed-N``: all N runs, then the plugin's default interval
  (``scores.score_interval``, betting) against the bar: PASS when its lower bound
  is at or above it, FAIL when its upper bound is below, else UNDECIDED;
* ``seq-horizon``: ``scores.ScoreSequence(horizon=N)`` after every run, stopping
  at its first verdict (the fixed-N interval's bets, so its verdict at the end
  is the fixed-N one);
* ``seq-uniform``: ``scores.ScoreSequence()`` with the time-uniform bets (no N
  needed), stopping at its first verdict;
* ``t fixed-N``: Student's t interval after all N runs (one look);
* ``t peeking``: the t interval re-checked after every run from the 2nd, stopping
  at its first verdict: what re-checking a fixed-N interval does to its error.

A verdict is *wrong* when it is PASS for μ below the bar or FAIL for μ above it;
at μ = bar both are errors of the test of H0: μ = bar (each side at most α/2 =
2.5% for the betting rules, α = 5% together). "Runs" is the mean number of runs
executed, "saved" its share of N.

    .venv/bin/python benchmarks/score_sequential.py            # 1,000 cases per cell (~3-6 min on 2 busy cores)
    .venv/bin/python benchmarks/score_sequential.py --quick    # 200 cases per cell
    .venv/bin/python benchmarks/score_sequential.py --reps 4000 --offsets 0 -0.02 0.02 --runs 200   # error rates only
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats as scipy_stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _measure import loadavg, warn_if_busy  # noqa: E402
from score_coverage import FAMILIES, draw  # noqa: E402

from pytest_probability.maths import scores, stats  # noqa: E402
from pytest_probability.vocabulary import FAILED, PASSED, UNDECIDED  # noqa: E402

BARS = (0.5, 0.75, 0.9)
OFFSETS = (-0.2, -0.1, -0.05, -0.02, 0.0, 0.02, 0.05, 0.1, 0.2)
RUNS = (50, 200)
POLICIES = ("fixed-N", "seq-horizon", "seq-uniform", "t fixed-N", "t peeking")


def t_verdicts(x: np.ndarray, bar: float, level: float, peeking: bool) -> tuple[str, int]:
    """(verdict, runs) of the t interval checked once at the end, or after every run from the second."""
    n = len(x)
    t = np.arange(1, n + 1)
    means = np.cumsum(x) / t
    squares = np.cumsum(x * x)
    with np.errstate(invalid="ignore", divide="ignore"):
        variances = np.maximum(squares - t * means**2, 0.0) / (t - 1)
        half = scipy_stats.t.ppf(0.5 + level / 2.0, np.maximum(t - 1, 1)) * np.sqrt(variances / t)
    low = np.clip(means - half, 0.0, 1.0)
    high = np.clip(means + half, 0.0, 1.0)
    if peeking:
        looks = range(1, n)  # index 1 = two runs
        for i in looks:
            if low[i] >= bar:
                return PASSED, i + 1
            if high[i] < bar:
                return FAILED, i + 1
        return UNDECIDED, n
    return stats.verdict(float(low[-1]), float(high[-1]), bar), n


def simulate(cell: tuple[str, float, float, int], reps: int, level: float, seed: int) -> dict[str, Any]:
    family, bar, offset, n = cell
    mean = min(0.99, max(0.01, bar + offset))
    rng = np.random.default_rng(
        [seed, FAMILIES.index(family), int(round(bar * 100)), int(round(offset * 100)) + 100, n]
    )
    data = draw(rng, family, mean, (reps, n))
    tally = {p: {PASSED: 0, FAILED: 0, UNDECIDED: 0, "runs": 0} for p in POLICIES}
    differs = 0
    started = time.process_time()
    for rep in range(reps):
        x = data[rep]
        values = [float(v) for v in x]
        ci = scores.score_interval(values, level)
        fixed = stats.verdict(ci.low, ci.high, bar)
        found = {"fixed-N": (fixed, n)}
        for policy, horizon in (("seq-horizon", n), ("seq-uniform", None)):
            sequence = scores.ScoreSequence(bar, level, horizon=horizon)
            verdict, used = UNDECIDED, n
            for i, value in enumerate(values, 1):
                if sequence.add(value) is not None:
                    verdict, used = sequence.verdict or UNDECIDED, i
                    break
            found[policy] = (verdict, used)
        differs += found["seq-horizon"][0] != fixed
        found["t fixed-N"] = t_verdicts(x, bar, level, peeking=False)
        found["t peeking"] = t_verdicts(x, bar, level, peeking=True)
        for policy, (verdict, used) in found.items():
            tally[policy][verdict] += 1
            tally[policy]["runs"] += used
    return {
        "family": family,
        "bar": bar,
        "offset": offset,
        "mean": mean,
        "n": n,
        "reps": reps,
        "tally": tally,
        "differs": differs,
        "cpu_seconds": time.process_time() - started,
    }


def _run(job: tuple[Any, ...]) -> dict[str, Any]:
    return simulate(*job)


def wrong(result: dict[str, Any], policy: str) -> int:
    tally = result["tally"][policy]
    if result["offset"] < 0:
        return int(tally[PASSED])
    if result["offset"] > 0:
        return int(tally[FAILED])
    return int(tally[PASSED] + tally[FAILED])


def correct(result: dict[str, Any], policy: str) -> int:
    tally = result["tally"][policy]
    if result["offset"] < 0:
        return int(tally[FAILED])
    if result["offset"] > 0:
        return int(tally[PASSED])
    return 0


def pct(count: float, total: float) -> str:
    return f"{100.0 * count / total:.1f}"


def error_table(results: list[dict[str, Any]], runs: tuple[int, ...]) -> str:
    lines = [
        "| N | policy | μ = bar: P(PASS or FAIL), worst cell | bar above μ (offset −0.02/−0.05): P(PASS), worst | "
        "bar below μ (+0.02/+0.05): P(FAIL), worst | any wrong verdict, worst cell |",
        "|---:|---|---:|---:|---:|---:|",
    ]
    for n in runs:
        mine = [r for r in results if r["n"] == n]
        for policy in POLICIES:

            def worst(cells: list[dict[str, Any]]) -> str:
                if not cells:
                    return "–"
                r = max(cells, key=lambda c: wrong(c, policy) / c["reps"])  # noqa: B023 - called in this iteration only
                return f"{pct(wrong(r, policy), r['reps'])}% ({r['family']}, bar {r['bar']:g})"  # noqa: B023

            at = [r for r in mine if r["offset"] == 0.0]
            above = [r for r in mine if r["offset"] in (-0.02, -0.05)]
            below = [r for r in mine if r["offset"] in (0.02, 0.05)]
            lines.append(f"| {n} | {policy} | {worst(at)} | {worst(above)} | {worst(below)} | {worst(mine)} |")
    return "\n".join(lines)


def savings_table(results: list[dict[str, Any]], runs: tuple[int, ...], offsets: tuple[float, ...]) -> str:
    lines = [
        "| N | offset μ − bar | " + " | ".join(f"{p}: correct % / runs" for p in POLICIES) + " |",
        "|---:|---:|" + "---:|" * len(POLICIES),
    ]
    for n in runs:
        for offset in offsets:
            cells = [r for r in results if r["n"] == n and r["offset"] == offset]
            if not cells:
                continue
            total = sum(r["reps"] for r in cells)
            parts = []
            for policy in POLICIES:
                used = sum(r["tally"][policy]["runs"] for r in cells) / total
                good = sum(correct(r, policy) for r in cells)
                parts.append(f"{pct(good, total) if offset else '–'} / {used:.0f}")
            lines.append(f"| {n} | {offset:+g} | " + " | ".join(parts) + " |")
    return "\n".join(lines)


def overall(results: list[dict[str, Any]], runs: tuple[int, ...]) -> str:
    lines = [
        "| N | policy | runs executed | saved vs N | wrong | undecided | verdicts ≠ fixed-N |",
        "|---:|---|---:|---:|---:|---:|---:|",
    ]
    for n in runs:
        mine = [r for r in results if r["n"] == n]
        total = sum(r["reps"] for r in mine)
        for policy in POLICIES:
            used = sum(r["tally"][policy]["runs"] for r in mine)
            bad = sum(wrong(r, policy) for r in mine)
            undecided = sum(r["tally"][policy][UNDECIDED] for r in mine)
            differ = f"{pct(sum(r['differs'] for r in mine), total)}%" if policy == "seq-horizon" else ""
            lines.append(
                f"| {n} | {policy} | {used / total:.1f} | {pct(n * total - used, n * total)}% | "
                f"{pct(bad, total)}% | {pct(undecided, total)}% | {differ} |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-r", "--reps", type=int, default=None, help="cases per cell (default 1000; 200 with --quick)")
    parser.add_argument("--runs", type=int, nargs="+", default=list(RUNS), help="N, the most runs (default 50 200)")
    parser.add_argument("--offsets", type=float, nargs="+", default=list(OFFSETS))
    parser.add_argument("--bars", type=float, nargs="+", default=list(BARS))
    parser.add_argument("--level", type=float, default=0.95)
    parser.add_argument("--seed", type=int, default=20261231)
    parser.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    reps = args.reps or (200 if args.quick else 1000)
    info = {"nproc": os.cpu_count(), "loadavg": loadavg()}
    warn_if_busy(info)
    runs = tuple(args.runs)
    offsets = tuple(args.offsets)
    grid = [(family, bar, offset, n) for family in FAMILIES for bar in args.bars for offset in offsets for n in runs]
    jobs = [(cell, reps, args.level, args.seed) for cell in grid]
    order = sorted(range(len(jobs)), key=lambda i: -grid[i][3])
    started = time.perf_counter()
    if args.workers > 1:
        with multiprocessing.Pool(args.workers) as pool:
            done = pool.map(_run, [jobs[i] for i in order], chunksize=1)
    else:
        done = [_run(jobs[i]) for i in order]
    results: list[dict[str, Any]] = [{}] * len(jobs)
    for i, result in zip(order, done, strict=False):
        results[i] = result
    elapsed = time.perf_counter() - started
    if args.json:
        print(
            json.dumps(
                {
                    "python": platform.python_version(),
                    "reps": reps,
                    "level": args.level,
                    "seed": args.seed,
                    "seconds": elapsed,
                    "results": results,
                },
                indent=2,
            )
        )
        return 0
    print(
        f"score gates: {reps} cases per cell, shapes {', '.join(FAMILIES)}, bars {', '.join(f'{b:g}' for b in args.bars)}, "
        f"nominal {args.level:.0%} (α/2 = {(1 - args.level) / 2:.1%} a side), seed {args.seed}"
    )
    print()
    print("### Error rates (worst cell over shapes and bars)")
    print()
    print(error_table(results, runs))
    print()
    print("### Over every cell")
    print()
    print(overall(results, runs))
    print()
    print("### Correct verdicts and runs executed, by distance from the bar (all shapes and bars)")
    print()
    print(savings_table(results, runs, offsets))
    print()
    print(
        f"time: {elapsed:.1f} s on {args.workers} worker{'s' if args.workers > 1 else ''} ({os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}, load average {info['loadavg']} at start, {loadavg()} at end)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
