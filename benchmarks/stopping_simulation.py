"""Simulated cases: what fixed-n, curtail and sequential stopping cost and how often they are wrong.

Cases have true pass rates spread evenly over (0, 1) and are gated at 0.5,
0.8 and 0.9 (``min_rate``, exact intervals at 0.95 unless told otherwise).
Every case draws one sequence of runs; the three policies see the same
sequence. Each policy's decisions are the plugin's own functions
(``analysis.early_verdict`` to stop, ``analysis.evaluate_gate`` for the
verdict, with the runs not executed), so this measures the shipped code.

A verdict is *wrong* when it is PASS for a true rate below the bar, or FAIL
for a true rate above it. UNDECIDED is not wrong (it counts as fail in the
session unless ``--prob-undecided=pass``).

    .venv/bin/python benchmarks/stopping_simulation.py                 # 100 rates x 3 bars x 40 cases, 60 runs
    .venv/bin/python benchmarks/stopping_simulation.py --runs 100 --reps 20 --json

Goals (issue 11): sequential saves at least 40% of the runs with wrong
verdicts at or below 1 - confidence; curtail never changes a verdict.
"""

from __future__ import annotations

import argparse
import functools
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from pytest_probability.config.spec import CaseSpec, GateSpec  # noqa: E402
from pytest_probability.decide import gates as analysis  # noqa: E402
from pytest_probability.vocabulary import FAILED, PASSED, UNDECIDED  # noqa: E402

POLICIES = ("fixed-n", "curtail", "sequential")
BARS = (0.5, 0.8, 0.9)


def spec(bar: float, stop: str | None, confidence: float, method: str) -> GateSpec:
    return GateSpec("rate", bar, None, confidence, method, (1.0, 1.0), "count", stop)


def simulate(runs: int, reps: int, rates: int, confidence: float, method: str, seed: int) -> dict:
    rng = random.Random(seed)
    specs = {
        (bar, stop): spec(bar, stop, confidence, method) for bar in BARS for stop in (None, "curtail", "sequential")
    }

    @functools.cache
    def early(bar: float, stop: str, passes: int, total: int) -> str | None:
        return analysis.early_verdict(CaseSpec(specs[(bar, stop)], 0.95, None), passes, total - passes, 0, runs - total)

    @functools.cache
    def final(bar: float, stop: str | None, passes: int, total: int) -> str:
        return analysis.evaluate_gate(specs[(bar, stop)], passes, total - passes, 0, runs - total).verdict

    results = {p: {"runs": 0, "wrong": 0, "undecided": 0, "cases": 0, "changed": 0} for p in POLICIES}
    by_bar = {bar: {p: {"runs": 0, "wrong": 0, "cases": 0} for p in POLICIES} for bar in BARS}
    worst = {p: 0.0 for p in POLICIES}
    for index in range(rates):
        rate = (index + 0.5) / rates
        for bar in BARS:
            wrong_here = {p: 0 for p in POLICIES}
            for _ in range(reps):
                outcomes = [rng.random() < rate for _ in range(runs)]
                fixed_verdict = final(bar, None, sum(outcomes), runs)
                for policy in POLICIES:
                    executed = runs
                    if policy != "fixed-n":
                        passes = 0
                        for total, passed in enumerate(outcomes, start=1):
                            passes += passed
                            if total < runs and early(bar, policy, passes, total) is not None:
                                executed = total
                                break
                    passes = sum(outcomes[:executed])
                    verdict = fixed_verdict if policy == "fixed-n" else final(bar, policy, passes, executed)
                    wrong = (verdict == PASSED and rate < bar) or (verdict == FAILED and rate > bar)
                    entry = results[policy]
                    entry["runs"] += executed
                    entry["cases"] += 1
                    entry["wrong"] += wrong
                    entry["undecided"] += verdict == UNDECIDED
                    entry["changed"] += verdict != fixed_verdict
                    by_bar[bar][policy]["runs"] += executed
                    by_bar[bar][policy]["cases"] += 1
                    by_bar[bar][policy]["wrong"] += wrong
                    wrong_here[policy] += wrong
            for policy in POLICIES:
                worst[policy] = max(worst[policy], wrong_here[policy] / reps)
    fixed_runs = results["fixed-n"]["runs"]
    summary = {}
    for policy, entry in results.items():
        summary[policy] = {
            "cases": entry["cases"],
            "runs_executed": entry["runs"],
            "runs_saved_share": 1 - entry["runs"] / fixed_runs,
            "wrong_share": entry["wrong"] / entry["cases"],
            "undecided_share": entry["undecided"] / entry["cases"],
            "verdicts_changed_vs_fixed": entry["changed"],
            "worst_wrong_share_at_one_rate": worst[policy],
            "by_bar": {
                str(bar): {
                    "runs_saved_share": 1 - by_bar[bar][policy]["runs"] / by_bar[bar]["fixed-n"]["runs"],
                    "wrong_share": by_bar[bar][policy]["wrong"] / by_bar[bar][policy]["cases"],
                }
                for bar in BARS
            },
        }
    return summary


def table(summary: dict, confidence: float) -> str:
    lines = [
        "| policy | runs executed | runs saved | wrong verdicts | undecided | verdicts changed vs fixed-n | worst wrong share at one rate |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for policy, row in summary.items():
        lines.append(
            f"| {policy} | {row['runs_executed']:,} | {row['runs_saved_share']:.1%} | {row['wrong_share']:.2%} | "
            f"{row['undecided_share']:.1%} | {row['verdicts_changed_vs_fixed']} | {row['worst_wrong_share_at_one_rate']:.1%} |"
        )
    lines.append("")
    lines.append("| policy | " + " | ".join(f"bar {bar}: saved / wrong" for bar in BARS) + " |")
    lines.append("|---|" + "---:|" * len(BARS))
    for policy, row in summary.items():
        cells = [
            f"{row['by_bar'][str(bar)]['runs_saved_share']:.1%} / {row['by_bar'][str(bar)]['wrong_share']:.2%}"
            for bar in BARS
        ]
        lines.append(f"| {policy} | " + " | ".join(cells) + " |")
    goal_saved = summary["sequential"]["runs_saved_share"] >= 0.40
    goal_wrong = summary["sequential"]["wrong_share"] <= 1 - confidence
    goal_curtail = summary["curtail"]["verdicts_changed_vs_fixed"] == 0
    lines.append("")
    lines.append(
        f"goals: sequential saves >= 40%: {'met' if goal_saved else 'NOT met'}; "
        f"sequential wrong <= {1 - confidence:.0%}: {'met' if goal_wrong else 'NOT met'}; "
        f"curtail never changes a verdict: {'met' if goal_curtail else 'NOT met'}"
    )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=60, help="runs per case (default 60)")
    parser.add_argument("--reps", type=int, default=40, help="cases per rate and bar (default 40)")
    parser.add_argument("--rates", type=int, default=100, help="true rates, evenly spread over (0, 1) (default 100)")
    parser.add_argument("--confidence", type=float, default=0.95)
    parser.add_argument("--method", default="exact")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    started = time.perf_counter()
    summary = simulate(args.runs, args.reps, args.rates, args.confidence, args.method, args.seed)
    elapsed = time.perf_counter() - started
    if args.json:
        print(json.dumps({"arguments": vars(args), "seconds": elapsed, "policies": summary}, indent=2))
        return
    print(
        f"{args.rates} rates x {len(BARS)} bars x {args.reps} cases, {args.runs} runs each, "
        f"{args.method} intervals at {args.confidence:g}, seed {args.seed} ({elapsed:.1f} s)\n"
    )
    print(table(summary, args.confidence))


if __name__ == "__main__":
    main()
