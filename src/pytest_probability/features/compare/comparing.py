"""Baselines and A/B comparisons in the session: settings, the baseline, the benchmark verdict kinds, settlement.

:class:`SessionComparisons` is the feature: it reads the comparison settings and the
baseline at configure when an option asks for them (a missing or corrupt
baseline is a usage error before any run), checks the items at collection
(:meth:`~SessionComparisons.check_items`: A/B axes, ``--prob-plan``), and settles the
verdicts at the end (:meth:`~SessionComparisons.finish`). Without an option, a case
marked ``compare=`` starts the comparisons when the outputs first ask
(:meth:`~SessionComparisons.current`). Under a margin, a benchmark gets a verdict item
beside it: ``[baseline]`` (:class:`BaselineVerdicts`) and one
``[compare:ARM]`` per A/B arm (:class:`ArmVerdicts`), the
:class:`~pytest_probability.protocols.VerdictKind` objects. The comparisons'
outputs are ``features/compare/facet.py``.

The maths (``maths.twostats``), the comparisons themselves (:mod:`.comparisons`,
:mod:`.pairs`, :mod:`.judging`) and the baseline reader (:mod:`.baseline`) are imported only
once something is compared.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import pytest

from ...collect.nodeid import set_lastfailed
from ...config.settings import StatsConfig
from ...config.spec import Specs
from ...decide.settle import fail_session
from ...model.case import CaseRef
from ...model.rows import Summary
from ...protocols import Finisher, ItemsCheck, VerdictKind
from ...text import printable_line
from ...vocabulary import BASELINE_KIND, COMPARE_KIND

if TYPE_CHECKING:
    from ...decide.results import Results
    from ...model.rows import Row
    from ...model.run import RunRecord
    from .baseline import Baseline
    from .compare_config import CompareConfig
    from .comparisons import Comparisons


@dataclass
class Comparer:
    """The session's comparison settings and baseline, and its comparisons (computed once per summary)."""

    config: CompareConfig
    baseline: Baseline | None
    stats: StatsConfig
    #: ``--prob-plan-report``, read like a baseline (its rows' costs and counts).
    plan_report: Baseline | None = None
    _cache: tuple[Any, Comparisons] | None = field(default=None, repr=False)
    _book_cache: tuple[int, Comparisons] | None = field(default=None, repr=False)

    def compare(self, rows: Sequence[Row]) -> Comparisons:
        stats = self.stats
        return _pairs().compare_all(
            rows,
            self.baseline,
            self.config,
            stats.confidence,
            stats.undecided,
            stats.min_inputs,
            stats.resamples,
            stats.seed,
            stats.range_of,
        )

    def result(self, summary: Summary) -> Comparisons:
        """The comparisons of the session's rows (computed once per summary)."""
        if self._cache is not None and self._cache[0] is summary:
            return self._cache[1]
        result = self.compare(summary.rows)
        self._cache = (summary, result)
        return result

    def from_records(self, records: Mapping[str, Mapping[str, RunRecord]]) -> Comparisons:
        """The comparisons of the records the decision book kept, computed once per number of records."""
        from ...aggregate.cases import row_of  # the aggregating process's: a worker's start-up does not pay for it

        token = sum(len(runs) for runs in records.values())
        if self._book_cache is None or self._book_cache[0] != token:
            rows = [row_of(list(runs.values())) for runs in records.values() if runs]
            rows.sort(key=lambda r: (r.case.order, r.case.key))
            self._book_cache = (token, self.compare(rows))
        return self._book_cache[1]

    def release(self) -> None:
        """Drop the cached comparisons (and the rows they hold) after the session."""
        self._cache = self._book_cache = None


class BaselineVerdicts(VerdictKind):
    """The ``baseline`` verdict kind: a benchmark with a baselined case gets ``bench_x[baseline]`` under
    a margin (``--prob-margin``, or ``margin=`` on a benchmark without ``compare=``)."""

    kind = BASELINE_KIND

    def __init__(self, comparing: SessionComparisons, session: Comparer) -> None:
        self.comparing = comparing
        self.session = session

    def considers(self, marks: Mapping[str, Any]) -> bool:
        return self.session.baseline is not None and (
            self.session.config.margin_given or ("margin" in marks and "compare" not in marks)
        )

    def verdicts(self, cases: Sequence[CaseRef]) -> Sequence[tuple[str, frozenset[str]]]:
        baselined = frozenset(
            case.key
            for case in cases
            if _pairs().is_baselined(self.session.baseline, case.key, case.label, dict(case.params))
        )
        return [("", baselined)] if baselined else []

    def infeasible(self, cases: Sequence[CaseRef], detail: str, judged: frozenset[str]) -> str | None:
        needed = self.session.stats.min_inputs
        if len(judged) >= needed:
            return None
        name = cases[0].benchmark if cases else "?"
        return (
            f"baseline verdict of {name} cannot pass: {len(judged)} of its cases are in the baseline, fewer "
            f"than prob_min_inputs ({needed}), so it is UNDECIDED whatever its runs do (add cases)"
        )

    def decide(self, records: Mapping[str, Mapping[str, RunRecord]], key: str) -> tuple[bool, str]:
        return _pairs().benchmark_verdict(self.session.from_records(records), key)

    def fields(self, records: Mapping[str, Mapping[str, RunRecord]], key: str) -> Mapping[str, Any]:
        return verdict_fields(self.session.from_records(records), key)


class ArmVerdicts(VerdictKind):
    """The ``compare`` verdict kind: each arm of a benchmark whose mark gives ``compare=`` and
    ``margin=`` gets ``bench_x[compare:ARM]``, and every failing run of the benchmark's compared cases
    is xfailed: a margin gates the function, whose arms' verdicts decide. Always on: the marks say."""

    kind = COMPARE_KIND

    def __init__(self, comparing: SessionComparisons) -> None:
        self.comparing = comparing

    def considers(self, marks: Mapping[str, Any]) -> bool:
        return "compare" in marks and "margin" in marks

    def verdicts(self, cases: Sequence[CaseRef]) -> Sequence[tuple[str, frozenset[str]]]:
        if not cases:
            return []
        axis = dict(cases[0].marks)["compare"]
        base, variants = _pairs().arms_of(cases, axis)
        compared = frozenset(case.key for case in cases if axis in dict(case.params))
        return [(arm, compared) for arm in variants if arm != base]

    def infeasible(self, cases: Sequence[CaseRef], detail: str, judged: frozenset[str]) -> str | None:
        axis = dict(cases[0].marks)["compare"]
        base, _ = _pairs().arms_of(cases, axis)

        def inputs(value: str) -> set[tuple[tuple[str, str], ...]]:
            return {
                tuple(p for p in case.params if p[0] != axis) for case in cases if dict(case.params).get(axis) == value
            }

        paired = len(inputs(detail) & inputs(base))
        needed = self.comparing.stats.min_inputs
        if paired >= needed:
            return None
        return (
            f"comparison of {cases[0].benchmark} {detail} cannot pass: {paired} inputs ran in both {detail} "
            f"and {base}, fewer than prob_min_inputs ({needed}), so it is UNDECIDED whatever its runs do "
            "(add inputs)"
        )

    def decide(self, records: Mapping[str, Mapping[str, RunRecord]], key: str) -> tuple[bool, str]:
        session = self.comparing.session or self.comparing.start()
        return _pairs().benchmark_verdict(session.from_records(records), key)

    def fields(self, records: Mapping[str, Mapping[str, RunRecord]], key: str) -> Mapping[str, Any]:
        session = self.comparing.session or self.comparing.start()
        return verdict_fields(session.from_records(records), key)


def _pairs() -> ModuleType:
    """:mod:`.pairs`, the comparisons' rules, and with it their maths (:mod:`.comparisons`, :mod:`.judging`,
    ``maths.twostats``, the measures): imported here, the one place, once something is compared."""
    from . import pairs

    return pairs


def verdict_fields(result: Comparisons, key: str) -> dict[str, Any]:
    """A benchmark verdict's numbers (its verdict item's JUnit properties): difference, interval, margin, decision."""
    comparison = result.find(key)
    if comparison is None:
        return {"decision": "undecided"}
    ci = comparison.ci
    return {
        "difference": comparison.difference,
        "low": ci.low if ci is not None else None,
        "high": ci.high if ci is not None else None,
        "margin": comparison.margin if comparison.judged else None,
        "paired": comparison.paired,
        "decision": comparison.verdict or "undecided",
    }


class SessionComparisons(ItemsCheck, Finisher):
    """The comparisons of one session: an :class:`~pytest_probability.protocols.ItemsCheck` in every
    process, and a :class:`~pytest_probability.protocols.Finisher` in the aggregating one."""

    def __init__(self, config: pytest.Config, specs: Specs) -> None:
        """``specs``: the session's case specs (``--prob-plan`` reads their gates, score gates too)."""
        self.config = config
        self.specs = specs
        self.stats = specs.config
        #: The aggregating process's results (:meth:`aggregate`; None on an xdist worker).
        self.results: Results | None = None
        self.session: Comparer | None = None
        #: Whether --prob-plan planned some selected item (its session then exits 0).
        self.planned = False

    def aggregate(self, results: Results) -> None:
        """In the process that aggregates: the session's results, and the history folder made."""
        self.results = results
        history = self.session.config.history if self.session is not None else None
        if history is not None:
            try:
                Path(history).mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise pytest.UsageError(f"--prob-history: cannot create {history}: {exc.strerror or exc}") from None

    def start(self) -> Comparer:
        """The settings, the baseline read (a usage error if it cannot be), the history folder."""
        from .compare_config import resolve_compare  # only once something is compared

        settings = resolve_compare(self.config)
        loaded = plan_report = None
        if settings.baselines or settings.history is not None or settings.plan_report is not None:
            loaded, plan_report = self._read_baselines(settings)
        self.session = Comparer(settings, loaded, self.stats, plan_report)
        return self.session

    def _read_baselines(self, settings: CompareConfig) -> tuple[Baseline | None, Baseline | None]:
        """The baseline (``--prob-baseline``, ``--prob-history``'s reports) and ``--prob-plan-report``; a usage
        error if one cannot be read."""
        from . import baseline as baseline_mod  # only with one of these options

        loaded = plan_report = None
        if settings.baselines or settings.history is not None:
            base_dir = Path(self.config.invocation_params.dir)
            try:
                paths = baseline_mod.expand(settings.baselines, base_dir) if settings.baselines else []
                named: dict[Path, str] = {}
                if settings.history is not None:
                    history = Path(settings.history)
                    found = [p for p in baseline_mod.history_reports(history, settings.history_depth) if p not in paths]
                    named = dict.fromkeys(found, "--prob-history")
                    paths += found
                loaded = baseline_mod.load(paths, named=named) if paths else None
            except baseline_mod.BaselineError as exc:
                raise pytest.UsageError(str(exc)) from None
        if settings.plan_report is not None:
            try:
                plan_report = baseline_mod.load([Path(settings.plan_report)], "--prob-plan-report")
            except baseline_mod.BaselineError as exc:
                raise pytest.UsageError(str(exc)) from None
        return loaded, plan_report

    @property
    def plan(self) -> bool:
        """Whether this session is ``--prob-plan``'s, which runs nothing."""
        return self.session is not None and self.session.config.plan

    def current(self) -> Comparisons | None:
        """The comparisons of the session's rows; None when nothing is compared (no option of
        comparisons, and no case marked ``compare=``: the A/B of markers alone starts here)."""
        assert self.results is not None, "comparisons are computed in the aggregating process"
        if self.results.deferred:
            return None
        summary = self.results.summary()
        if self.session is None:
            if not any(key == "compare" for row in summary.rows for key, _ in row.case.marks):
                return None
            self.start()
        assert self.session is not None
        return self.session.result(summary)

    def release(self) -> None:
        if self.session is not None:
            self.session.release()

    # -- collection ------------------------------------------------------------------

    def check_items(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        """A/B axes checked; ``--prob-plan`` prints the plan and runs nothing."""
        check_axes(items, self.session)
        if self.session is None or not self.session.config.plan:
            return
        from . import plan  # only with --prob-plan

        lines = plan.plan_lines(items, self.session.config, self.session.baseline, self.specs, self.session.plan_report)
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None and self.results is not None:
            reporter.write_sep("=", "probability: plan")
            for line in lines:
                reporter.write_line(printable_line(line))  # its rows start with the cases' labels
        self.planned = bool(items)  # nothing selected stays exit status 5 (no tests collected)
        config.hook.pytest_deselected(items=list(items))
        items[:] = []

    # -- the end ----------------------------------------------------------------------

    def finish(self, session: pytest.Session, summary: Summary) -> None:
        """A benchmark's failed verdict fails the session, with its item or without (deselected,
        ``--prob-no-gate-items``), and ``--lf`` reruns its cases whole."""
        if self.plan and self.planned and session.exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
            session.exitstatus = pytest.ExitCode.OK  # the plan ran nothing on purpose
            return
        result = self.current()
        if result is None or not result.failed:
            return
        fail_session(session)
        rows = {row.case.key: row for row in summary.rows}
        set_lastfailed(
            session.config, failed=[r.nodeid for key in result.failed_cases if key in rows for r in rows[key].records]
        )


def check_axes(items: list[Any], session: Comparer | None) -> None:
    """An A/B axis that names no parametrize argument is a usage error, before any run: a marker's
    ``compare=`` that its function lacks, or a ``--prob-compare`` that no selected benchmark has (ini
    ``prob_compare`` compares those that have it, and with none nothing, as in 0.3.0)."""
    option_axis = session.config.compare_axis if session is not None else None  # --prob-compare, ini prob_compare
    cases = {item.prob_case.key: item.prob_case for item in items if getattr(item, "prob_case", None) is not None}
    for case in cases.values():
        axis = dict(case.marks).get("compare")
        if axis is not None and axis not in dict(case.params):
            known = ", ".join(k for k, _ in case.params) or "none"
            raise pytest.UsageError(
                f"{case.label}: probability(compare={axis!r}) is not a parametrize argument of it (its arguments: {known})"
            )
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
            raise pytest.UsageError(
                f"{benchmark}: probability(baseline={value!r}) is not a value of {axis!r} (its values: {known})"
            )
    given = session is not None and session.config.axis_given  # --prob-compare; ini prob_compare: no error
    if (
        given
        and option_axis is not None
        and cases
        and not any(option_axis in dict(case.params) for case in cases.values())
    ):
        raise pytest.UsageError(
            f"--prob-compare={option_axis}: no benchmark has a parametrize argument {option_axis!r}"
        )
