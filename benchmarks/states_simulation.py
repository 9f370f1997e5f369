"""Simulated nights: how often the since-clean interval rule gives a case the wrong state.

Runs the plugin's own rule (``maths.states.stories``, the session's defaults:
window 14 nights, flaky bar 0.95, failing bar 0.5, broken after 10 runs without
a pass, fixed after 3 clean nights, exact 95% intervals) on simulated cases:

* **Constant cases**: a case whose true pass rate ``p`` never changes, ``n``
  runs a night, 40 nights; the state of nights 15 to 40 (a full window behind
  each) is counted. The true state of such a case is *passing* for
  ``p >= 0.95`` (the flaky bar), *flaky* for ``0.5 <= p < 0.95``, *failing* for
  ``0 < p < 0.5`` and *broken* for ``p = 0``. A **false state** is a night put in
  a worse state than the truth (passing called flaky, failing or broken; flaky
  called failing or broken; failing called broken) or a better one (a flaky
  case called passing, new or fixed: missed).
* **Changes**: a case at ``p = 1`` that becomes ``p = 0.7`` (or ``0``) on
  night 21, and one at ``p = 0.7`` that is fixed (``p = 1``) on night 21: the
  nights until the rule says so (median and 90th percentile), and how often a
  still-flaky case (``p = 0.9``) is called *fixed* (a false fix).

Outcomes are drawn with numpy (seeded); the decisions use only the plugin.

    .venv/bin/python benchmarks/states_simulation.py                # 1,000 cases per row (about a minute)
    .venv/bin/python benchmarks/states_simulation.py --cases 200    # quicker, noisier
    .venv/bin/python benchmarks/states_simulation.py --json         # machine-readable
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time

import numpy as np

from pytest_probability.maths.states import (
    BAD,
    BROKEN,
    FAILING,
    FIXED,
    FLAKY,
    NEW,
    PASSING,
    STATES,
    Night,
    Rule,
    stories,
)

NIGHTS = 40
COUNTED_FROM = 14  # nights 15..40: a full window behind each
RATES = (1.0, 0.99, 0.97, 0.95, 0.9, 0.8, 0.6, 0.45, 0.3, 0.1, 0.0)
RANK = {PASSING: 0, NEW: 0, FIXED: 0, FLAKY: 1, FAILING: 2, BROKEN: 3}


def truth(p: float, rule: Rule) -> int:
    if p >= rule.flaky_bar:
        return 0
    if p >= rule.failing_bar:
        return 1
    return 2 if p > 0 else 3


def states_of(passes: list[int], runs: int, rule: Rule) -> list[str]:
    nights = [Night(f"n{i:02d}", int(x), runs) for i, x in enumerate(passes)]
    return [s.state if s is not None else "" for s in stories(nights, rule)]


def constant(p: float, runs: int, cases: int, rule: Rule, rng: np.random.Generator) -> dict[str, object]:
    counts = {state: 0 for state in STATES}
    for _ in range(cases):
        passes = rng.binomial(runs, p, NIGHTS).tolist()
        for state in states_of(passes, runs, rule)[COUNTED_FROM:]:
            counts[state] += 1
    total = sum(counts.values())
    true = truth(p, rule)
    worse = sum(c for s, c in counts.items() if RANK[s] > true) / total
    better = sum(c for s, c in counts.items() if RANK[s] < true) / total
    return {
        "p": p,
        "runs": runs,
        "true": ("passing", "flaky", "failing", "broken")[true],
        "shares": {s: counts[s] / total for s in STATES},
        "worse": worse,
        "better": better,
    }


def delay(
    before: float, after: float, wanted: frozenset[str], runs: int, cases: int, rule: Rule, rng: np.random.Generator
) -> dict[str, object]:
    """Nights after the change (night 21) until the state is one of ``wanted``; None: not within 20 nights."""
    waits: list[int | None] = []
    for _ in range(cases):
        passes = rng.binomial(runs, before, 20).tolist() + rng.binomial(runs, after, 20).tolist()
        states = states_of(passes, runs, rule)
        waits.append(next((i - 19 for i in range(20, NIGHTS) if states[i] in wanted), None))
    found = sorted(w for w in waits if w is not None)
    return {
        "from": before,
        "to": after,
        "runs": runs,
        "wanted": sorted(wanted),
        "median": found[len(found) // 2] if found else None,
        "p90": found[int(len(found) * 0.9)] if len(found) >= 10 else None,
        "within_20": len(found) / len(waits),
    }


def false_fix(p: float, runs: int, cases: int, rule: Rule, rng: np.random.Generator) -> float:
    fixed = counted = 0
    for _ in range(cases):
        passes = rng.binomial(runs, p, NIGHTS).tolist()
        for state in states_of(passes, runs, rule)[COUNTED_FROM:]:
            counted += 1
            fixed += state == FIXED
    return fixed / counted


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--runs", type=int, nargs="+", default=[10, 30])
    parser.add_argument("--seed", type=int, default=20261201)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rule = Rule()
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    rows = [constant(p, runs, args.cases, rule, rng) for runs in args.runs for p in RATES]
    changes = []
    for runs in args.runs:
        changes.append(delay(1.0, 0.7, frozenset(BAD), runs, args.cases, rule, rng))
        changes.append(delay(1.0, 0.0, frozenset({BROKEN}), runs, args.cases, rule, rng))
        changes.append(delay(0.7, 1.0, frozenset({FIXED}), runs, args.cases, rule, rng))
    fixes = {runs: false_fix(0.9, runs, args.cases, rule, rng) for runs in args.runs}
    elapsed = time.perf_counter() - started
    result = {
        "machine": {"python": platform.python_version(), "cpus": __import__("os").cpu_count()},
        "rule": rule.to_dict(),
        "cases": args.cases,
        "nights": NIGHTS,
        "constant": rows,
        "changes": changes,
        "false_fixed_p0.9": fixes,
        "seconds": round(elapsed, 1),
    }
    if args.json:
        json.dump(result, sys.stdout, indent=2)
        print()
        return 0
    print(f"since-clean interval rule {rule.to_dict()}; {args.cases} cases per row, nights 15-40 of {NIGHTS}")
    print(f"{'runs':>4} {'p':>5} {'true':>8}  " + " ".join(f"{s:>8}" for s in STATES) + f"  {'worse':>7} {'missed':>7}")
    for row in rows:
        shares = row["shares"]
        assert isinstance(shares, dict)
        print(
            f"{row['runs']:>4} {row['p']:>5} {row['true']:>8}  "
            + " ".join(f"{shares[s]:8.2%}" for s in STATES)
            + f"  {row['worse']:7.2%} {row['better']:7.2%}"
        )
    print()
    for change in changes:
        print(
            f"runs {change['runs']}: p {change['from']} -> {change['to']} on night 21: {'/'.join(change['wanted'])} "  # type: ignore[arg-type]
            f"after {change['median']} night(s) (median), {change['p90']} (90th percentile), "
            f"{change['within_20']:.1%} within 20 nights"
        )
    for runs, share in fixes.items():
        print(f"runs {runs}: a case at p 0.9 called fixed on {share:.2%} of nights")
    print(f"({elapsed:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
