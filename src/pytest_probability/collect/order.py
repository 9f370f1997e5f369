"""The order and selection of the session's items: gate items after their runs, whatever reordered them.

Around every other plugin's ``pytest_collection_modifyitems``:
:func:`select` (before them: a gate item selected alone brings its runs, so
that ``-k``/``--deselect``/``--lf`` may then deselect them) and
:func:`modified` (after them: runs out of pytest-rerunfailures' reach,
``--prob-transpose``, the features' :class:`~pytest_probability.protocols.ItemsCheck`: a
shard's deselection, A/B axes, ``--prob-plan``, the journal's runs).
At ``pytest_collection_finish`` :func:`finished` puts each gate item after its
last run and the other verdict items last (the no-deadlock argument of
docs/developer-guide.md, "Gates").
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from ..vocabulary import GATE_KIND
from .items import Run, VerdictItem

if TYPE_CHECKING:
    from ..session import Session


def select(items: list[pytest.Item]) -> None:
    """Before any deselection: a gate item selected alone brings its runs."""
    for run in add_gate_runs(items):
        run.ihook.pytest_itemcollected(item=run)


def modified(config: pytest.Config, items: list[pytest.Item], session: Session) -> None:
    """After the ordinary ``pytest_collection_modifyitems`` hooks of other plugins and conftests."""
    if config.pluginmanager.hasplugin("rerunfailures") and _reruns_possible(config, items):
        # A rerun would replace a failed sample with a later one and bias the
        # fraction upwards: every run is sampled exactly once.
        for item in run_items(items):
            item.add_marker(pytest.mark.flaky(reruns=0), append=False)
    if session.settings.transpose:
        transpose(items)
    for check in session.parts.checks:
        check.check_items(config, items)


def finished(items: list[pytest.Item]) -> None:
    """The items are final (every ``pytest_collection_modifyitems``, wrappers such as ``--lf``/``--ff``
    included, has run; an xdist worker sends their ids to the controller after this)."""
    order_gates(items)
    verdict_items_last(items)


def _reruns_possible(config: pytest.Config, items: list[pytest.Item]) -> bool:
    """Whether pytest-rerunfailures could rerun a run: --reruns given, or a flaky marker around."""
    if getattr(config.option, "reruns", 0) or getattr(config.option, "reruns_delay", 0):
        return True
    return any(item.get_closest_marker("flaky") is not None for item in run_items(items))


def run_items(items: list[pytest.Item]) -> Iterator[Run]:
    return (item for item in items if isinstance(item, Run))


def add_gate_runs(items: list[pytest.Item]) -> list[pytest.Item]:
    """A gate item selected without any of its runs (``pytest 'bench_x.py::bench_x::c[gate]'``)
    brings them: they are inserted before it, in run order. Returns the added runs.

    Called on the items collection selected, before ``-k``, ``-m``, ``--deselect``
    and ``--lf`` deselect: deselecting every run of a case leaves its gate alone.
    """
    gates = [item for item in items if isinstance(item, VerdictItem) and item.prob_runs]
    if not gates:
        return []
    present = {id(item) for item in items if isinstance(item, Run)}
    alone = {id(gate): gate for gate in gates if not any(id(run) in present for run in gate.prob_runs)}
    if not alone:
        return []
    added: list[pytest.Item] = []
    result: list[pytest.Item] = []
    for item in items:
        gate = alone.get(id(item))
        if gate is not None and id(gate.prob_runs[0]) not in present:
            runs = gate.prob_runs
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
    last: dict[str, int] = {}
    gates: list[tuple[int, str]] = []
    for index, item in enumerate(items):
        if isinstance(item, Run):
            if item.prob_gated:
                last[item.prob_case.key] = index
        elif isinstance(item, VerdictItem) and item.prob_kind == GATE_KIND:
            gates.append((index, item.prob_key))
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
    positions = [i for i, item in enumerate(items) if isinstance(item, (Run, VerdictItem))]
    last = max((item.prob_run for item in items if isinstance(item, Run)), default=0)
    ordered = sorted(
        (items[i] for i in positions),
        key=lambda item: item.prob_run if isinstance(item, Run) else last + 1,
    )
    for position, item in zip(positions, ordered, strict=False):
        items[position] = item


def verdict_items_last(items: list[Any]) -> None:
    """Move the benchmarks' verdict items (``[baseline]``, ``[compare:ARM]``) after every other item, in place.

    A benchmark's verdict needs every run of the benchmark, so no run may come
    after one of them (the no-deadlock argument of the gate items, extended to
    a benchmark); all of them last is the simplest order that holds whatever
    other plugins reordered.
    """
    last = [item for item in items if isinstance(item, VerdictItem) and item.prob_kind != GATE_KIND]
    if last:
        keep = [item for item in items if not (isinstance(item, VerdictItem) and item.prob_kind != GATE_KIND)]
        items[:] = keep + last
