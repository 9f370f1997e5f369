"""Baselines and A/B comparisons in the session: configure, verdict items, outputs.

Registered once at configure time (:func:`configure`): the baseline is read
(before collection, so a missing or corrupt file is a usage error before any
run), baselined cases get a ``[baseline]`` verdict item through
``State.case_judges`` and the controller's GateBook, and the comparisons
section, the JSON ``comparisons`` and ``baseline`` keys and the comparison
gauges read the same :class:`~pytest_probability.compare.Comparisons`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

import pytest

from . import options

if TYPE_CHECKING:
    from . import gating
    from .baseline import Baseline
    from .compare import Comparison, CompareConfig, Comparisons
    from .model.case import CaseRef
    from .report_terminal import Line
    from .model.rows import Row

# This module is the wiring of comparisons and is imported in every session;
# compare, twostats and baseline are imported only once something is compared
# (an option below, or a case marked ``compare=``).

#: Command-line options and ini keys (with their defaults) of comparisons: any of
#: them set, and the session compares from its start (every value validated at configure).
_OPTIONS = ("prob_baseline", "prob_history", "prob_margin", "prob_adjust", "prob_compare", "prob_plan",
            "prob_plan_drop", "prob_plan_power")
_INI_DEFAULTS = {"prob_history_depth": "7", "prob_margin": "", "prob_adjust": "holm"}
#: compare.PASSED, compare.FAILED and compare.UNDECIDED.
_MARKUP = {"pass": {"green": True}, "fail": {"red": True}, "undecided": {"yellow": True}}


@dataclass
class CompareSession:
    config: CompareConfig
    baseline: Baseline | None
    confidence: float
    undecided: str
    _cache: tuple[Any, Comparisons] | None = field(default=None, repr=False)

    def judge(self, case: CaseRef) -> bool:
        """At collection: whether the case is compared with the baseline."""
        from . import compare

        return compare.is_baselined(self.baseline, case.key, case.label, dict(case.params))

    def result(self, rows: list[Row], token: Any = None) -> Comparisons:
        from . import compare

        if self._cache is not None and token is not None and self._cache[0] is token:
            return self._cache[1]
        result = compare.compare_all(rows, self.baseline, self.config, self.confidence, self.undecided)
        self._cache = (token, result)
        return result

    def release(self) -> None:
        """Drop the cached comparisons (and the rows they hold) after the session."""
        self._cache = None
        self.__dict__.pop("_book_cache", None)
        self.__dict__.pop("_book_token", None)

    # GateBook decider of the "baseline" kind
    def decide(self, book: gating.GateBook, case_key: str) -> tuple[bool, str]:
        from . import compare, gating

        rows = [gating.row_from_records(list(records.values())) for records in book.records.values() if records]
        rows.sort(key=lambda r: (r.case.order, r.case.key))
        token = sum(len(records) for records in book.records.values())
        cached = self._book_cache if getattr(self, "_book_token", None) == token else None
        if cached is None:
            cached = compare.compare_all(rows, self.baseline, self.config, self.confidence, self.undecided)
            self._book_cache, self._book_token = cached, token
        return compare.case_verdict_text(cached, case_key)


def requested(config: pytest.Config) -> bool:
    """Whether an option or ini key of comparisons is set (a baseline, --prob-compare, --prob-plan, ...)."""
    if any(config.getoption(name) not in (None, False, []) for name in _OPTIONS):
        return True
    return any(str(config.getini(name)).strip() != default for name, default in _INI_DEFAULTS.items())


def configure(config: pytest.Config, state: Any) -> None:
    """Start comparing if an option asks for it; in the aggregating process, register the outputs,
    which compare only once something is compared (:func:`current`)."""
    if requested(config):
        start(config, state)
    if not state.worker:
        state.finishers.append(_settle)
        state.sections.append(lambda st: [] if (result := current(config, st)) is None else section(result))
        state.json_sections["comparisons"] = lambda summary: (
            [] if (result := current(config, state)) is None else [c.to_dict() for c in result.comparisons]
        )
        state.json_sections["baseline"] = lambda summary: (
            None if (result := current(config, state)) is None else result.baseline_dict()
        )
        state.metric_series.append(lambda summary: [] if (result := current(config, state)) is None else series(result, state.cases))


def start(config: pytest.Config, state: Any) -> CompareSession:
    """The session's comparisons: settings, the baseline read (a usage error if it cannot be), verdict kinds."""
    from .compare import BASELINE_KIND

    settings = options.resolve_compare(config)
    loaded = None
    if settings.baselines or settings.history is not None:
        from . import baseline as baseline_mod

        base_dir = Path(config.invocation_params.dir)
        try:
            paths = baseline_mod.expand(settings.baselines, base_dir) if settings.baselines else []
            if settings.history is not None:
                history = Path(settings.history)
                paths += [p for p in baseline_mod.history_reports(history, settings.history_depth) if p not in paths]
            loaded = baseline_mod.load(paths) if paths else None
        except baseline_mod.BaselineError as exc:
            raise pytest.UsageError(str(exc)) from None
    if settings.history is not None and not state.worker:
        try:
            Path(settings.history).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise pytest.UsageError(f"--prob-history: cannot create {settings.history}: {exc.strerror or exc}") from None
    if settings.plan and not state.worker and getattr(config.option, "dist", "no") != "no":
        # --prob-plan runs nothing: no workers to start, and the plan is printed here.
        config.option.dist = "no"
        config.option.numprocesses = 0
        config.option.tx = []
    session = CompareSession(settings, loaded, state.stats.confidence, state.stats.undecided)
    state.compare = session
    if loaded is not None:
        state.case_judges[BASELINE_KIND] = session.judge
        if not state.worker and state.gates is not None:
            state.gates.kinds[BASELINE_KIND] = session
    return session


def current(config: pytest.Config, state: Any) -> Comparisons | None:
    """The session's comparisons of its rows; None when nothing is compared (no option of
    comparisons, and no case marked ``compare=``: the A/B of markers alone starts here)."""
    summary = state.summary()
    session = state.compare
    if session is None:
        if not any(key == "compare" for row in summary.rows for key, _ in row.case.marks):
            return None
        session = start(config, state)
    return session.result(summary.rows, summary)


def install_history(state: Any) -> None:
    """Register the writing of the session's report into --prob-history (after the JSON report)."""
    session = state.compare
    if session is not None and session.config.history is not None and not state.worker:
        state.finishers.append(_write_history)


def _settle(session: pytest.Session, state: Any, summary: Any, exitstatus: int) -> None:
    if state.compare is not None and state.compare.config.plan and session.exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
        session.exitstatus = pytest.ExitCode.OK  # the plan ran nothing on purpose
        return
    result = current(session.config, state)
    if result is None:
        return
    failed = result.failed_cases
    if not failed:
        return
    if not state.stats.gate_items and session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    from . import gating

    rows = {row.case.key: row for row in summary.rows}
    gating.mark_lastfailed(session.config, [r.nodeid for key in failed if key in rows for r in rows[key].records])


def _write_history(session: pytest.Session, state: Any, summary: Any, exitstatus: int) -> None:
    """Add the session's report to --prob-history: only a session that ran and finished normally."""
    if state.compare.config.plan or not summary.rows or int(session.exitstatus) not in (0, 1):
        return
    from . import baseline as baseline_mod
    from . import files, report_json

    folder = Path(state.compare.config.history)
    report = report_json.build(
        summary,
        settings=state.settings.to_dict(),
        exit_status=int(session.exitstatus),
        row_fields=state.json_row_fields,
        extra={key: build(summary) for key, build in state.json_sections.items()},
    )
    folder.mkdir(parents=True, exist_ok=True)
    files.write_atomic(folder / baseline_mod.history_name(), json.dumps(report, indent=2, ensure_ascii=False) + "\n")


# -- the terminal section ------------------------------------------------------------


def section(result: Comparisons) -> list[Line]:
    if not result.comparisons and result.baseline is None:
        return []
    from .compare import BASELINE_KIND

    lines: list[Line] = []
    baselined = [c for c in result.comparisons if c.kind == BASELINE_KIND]
    if result.baseline is not None:
        counts = {v: sum(1 for p in result.cases.values() if p.verdict == v) for v in _MARKUP}
        reports = len(result.baseline.paths)
        head = (
            f"  Baseline: {len(result.cases)} cases compared with {reports} report{'s' if reports != 1 else ''}: "
            f"{counts['pass']} passed, {counts['fail']} failed, {counts['undecided']} undecided"
        )
        if counts["undecided"]:
            head += f" (undecided counts as {result.undecided})"
        lines += [("", {}), (head, {"bold": True})]
        lines.append((f"    {result.config.adjust} adjustment over each family; margin {result.config.margin * 100:g} points unless a marker says; differences in points", {}))
        lines += _table(baselined, with_inputs=True)
        for title, labels in (("new (not compared)", result.new), ("removed", result.removed), ("changed parameters (not compared)", result.changed)):
            if labels:
                shown = ", ".join(labels[:10]) + (f", … ({len(labels) - 10} more)" if len(labels) > 10 else "")
                lines.append((f"    {title}: {shown}", {}))
    arms = [c for c in result.comparisons if c.kind != BASELINE_KIND]
    if arms:
        lines += [("", {}), ("  Comparisons (A/B): arm minus baseline variant, in points", {"bold": True})]
        lines += _table(arms, with_inputs=len({p.key for c in arms for p in c.pairs}) <= 20)
    return lines


def _table(comparisons: list[Comparison], with_inputs: bool) -> list[Line]:
    from . import compare
    from .compare import BASELINE_KIND

    cells: list[tuple[list[str], str, dict[str, Any]]] = []
    for c in comparisons:
        name = c.function if c.kind == BASELINE_KIND else f"{c.function} [{c.axis}] {c.arm} vs {c.baseline}"
        cost = "" if c.cost_ratio is None else f"cost ×{c.cost_ratio:.2f}"
        npairs = sum(1 for p in c.pairs if p.n1 and p.n2)
        extra = f"{npairs} {'cases' if c.kind == BASELINE_KIND else 'inputs'}"
        if c.unpaired:
            extra += f", {len(c.unpaired)} unpaired"
        verdict = c.verdict.upper() if c.verdict else ""
        cells.append(([name, extra, compare.points(c.difference), compare.interval_text(c.ci), f"p_adj {compare.p_text(c.p_adjusted)}", cost], verdict, _MARKUP.get(c.verdict or "", {"bold": True})))
        if with_inputs:
            for p in c.pairs:
                frac = f"{p.x1}/{p.n1} vs {p.x2}/{p.n2}"
                verdict = p.verdict.upper() if p.verdict else ""
                cells.append((["  " + p.label, frac, compare.points(p.difference), compare.interval_text(p.ci), f"p_adj {compare.p_text(p.p_adjusted)}", p.note], verdict, _MARKUP.get(p.verdict or "", {})))
    if not cells:
        return []
    widths = [max(len(cell[0][i]) for cell in cells) for i in range(6)]
    lines: list[Line] = []
    for parts, verdict, markup in cells:
        text = "    " + "  ".join(
            [parts[0].ljust(widths[0]), parts[1].rjust(widths[1]), parts[2].rjust(widths[2]), parts[3].ljust(widths[3]), parts[4].ljust(widths[4]), parts[5].ljust(widths[5]), verdict]
        )
        lines.append((text.rstrip(), markup))
    return lines


# -- metrics -----------------------------------------------------------------------


def series(result: Comparisons, cases: Mapping[str, Any]) -> list[Any]:
    """Gauges per baselined case: baseline fraction, difference and its bounds, adjusted p, verdict.

    ``cases`` maps case keys to tonight's CaseRefs, which name each series as every per-case
    series is named (``otel.metrics.case_attributes``)."""
    if not result.cases:
        return []
    from .compare import VERDICT_VALUES
    from .otel.metrics import Series, case_attributes

    fraction = Series("probability.case.baseline.pass_fraction", "gauge", "1", "The case's pass fraction in the baseline reports, pooled")
    difference = Series("probability.case.baseline.difference", "gauge", "1", "Tonight's pass fraction minus the baseline's")
    lower = Series("probability.case.baseline.difference.lower", "gauge", "1", "Lower bound of the difference's interval (at the adjusted level)")
    upper = Series("probability.case.baseline.difference.upper", "gauge", "1", "Upper bound of the difference's interval (at the adjusted level)")
    p_adjusted = Series("probability.case.baseline.p_adjusted", "gauge", "1", "Adjusted p-value of the comparison with the baseline")
    verdict = Series("probability.case.baseline.verdict", "gauge", "", "Baseline verdict: 1 pass, 0 undecided, -1 fail (a drop)")
    for key, pair in result.cases.items():
        attributes = case_attributes(cases[key])
        if pair.n2:
            fraction.points.append((attributes, pair.x2 / pair.n2))
        if pair.difference is not None:
            difference.points.append((attributes, pair.difference))
        if pair.ci is not None:
            lower.points.append((attributes, pair.ci.low))
            upper.points.append((attributes, pair.ci.high))
        if pair.p_adjusted is not None:
            p_adjusted.points.append((attributes, pair.p_adjusted))
        if pair.verdict is not None:
            verdict.points.append((attributes, VERDICT_VALUES[pair.verdict]))
    return [fraction, difference, lower, upper, p_adjusted, verdict]


# -- plan and start-of-session warnings -------------------------------------------------


def plan_lines(items: list[Any], state: Any) -> list[str]:
    """What ``--prob-plan`` prints: runs each gated, baselined or compared case needs."""
    from . import analysis, gating
    from .maths import stats, twostats
    from .compare import BASELINE_KIND

    session: CompareSession = state.compare
    config = session.config
    alpha = 1.0 - state.stats.confidence
    cases: dict[str, CaseRef] = {}
    kinds: dict[str, set[str]] = {}
    for item in items:
        case = getattr(item, "prob_case", None)
        if case is None:
            continue
        cases.setdefault(case.key, case)
        if isinstance(item, gating.GateItem):
            kinds.setdefault(case.key, set()).add(item.prob_kind)
    baselined = [k for k in cases if BASELINE_KIND in kinds.get(k, set())]
    family = max(1, len(baselined))
    tail = alpha / 2.0 / (family if config.adjust != "none" else 1)
    lines = [
        f"Plan (--prob-plan, nothing runs): power {config.plan_power:g}, one-sided level {alpha / 2:g}"
        + (f" / {family} cases ({config.adjust})" if family > 1 and config.adjust != "none" else ""),
    ]
    for key, case in cases.items():
        marks = dict(case.marks)
        parts = []
        try:
            spec = analysis.case_spec(marks, case.runs, state.stats)
        except ValueError:
            spec = None
        if spec is not None and spec.gate is not None and spec.gate.rule == "rate":
            needed = stats.runs_needed(spec.gate.bar, spec.gate.confidence, spec.gate.method, spec.gate.prior)
            parts.append(f"gate >= {spec.gate.bar:g}: an always-passing case needs {needed if needed else 'more than 100000'} runs")
        if key in baselined and session.baseline is not None:
            base = session.baseline.find(case.key, case.label)
            if base is not None and base.total:
                rate = base.passes / base.total
                drop = marks.get("margin", config.margin) or config.plan_drop
                factor = base.total / case.runs
                needed = twostats.runs_to_detect(rate, drop, factor, tail, config.plan_power)
                parts.append(
                    f"baseline {base.passes}/{base.total} ({rate:.0%}): detecting a drop of {drop * 100:g} points needs "
                    f"{needed if needed else 'no number of'} runs"
                )
        axis = marks.get("compare") or (config.compare_axis if config.compare_axis in dict(case.params) else None)
        if axis is not None:
            drop = marks.get("margin", config.margin) or config.plan_drop
            needed = twostats.runs_to_detect(0.9, drop, 1.0, alpha / 2.0, config.plan_power)
            parts.append(f"A/B on {axis}: a {drop * 100:g}-point drop from 90% needs {needed} runs per arm and input")
        if parts:
            lines.append(f"  {case.label} ({case.runs} runs): " + "; ".join(parts))
    if len(lines) == 1:
        lines.append("  no gated, baselined or compared case")
    return lines


def check_axes(items: list[Any], state: Any) -> None:
    """An A/B axis that names no parametrize argument is a usage error, before any run."""
    session: CompareSession | None = state.compare
    option_axis = session.config.compare_axis if session is not None else None  # --prob-compare
    cases = {item.prob_case.key: item.prob_case for item in items if getattr(item, "prob_case", None) is not None}
    for case in cases.values():
        axis = dict(case.marks).get("compare")
        if axis is not None and axis not in dict(case.params):
            known = ", ".join(k for k, _ in case.params) or "none"
            raise pytest.UsageError(f"{case.label}: probability(compare={axis!r}) is not a parametrize argument of it (its arguments: {known})")
    variants: dict[tuple[str, str], set[str]] = {}
    wanted: dict[tuple[str, str], str] = {}
    for case in cases.values():
        marks = dict(case.marks)
        axis = marks.get("compare") or (option_axis if option_axis in dict(case.params) else None)
        if axis is None:
            continue
        variants.setdefault((case.benchmark, axis), set()).add(dict(case.params)[axis])
        if "baseline" in marks:
            wanted[(case.benchmark, axis)] = marks["baseline"]
    for (benchmark, axis), value in wanted.items():
        if value not in variants[(benchmark, axis)]:
            known = ", ".join(sorted(variants[(benchmark, axis)]))
            raise pytest.UsageError(f"{benchmark}: probability(baseline={value!r}) is not a value of {axis!r} (its values: {known})")
    axis = option_axis
    if axis is not None and cases and not any(axis in dict(case.params) for case in cases.values()):
        raise pytest.UsageError(f"--prob-compare={axis}: no benchmark has a parametrize argument {axis!r}")


def check_detectable(items: list[Any], state: Any) -> None:
    """Warn at start when a baselined case's runs cannot detect its margin."""
    session: CompareSession | None = state.compare
    if session is None or session.baseline is None:
        return
    from . import gating
    from .maths import twostats
    from .compare import BASELINE_KIND

    baselined = [item for item in items if isinstance(item, gating.GateItem) and item.prob_kind == BASELINE_KIND]
    if not baselined:
        return
    alpha = 1.0 - state.stats.confidence
    tail = alpha / 2.0 / (len(baselined) if session.config.adjust != "none" else 1)
    for item in baselined:
        case = item.prob_case
        margin = dict(case.marks).get("margin", session.config.margin)
        base = session.baseline.find(case.key, case.label)
        if not margin or base is None or not base.total:
            continue
        needed = twostats.runs_to_detect(base.passes / base.total, margin, base.total / case.runs, tail, 0.8)
        if needed is None or needed > case.runs:
            item.warn(
                gating.ProbabilityGateWarning(
                    f"baseline comparison of {case.label} cannot detect a drop of {margin * 100:g} points with "
                    f"{case.runs} runs (80% power): it needs {needed or 'more than 100000'} runs"
                )
            )
