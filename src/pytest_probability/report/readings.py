"""The statistics' plain-language readings (``--prob-explain``).

Pure text from the analysis: :class:`Explainer` reads a row, its gate and latency, a function-level line
and a metric; each reading says what was measured, what the numbers mean, and a next step where there is
one (``Next: …``). The feature's readings (the comparisons', the baseline's) use the same helpers
(:func:`pct`, :func:`points`, :func:`p_sentence`); :class:`~.explain.ExplainFacet` puts every reading in
the outputs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..aggregate.benchmarks import OVERALL, InputsAggregate
from ..maths import stats
from ..vocabulary import FAILED, PASSED, SKIPPED, UNDECIDED
from .statistics import duration

if TYPE_CHECKING:
    from ..config.settings import StatsConfig
    from ..decide.analysis import RowAnalysis

#: The runs beyond which a case's interval is not worth waiting for ("even 10,000 runs might not settle it").
SETTLE_CAP = 10_000
_ERRORED = "errored (raised an exception other than a failed assert)"
_METHODS = {
    "exact": "Clopper-Pearson, which errs on the side of a wider range",
    "wilson": "Wilson's score interval",
    "bayes": "the Beta posterior's equal-tailed credible interval",
}


def pct(value: float) -> str:
    """A bound as a whole percent; ``0%`` and ``100%`` only when exact."""
    whole = int(value * 100 + 0.5)
    if value > 0 and whole == 0:
        whole = 1
    if value < 1 and whole == 100:
        whole = 99
    return f"{whole}%"


def pct1(value: float) -> str:
    """One decimal: ``75.0%``."""
    text = f"{value * 100:.1f}"
    if text == "100.0" and value < 1:
        text = "99.9"
    return f"{text}%"


def points(value: float) -> str:
    """Percentage points with a real minus: ``−40.0``."""
    return f"{value * 100:+.1f}".replace("-", "\u2212").replace("+0.0", "0.0").replace("\u22120.0", "0.0")


def _runs(count: int) -> str:
    return f"{count:,} run" + ("" if count == 1 else "s")


def p_sentence(p: float | None) -> str:
    """What a p-value means, in plain words."""
    if p is None:
        return ""
    if p < 0.001:
        return (
            "p < 0.001: if there were no real difference, a gap this big would turn up by chance less "
            "than 1 time in 1,000."
        )
    if p >= 0.995:
        return "p = 1: a gap like this one is what chance alone gives; it is no evidence of a difference."
    shown = f"{p:.2g}"
    times = max(1, round(p * 100))
    return (
        f"p = {shown}: if there were no real difference, a gap this big would turn up by chance about "
        f"{times} time{'s' if times != 1 else ''} in 100."
    )


class Explainer:
    """Readings of one session's lines."""

    def __init__(self, config: StatsConfig) -> None:
        self.config = config

    # -- a row, its gate, its latency -------------------------------------------------

    def _range(self, low: float, high: float, level: float) -> str:
        return f"The true pass rate is probably between {pct(low)} and {pct(high)} ({level:.0%} confidence)."

    def row(self, result: RowAnalysis, terminal: bool = False) -> str:
        """The row's fraction and interval; ``terminal``: the table's readings add a next step."""
        counts = result.row.counts
        passes, total, fails, errors = counts.passes, counts.total, counts.fails, counts.errors
        if total == 0:
            return (
                "Every run of this case skipped (pytest.skip, or not executed), so nothing was sampled: "
                "it has no pass rate."
            )
        parts = []
        if passes == total:
            parts.append(f"{passes} of {_runs(total)} passed.")
        elif passes == 0 and errors == 0:
            parts.append(f"None of the {_runs(total)} passed.")
        elif passes == 0 and fails == 0:
            parts.append(
                f"All {_runs(total)} {_ERRORED}, which usually means the harness or a service broke, "
                "not that the code answered wrong."
            )
        elif fails and errors:
            parts.append(
                f"{passes} of {_runs(total)} passed; {fails} failed and {errors} {_ERRORED}, so the "
                "outcome changes from run to run."
            )
        elif fails:
            parts.append(
                f"{passes} of {_runs(total)} passed; the others failed, so the outcome changes from run to run."
            )
        else:
            parts.append(
                f"{passes} of {_runs(total)} passed; the others {_ERRORED}, which usually means the "
                "harness or a service broke, not that the code answered wrong."
            )
        if result.interval is not None:
            parts.append(self._range(result.interval.low, result.interval.high, result.interval.level))
        if errors and passes:
            parts.append("Errored runs count as non-passes in that range.")
        if counts.stopped:
            parts.append(
                f"{_runs(counts.stopped)} of it {'was' if counts.stopped == 1 else 'were'} not executed "
                "(a decision or a budget stopped them): the fraction is over the runs that executed."
            )
        text = " ".join(parts)
        if terminal and result.gate is None and passes < total:
            if fails and passes:
                text += (
                    "\nNext: look at the failures above to see what differs between runs. To hold the case to a "
                    "pass rate instead of every run, gate it: @pytest.mark.probability(min_rate=...)."
                )
            elif errors and not fails:
                text += "\nNext: look at the errors above: the exception, not the answer, is what to fix."
            else:
                text += "\nNext: look at the failures above."
        return text

    def gate(self, result: RowAnalysis) -> str:
        """A rate or count gate's verdict, and what would settle an UNDECIDED one."""
        gate = result.gate
        assert gate is not None
        spec = gate.spec
        parts = [f"{gate.passes} of {_runs(gate.total)} passed."]
        errors = result.row.counts.errors
        if gate.excluded:
            parts.append(f"{gate.excluded} more {_ERRORED} and were left out of this gate (prob_errors = exclude).")
        elif errors:
            parts.append(f"{errors} of the runs that didn't pass {_ERRORED}; they count as non-passes.")
        verdict = gate.verdict
        if spec.rule == "count":
            parts.append(
                f"Your bar is {spec.min_passes} passes of the case's runs, and it has {gate.passes}, so this "
                + (
                    "case meets the bar."
                    if verdict == PASSED
                    else "case falls short of the bar."
                    if verdict == FAILED
                    else "the runs not executed could still decide it."
                )
            )
        elif gate.interval is None:
            parts.append("No run counted, so there is no range to compare with the bar.")
        else:
            low, high = gate.interval.low, gate.interval.high
            parts.append(
                f"The true pass rate is probably between {pct(low)} and {pct(high)} ({spec.confidence:.0%} confidence)."
            )
            bar = f"{spec.bar * 100:g}%"
            if gate.sequential:
                parts.append(
                    f"The sequential test (mixture SPRT, --prob-stop=sequential) decided it against your bar of {bar}."
                )
            elif verdict == PASSED:
                parts.append(f"Your bar is {bar}, and that whole range is above it, so this case meets the bar.")
            elif verdict == FAILED:
                parts.append(
                    f"Your bar is {bar}, and that whole range is below it, so this case falls short of the bar."
                )
            elif verdict == UNDECIDED:
                parts.append(
                    f"Your bar is {bar}, and that range has values both above and below it, so there isn't "
                    "enough data yet to tell whether this case meets the bar."
                )
        if verdict == UNDECIDED:
            parts.append(
                "Until that's settled, the case fails the test session (--prob-undecided=pass would let it through)."
                if self.config.undecided == FAILED
                else "Under --prob-undecided=pass it does not fail the test session."
            )
        if verdict == SKIPPED:
            parts.append("Every run skipped: the gate decided nothing, and does not fail the session.")
        text = " ".join(parts)
        if verdict == FAILED:
            text += (
                "\nNext: look at the failing runs: -rx lists them with their assert messages, and --xfail-tb shows "
                "their tracebacks. If a lower pass rate is acceptable for this case, lower the bar."
            )
        elif verdict == UNDECIDED and spec.rule == "rate" and gate.total:
            text += "\nNext: " + self._settle(gate.passes / gate.total, spec, excluded=bool(gate.excluded))
        return text

    def _settle(self, rate: float, spec: Any, excluded: bool) -> str:
        """How many runs at today's rate would take the interval off the bar."""

        def settled(runs: int) -> bool:
            passes = int(rate * runs + 0.5)
            low, high = stats.interval(spec.method, passes, runs, spec.confidence, spec.prior)
            return low >= spec.bar or high < spec.bar

        # Rounding today's rate to whole passes makes "settled" saw-tooth in the runs: bisection finds a run count
        # that settles it, and the first one at or below it is the answer.
        found = stats.smallest_enough(settled, SETTLE_CAP) if 0 < abs(rate - spec.bar) else None
        needed = next((runs for runs in range(1, found + 1) if settled(runs)), found) if found is not None else None
        if needed is None:
            return (
                f"today's rate ({pct1(rate)}) is so close to the bar that even {SETTLE_CAP:,} runs might not settle "
                f"it. Decide whether {spec.bar * 100:g}% is the right bar, and look at the failing runs (-rx) to see "
                "what goes wrong."
            )
        extra = ", not counting errored ones," if excluded else ""
        return f"run more. If it keeps passing at today's rate ({pct1(rate)}), about {needed:,} runs in total{extra} would settle it."

    def latency(self, result: RowAnalysis) -> str:
        lat = result.latency
        assert lat is not None
        name = f"{lat.quantile * 100:g}th percentile"
        if lat.estimate is None:
            return f"No run of this case was timed (errored and skipped runs are not), so its {name} is unknown."
        parts = [
            f"The {name} of this case's run time, the time {lat.quantile * 100:g}% of its runs finish within, was "
            f"{duration(lat.estimate)} over {_runs(lat.total)}."
        ]
        if lat.high is None:
            least = _least_runs(lat.quantile, lat.level)
            low = f"at least {duration(lat.low)}" if lat.low is not None else "unknown"
            parts.append(
                f"The true {name} is probably {low} ({lat.level:.0%} confidence), but {_runs(lat.total)} are too "
                f"few to put an upper limit on it: that takes at least {least} runs."
            )
            text = " ".join(parts)
            return (
                text
                + f"\nNext: run it at least {least} times (runs={least} on the mark, or --prob-runs) to get a full range."
            )
        parts.append(
            f"The true {name} is probably between {duration(lat.low)} and {duration(lat.high)} "
            f"({lat.level:.0%} confidence)."
        )
        if lat.max_latency is not None and lat.verdict is not None:
            limit = duration(lat.max_latency)
            parts.append(
                {
                    PASSED: f"Your limit is {limit}, and the whole range is within it, so the case is fast enough.",
                    FAILED: f"Your limit is {limit}, and the whole range is above it, so the case is too slow.",
                    UNDECIDED: f"Your limit is {limit}, and the range reaches past it, so it is not yet shown to be "
                    "fast enough.",
                }.get(lat.verdict, "")
            )
        return " ".join(part for part in parts if part)

    # -- over inputs ---------------------------------------------------------------------

    def aggregate(self, aggregate: InputsAggregate) -> str:
        est = aggregate.estimate
        who = (
            f"All {est.inputs} inputs in this session"
            if aggregate.scope == OVERALL
            else f"{aggregate.name}'s {est.inputs} input{'s' if est.inputs != 1 else ''}"
        )
        parts = [f"{who} passed {pct1(est.estimate)} of their runs on average, each input counting equally."]
        if est.ci is None:
            if est.stopped:
                parts.append(
                    f"No range is shown: {est.suppressed} (--prob-stop), and a stopped case's fraction leans "
                    "toward its verdict."
                )
                return " ".join(parts)
            parts.append(
                f"No range is shown: with fewer than {aggregate.min_inputs} inputs (prob_min_inputs), a range "
                "worked out from the inputs alone comes out too narrow."
            )
            missing = aggregate.min_inputs - est.inputs
            return " ".join(parts) + (
                f"\nNext: add inputs (more parametrize cases) to reach {aggregate.min_inputs}." if missing > 0 else ""
            )
        low, high = est.ci
        parts.append(
            f"The true average pass rate is probably between {pct1(low)} and {pct1(high)} "
            f"({aggregate.level:.0%} confidence)."
        )
        where = "this session" if aggregate.scope == OVERALL else aggregate.name
        parts.append(
            f"That range treats these {est.inputs} inputs as a random sample of the inputs {where} will meet, "
            "so it allows for other inputs doing better or worse, not only for runs varying. If you picked "
            "the inputs by hand rather than at random, it measures the cases you chose, not inputs in general."
        )
        text = " ".join(parts)
        if est.icc is None or est.runs_change is None or est.inputs_change is None:
            return text
        helpful = est.runs_change <= 0.5 * est.inputs_change  # both negative: runs narrow it at least half as much
        rho = (
            f"\u03c1 = {est.icc:.2f} measures how alike the runs of one input are, from 0 (an input's runs differ as "
            "much as runs of different inputs) to 1 (every run of an input gives the same result). "
        )
        if helpful:
            rho += (
                "Here it is low enough that the outputs vary noticeably from run to run, so more runs of an input "
                "still tell you more about it."
            )
        else:
            rho += (
                "Here it is high enough that each input tends to be consistently right or consistently wrong, so "
                "more runs of an input mostly repeat what you already know about it."
            )
        rho += (
            f" With twice the runs of every input the range would be {_narrower(est.runs_change)}; with twice as "
            f"many inputs (and as many runs each), {_narrower(est.inputs_change)}."
        )
        if aggregate.cost:
            rho += (
                f" Either way the number of runs doubles, so each option would cost about ${aggregate.cost:.4f} "
                "more, assuming new inputs cost as much per run as these did."
            )
        nxt = (
            "Next: to narrow the range, add runs or inputs: both help here, and more runs are often easier, since "
            "they need no new inputs."
            if helpful
            else "Next: to narrow the range, add inputs. More runs of the same inputs would help much less."
        )
        return f"{text}\n{rho}\n{nxt}"

    def metric(self, aggregate: InputsAggregate, name: str) -> str:
        value = aggregate.metrics[name]
        what = (
            f"the chance that {value.k} runs of an input all pass"
            if name.startswith("pass^")
            else f"the chance that at least one of {value.k} runs of an input passes"
        )
        if value.estimate is None:
            return f"{name} is {what}. No input had {value.k} or more runs, so it has no value here."
        parts = [
            f"{name} is {what}. Over the {value.inputs} input{'s' if value.inputs != 1 else ''} with at least "
            f"{value.k} runs, it averages {pct1(value.estimate)}."
        ]
        if value.left_out:
            parts.append(
                f"{value.left_out} input{'s' if value.left_out != 1 else ''} with fewer runs "
                f"{'are' if value.left_out != 1 else 'is'} left out."
            )
        if value.ci is not None:
            parts.append(
                f"The true average is probably between {pct1(value.ci[0])} and {pct1(value.ci[1])} "
                f"({aggregate.level:.0%} confidence)."
            )
        elif value.suppressed:
            parts.append(f"No range is shown: {value.suppressed}.")
        return " ".join(parts)

    # -- the methods --------------------------------------------------------------------------

    def glossary(self, has: Callable[[str], bool], more: Sequence[tuple[int, str, str]] = ()) -> list[tuple[str, str]]:
        """The methods the readings used: the statistics' own, and ``more`` (a feature's, as (place, name, text)),
        in the order of their places."""
        config = self.config
        entries = [
            (
                10,
                "[low, high]",
                "The range the true pass rate probably lies in "
                f"({_METHODS.get(config.method, config.method)}, {config.confidence:.0%} confidence).",
            )
        ]
        if has("inputs"):
            how = {
                "wilson": "a Wilson interval at the inputs' effective number of runs (Korn & Graubard)",
                "percentile": f"a bootstrap over inputs: {config.resamples:,} re-draws, seed {config.seed}",
                "t": "a Student t interval over the inputs",
            }.get(config.inputs_interval, config.inputs_interval)
            entries.append(
                (
                    20,
                    "N inputs \u00d7 k",
                    f"Each input's pass fraction, averaged with each input counting equally; "
                    f"the range is {how}, {config.confidence:.0%} confidence. Shown only with {config.min_inputs} "
                    "or more inputs; with fewer, the range comes out too narrow.",
                )
            )
            entries.append(
                (
                    21,
                    "\u03c1",
                    "One-way analysis of variance on every run's pass or fail, adjusted for inputs with "
                    "different run counts, kept between 0 and 1; the range scales with \u221a((1+(k\u22121)\u03c1)/k) "
                    "for k runs per input.",
                )
            )
        if has("gate"):
            entries.append(
                (
                    30,
                    "Verdict",
                    "PASS: the whole range is above the bar. FAIL: the whole range is below it. "
                    "UNDECIDED: the range crosses the bar, so more runs are needed.",
                )
            )
        if has("latency"):
            entries.append(
                (
                    50,
                    "pNN",
                    "A percentile of the run times; its range comes from the order statistics of the "
                    "timed runs, distribution-free.",
                )
            )
        entries += more
        return [(name, text) for _, name, text in sorted(entries, key=lambda entry: entry[0])]


def _least_runs(quantile: float, level: float) -> int:
    """The fewest timed runs with which a quantile's interval has an upper end."""
    runs = 1
    while stats.quantile_ranks(runs, quantile, level)[1] is None and runs < 100_000:
        runs += 1
    return runs


def _narrower(change: float) -> str:
    """``about 29% narrower``, ``no narrower``, ``less than 1% narrower``."""
    size = abs(change)
    if size < 1e-12:
        return "no narrower"
    whole = int(size * 100 + 0.5)
    return f"about {whole}% narrower" if whole else "less than 1% narrower"
