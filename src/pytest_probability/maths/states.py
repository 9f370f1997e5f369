"""Each case's state across nights: new, passing, flaky, failing, broken or fixed, decided with intervals.

Pure and standard-library only. A *night* is one session's counts for a case
(passes of its counted runs); a case's nights come oldest first, the last
being tonight's. The rule, **the since-clean interval rule**:

1. The *evidence* is the case's counted runs on the nights since it last
   passed every run on ``fixed_nights`` (M) nights in a row, within the last
   ``window`` (W) nights; tonight included. Its interval ``[L, U]`` is the
   session's interval (method and confidence, Clopper-Pearson 95% by
   default) of the evidence's pass fraction.
2. **broken**: no pass in the last ``broken_runs`` (K) counted runs (whole
   nights, newest first): with 0 passes in 10 runs the 95% exact upper bound
   is 30.8%, so the case passes less than a third of the time.
3. **failing**: ``U < failing_bar`` (0.5): it passes less often than it
   fails, with the interval's confidence.
4. **flaky**: ``U < flaky_bar`` (0.95, the bar of deploy/'s
   ProbabilityCaseNewlyFlaky alert): it fails in at least 5% of its runs,
   with the interval's confidence, not once by chance.
5. **fixed**: none of those, its last M nights passed every run, and it was
   flaky, failing or broken on an earlier night of the window. A case that
   was flaky, failing or broken last night, and is none of them tonight,
   keeps last night's state until it is fixed: a bad state is left only by
   M clean nights in a row.
6. **new**: none of those, and it ran on fewer than M nights of the window.
7. **passing**: otherwise (no failure beyond chance).

The states are one-sided tests of the pass rate against the bars, so a case
whose true pass rate is at or above a bar is put below it with probability at
most ``(1 - confidence) / 2`` on a fixed evidence; the evidence is chosen by
the data (it starts after a clean streak), which ``benchmarks/states_simulation.py``
measures (docs/performance.md, "Case states across nights").

Each night's state is computed from the nights before it (:func:`stories`),
so the night a case *entered* its state (``since``) and the first night it
was flaky are read off the sequence; a night whose report stored its state
(``Night.state``) keeps it, so a window that begins mid-story starts from
what that night decided.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

from . import stats

NEW, PASSING, FIXED, FLAKY, FAILING, BROKEN = "new", "passing", "fixed", "flaky", "failing", "broken"
#: The states, in the order of their metric value (``probability.case.state``: new 0 ... broken 5).
STATES = (NEW, PASSING, FIXED, FLAKY, FAILING, BROKEN)
STATE_VALUES = {state: value for value, state in enumerate(STATES)}
#: The states of a case that fails more than chance explains.
BAD = frozenset({FLAKY, FAILING, BROKEN})


@dataclass(frozen=True)
class Rule:
    """The rule's parameters (ini ``prob_history_window``, ``prob_flaky_bar``, ``prob_broken_runs``,
    ``prob_fixed_nights``) and the interval's method and confidence (the session's)."""

    window: int = 14
    flaky_bar: float = 0.95
    failing_bar: float = 0.5
    broken_runs: int = 10
    fixed_nights: int = 3
    method: str = "exact"
    confidence: float = 0.95
    prior: tuple[float, float] = (1.0, 1.0)

    def __post_init__(self) -> None:
        if self.window < 1 or self.broken_runs < 1 or self.fixed_nights < 1:
            raise ValueError("window, broken_runs and fixed_nights must be at least 1")
        if not 0.0 < self.failing_bar < self.flaky_bar <= 1.0:
            raise ValueError(
                f"the bars must satisfy 0 < failing_bar < flaky_bar <= 1, got {self.failing_bar} and {self.flaky_bar}"
            )

    def to_dict(self) -> dict[str, object]:
        return {
            "rule": "since-clean interval",
            "window": self.window,
            "flaky_bar": self.flaky_bar,
            "failing_bar": self.failing_bar,
            "broken_runs": self.broken_runs,
            "fixed_nights": self.fixed_nights,
            "method": self.method,
            "confidence": self.confidence,
        }


@dataclass(frozen=True)
class Night:
    """One night of a case: its passes of its counted runs, and what that night's report stored."""

    night: str
    passes: int
    total: int
    state: str | None = None
    since: str | None = None
    first_flaky: str | None = None

    @property
    def clean(self) -> bool:
        return self.total > 0 and self.passes == self.total


@dataclass(frozen=True)
class Story:
    """A case's state on one night, and what decided it."""

    night: str
    state: str
    #: The night the case entered this state.
    since: str
    #: The first night it was flaky (within the nights read, or as an earlier report stored it).
    first_flaky: str | None
    #: The state on the night before, None on its first night.
    previous: str | None
    #: Nights of the window on which the case ran (counted runs).
    nights: int
    #: The evidence: passes, counted runs, nights, and the pass fraction's interval.
    passes: int
    total: int
    evidence_nights: int
    low: float | None
    high: float | None
    #: Over the window: runs that did not pass, counted runs, and the fail fraction's interval.
    fails: int
    runs: int
    flake_low: float | None
    flake_high: float | None

    @property
    def changed(self) -> bool:
        """Whether the case entered its state on this night (a first night's state is no change)."""
        return self.previous is not None and self.previous != self.state

    @property
    def flake_rate(self) -> float | None:
        return self.fails / self.runs if self.runs else None


@functools.lru_cache(maxsize=65536)
def _interval(
    method: str, confidence: float, prior: tuple[float, float], passes: int, total: int
) -> tuple[float, float]:
    return stats.interval(method, passes, total, confidence, prior)


def _broken(ran: Sequence[Night], runs: int) -> bool:
    """No pass in the last ``runs`` counted runs (whole nights, newest first)."""
    seen = 0
    for night in reversed(ran):
        if night.passes:
            return False
        seen += night.total
        if seen >= runs:
            return True
    return False


def _evidence(ran: Sequence[Night], streak: int) -> Sequence[Night]:
    """The nights after the last run of ``streak`` clean nights in a row (all of them if none)."""
    clean = 0
    start = 0
    for index, night in enumerate(ran):
        clean = clean + 1 if night.clean else 0
        if clean >= streak:
            start = index + 1
    return ran[start:]


def decide(ran: Sequence[Night], earlier: Sequence[str], rule: Rule) -> tuple[str, Sequence[Night]]:
    """(state, evidence) of the last night of ``ran`` (the window's nights on which the case ran, oldest
    first); ``earlier``: the states of the window's nights before it."""
    evidence = _evidence(ran, rule.fixed_nights)
    passes = sum(n.passes for n in evidence)
    total = sum(n.total for n in evidence)
    high = _interval(rule.method, rule.confidence, rule.prior, passes, total)[1] if total else None
    if _broken(ran, rule.broken_runs):
        return BROKEN, evidence
    if high is not None and high < rule.failing_bar:
        return FAILING, evidence
    if high is not None and high < rule.flaky_bar:
        return FLAKY, evidence
    trailing = 0
    for night in reversed(ran):
        if not night.clean:
            break
        trailing += 1
    if trailing >= rule.fixed_nights and any(state in BAD for state in earlier):
        return FIXED, evidence
    if earlier and earlier[-1] in BAD:
        return earlier[-1], evidence  # a bad state is left only by M clean nights in a row (fixed)
    if len(ran) < rule.fixed_nights:
        return NEW, evidence
    return PASSING, evidence


def stories(nights: Sequence[Night | None], rule: Rule, keep_stored: bool = True) -> list[Story | None]:
    """The case's state on every night of ``nights`` (oldest first; None: the case did not run that
    night, and has no state then). A night that stored its state keeps it (``keep_stored``), except the
    last, which is always decided."""
    out: list[Story | None] = []
    states: list[tuple[int, str]] = []  # (index of the night, state) of the nights the case ran
    first_flaky: str | None = None
    previous: Story | None = None
    for index, night in enumerate(nights):
        if night is None or night.total <= 0 and night.state is None:
            out.append(None)
            continue
        start = max(0, index - rule.window + 1)
        ran = [n for n in nights[start : index + 1] if n is not None and n.total > 0]
        earlier = [state for at, state in states if at >= start]
        last = index == len(nights) - 1
        stored = night.state if keep_stored and not last and night.state in STATE_VALUES else None
        if ran and ran[-1] is night:
            state, evidence = decide(ran, earlier, rule)
        else:  # a night with a stored state and no counted run
            state, evidence = (stored or NEW), []
        if stored is not None:
            state = stored
        if night.first_flaky and first_flaky is None:
            first_flaky = night.first_flaky
        if state == FLAKY and first_flaky is None:
            first_flaky = night.night
        if previous is not None and previous.state == state:
            since = previous.since
        elif stored is not None and night.since:
            since = night.since
        else:
            since = night.night
        passes = sum(n.passes for n in evidence)
        total = sum(n.total for n in evidence)
        low, high = _interval(rule.method, rule.confidence, rule.prior, passes, total) if total else (None, None)
        runs = sum(n.total for n in ran)
        fails = runs - sum(n.passes for n in ran)
        flake_low: float | None = None
        flake_high: float | None = None
        if runs:
            pass_low, pass_high = _interval(rule.method, rule.confidence, rule.prior, runs - fails, runs)
            flake_low, flake_high = 1.0 - pass_high, 1.0 - pass_low
        story = Story(
            night.night,
            state,
            since,
            first_flaky,
            previous.state if previous is not None else None,
            len(ran),
            passes,
            total,
            len(evidence),
            low,
            high,
            fails,
            runs,
            flake_low,
            flake_high,
        )
        out.append(story)
        states.append((index, state))
        previous = story
    return out


def story(nights: Sequence[Night | None], rule: Rule) -> Story | None:
    """Tonight's story (the last night's), None when the case did not run tonight."""
    return stories(nights, rule)[-1] if nights else None
