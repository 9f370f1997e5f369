"""Simulated A/B sessions: does the planner's number of inputs give the power it promises?

For each population -- a paired A/B whose inputs have true pass rates drawn
from Beta distributions (arm B's mean 0.70, arm A's 0.70 + delta, both with
intra-class correlation ``icc``, so ``sigma_b**2 = icc p (1 - p)``; the two
arms' rates joined by a Gaussian copula of correlation ``--rho``) -- it

1. simulates one pilot report (``--pilot-inputs`` inputs x ``--pilot-runs``
   runs per arm) and estimates the variance components from its per-input
   counts (``ab_planning.paired_components``, Miller 2024);
2. lets the planner choose the inputs ``n`` for 80% power at two-sided 5%
   with ``k`` runs per input (``ab_planning.inputs_needed``; at least the
   plugin's ``MIN_INPUTS`` = 10, below which it runs another test);
3. simulates ``--sessions`` sessions of ``n`` fresh inputs x ``k`` runs per
   arm and counts how often the plugin's own A/B test over inputs rejects
   "no difference" at 5%: the sign-flip test ``twostats.sign_flip`` as
   ``measures.fraction.PassFraction.pooled`` calls it (per-input differences
   ``(x1 n2 - x2 n1) / (n1 n2)``, its defaults seed 0 and 5,000 resamples (--prob-bootstrap),
   p = twice the smaller tail).

The sign-flip test is evaluated with numpy on exactly the plugin's sign
patterns (all ``2**n - 1`` up to 16 inputs, else the 20,000 that
``random.Random(0).getrandbits(n)`` draws), so its p-values are the
plugin's; a few sessions per row are also run through
``twostats.sign_flip`` itself and must agree exactly. A paired t-test
(scipy) is shown beside it.

Columns: ``planned`` is the power the planner promises at its ``n`` (from the
pilot's components), ``true`` the same formula with the population's true
components (what the pilot's estimation error costs), ``sign-flip`` and
``t-test`` the simulated power with 95% Wilson intervals.

Rates are drawn with numpy and scipy (seeded); the planning and the test are
the plugin's.

What its first full run (seed 20261215, 10,000 sessions per row) showed: the
planner's power formula holds for the paired t-test within the simulation's
error, and the pilot's estimation error explains the rest (``true``). The
sign-flip test counts a tie with the observed sum (``S* = S``) in both tails,
which with few runs per input (differences on a coarse lattice) makes it
conservative: its power is 1 to 3 points below the formula's (and the
t-test's) at the same ``n``, most at one run per input.

    .venv/bin/python benchmarks/planner_power.py            # 10,000 sessions per row (about 3 minutes on 2 cores)
    .venv/bin/python benchmarks/planner_power.py --quick    # 300 sessions per row (under a minute)
    .venv/bin/python benchmarks/planner_power.py --json     # machine-readable
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import random
import sys
import time

import numpy as np
from scipy import stats as sps

from pytest_probability.features.compare.comparisons import MIN_INPUTS
from pytest_probability.maths import ab_planning, stats, twostats

BASE = 0.70
ALPHA = 0.05
TARGET = 0.8
DELTAS = (0.05, 0.10)
RUNS = (1, 5, 20)
ICCS = (0.2, 0.6)
CHUNK = 250  # sessions per matrix product


class Population:
    """Arm A ~ Beta(mean BASE + delta, icc), arm B ~ Beta(mean BASE, icc), joined by a Gaussian copula."""

    def __init__(self, delta: float, icc: float, rho: float) -> None:
        self.delta, self.icc, self.rho = delta, icc, rho
        total = 1.0 / icc - 1.0  # a + b, so that Var = mean (1 - mean) / (a + b + 1) = icc mean (1 - mean)
        self.shape_a = ((BASE + delta) * total, (1 - BASE - delta) * total)
        self.shape_b = (BASE * total, (1 - BASE) * total)

    def draw(self, rng: np.random.Generator, size: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        z1 = rng.standard_normal(size)
        z2 = self.rho * z1 + math.sqrt(1 - self.rho**2) * rng.standard_normal(size)
        return sps.beta.ppf(sps.norm.cdf(z1), *self.shape_a), sps.beta.ppf(sps.norm.cdf(z2), *self.shape_b)

    def true_components(self, rng: np.random.Generator, draws: int = 400_000) -> tuple[ab_planning.Components, float]:
        """Exact between/within variances per arm; the covariance of the rates by Monte Carlo."""
        mean_a, mean_b = BASE + self.delta, BASE
        between_a, between_b = self.icc * mean_a * (1 - mean_a), self.icc * mean_b * (1 - mean_b)
        p_a, p_b = self.draw(rng, (draws,))
        cov = float(np.cov(p_a, p_b)[0, 1])
        components = ab_planning.Components(
            between=between_a + between_b - 2 * cov,
            within_a=(1 - self.icc) * mean_a * (1 - mean_a),
            within_b=(1 - self.icc) * mean_b * (1 - mean_b),
        )
        return components, cov / math.sqrt(between_a * between_b)


def plugin_patterns(n: int) -> np.ndarray:
    """The sign patterns twostats.sign_flip uses for n inputs, as a 0/1 matrix (pattern x input)."""
    if n <= twostats.EXACT_SIGN_FLIP_INPUTS:
        patterns = list(range(1, 2**n))
    else:
        rng = random.Random(0)
        patterns = []
        while len(patterns) < twostats.SIGN_FLIP_RESAMPLES:
            pattern = rng.getrandbits(n)
            if pattern:
                patterns.append(pattern)
    width = (n + 7) // 8
    raw = np.frombuffer(b"".join(p.to_bytes(width, "little") for p in patterns), dtype=np.uint8)
    bits = np.unpackbits(raw.reshape(len(patterns), width), axis=1, bitorder="little")[:, :n]
    return bits.astype(np.float32)


def sign_flip_p(bits: np.ndarray, diffs: np.ndarray) -> np.ndarray:
    """Two-sided sign-flip p-values of each row of ``diffs`` (sessions x inputs, integer x1 - x2), as the plugin:
    flipping subset J moves the sum below the observed one iff the sum over J is >= 0 (ties counted, the identity
    once)."""
    flipped = bits @ diffs.T.astype(np.float32)  # exact: small integers
    count = bits.shape[0] + 1
    below = (1 + (flipped >= 0).sum(axis=0)) / count
    above = (1 + (flipped <= 0).sum(axis=0)) / count
    return np.minimum(1.0, 2.0 * np.minimum(np.minimum(1.0, below), np.minimum(1.0, above)))


def plugin_p(xa: np.ndarray, xb: np.ndarray, k: int) -> float:
    """The same p-value through twostats.sign_flip itself, called as measures.fraction.PassFraction.pooled calls it."""
    flip = twostats.sign_flip([(int(a) * k - int(b) * k, k * k) for a, b in zip(xa, xb, strict=False)])
    return min(1.0, 2.0 * min(flip.p_less, flip.p_greater))


def wilson(hits: int, total: int) -> str:
    low, high = stats.wilson(hits, total, 0.95)
    return f"{hits / total * 100:.1f}% [{low * 100:.1f}, {high * 100:.1f}]"


def simulate(pop: Population, k: int, n: int, sessions: int, rng: np.random.Generator, verify: int) -> dict:
    bits = plugin_patterns(n)
    flips = ts = 0
    checked = 0
    for start in range(0, sessions, CHUNK):
        size = min(CHUNK, sessions - start)
        p_a, p_b = pop.draw(rng, (size, n))
        xa, xb = rng.binomial(k, p_a), rng.binomial(k, p_b)
        diffs = xa - xb
        p = sign_flip_p(bits, diffs)
        flips += int((p <= ALPHA).sum())
        with np.errstate(invalid="ignore", divide="ignore"):
            t_p = sps.ttest_1samp(diffs / k, 0.0, axis=1).pvalue
        ts += int((np.nan_to_num(t_p, nan=1.0) <= ALPHA).sum())
        while checked < verify and checked < size:
            expected = plugin_p(xa[checked], xb[checked], k)
            if expected != p[checked]:
                raise AssertionError(f"numpy sign-flip p {p[checked]!r} != twostats.sign_flip {expected!r}")
            checked += 1
    return {"sign_flip_hits": flips, "t_hits": ts, "verified": checked}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=None, help="sessions per row (default 10000; 300 with --quick)")
    parser.add_argument(
        "--quick", action="store_true", help="300 sessions per row; only rows of at most 150 inputs verified"
    )
    parser.add_argument("--pilot-inputs", type=int, default=300)
    parser.add_argument("--pilot-runs", type=int, default=10)
    parser.add_argument("--rho", type=float, default=0.6, help="copula correlation of the two arms' rates")
    parser.add_argument("--seed", type=int, default=20261215)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    sessions = args.sessions or (300 if args.quick else 10_000)
    verify = 1 if args.quick else 2
    started = time.perf_counter()
    results = []
    statements = []
    for p_index, (delta, icc) in enumerate((d, i) for d in DELTAS for i in ICCS):
        rng = np.random.default_rng([args.seed, p_index])
        pop = Population(delta, icc, args.rho)
        truth, rate_rho = pop.true_components(rng)
        pa, pb = pop.draw(rng, (args.pilot_inputs,))
        pilot = ab_planning.paired_components(
            [(int(x), args.pilot_runs) for x in rng.binomial(args.pilot_runs, pa)],
            [(int(x), args.pilot_runs) for x in rng.binomial(args.pilot_runs, pb)],
        )
        statements.append((delta, icc, ab_planning.tradeoff_statement(pilot, delta, ALPHA, TARGET)))
        for k in RUNS:
            planned_n = ab_planning.inputs_needed(pilot, delta, k, ALPHA, TARGET)
            n = max(planned_n, MIN_INPUTS)
            row_started = time.perf_counter()
            # Only the first rows of the quick run are verified against the (slow, pure-Python) plugin test.
            sim = simulate(pop, k, n, sessions, rng, verify if (not args.quick or n <= 150) else 0)
            results.append(
                {
                    "delta": delta,
                    "icc": icc,
                    "rho_latent": args.rho,
                    "rho_rates": rate_rho,
                    "pilot_correlation": pilot.correlation,
                    "runs": k,
                    "inputs": n,
                    "inputs_planned": planned_n,
                    "inputs_true": ab_planning.inputs_needed(truth, delta, k, ALPHA, TARGET),
                    "planned_power": ab_planning.ab_power(pilot, delta, n, k, ALPHA),
                    "true_power": ab_planning.ab_power(truth, delta, n, k, ALPHA),
                    "sessions": sessions,
                    **sim,
                    "seconds": time.perf_counter() - row_started,
                }
            )
    elapsed = time.perf_counter() - started
    if args.json:
        print(
            json.dumps(
                {
                    "python": platform.python_version(),
                    "cpus": os.cpu_count(),
                    "seconds": elapsed,
                    "results": results,
                    "statements": statements,
                },
                indent=2,
            )
        )
        return 0
    print(
        f"paired A/B, arm B mean {BASE}, arm A mean {BASE} + delta; rates Beta with the given ICC, copula "
        f"correlation {args.rho}; pilot {args.pilot_inputs} inputs x {args.pilot_runs} runs per arm; "
        f"{sessions} sessions per row; two-sided level {ALPHA}, target power {TARGET:.0%}; seed {args.seed}"
    )
    print(f"python {platform.python_version()}, {os.cpu_count()} CPUs")
    print()
    print(
        "| delta | runs/input k | ICC | rate corr. | pilot corr. | inputs n (true-components n) | planned power "
        "| power at n, true components | simulated, sign-flip (plugin) | simulated, paired t |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        print(
            f"| {r['delta']:.2f} | {r['runs']} | {r['icc']:.1f} | {r['rho_rates']:.2f} | {r['pilot_correlation']:.2f} "
            f"| {r['inputs']:,} ({r['inputs_true']:,}) | {r['planned_power'] * 100:.1f}% | {r['true_power'] * 100:.1f}% "
            f"| {wilson(r['sign_flip_hits'], r['sessions'])} | {wilson(r['t_hits'], r['sessions'])} |"
        )
    print()
    verified = sum(r["verified"] for r in results)
    print(f"sign-flip p-values checked against twostats.sign_flip: {verified} sessions, all equal")
    print()
    for delta, icc, text in statements:
        print(f"- delta {delta:.2f}, ICC {icc:.1f} (pilot): {text}")
    print()
    print(f"time: {elapsed:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
