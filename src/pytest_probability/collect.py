"""Collection: benchmark files, benchmarks, cases and runs.

A benchmark file (``bench_*.py``) becomes a :class:`BenchModule`; every
``bench_*`` function defined in it (and every ``bench_*`` method of a
``Bench*`` class) becomes a :class:`Benchmark` collector. The benchmark asks
pytest's own machinery for its cases (``Module._genfunctions``, so ids,
``pytest_generate_tests``, indirect parametrization and fixtures behave
exactly as for ``test_*``) and yields one :class:`Run` item per run of each
case::

    bench_x.py::bench_classify::identify_pii[run3]
    bench_x.py::bench_always::run3
"""

from __future__ import annotations

import fnmatch
import functools
import inspect
import itertools
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

import pytest

from . import options
from .state import STATE_KEY

if TYPE_CHECKING:
    from .analysis import CaseSpec
    from .model.case import CaseRef

# analysis, gating and model are imported by the functions that handle
# benchmarks (Benchmark.collect and what follows it): a session without
# benchmark files never imports them.

#: Plugins that run coroutine functions; with one of them active, coroutine benchmarks are theirs.
ASYNC_PLUGINS = ("asyncio", "anyio", "trio", "twisted")


def matches_pattern(path: Path, pattern: str) -> bool:
    return any(fnmatch.fnmatch(path.name, glob) for glob in pattern.split())


def rewrite_asserts(config: pytest.Config, pattern: str) -> None:
    """Have pytest's assertion rewriting treat benchmark files as it treats test files.

    pytest rewrites a module whose file name matches one of its import hook's
    patterns (``python_files``), or that was named on the command line. A
    benchmark file collected from a folder is neither, so without this its
    failed asserts would show a bare ``AssertionError``. The patterns are
    added to the hook only: ``python_files`` itself is left as the user set it.
    Nothing to do with ``--assert=plain`` (no hook).
    """
    from _pytest.assertion.rewrite import assertstate_key

    hook = getattr(config.stash.get(assertstate_key, None), "hook", None)
    if hook is None:
        return
    hook.fnpats = [*hook.fnpats, *(glob for glob in pattern.split() if glob not in hook.fnpats)]


class BenchModule(pytest.Module):
    """A benchmark file. Its ``test_*`` functions, if any, are collected as usual."""


class BenchClass(pytest.Class):
    """A ``Bench*`` class in a benchmark file; its ``bench_*`` methods are benchmarks."""


def make_module(module_path: Path, parent: pytest.Collector, pattern: str) -> BenchModule | None:
    if module_path.suffix == ".py" and matches_pattern(module_path, pattern):
        return BenchModule.from_parent(parent, path=module_path)
    return None


def collect_file(file_path: Path, parent: pytest.Collector, pattern: str) -> BenchModule | None:
    """Collect a benchmark file that pytest's python plugin would not collect itself.

    When the file is an initial path or matches ``python_files`` pytest's own
    ``pytest_collect_file`` asks ``pytest_pycollect_makemodule``, which returns a
    :class:`BenchModule` (see :func:`make_module`); collecting it here too
    would duplicate it.
    """
    if file_path.suffix != ".py" or not matches_pattern(file_path, pattern):
        return None
    session = parent.session
    if session.isinitpath(file_path):
        return None
    python_files = parent.config.getini("python_files")
    if any(fnmatch.fnmatch(file_path.name, glob) for glob in python_files):
        return None
    module: BenchModule = session.gethookproxy(file_path).pytest_pycollect_makemodule(
        module_path=file_path, parent=parent
    )
    return module


def _defined_here(obj: object, module: object) -> bool:
    return getattr(obj, "__module__", None) == getattr(module, "__name__", None)


def make_item(collector: pytest.Collector, name: str, obj: object) -> pytest.Collector | None:
    """``pytest_pycollect_makeitem`` for benchmark files; ``None`` leaves it to pytest."""
    if not isinstance(collector, (BenchModule, BenchClass)):
        return None
    if getattr(obj, "__test__", True) is False:
        return None
    in_module = isinstance(collector, BenchModule)
    if name.startswith("bench_"):
        function = obj.__func__ if isinstance(obj, staticmethod) else obj
        if not inspect.isfunction(function):
            return None
        if in_module and not _defined_here(function, collector.obj):
            return None
        return Benchmark.from_parent(collector, name=name, obj=function)
    # Nested Bench* classes are collected too, as pytest does for Test* classes.
    if name.startswith("Bench") and inspect.isclass(obj) and (not in_module or _defined_here(obj, collector.obj)):
        return BenchClass.from_parent(collector, name=name, obj=obj)
    return None


@functools.lru_cache(maxsize=4096)
def run_text(run: int) -> str:
    """``run<N>``: one string per run number, shared by the node ids of every case's run N."""
    return f"run{run}"


class Benchmark(pytest.Collector):
    """One ``bench_*`` function: yields the runs of each of its cases."""

    def __init__(self, name: str, parent: pytest.Collector, obj: Any, **kw: Any) -> None:
        super().__init__(name, parent, **kw)
        self.obj = obj
        self._id_parts: Any = False  # not looked at yet (see run_id)

    def run_id(self, case_id: str, run: int) -> Any:
        """The structured node id (pytest >= 9.1) of run ``run`` of case ``case_id``, built from this
        benchmark's: its path and names are shared strings, and no string is built or parsed per run.
        It equals ``NodeId.parse("<benchmark>::<case>[runN]")`` (``::runN`` without a case); None where
        parsing could split that string another way (a ``[`` or ``::`` in the case id, see :func:`_id_parts`)."""
        if self._id_parts is False:
            self._id_parts = _id_parts(self)
        if self._id_parts is None or "[" in case_id or "::" in case_id:
            return None
        cls, path, names = self._id_parts
        if case_id:
            return cls(path=path, names=(*names, case_id), params=run_text(run))
        return cls(path=path, names=(*names, run_text(run)))

    @property
    def benchmark_name(self) -> str:
        names = [self.name[len("bench_") :]]
        node = self.parent
        while isinstance(node, pytest.Class):
            names.insert(0, node.name)
            node = node.parent
        return ".".join(names)

    def collect(self) -> list[pytest.Item]:
        from . import analysis, gating
        from .model.case import CaseRef

        state = self.config.stash[STATE_KEY]
        code = getattr(self.obj, "__code__", None)
        path = self.path.relative_to(self.config.rootpath) if self.path.is_relative_to(self.config.rootpath) else self.path
        # Strings every case of this benchmark shares (one object, not one per case).
        shared = {"benchmark": self.benchmark_name, "path": str(path), "lineno": code.co_firstlineno if code else 0,
                  "function": getattr(self.obj, "__qualname__", self.name)}
        # A module-level function is the same object for every run; a method is looked up
        # on a fresh instance per run (Run._getobj), as pytest does.
        callobj = self.obj if not isinstance(self.parent, pytest.Class) else None
        items: list[pytest.Item] = []
        # The probability marks of this benchmark and its parents (class, module, ...), the same for
        # every case: a case adds its parametrization's and the function's (its Run's own markers).
        inherited = list(self.iter_markers("probability"))
        for callspec, fixtureinfo in self._cases(state):
            self._collect_case(state, callspec, fixtureinfo, shared, callobj, inherited, items)
        return items

    def _cases(self, state: Any) -> Iterator[tuple[Any, Any]]:
        """(callspec or None, fixture info) of each case, from pytest's own parametrization.

        ``Module._genfunctions`` runs ``pytest_generate_tests`` (ids, indirect
        parametrization, fixtures, other plugins' hooks) and yields one template
        ``Function`` per case. A template is only read, never run, so building one
        per case would build every case twice: the first template is enough, and
        the callspecs of the others are the ``Metafunc``'s, which
        :func:`keep_metafunc` kept when the hook ran. Without it (another
        collector called the hook), every template is read, as before.
        """
        state.metafunc = None
        templates = iter(self.parent._genfunctions(self.name, self.obj))  # type: ignore[attr-defined]
        first = next(templates, None)
        if first is None:
            return
        metafunc, state.metafunc = state.metafunc, None
        calls = getattr(metafunc, "_calls", None)
        definition = getattr(metafunc, "definition", None)
        if definition is None or definition.name != self.name or definition.parent is not self.parent or not calls:
            yield getattr(first, "callspec", None), first._fixtureinfo
            for template in templates:
                yield getattr(template, "callspec", None), template._fixtureinfo
            return
        close = getattr(templates, "close", None)  # a generator: the other templates are never built
        if close is not None:
            close()
        fixtureinfo = first._fixtureinfo
        for callspec in calls:
            yield callspec, fixtureinfo

    def _collect_case(self, state: Any, callspec: Any, fixtureinfo: Any, shared: dict[str, Any], callobj: Any,
                      inherited: list[Any], items: list[pytest.Item]) -> None:
        """The runs of one case (and its verdict items) onto ``items``."""
        from . import analysis, gating
        from .model.case import CaseRef

        case_id = callspec.id if callspec is not None else ""
        key = f"{self.nodeid}::{case_id}" if case_id else self.nodeid
        extra: dict[str, Any] = {"keywords": {case_id: True}} if case_id else {}
        if callobj is not None:
            extra["callobj"] = callobj
        first = self._run(case_id, 1, callspec, fixtureinfo, extra)
        try:
            # The parametrization's marks are closer than the function's: what first.iter_markers()
            # gives after them, without walking the parents once per case.
            kwargs = options.marker_kwargs(itertools.chain(
                callspec.marks if callspec else (),
                (mark for mark in first.own_markers if mark.name == "probability"),
                inherited,
            ))
        except options.MarkerError as exc:
            raise self.CollectError(f"{self.nodeid}: {exc}") from None
        count = options.runs_for_case(state.settings, kwargs)
        if (too_many := state.take_runs(count, key)) is not None:
            raise self.CollectError(too_many)
        marks = tuple(sorted((k, v) for k, v in kwargs.items() if k != "runs"))
        try:
            spec = gating.spec_for(marks, count, state.stats, state.specs)  # one per distinct (marks, runs)
        except ValueError as exc:
            raise self.CollectError(f"{self.nodeid}: {exc}") from None
        benchmark = shared["benchmark"]
        case = CaseRef(
            key=key,
            benchmark=benchmark,
            case=case_id,
            order=next(state.case_order),
            runs=count,
            # pytest's own mapping (the runs' callspec holds it): texts are made when read.
            params=callspec.params if callspec else (),
            path=shared["path"],
            lineno=shared["lineno"],
            function=shared["function"],
            marks=marks,
        )
        judged_kinds = [kind for kind, judge in state.case_judges.items() if judge(case)]
        needed = analysis.unreachable(spec, count)
        if needed is not None:
            self.warn(gating.ProbabilityGateWarning(_unreachable_message(case, spec, count, needed)))
        needed = analysis.latency_unreachable(spec, count, state.stats.confidence)
        if needed is not None:
            self.warn(gating.ProbabilityGateWarning(_latency_unreachable_message(case, spec, count, needed,
                                                                                 state.stats.confidence)))
        gated = spec.gated or bool(judged_kinds)
        judged_by = gating.GATE_NAME if spec.gated or not judged_kinds else judged_kinds[0]
        first_index = len(items)
        for index in range(1, count + 1):
            run = first if index == 1 else self._run(case_id, index, callspec, fixtureinfo, extra)
            run.prob_case = case
            if gated:  # the class defaults say: not gated, judged by a gate
                run.prob_gated = True
                run.prob_judged_by = judged_by
            items.append(run)
        if not state.stats.gate_items:
            return
        runs = tuple(items[first_index:])
        kinds = ([gating.GATE_NAME] if spec.gated else []) + judged_kinds
        for kind in kinds:
            item = gating.GateItem.from_parent(self, name=gating.gate_name(case_id, kind), case=case,
                                               lineno=case.lineno, kind=kind, runs=runs)
            item.own_markers.extend(first.own_markers)
            item.keywords.update({mark.name: mark for mark in first.own_markers})
            if case_id:
                item.keywords[case_id] = True
            items.append(item)

    def _run(self, case_id: str, index: int, callspec: Any, fixtureinfo: Any, extra: dict[str, Any]) -> Run:
        return Run.from_parent(
            self,
            name=f"{case_id}[run{index}]" if case_id else run_text(index),
            callspec=callspec,
            fixtureinfo=fixtureinfo,
            originalname=self.name,
            run=index,
            case_id=case_id,
            **extra,
        )


def keep_metafunc(state: Any, metafunc: pytest.Metafunc) -> None:
    """``pytest_generate_tests`` of a benchmark: keep its Metafunc for :meth:`Benchmark._cases`."""
    state.metafunc = metafunc


def _unreachable_message(case: CaseRef, spec: CaseSpec, runs: int, needed: int) -> str:
    gate = spec.gate
    assert gate is not None
    what = f"min_rate={gate.bar:g} at {gate.confidence:g} confidence ({gate.method})"
    if needed == 0:
        return f"gate of {case.label} can never pass: {what} is out of reach at any number of runs"
    return f"gate of {case.label} cannot pass with {runs} runs: {what} needs at least {needed} runs"


def _latency_unreachable_message(case: CaseRef, spec: CaseSpec, runs: int, needed: int,
                                 confidence: float) -> str:
    what = f"p{spec.latency_quantile * 100:g} latency <= {spec.max_latency:g}s at {confidence:g} confidence"
    return (f"gate of {case.label} cannot pass with {runs} runs: {what} has no upper bound "
            f"before {needed} timed runs")


class Run(pytest.Function):
    """One run of a case: a real pytest item with fresh function-scoped fixtures."""

    #: Whether a gate decides this run's case (its failures are then xfailed); set on gated runs only.
    prob_gated = False
    #: What decides it: "gate", or a GateBook kind ("baseline"); set by Benchmark.collect.
    prob_judged_by = "gate"  # gating.GATE_NAME (gating is imported only when benchmarks are collected)

    def __init__(self, name: str, parent: Benchmark, *, run: int, case_id: str = "", case: CaseRef | None = None,
                 **kw: Any) -> None:
        super().__init__(name, parent, **kw)
        #: The case (set by the Benchmark once the first run's markers have given it).
        self.prob_case = case
        self.prob_run = run
        built = parent.run_id(case_id, run) if hasattr(self, "_id") else None
        if built is not None:
            self._id = built
        else:
            _set_nodeid(self, f"{parent.nodeid}::{name}")

    # The benchmark function lives on the Benchmark's parent (module or class),
    # not on the Benchmark collector itself.
    @property
    def instance(self) -> Any:
        try:
            return self._instance
        except AttributeError:
            self._instance = self._getinstance()
            return self._instance

    def _getinstance(self) -> Any:
        owner = self.parent.parent
        if isinstance(owner, pytest.Class):
            return owner.newinstance() if hasattr(owner, "newinstance") else owner.obj()
        return None

    def _getobj(self) -> Any:
        instance = self.instance
        owner = instance if instance is not None else self.parent.parent.obj  # type: ignore[union-attr]
        return getattr(owner, self.originalname)


def _set_nodeid(node: pytest.Item, nodeid: str) -> None:
    """Give an item of a benchmark the node id ``nodeid`` (``<benchmark>::<case>[runN]``).

    pytest >= 9.1 keeps a structured node id (``node._id``) that ``--lf``,
    ``--nf`` and ``--sw`` compare against ids parsed from the cache; it must
    equal what parsing the string form gives, or ``--lf`` silently drops
    the run (a run's is mostly built by :meth:`Benchmark.run_id` instead).
    Older pytest keeps the string in ``node._nodeid``.
    """
    structured = getattr(node, "_id", None)
    if structured is not None:
        node._id = type(structured).parse(nodeid)  # type: ignore[attr-defined]
    else:
        node._nodeid = nodeid  # type: ignore[attr-defined]


def _id_parts(parent: pytest.Collector) -> tuple[Any, str, tuple[str, ...]] | None:
    """(NodeId class, path, names) of a benchmark whose runs' structured ids can be built from
    its own; None where parsing a run's string could split it another way (a ``::`` in the
    path or a name, a ``[`` in a name, a bracket on the benchmark's id)."""
    parent_id = getattr(parent, "_id", None)
    if parent_id is None or parent_id.params is not None or "::" in parent_id.path:
        return None
    if any("::" in name or "[" in name for name in parent_id.names):
        return None
    return type(parent_id), parent_id.path, parent_id.names


def check_callable(item: pytest.Item) -> None:
    """Raise for benchmarks pytest cannot call: generators and un-awaited coroutines."""
    __tracebackhide__ = True
    parent = item.parent
    if getattr(parent, "prob_callable", False):
        return  # an earlier run of this benchmark passed: so do the others (one function)
    function = getattr(item, "obj", None)
    name = getattr(item, "originalname", item.name)
    if inspect.isgeneratorfunction(function) or inspect.isasyncgenfunction(function):
        raise TypeError(
            f"benchmark {name!r} is a generator function; a benchmark must return, "
            "not yield (use a fixture for setup that yields)"
        )
    if inspect.iscoroutinefunction(function) and not any(
        item.config.pluginmanager.hasplugin(name) for name in ASYNC_PLUGINS
    ):
        raise TypeError(
            f"benchmark {name!r} is a coroutine function and no async "
            "plugin ran it; install and enable one (pytest-asyncio, anyio's pytest plugin, ...)"
        )
    if not inspect.iscoroutinefunction(function):
        parent.prob_callable = True  # type: ignore[union-attr]


def run_items(items: list[pytest.Item]) -> Iterator[Run]:
    return (item for item in items if isinstance(item, Run))


def add_gate_runs(items: list[pytest.Item]) -> list[pytest.Item]:
    """A gate item selected without any of its runs (``pytest 'bench_x.py::bench_x::c[gate]'``)
    brings them: they are inserted before it, in run order. Returns the added runs.

    Called on the items collection selected, before ``-k``, ``-m``, ``--deselect``
    and ``--lf`` deselect: deselecting every run of a case leaves its gate alone.
    """
    from . import gating

    gates = [item for item in items if isinstance(item, gating.GateItem) and item.prob_runs]
    if not gates:
        return []
    present = {id(item) for item in items if isinstance(item, Run)}
    alone = {id(gate) for gate in gates if not any(id(run) in present for run in gate.prob_runs)}
    if not alone:
        return []
    added: list[pytest.Item] = []
    result: list[pytest.Item] = []
    for item in items:
        if id(item) in alone and id(item.prob_runs[0]) not in present:  # type: ignore[attr-defined]
            runs = item.prob_runs  # type: ignore[attr-defined]
            result.extend(runs)
            added.extend(runs)
            present.update(id(run) for run in runs)  # a gate item named twice brings them once
        result.append(item)
    items[:] = result
    return added


def order_gates(items: list[pytest.Item]) -> None:
    """Move each gate item after the last of its case's runs, in place; everything else keeps its order.

    A gate item's verdict needs its runs, so it must not run before them,
    whatever order other plugins or conftests gave the items (this is also what
    keeps xdist's gate items from waiting on runs queued behind them).
    """
    from . import gating

    last: dict[str, int] = {}
    gates: list[tuple[int, str]] = []
    for index, item in enumerate(items):
        if isinstance(item, Run):
            if item.prob_gated:
                last[item.prob_case.key] = index
        elif isinstance(item, gating.GateItem):
            gates.append((index, item.prob_case.key))
    early = {index: last[key] for index, key in gates if last.get(key, -1) > index}
    if not early:  # the usual case: every gate item already follows its runs
        return
    pending: dict[int, list[pytest.Item]] = {}
    ordered: list[pytest.Item] = []
    for index, item in enumerate(items):
        if index in early:
            pending.setdefault(early[index], []).append(item)
            continue
        ordered.append(item)
        ordered.extend(pending.pop(index, ()))
    items[:] = ordered


def transpose(items: list[pytest.Item]) -> None:
    """Reorder runs run-major in place (gate items after every run); other items keep their places."""
    from . import gating

    positions = [i for i, item in enumerate(items) if isinstance(item, (Run, gating.GateItem))]
    last = max((item.prob_run for item in items if isinstance(item, Run)), default=0)  # type: ignore[attr-defined]
    ordered = sorted(
        (items[i] for i in positions),
        key=lambda item: item.prob_run if isinstance(item, Run) else last + 1,  # type: ignore[attr-defined]
    )
    for position, item in zip(positions, ordered):
        items[position] = item

