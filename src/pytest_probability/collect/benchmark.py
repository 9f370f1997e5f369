"""A benchmark: its cases from pytest's own parametrization, the runs of each, and the verdict items.

``Benchmark.collect`` asks pytest for the cases (``_genfunctions``, so ids,
``pytest_generate_tests``, indirect parametrization and fixtures behave
exactly as for ``test_*``) and yields one :class:`~.items.Run` per run of each
case, then the gated case's :class:`~.items.VerdictItem`. A benchmark's own
verdicts (the comparison with the baseline under a margin, an A/B arm's under
``margin=``) get verdict items beside the benchmark, after it
(:meth:`Benchmark.with_verdicts`)::

    bench_x.py::bench_classify::identify_pii[run3]
    bench_x.py::bench_classify::identify_pii[gate]
    bench_x.py::bench_always::run3
    bench_x.py::bench_classify[baseline]
    bench_x.py::bench_triage[compare:few_shot]
"""

from __future__ import annotations

import inspect
import itertools
from collections.abc import Iterator
from typing import Any

import pytest

from ..compat.pytest import case_templates, metafunc_calls
from ..compat.pytest import fixtureinfo as fixtures_of
from ..config.marker import MarkerError, marker_kwargs, runs_for_case
from ..config.spec import CaseSpec, latency_unreachable, unreachable
from ..errors import InfeasibleGateWarning
from ..model.case import CaseRef
from ..session import Session, get
from ..text import printable, printable_lines
from ..vocabulary import benchmark_verdict_name, run_text, verdict_item_name, verdict_key
from . import scratch
from .eligible import one_at_a_time
from .items import Run, VerdictItem
from .nodeid import id_parts


class Benchmark(pytest.Collector):
    """One ``bench_*`` function: yields the runs of each of its cases."""

    def __init__(self, name: str, parent: pytest.Collector, obj: Any, **kw: Any) -> None:
        super().__init__(name, parent, **kw)
        self.obj = obj
        self._id_parts: Any = False  # not looked at yet (see run_id)
        #: What collecting it early (:meth:`with_verdicts`) gave: (items, or the error collecting raised).
        self._early: tuple[list[pytest.Item], BaseException | None] | None = None
        #: An ``async def`` benchmark (maybe under ``@given``): its runs may be an async plugin's.
        inner = getattr(getattr(obj, "hypothesis", None), "inner_test", obj)
        self.prob_async = inspect.iscoroutinefunction(inner)
        #: Whether a run found the function callable: the other runs need not look (``RunPhases.check_callable``).
        self.prob_callable = False
        #: pytest-asyncio's leaf class for its runs: False until asked (:meth:`_run_class`).
        self._asyncio_leaf: Any = False
        #: Whether its runs were found to execute one at a time although asked for more (warned once).
        self._warned_ahead = False

    def run_id(self, case_id: str, run: int, plain: bool = False) -> Any:
        """The structured node id (pytest >= 9.1) of run ``run`` of case ``case_id``, built from this
        benchmark's: its path and names are shared strings, and no string is built or parsed per run.
        It equals ``NodeId.parse("<benchmark>::<case>[runN]")`` (``::runN`` without a case, ``<case>``
        alone for a ``plain`` one-run case); None where parsing could split that string another way
        (a ``[`` or ``::`` in the case id, see :func:`.nodeid.id_parts`)."""
        if self._id_parts is False:
            self._id_parts = id_parts(self)
        if self._id_parts is None or "[" in case_id or "::" in case_id:
            return None
        cls, path, names = self._id_parts
        if plain:
            return cls(path=path, names=(*names, case_id))
        if case_id:
            return cls(path=path, names=(*names, case_id), params=run_text(run))
        return cls(path=path, names=(*names, run_text(run)))

    @property
    def owner(self) -> pytest.Module | pytest.Class:
        """The module or class the benchmark function is defined in: its parent (``benchfiles.make_item``
        makes benchmarks in benchmark files and ``Bench*`` classes only)."""
        parent = self.parent
        assert isinstance(parent, (pytest.Module, pytest.Class)), parent
        return parent

    @property
    def benchmark_name(self) -> str:
        names = [self.name[len("bench_") :]]
        node = self.parent
        while isinstance(node, pytest.Class):
            names.insert(0, node.name)
            node = node.parent
        return ".".join(names)

    def with_verdicts(self) -> list[Any]:
        """What its module (or class) collects for it: itself, then its verdict items (``bench_cls[baseline]``,
        ``bench_triage[compare:ARM]``), which sit beside it so that their node ids select them.

        Naming them needs the benchmark's cases, so a benchmark that a verdict kind
        considers is collected here, as its module is; :meth:`collect` then returns
        those items, or raises what collecting them raised (reported as this
        benchmark's collection error, as without verdicts)."""
        session = get(self.config)
        parts = session.parts
        if not (parts.verdict_kinds or parts.asleep) or not session.stats.gate_items:
            return [self]
        try:
            marks = marker_kwargs(self._inherited_marks())
        except MarkerError:
            return [self]  # collect() reports it
        parts.wake(marks)  # a feature asleep until a benchmark is marked for it (compare=)
        kinds = [kind for kind in session.parts.verdict_kinds if kind.considers(marks)]
        if not kinds:
            return [self]
        try:
            items = self.collect()
        except (KeyboardInterrupt, SystemExit, pytest.exit.Exception):
            raise
        except BaseException as exc:  # a collection error or skip: the benchmark's own report shows it
            self._early = ([], exc)
            return [self]
        self._early = (items, None)
        return [self, *self._verdict_items(kinds, items)]

    def _inherited_marks(self) -> list[pytest.Mark]:
        """The probability marks of the function, then of its parents (class, module, ...), the same for
        every case, which adds its parametrization's before them (what a Run's iter_markers gives)."""
        return [*_function_marks(self.obj), *self.iter_markers("probability")]

    def _verdict_items(self, kinds: list[Any], items: list[pytest.Item]) -> list[VerdictItem]:
        """The benchmark's verdict items of ``kinds`` (the runs they judge are marked by :meth:`collect`)."""
        runs = [item for item in items if isinstance(item, Run)]
        cases = list({id(run.prob_case): run.prob_case for run in runs}.values())
        marks = _all_marks(self.obj)
        made: list[VerdictItem] = []
        for kind in kinds:
            for detail, judged in kind.verdicts(cases):
                name = benchmark_verdict_name(self.name, kind.kind, detail)
                what = kind.kind  # the verdict's line names the benchmark (and the arm)
                item = VerdictItem.from_parent(
                    self.owner,
                    name=name,
                    case=None,
                    lineno=cases[0].lineno if cases else 0,
                    kind=kind.kind,
                    runs=tuple(r for r in runs if r.prob_case.key in judged),
                    key=verdict_key(self.nodeid, kind.kind, detail),
                    label=what,
                )
                item.own_markers.extend(marks)
                item.keywords.update({mark.name: mark for mark in marks})
                item.keywords[self.name] = True
                made.append(item)
        return made

    def collect(self) -> list[pytest.Item]:
        early = self._early
        if early is not None:
            self._early = None
            items, error = early
            if error is not None:
                raise error
            return items
        session = get(self.config)
        code = getattr(self.obj, "__code__", None)
        path = (
            self.path.relative_to(self.config.rootpath) if self.path.is_relative_to(self.config.rootpath) else self.path
        )
        # Strings every case of this benchmark shares (one object, not one per case).
        shared = {
            "benchmark": self.benchmark_name,
            "path": str(path),
            "lineno": code.co_firstlineno if code else 0,
            "function": getattr(self.obj, "__qualname__", self.name),
        }
        # A module-level function is the same object for every run; a method is looked up
        # on a fresh instance per run (Run._getobj), as pytest does.
        callobj = self.obj if not isinstance(self.parent, pytest.Class) else None
        items = []  # typed by `early`'s, above
        inherited = self._inherited_marks()
        collecting = scratch.of(self.config)
        for callspec, fixtureinfo in self._cases(collecting):
            self._collect_case(session, collecting, callspec, fixtureinfo, shared, callobj, inherited, items)
        if session.parts.verdict_kinds:
            self._judge(session, inherited, items)
        return items

    def _judge(self, session: Session, inherited: list[pytest.Mark], items: list[pytest.Item]) -> None:
        """The runs of the cases the benchmark's verdicts judge: their failures are xfailed (the verdict
        decides), with or without verdict items."""
        marks = marker_kwargs(inherited)  # valid: every case's marks were read with them
        kinds = [kind for kind in session.parts.verdict_kinds if kind.considers(marks)]
        if not kinds:
            return
        runs = [item for item in items if isinstance(item, Run)]
        cases = list({id(run.prob_case): run.prob_case for run in runs}.values())
        judged_by: dict[str, str] = {}
        for kind in kinds:
            for detail, judged in kind.verdicts(cases):
                for key in judged:
                    judged_by.setdefault(key, kind.kind)
                why = kind.infeasible(cases, detail, judged)
                if why is not None:
                    self.warn(InfeasibleGateWarning(printable(why)))
        for run in runs:
            by = judged_by.get(run.prob_case.key)
            if by is not None and not run.prob_gated:  # a gate's xfail reason wins
                run.prob_gated = True
                run.prob_judged_by = by

    def _cases(self, collecting: scratch.Scratch) -> Iterator[tuple[Any, Any]]:
        """(callspec or None, fixture info) of each case, from pytest's own parametrization.

        ``Module._genfunctions`` runs ``pytest_generate_tests`` (ids, indirect
        parametrization, fixtures, other plugins' hooks) and yields one template
        ``Function`` per case. A template is only read, never run, so building one
        per case would build every case twice: the first template is enough, and
        the callspecs of the others are the ``Metafunc``'s, which
        ``files.before_generate`` kept when the hook ran. Without it (another
        collector called the hook), every template is read, as before.
        """
        collecting.take_metafunc()
        templates = case_templates(self.owner, self.name, self.obj)
        first = next(templates, None)
        if first is None:
            return
        metafunc = collecting.take_metafunc()
        calls = metafunc_calls(metafunc)
        definition = getattr(metafunc, "definition", None)
        if definition is None or definition.name != self.name or definition.parent is not self.parent or not calls:
            yield getattr(first, "callspec", None), fixtures_of(first)
            for template in templates:
                yield getattr(template, "callspec", None), fixtures_of(template)
            return
        close = getattr(templates, "close", None)  # a generator: the other templates are never built
        if close is not None:
            close()
        shared = fixtures_of(first)
        for callspec in calls:
            yield callspec, shared

    def _collect_case(
        self,
        session: Session,
        collecting: scratch.Scratch,
        callspec: Any,
        fixtureinfo: Any,
        shared: dict[str, Any],
        callobj: Any,
        inherited: list[Any],
        items: list[pytest.Item],
    ) -> None:
        """The runs of one case (and its verdict items) onto ``items``."""
        case_id = callspec.id if callspec is not None else ""
        key = f"{self.nodeid}::{case_id}" if case_id else self.nodeid
        extra: dict[str, Any] = {"keywords": {case_id: True}} if case_id else {}
        if callobj is not None:
            extra["callobj"] = callobj
        try:
            if callspec is not None:
                _per_benchmark_only(callspec.marks)
            # The parametrization's marks are closer than the function's, which are closer than its
            # parents': the marks a run's iter_markers() gives, read before any run exists.
            kwargs = marker_kwargs(itertools.chain(callspec.marks if callspec else (), inherited))
        except MarkerError as exc:
            raise self.CollectError(printable_lines(f"{self.nodeid}: {exc}")) from None
        count = runs_for_case(session.settings, kwargs)
        if (too_many := collecting.take_runs(count, key, session.settings.max_runs)) is not None:
            raise self.CollectError(printable_lines(too_many))
        marks = tuple(sorted((k, v) for k, v in kwargs.items() if k != "runs"))
        if session.parts.asleep:
            session.parts.wake(kwargs)  # a feature asleep until a case is marked for it, before its spec
        try:
            spec = session.specs.for_marks(marks, count)  # one per distinct (marks, runs)
        except ValueError as exc:
            raise self.CollectError(printable_lines(f"{self.nodeid}: {exc}")) from None
        benchmark = shared["benchmark"]
        case = CaseRef(
            key=key,
            benchmark=benchmark,
            case=case_id,
            order=collecting.next_order(),
            runs=count,
            # pytest's own mapping (the runs' callspec holds it): texts are made when read.
            params=callspec.params if callspec else (),
            path=shared["path"],
            lineno=shared["lineno"],
            function=shared["function"],
            marks=marks,
        )
        needed = unreachable(spec, count)
        if needed is not None:
            self.warn(InfeasibleGateWarning(printable(_unreachable_message(case, spec, count, needed))))
        needed = latency_unreachable(spec, count, session.stats.confidence)
        if needed is not None:
            self.warn(
                InfeasibleGateWarning(
                    printable(_latency_unreachable_message(case, spec, count, needed, session.stats.confidence))
                )
            )
        for score in spec.scores:
            why = score.unreachable(count)
            if why is not None:
                self.warn(
                    InfeasibleGateWarning(printable(f"gate of {case.label} cannot pass with {count} runs: {why}"))
                )
        first_index = len(items)
        # One run of a parametrized case keeps the plain id (bench_x.py::bench_one::alpha): CI systems
        # key their test history by it. An unparametrized benchmark's runs are runN.
        plain = count == 1 and bool(case_id)
        cls, mark = self._run_class(case, callspec, fixtureinfo, extra) if self.prob_async else (Run, False)
        first = self._run(case, case_id, 1, callspec, fixtureinfo, extra, plain, cls, mark)
        for index in range(1, count + 1):
            run = (
                first
                if index == 1
                else self._run(case, case_id, index, callspec, fixtureinfo, extra, cls=cls, mark=mark)
            )
            if spec.gated:  # the class defaults say: not gated, judged by a gate
                run.prob_gated = True
            items.append(run)
        if not self._warned_ahead and (warning := one_at_a_time(self.nodeid, session, case.marks, first, self.obj)):
            self._warned_ahead = True
            self.warn(warning)
        if not session.stats.gate_items or not spec.gated:
            return
        item = VerdictItem.from_parent(
            self, name=verdict_item_name(case_id), case=case, lineno=case.lineno, runs=tuple(items[first_index:])
        )
        item.own_markers.extend(first.own_markers)
        item.keywords.update({mark.name: mark for mark in first.own_markers})
        if case_id:
            item.keywords[case_id] = True
        items.append(item)

    def _run(
        self,
        case: CaseRef,
        case_id: str,
        index: int,
        callspec: Any,
        fixtureinfo: Any,
        extra: dict[str, Any],
        plain: bool = False,
        cls: type[Run] = Run,
        mark: bool = False,
    ) -> Run:
        run = cls.from_parent(
            self,
            name=case_id if plain else f"{case_id}[run{index}]" if case_id else run_text(index),
            callspec=callspec,
            fixtureinfo=fixtureinfo,
            originalname=self.name,
            run=index,
            case=case,
            case_id=case_id,
            **extra,
        )
        if mark:
            run.add_marker("asyncio")  # auto mode: what pytest-asyncio does to a test it takes
        return run

    def _run_class(
        self, case: CaseRef, callspec: Any, fixtureinfo: Any, extra: dict[str, Any]
    ) -> tuple[type[Run], bool]:
        """(the class an async case's runs are built from, whether each needs the ``asyncio`` marker).

        A case pytest-asyncio would own, were it a test (its ``asyncio`` marker on the
        parametrization, the function or a parent, or ``asyncio_mode = auto``), gets runs that
        are pytest-asyncio items too (:func:`.asyncplugins.run_class`); any other stays a plain
        ``Run`` (anyio's, pytest-trio's, or no plugin's: then the run is an error that says so)."""
        from .asyncplugins import ASYNCIO, asyncio_auto, asyncio_leaf, run_class  # async benchmarks only

        config = self.config
        if not config.pluginmanager.hasplugin(ASYNCIO):
            return Run, False
        marked = (
            any(mark.name == ASYNCIO for mark in (callspec.marks if callspec is not None else ()))
            or any(mark.name == ASYNCIO for mark in _all_marks(self.obj))
            or self.get_closest_marker(ASYNCIO) is not None
        )
        if not marked and not asyncio_auto(config):
            return Run, False
        if self._asyncio_leaf is False:  # one probe per benchmark: the leaf depends on the function only
            self._asyncio_leaf = asyncio_leaf(
                Run.from_parent(
                    self,
                    name="probe",
                    callspec=callspec,
                    fixtureinfo=fixtureinfo,
                    originalname=self.name,
                    run=1,
                    case=case,
                    **extra,
                )
            )
        if self._asyncio_leaf is None:
            return Run, False
        return run_class(Run, self._asyncio_leaf), not marked


def _unreachable_message(case: CaseRef, spec: CaseSpec, runs: int, needed: int) -> str:
    gate = spec.gate
    assert gate is not None
    what = f"min_rate={gate.bar:g} at {gate.confidence:g} confidence ({gate.method})"
    if needed == 0:
        return f"gate of {case.label} can never pass: {what} is out of reach at any number of runs"
    return f"gate of {case.label} cannot pass with {runs} runs: {what} needs at least {needed} runs"


def _latency_unreachable_message(case: CaseRef, spec: CaseSpec, runs: int, needed: int, confidence: float) -> str:
    what = f"p{spec.latency_quantile * 100:g} latency <= {spec.max_latency:g}s at {confidence:g} confidence"
    return f"gate of {case.label} cannot pass with {runs} runs: {what} has no upper bound before {needed} timed runs"


#: Marker keywords of a benchmark's comparisons, which judge its cases together: the benchmark's
#: mark only (a usage error on a pytest.param mark).
PER_BENCHMARK = ("compare", "baseline", "margin", "equivalence")


def _per_benchmark_only(marks: Any) -> None:
    named = [key for mark in marks if mark.name == "probability" for key in PER_BENCHMARK if key in mark.kwargs]
    if named:
        raise MarkerError(
            f"{', '.join(dict.fromkeys(named))} applies to the whole benchmark: "
            "put it on the benchmark function's mark, not on a pytest.param"
        )


def _all_marks(function: Any) -> list[pytest.Mark]:
    """Every mark the benchmark function was decorated with (a benchmark verdict item carries them,
    so that ``-m`` selects it with the benchmark's runs)."""
    marks = getattr(function, "pytestmark", [])
    if not isinstance(marks, list):
        marks = [marks]
    return [getattr(mark, "mark", mark) for mark in marks]


def _function_marks(function: Any) -> list[pytest.Mark]:
    """The ``probability`` marks a benchmark function was decorated with (its ``pytestmark``), in the
    order pytest keeps them for its items (the decorator nearest the function first)."""
    return [mark for mark in _all_marks(function) if mark.name == "probability"]
