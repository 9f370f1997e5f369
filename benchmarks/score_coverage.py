"""Simulated cases: how often each interval for a mean score covers the true mean, and how wide it is.

A simulated case has N runs, each with a score in [0, 1] drawn from one of three
shapes with a given true mean μ:

* ``beta``: Beta(μκ, (1-μ)κ) with κ = 5 (a judge's spread of scores);
* ``two-point``: 0 or 1, Bernoulli(μ) (a pass/fail rubric: the most skewed
  bounded shape near 0 or 1, and the most discrete);
* ``skewed``: rare outliers: with probability p = min(0.05, μ/2) the score is 1,
  otherwise Beta(bκ', (1-b)κ') with κ' = 20 and b = (μ - p)/(1 - p) (mostly
  middling scores and an occasional perfect one); for μ > 0.5 the mirror image
  (an occasional 0). Skewness about 4 at μ = 0.5, more near the ends.

Grid: μ = 0.02, 0.1, 0.3, 0.5, 0.7, 0.9, 0.98; N = 5, 10, 20, 50, 100, 200;
nominal 95%. Every method sees the same samples in a cell. Methods:

* ``betting``: the plugin's default, ``maths.scores.score_interval`` (the
  hedged capital CI of Waudby-Smith & Ramdas 2024, bets tuned to N);
* ``betting-cs``: the plugin's time-uniform sequence at N (the price of being
  valid at every N at once);
* ``t``: the plugin's Student t interval, clipped to [0, 1];
* ``wilson-eff``: ``maths.inputs.wilson_interval`` on the runs' scores (Wilson's
  score interval at the effective number of runs p(1-p)/SE², t quantile);
* ``percentile``, ``BCa``, ``bootstrap-t``: the nonparametric bootstrap
  (``--resamples``, 500 by default: the quantiles of 500 resamples wobble by a
  tenth of a standard error, far less than the simulation's own noise), numpy
  here, for comparison: percentile (type-7 quantiles), BCa (Efron 1987: z0 from
  the share of resampled means below the mean, ties half; the acceleration from
  the jackknife, Σd³ / (6 (Σd²)^1.5)) and the studentized bootstrap (Efron &
  Tibshirani 1993, ch. 12; a resample with no spread counts t* = 0 when its mean
  is the sample's, ±inf otherwise);
* ``pm-eb``: WSR's predictable-mixture empirical-Bernstein CI (their Theorem 2
  with the fixed-n bets of Remark 1; closed form), as confseq's
  ``predmix_empbern_ci``;
* conservative references: ``hoeffding`` (mean ± sqrt(log(2/α)/(2N))),
  ``maurer-pontil`` (empirical Bernstein, Maurer & Pontil 2009, Theorem 4,
  α/2 a side) and ``anderson`` (Anderson 1969: the mean of the DKW band's
  extreme distributions, Massart's constant).

Each cell prints coverage (%) and mean width (points of the range); the goal is
93-97%. The tables give, per method, the cells below 93% and where. Reflection
symmetry: every method here treats x and 1 - x alike, so μ and 1 - μ differ only
by the shapes (``skewed`` is mirrored), and the simulation runs both.

    .venv/bin/python benchmarks/score_coverage.py              # 2,000 cases per cell (~10 min on 2 busy cores)
    .venv/bin/python benchmarks/score_coverage.py --quick      # 300 cases per cell (~1-2 min)
    .venv/bin/python benchmarks/score_coverage.py --timing     # only the time per interval, N = 5, 20, 200
    .venv/bin/python benchmarks/score_coverage.py --json       # machine-readable

Data are drawn with numpy, seeded per cell (``--seed``), so the numbers do not
depend on ``--workers``. The numbers measure; they decide nothing.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _measure import loadavg, warn_if_busy  # noqa: E402

from pytest_probability.maths import (
    inputs,  # noqa: E402
    scores,
)

FAMILIES = ("beta", "two-point", "skewed")
MEANS = (0.02, 0.1, 0.3, 0.5, 0.7, 0.9, 0.98)
SIZES = (5, 10, 20, 50, 100, 200)
METHODS = (
    "betting",
    "betting-cs",
    "t",
    "wilson-eff",
    "percentile",
    "BCa",
    "bootstrap-t",
    "pm-eb",
    "hoeffding",
    "maurer-pontil",
    "anderson",
)
GOAL = (0.93, 0.97)
KAPPA = 5.0
SKEW_KAPPA = 20.0
SKEW_SHARE = 0.05
_NORMAL = statistics.NormalDist()


# -- the shapes ------------------------------------------------------------------------------


def draw(rng: np.random.Generator, family: str, mean: float, size: tuple[int, ...]) -> np.ndarray:
    if family == "beta":
        return rng.beta(mean * KAPPA, (1.0 - mean) * KAPPA, size=size)
    if family == "two-point":
        return (rng.random(size) < mean).astype(float)
    if family == "skewed":
        mirrored = mean > 0.5
        mu = 1.0 - mean if mirrored else mean
        share = min(SKEW_SHARE, mu / 2.0)
        body = (mu - share) / (1.0 - share)
        values = rng.beta(body * SKEW_KAPPA, (1.0 - body) * SKEW_KAPPA, size=size)
        values = np.where(rng.random(size) < share, 1.0, values)
        return 1.0 - values if mirrored else values
    raise ValueError(family)


# -- the methods not in the plugin ----------------------------------------------------------------


def bootstrap_methods(
    x: np.ndarray, rng: np.random.Generator, resamples: int, level: float
) -> dict[str, tuple[float, float]]:
    n = len(x)
    tail = (1.0 - level) / 2.0
    mean = float(x.mean())
    sample = x[rng.integers(0, n, size=(resamples, n))]
    means = sample.mean(axis=1)
    found = {"percentile": (float(np.quantile(means, tail)), float(np.quantile(means, 1.0 - tail)))}
    # BCa
    deviations = x - mean
    spread = float((deviations**2).sum())
    if spread == 0.0:
        found["BCa"] = (mean, mean)
    else:
        acceleration = float((deviations**3).sum()) / (6.0 * spread**1.5)
        below = float((means < mean).sum() + 0.5 * (means == mean).sum())
        share = min(max(below / resamples, 0.5 / resamples), 1.0 - 0.5 / resamples)
        z0 = _NORMAL.inv_cdf(share)
        bounds = []
        for z in (_NORMAL.inv_cdf(tail), _NORMAL.inv_cdf(1.0 - tail)):
            q = _NORMAL.cdf(z0 + (z0 + z) / (1.0 - acceleration * (z0 + z)))
            bounds.append(float(np.quantile(means, min(max(q, 0.0), 1.0))))
        found["BCa"] = (bounds[0], bounds[1])
    # bootstrap-t
    sd = float(x.std(ddof=1)) if n > 1 else 0.0
    if sd == 0.0:
        found["bootstrap-t"] = (mean, mean)
    else:
        sds = sample.std(axis=1, ddof=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            ts = (means - mean) / (sds / math.sqrt(n))
        ts = np.nan_to_num(ts, nan=0.0, posinf=1e12, neginf=-1e12)  # 0/0: no move; x/0: far out
        high_t, low_t = np.quantile(ts, 1.0 - tail), np.quantile(ts, tail)
        se = sd / math.sqrt(n)
        found["bootstrap-t"] = (max(0.0, mean - float(high_t) * se), min(1.0, mean - float(low_t) * se))
    return found


def _pm_eb_lower(x: np.ndarray, alpha: float) -> float:
    """confseq's predmix_empbern_lower_cs at fixed_n = N, truncation 1/2, last time (WSR Thm 2, Rmk 1)."""
    n = len(x)
    t = np.arange(1, n + 1)
    mu_reg = (0.5 + np.cumsum(x)) / (t + 1)
    sigma2 = (0.25 + np.cumsum((x - mu_reg) ** 2)) / (t + 1)
    sigma2_prev = np.append(0.25, sigma2[:-1])
    lambdas = np.minimum(np.sqrt(2.0 * math.log(1.0 / alpha) / (n * sigma2_prev)), 0.5)
    mu_prev = np.append(0.0, (np.cumsum(x) / t)[:-1])
    v = (x - mu_prev) ** 2
    psi = -np.log(1.0 - lambdas) - lambdas
    centre = float((lambdas * x).sum() / lambdas.sum())
    margin = float((math.log(1.0 / alpha) + (v * psi).sum()) / lambdas.sum())
    return centre - margin


def closed_form_methods(x: np.ndarray, level: float) -> dict[str, tuple[float, float]]:
    n = len(x)
    alpha = 1.0 - level
    mean = float(x.mean())
    found: dict[str, tuple[float, float]] = {}
    low = _pm_eb_lower(x, alpha / 2.0)
    high = 1.0 - _pm_eb_lower(1.0 - x, alpha / 2.0)
    found["pm-eb"] = (max(0.0, min(low, mean)), min(1.0, max(high, mean)))
    half = math.sqrt(math.log(2.0 / alpha) / (2.0 * n))
    found["hoeffding"] = (max(0.0, mean - half), min(1.0, mean + half))
    if n < 2:
        found["maurer-pontil"] = (0.0, 1.0)
    else:
        variance = float(x.var(ddof=1))
        log_term = math.log(4.0 / alpha)  # delta = alpha/2 a side: log(2/delta)
        width = math.sqrt(2.0 * variance * log_term / n) + 7.0 * log_term / (3.0 * (n - 1))
        found["maurer-pontil"] = (max(0.0, mean - width), min(1.0, mean + width))
    epsilon = math.sqrt(math.log(2.0 / alpha) / (2.0 * n))  # DKW with Massart's constant
    ordered = np.concatenate(([0.0], np.sort(x), [1.0]))
    gaps = np.diff(ordered)
    steps = np.arange(n + 1) / n  # the ECDF on each gap
    upper = float((gaps * (1.0 - np.maximum(steps - epsilon, 0.0))).sum())
    lower = float((gaps * np.maximum(1.0 - steps - epsilon, 0.0)).sum())
    found["anderson"] = (lower, upper)
    return found


def intervals(x: np.ndarray, rng: np.random.Generator, resamples: int, level: float) -> dict[str, tuple[float, float]]:
    values = [float(v) for v in x]
    found: dict[str, tuple[float, float]] = {}
    for method in ("betting", "betting-cs", "t"):
        ci = scores.score_interval(values, level, method=method)
        found[method] = (ci.low, ci.high)
    found["wilson-eff"] = inputs.wilson_interval(values, level) if len(values) > 1 else (0.0, 1.0)
    found.update(bootstrap_methods(x, rng, resamples, level))
    found.update(closed_form_methods(x, level))
    return found


# -- the simulation --------------------------------------------------------------------------------


def simulate(cell: tuple[str, float, int], reps: int, resamples: int, level: float, seed: int) -> dict[str, Any]:
    family, mean, n = cell
    started = time.process_time()
    rng = np.random.default_rng([seed, FAMILIES.index(family), MEANS.index(mean), n])
    data = draw(rng, family, mean, (reps, n))
    covered = {m: 0 for m in METHODS}
    width = {m: 0.0 for m in METHODS}
    guarded = 0  # betting intervals with the sample mean as an end that is not a range end: the mean guard
    for rep in range(reps):
        x = data[rep]
        found = intervals(x, rng, resamples, level)
        for method, (low, high) in found.items():
            covered[method] += low <= mean <= high
            width[method] += high - low
        sample_mean = float(x.mean())
        low, high = found["betting"]
        guarded += (low == sample_mean and 0.0 < sample_mean) or (high == sample_mean and sample_mean < 1.0)
    return {
        "family": family,
        "mean": mean,
        "n": n,
        "reps": reps,
        "covered": covered,
        "coverage": {m: covered[m] / reps for m in METHODS},
        "mean_width": {m: width[m] / reps for m in METHODS},
        "mean_guard": guarded,
        "cpu_seconds": time.process_time() - started,
    }


def _run(job: tuple[Any, ...]) -> dict[str, Any]:
    return simulate(*job)


# -- timing ----------------------------------------------------------------------------------------------


def timing(repeats: int = 5) -> list[dict[str, Any]]:
    """CPU microseconds per interval (the least of ``repeats`` rounds of 200 random cases)."""
    rng = random.Random(20261231)
    results = []
    shapes: dict[str, Callable[[], float]] = {
        "beta": lambda: rng.betavariate(0.7 * KAPPA, 0.3 * KAPPA),
        "two-point": lambda: float(rng.random() < 0.1),
    }
    for n in (5, 20, 200):
        for shape, gen in shapes.items():
            cases = [[gen() for _ in range(n)] for _ in range(200)]
            row: dict[str, Any] = {"n": n, "shape": shape}
            variants: dict[str, Callable[[list[float]], object]] = {
                "betting": lambda v: scores.score_interval(v, 0.95),
                "betting-cs": lambda v: scores.score_interval(v, 0.95, method="betting-cs"),
                "t": lambda v: scores.score_interval(v, 0.95, method="t"),
                "summarize": lambda v: scores.summarize(v, 0.95),
                "percentile 5000": lambda v: inputs.bootstrap_interval(v, 0.95, 5000, 0),
            }
            for name, function in variants.items():
                subset = cases if name != "percentile 5000" else cases[:10]
                best = math.inf
                for _ in range(repeats):
                    start = time.process_time()
                    for values in subset:
                        function(values)
                    best = min(best, (time.process_time() - start) / len(subset))
                row[name] = best * 1e6
            results.append(row)
    return results


def timing_table(rows: list[dict[str, Any]]) -> str:
    names = [k for k in rows[0] if k not in ("n", "shape")]
    lines = ["| N | scores | " + " | ".join(names) + " |", "|---:|---|" + "---:|" * len(names)]
    for row in rows:
        lines.append(f"| {row['n']} | {row['shape']} | " + " | ".join(f"{row[k]:,.0f} µs" for k in names) + " |")
    return "\n".join(lines)


# -- the tables ------------------------------------------------------------------------------------------------


def method_table(results: list[dict[str, Any]], method: str) -> str:
    lines = [
        f"#### {method}",
        "",
        "| shape | μ | " + " | ".join(f"N={n}" for n in SIZES) + " |",
        "|---|---:|" + "---|" * len(SIZES),
    ]
    for family in FAMILIES:
        for mean in MEANS:
            cells = []
            for n in SIZES:
                r = next(r for r in results if r["family"] == family and r["mean"] == mean and r["n"] == n)
                cov = 100.0 * r["coverage"][method]
                mark = "**" if cov < 100.0 * GOAL[0] else ""
                cells.append(f"{mark}{cov:.1f}{mark} ({100.0 * r['mean_width'][method]:.1f})")
            lines.append(f"| {family} | {mean:g} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _wilson(count: int, total: int) -> tuple[float, float]:
    from pytest_probability.maths import stats

    low, high = stats.wilson(count, total, 0.95)
    return float(low), float(high)


def summary_table(results: list[dict[str, Any]]) -> str:
    lines = [
        "| method | cells in 93–97% | below 93% | above 97% | below 95% beyond noise | lowest (where) | "
        "mean width N=5 | N=20 | N=200 |",
        "|---|---:|---:|---:|---:|---|---:|---:|---:|",
    ]
    for method in METHODS:
        cov = [(r["coverage"][method], r) for r in results]
        inside = sum(GOAL[0] <= c <= GOAL[1] for c, _ in cov)
        below = sum(c < GOAL[0] for c, _ in cov)
        above = sum(c > GOAL[1] for c, _ in cov)
        # below nominal by more than the Monte Carlo error: the Wilson upper bound of the cell under 95%
        short = sum(_wilson(r["covered"][method], r["reps"])[1] < 0.95 for _, r in cov)
        low, where = min(cov, key=lambda item: item[0])
        widths = {n: statistics.fmean(r["mean_width"][method] for r in results if r["n"] == n) for n in (5, 20, 200)}
        lines.append(
            f"| {method} | {inside}/{len(cov)} | {below} | {above} | {short} | {100 * low:.1f}% "
            f"({where['family']}, μ={where['mean']:g}, N={where['n']}) | {100 * widths[5]:.1f} | "
            f"{100 * widths[20]:.1f} | {100 * widths[200]:.1f} |"
        )
    return "\n".join(lines)


def below_goal(results: list[dict[str, Any]]) -> str:
    lines = []
    for method in METHODS:
        cells = [r for r in results if r["coverage"][method] < GOAL[0]]
        if not cells:
            lines.append(f"- {method}: never below 93%")
            continue
        by_family = {}
        for family in FAMILIES:
            mine = [r for r in cells if r["family"] == family]
            if mine:
                worst = min(mine, key=lambda r: r["coverage"][method])
                by_family[family] = (
                    f"{len(mine)} cells, N ≤ {max(r['n'] for r in mine)}, worst "
                    f"{100 * worst['coverage'][method]:.1f}% at μ={worst['mean']:g}, N={worst['n']}"
                )
        lines.append(f"- {method}: " + "; ".join(f"{k}: {v}" for k, v in by_family.items()))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "-r", "--reps", type=int, default=None, help="simulated cases per cell (default 2000; 300 with --quick)"
    )
    parser.add_argument("--resamples", type=int, default=500, help="bootstrap resamples (default 500)")
    parser.add_argument("--level", type=float, default=0.95)
    parser.add_argument("--seed", type=int, default=20261231)
    parser.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--quick", action="store_true", help="300 cases per cell: a rough look")
    parser.add_argument("--timing", action="store_true", help="only the time per interval")
    parser.add_argument("--no-timing", action="store_true", help="skip the timing at the end")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    reps = args.reps or (300 if args.quick else 2000)
    info = {"nproc": os.cpu_count(), "loadavg": loadavg()}
    warn_if_busy(info)
    if args.timing:
        rows = timing()
        if args.json:
            print(json.dumps({"timing_us": rows}, indent=2))
        else:
            print(
                f"CPU µs per interval (least of 5 rounds), Python {platform.python_version()}, load {info['loadavg']}"
            )
            print(timing_table(rows))
        return 0
    grid = [(family, mean, n) for family in FAMILIES for mean in MEANS for n in SIZES]
    jobs = [(cell, reps, args.resamples, args.level, args.seed) for cell in grid]
    order = sorted(range(len(jobs)), key=lambda i: -grid[i][2])  # the largest N first: better balance
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
    rows = [] if args.no_timing else timing()
    if args.json:
        print(
            json.dumps(
                {
                    "python": platform.python_version(),
                    "reps": reps,
                    "resamples": args.resamples,
                    "level": args.level,
                    "seed": args.seed,
                    "seconds": elapsed,
                    "results": results,
                    "timing_us": rows,
                    "loadavg": [info["loadavg"], loadavg()],
                },
                indent=2,
            )
        )
        return 0
    print(
        f"score intervals: {reps} cases per cell, {args.resamples} bootstrap resamples, nominal {args.level:.0%}, "
        f"seed {args.seed}; goal 93–97%"
    )
    print()
    print("### Summary (coverage over the 126 cells; mean width in points of the range, averaged over shapes and μ)")
    print()
    print(summary_table(results))
    print()
    print("### Where each method falls below 93%")
    print()
    print(below_goal(results))
    guards = sum(r["mean_guard"] for r in results)
    print()
    print(f"betting intervals widened to contain the sample mean: {guards} of {reps * len(results)}")
    print()
    print("### Per method: coverage % (mean width, points); bold below 93%")
    for method in METHODS:
        print()
        print(method_table(results, method))
    if rows:
        print()
        print("### CPU µs per interval (least of 5 rounds)")
        print()
        print(timing_table(rows))
    print()
    print(
        f"time: {elapsed:.1f} s on {args.workers} worker{'s' if args.workers > 1 else ''} ({os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}, load average {info['loadavg']} at start, {loadavg()} at end)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
