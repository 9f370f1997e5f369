"""Simulated suites: how often the function-level interval covers the true mean pass rate.

A simulated bench function has N inputs (cases), each with its own true pass
rate drawn from a Beta distribution of mean 0.8 (``--mean``) whose
intraclass correlation is ρ (a beta-binomial has ρ = 1 / (a + b + 1), so
a + b = 1/ρ - 1), and k runs per input, each passing with that input's rate.
The estimand is the mean rate of the inputs' population: "inputs treated as
a sample". Grid: ρ = 0.1, 0.3, 0.5, 0.7, 0.9; N = 10, 20, 50, 200; k = 1, 5,
20 (with one run per input the outcomes are Bernoulli(mean) whatever ρ, so
k = 1 is simulated once, at ρ = 0.5, and shown as "any").

Intervals at a nominal 95%, over the per-case fractions:

* ``percentile``: the plugin's cluster bootstrap percentile interval
  (``inputs.bootstrap_means`` + ``inputs.percentile_interval``, 0.3.0's
  method), with fewer resamples than the plugin's 5,000 (``--resamples``,
  500 by default) to keep the run short: the 2.5% and 97.5% quantiles of 500
  resampled means wobble by about a tenth of a standard error, which moves the
  coverage by much less than the simulation's own noise;
* ``t``: the plugin's Student t interval, mean ± t_{N-1} s/√N
  (``inputs.t_interval``: the cluster-robust interval with N - 1 degrees of
  freedom);
* ``wilson``: the plugin's cluster-adjusted Wilson interval
  (``inputs.wilson_interval``): Wilson's score interval at the effective
  number of runs p(1-p)/SE², capped at the N k runs there are (N - 1 when
  every fraction is the same), with t_{N-1} for z (Korn & Graubard 1998);
* ``BCa``: the bias-corrected and accelerated bootstrap (Efron 1987) from the
  same resampled means as ``percentile``, implemented here, not in the plugin,
  for comparison: z0 from the share of resampled means below the estimate
  (ties count half), the acceleration from the jackknife of the mean,
  Σd³ / (6 (Σd²)^1.5).

Each cell reports the coverage over ``--reps`` simulated suites (2,000 by
default) with its 95% Wilson interval; the goal is 93-97%. Data are drawn
with numpy (seeded per cell, so the numbers do not depend on ``--workers``);
the percentile, t and Wilson intervals are the plugin's own functions. The
numbers measure, they decide nothing: no test depends on them.

    .venv/bin/python benchmarks/inputs_coverage.py            # 2,000 suites per cell (4-8 min on 2 cores, as loaded)
    .venv/bin/python benchmarks/inputs_coverage.py --quick    # 200 suites per cell (about 25 s)
    .venv/bin/python benchmarks/inputs_coverage.py --mean 0.95 --quick  # another mean pass rate
    .venv/bin/python benchmarks/inputs_coverage.py --json     # machine-readable
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from pytest_probability.maths import (
    inputs,  # noqa: E402
    stats,  # noqa: E402
)

MEAN = 0.8
RHOS = (0.1, 0.3, 0.5, 0.7, 0.9)
INPUTS = (10, 20, 50, 200)
RUNS = (1, 5, 20)
METHODS = ("percentile", "t", "wilson", "BCa")
GOAL = (0.93, 0.97)
_NORMAL = statistics.NormalDist()


def cells() -> list[tuple[int, float | None, int]]:
    """``(k, ρ, N)``; ρ is None for k = 1 (any ρ: simulated at 0.5)."""
    grid: list[tuple[int, float | None, int]] = []
    for k in RUNS:
        for rho in (None,) if k == 1 else RHOS:
            for n in INPUTS:
                grid.append((k, rho, n))
    return grid


def bca(values: list[float], means: list[float], level: float) -> tuple[float, float]:
    """BCa interval of the mean from its bootstrap means (Efron 1987; Efron & Tibshirani 1993, 14.3)."""
    estimate = statistics.fmean(values)
    deviations = [v - estimate for v in values]
    spread = math.fsum(d * d for d in deviations)
    if spread == 0.0:
        return estimate, estimate
    acceleration = math.fsum(d**3 for d in deviations) / (6.0 * spread**1.5)
    below = sum(m < estimate for m in means) + 0.5 * sum(m == estimate for m in means)
    share = min(max(below / len(means), 0.5 / len(means)), 1.0 - 0.5 / len(means))
    z0 = _NORMAL.inv_cdf(share)
    tail = (1.0 - level) / 2.0
    bounds = []
    for z in (_NORMAL.inv_cdf(tail), _NORMAL.inv_cdf(1.0 - tail)):
        q = _NORMAL.cdf(z0 + (z0 + z) / (1.0 - acceleration * (z0 + z)))
        bounds.append(stats.sample_quantile(means, min(max(q, 0.0), 1.0)))
    return bounds[0], bounds[1]


def simulate(
    cell: tuple[int, float | None, int], reps: int, resamples: int, level: float, seed: int, mean: float = MEAN
) -> dict:
    k, rho, n = cell
    started = time.perf_counter()
    model_rho = 0.5 if rho is None else rho
    total = 1.0 / model_rho - 1.0  # a + b
    a, b = mean * total, (1.0 - mean) * total
    rng = np.random.default_rng([seed, k, round(model_rho * 100), n])
    covered = {m: 0 for m in METHODS}
    width = {m: 0.0 for m in METHODS}
    for rep in range(reps):
        rates = rng.beta(a, b, size=n)
        passes = rng.binomial(k, rates)
        values = inputs.fractions([(int(x), k) for x in passes])
        means = inputs.bootstrap_means(values, resamples, seed=rep)
        found = {
            "percentile": inputs.percentile_interval(means, level),
            "t": inputs.t_interval(values, level),
            "wilson": inputs.wilson_interval(values, level, trials=n * k),
            "BCa": bca(values, means, level),
        }
        for method, (low, high) in found.items():
            covered[method] += low <= mean <= high
            width[method] += high - low
    return {
        "runs": k,
        "rho": rho,
        "inputs": n,
        "reps": reps,
        "coverage": {m: covered[m] / reps for m in METHODS},
        "covered": covered,
        "mean_width": {m: width[m] / reps for m in METHODS},
        "seconds": time.perf_counter() - started,
    }


def _run(job: tuple) -> dict:
    return simulate(*job)


def share(count: int, reps: int) -> str:
    """A coverage with its 95% Wilson interval, in percent."""
    low, high = stats.wilson(count, reps, 0.95)
    return f"{100 * count / reps:.1f} ({100 * low:.1f}–{100 * high:.1f})"


def table(results: list[dict]) -> str:
    lines = ["| k runs | ρ | N inputs | " + " | ".join(METHODS) + " |", "|---:|---:|---:|" + "---|" * len(METHODS)]
    for r in results:
        rho = "any" if r["rho"] is None else f"{r['rho']:g}"
        cells_ = [share(r["covered"][m], r["reps"]) for m in METHODS]
        lines.append(f"| {r['runs']} | {rho} | {r['inputs']} | " + " | ".join(cells_) + " |")
    lines += [
        "",
        "| method | cells in 93–97% | cells below 93% | cells above 97% | lowest | mean width, N=10 | N=50 |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for m in METHODS:
        cov = [r["coverage"][m] for r in results]
        inside = sum(GOAL[0] <= c <= GOAL[1] for c in cov)
        below = sum(c < GOAL[0] for c in cov)
        above = sum(c > GOAL[1] for c in cov)
        widths = {n: statistics.fmean(r["mean_width"][m] for r in results if r["inputs"] == n) for n in (10, 50)}
        lines.append(
            f"| {m} | {inside}/{len(cov)} | {below} | {above} | {100 * min(cov):.1f}% | "
            f"{100 * widths[10]:.1f} pp | {100 * widths[50]:.1f} pp |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--reps", type=int, default=None, help="simulated suites per cell (default 2000; 200 with --quick)"
    )
    parser.add_argument("--resamples", type=int, default=None, help="bootstrap resamples (default 500)")
    parser.add_argument("--level", type=float, default=0.95)
    parser.add_argument("--mean", type=float, default=MEAN, help=f"mean true pass rate (default {MEAN})")
    parser.add_argument("--seed", type=int, default=20260801)
    parser.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--quick", action="store_true", help="200 suites per cell: a rough look")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    reps = args.reps or (200 if args.quick else 2000)
    resamples = args.resamples or 500
    grid = cells()
    jobs = [(cell, reps, resamples, args.level, args.seed, args.mean) for cell in grid]
    started = time.perf_counter()
    order = sorted(range(len(jobs)), key=lambda i: -grid[i][2])  # the largest N first: better balance
    if args.workers > 1:
        with multiprocessing.Pool(args.workers) as pool:
            done = pool.map(_run, [jobs[i] for i in order], chunksize=1)
    else:
        done = [_run(jobs[i]) for i in order]
    results = [None] * len(jobs)
    for i, result in zip(order, done, strict=False):
        results[i] = result
    elapsed = time.perf_counter() - started
    if args.json:
        print(
            json.dumps(
                {
                    "python": platform.python_version(),
                    "reps": reps,
                    "resamples": resamples,
                    "mean": args.mean,
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
        f"true rates Beta with mean {args.mean:g} and ICC ρ; {reps} suites per cell, {resamples} bootstrap resamples, "
        f"nominal {args.level:.0%}, seed {args.seed}; coverage % (95% Wilson interval); goal 93–97%"
    )
    print()
    print(table(results))
    print()
    print(
        f"time: {elapsed:.1f} s on {args.workers} worker{'s' if args.workers > 1 else ''} "
        f"({os.cpu_count()} CPUs, Python {platform.python_version()})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
