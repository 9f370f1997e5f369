"""The items a benchmark yields: one :class:`Run` per run of a case, and its verdict items.

A run is a real pytest item (a ``Function``) with fresh function-scoped
fixtures. A verdict item passes or fails with one verdict of its case (the
gate's, or another kind's such as ``baseline``), which it asks of the
session's :class:`~pytest_probability.protocols.Decisions`; the case's
failing runs are reported as xfailed, so the verdict decides the exit status.
"""

from __future__ import annotations

from typing import Any, Protocol, cast

import pytest

from ..compat.pytest import OwnedFunction, set_structured_id, structured_id
from ..errors import GateFailed
from ..model.case import CaseRef
from ..session import get
from ..text import printable, printable_lines
from ..vocabulary import ASYNC_MARKERS, GATE_KIND, verdict_key
from .nodeid import set_nodeid


class BenchmarkNode(Protocol):
    """What a run reads and marks on its benchmark (``collect.benchmark.Benchmark``, whose module is
    imported once the first benchmark is found)."""

    #: An ``async def`` benchmark: its runs may be an async plugin's.
    prob_async: bool
    #: An earlier run found the function callable (not a generator, not an un-awaited coroutine).
    prob_callable: bool

    @property
    def owner(self) -> pytest.Module | pytest.Class:
        """The module or class the benchmark function is defined in."""


class Run(OwnedFunction):
    """One run of a case: a real pytest item with fresh function-scoped fixtures. Its function lives on the
    Benchmark's parent (module or class), not on the Benchmark collector itself (``OwnedFunction``)."""

    #: Whether a gate decides this run's case (its failures are then xfailed); set on gated runs only.
    prob_gated = False
    #: What decides it: "gate", or a verdict kind ("baseline"); set by Benchmark.collect.
    prob_judged_by = GATE_KIND

    def __init__(self, name: str, parent: Any, *, run: int, case: CaseRef, case_id: str = "", **kw: Any) -> None:
        super().__init__(name, parent, **kw)
        self.prob_case = case
        self.prob_run = run
        built = parent.run_id(case_id, run, plain=name == case_id) if structured_id(self) is not None else None
        if built is not None:
            set_structured_id(self, built)
        else:
            set_nodeid(self, f"{parent.nodeid}::{name}")

    @property
    def benchmark(self) -> BenchmarkNode:
        """The benchmark this run belongs to: its parent, as ``Benchmark._run`` makes every run."""
        return cast(BenchmarkNode, self.parent)


class VerdictItem(pytest.Item):
    """One verdict as a test item: a case's gate (``refund[gate]``, a child of its benchmark), or a
    benchmark's comparison with the baseline or A/B arm (``bench_cls[baseline]``,
    ``bench_triage[compare:few_shot]``, beside the benchmark, so that its node id selects it)."""

    #: No Python object. pytest-trio's ``trio_mode`` reads ``item.obj`` of every collected item.
    obj = None

    def get_closest_marker(self, name: str, default: Any = None) -> Any:
        """Never an async plugin's marker (the item copies its case's markers, and inherits its
        module's): it runs no coroutine. pytest-trio would wrap a ``trio``-marked item's ``obj``
        at call time, pytest-asyncio < 1.2 set up a loop for an ``asyncio``-marked one. ``-m``
        reads :meth:`iter_markers`, which keeps them: ``-m trio`` still selects it with its runs."""
        if name in ASYNC_MARKERS:
            return default
        return super().get_closest_marker(name, default)

    def __init__(
        self,
        name: str,
        parent: Any,
        *,
        case: CaseRef | None,
        lineno: int,
        kind: str = GATE_KIND,
        runs: tuple[Any, ...] = (),
        key: str | None = None,
        label: str | None = None,
        **kw: Any,
    ) -> None:
        super().__init__(name, parent, **kw)
        #: The gated case; None for a benchmark's verdict.
        self.prob_case = case
        #: What decides: "gate" (the case's gates), "baseline" or "compare".
        self.prob_kind = kind
        #: The Run items it judges, as collected (selecting the item alone brings them).
        self.prob_runs = runs
        if case is not None:
            key = key if key is not None else verdict_key(case.key, kind)
            label = label if label is not None else f"gate of {case.label}"
        assert key is not None and label is not None, "a benchmark's verdict item needs its key and label"
        #: The decision key (a gate's is its case key; a benchmark verdict's, its node id).
        self.prob_key = key
        #: What its failure names: ``gate of cls::drop``, ``baseline comparison of cls``.
        self.prob_label = label
        self._lineno = lineno
        set_nodeid(self, f"{parent.nodeid}::{name}")

    def runtest(self) -> None:
        decisions = get(self.config).decisions
        if decisions is None:
            raise RuntimeError("verdict items under xdist need the controller's decisions channel")
        verdict = decisions.verdict(self.prob_key)
        if verdict.skipped:
            pytest.skip(printable(f"{self.prob_label}: {verdict.text}"))
        # JUnit XML's <property name="probability_verdict">, passed or failed: CI tools read it.
        self.user_properties.append(("probability_verdict", verdict.text))
        if not verdict.passed:
            raise GateFailed(verdict.text)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, GateFailed):
            return printable_lines(f"{self.prob_label}: {excinfo.value}")
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        parent = self.parent  # a verdict item is always made with one
        where = f"{parent.name}.{self.name}" if self.prob_case is not None and parent is not None else self.name
        return self.path, self._lineno - 1 if self._lineno else None, where
