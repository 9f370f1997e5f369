"""Simulated nights: false alarms and power of the baseline verdicts, against the old 20-point rule.

Runs the plugin's own decision code (``compare.judge_pairs``: Fisher's exact
test, Holm over the night's cases, Newcombe intervals at the local level,
margin 0, confidence 0.95) on simulated nights:

* **False alarms**: 100 unchanged cases (true pass rates spread evenly over
  0.70 to 0.95), tonight's ``n`` runs against a baseline of the 7 nights
  before it (``7 n`` runs, pooled), 1,000 nights, ``n`` = 10, 30 and 100. A
  night has a false alarm when any case gets the FAIL verdict. The old rule
  (deploy/'s ProbabilityCaseFractionDropped until 0.4.0): tonight's fraction
  more than 20 points below the median of the 7 nightly fractions.
* **Power**: the same nights with one case of true rate 0.9 dropping to 0.5
  (at 30 runs) or to 0.7 (at 100 runs); power is the share of nights on which
  that case gets FAIL (old rule: on which it fires).

Outcomes are drawn with numpy (seeded); the decisions use only the plugin.

    .venv/bin/python benchmarks/compare_false_alarms.py              # 1,000 nights (about a minute)
    .venv/bin/python benchmarks/compare_false_alarms.py --nights 200 # quicker, noisier
    .venv/bin/python benchmarks/compare_false_alarms.py --json       # machine-readable
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time

import numpy as np

from pytest_probability.features.compare import judging as compare
from pytest_probability.features.compare.comparisons import Pair
from pytest_probability.measures.fraction import PASS_FRACTION, Tally
from pytest_probability.vocabulary import FAILED

CASES = 100
DEPTH = 7
RATES = [0.70 + 0.25 * i / (CASES - 1) for i in range(CASES)]


def old_rule(tonight: int, nights: np.ndarray, n: int) -> bool:
    """ProbabilityCaseFractionDropped: tonight more than 20 points below the 7-night median."""
    return tonight / n < float(np.median(nights / n)) - 0.2 - 1e-12


def simulate(n: int, nights: int, seed: int, drop_to: float | None = None) -> dict:
    rng = np.random.default_rng(seed)
    rates = np.array(RATES)
    dropped = None
    tonight_rates = rates.copy()
    if drop_to is not None:
        dropped = int(np.argmin(np.abs(rates - 0.9)))
        rates[dropped] = 0.9
        tonight_rates = rates.copy()
        tonight_rates[dropped] = drop_to
    any_new = any_old = caught_new = caught_old = 0
    false_new = false_old = 0
    started = time.perf_counter()
    for _ in range(nights):
        history = rng.binomial(n, rates[:, None], size=(CASES, DEPTH))
        tonight = rng.binomial(n, tonight_rates)
        pairs = [
            Pair(PASS_FRACTION, str(i), str(i), Tally(int(tonight[i]), n), Tally(int(history[i].sum()), n * DEPTH))
            for i in range(CASES)
        ]
        compare.judge_pairs(pairs, "holm", 0.95)
        new_alarms = {i for i, p in enumerate(pairs) if p.verdict == FAILED}
        old_alarms = {i for i in range(CASES) if old_rule(int(tonight[i]), history[i], n)}
        if dropped is not None:
            caught_new += dropped in new_alarms
            caught_old += dropped in old_alarms
            new_alarms.discard(dropped)
            old_alarms.discard(dropped)
        any_new += bool(new_alarms)
        any_old += bool(old_alarms)
        false_new += len(new_alarms)
        false_old += len(old_alarms)
    result = {
        "runs": n,
        "nights": nights,
        "seed": seed,
        "false_alarm_nights_new": any_new / nights,
        "false_alarm_nights_old": any_old / nights,
        "false_alarms_per_night_new": false_new / nights,
        "false_alarms_per_night_old": false_old / nights,
        "seconds": time.perf_counter() - started,
    }
    if dropped is not None:
        result.update(drop=f"0.9->{drop_to}", power_new=caught_new / nights, power_old=caught_old / nights)
    return result


def interval(share: float, nights: int) -> str:
    """Share with its 95% Wilson interval, in percent."""
    from pytest_probability.maths import stats

    low, high = stats.wilson(round(share * nights), nights, 0.95)
    return f"{share * 100:.1f}% [{low * 100:.1f}, {high * 100:.1f}]"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nights", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=20261201)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    results = [simulate(n, args.nights, args.seed + n) for n in (10, 30, 100)]
    results.append(simulate(30, args.nights, args.seed + 1030, drop_to=0.5))
    results.append(simulate(100, args.nights, args.seed + 1100, drop_to=0.7))
    if args.json:
        print(json.dumps({"python": platform.python_version(), "results": results}, indent=2))
        return 0
    print(
        f"{CASES} cases, true rates 0.70..0.95, baseline {DEPTH} nights pooled, {args.nights} nights, seed {args.seed}"
    )
    print(
        "new: Fisher exact, Holm over the night's cases, margin 0, confidence 0.95; old: 20 points below the 7-night median"
    )
    print()
    print(
        "| runs per night | scenario | nights with a false alarm, new | old | false alarms per night, new | old | power, new | old |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for r in results:
        scenario = f"one case drops {r['drop']}" if "drop" in r else "all unchanged"
        power_new = interval(r["power_new"], r["nights"]) if "drop" in r else "-"
        power_old = interval(r["power_old"], r["nights"]) if "drop" in r else "-"
        print(
            f"| {r['runs']} | {scenario} | {interval(r['false_alarm_nights_new'], r['nights'])} | "
            f"{interval(r['false_alarm_nights_old'], r['nights'])} | {r['false_alarms_per_night_new']:.3f} | "
            f"{r['false_alarms_per_night_old']:.2f} | {power_new} | {power_old} |"
        )
    print()
    print(f"time: {sum(r['seconds'] for r in results):.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
