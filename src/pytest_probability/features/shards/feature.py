"""Shards as one feature: a session that runs shard K of N (``--prob-shard``), in every role.

=============  ==========================================================================
role           parts
=============  ==========================================================================
every          the session's scope divided (it decides nothing: every verdict at the
               merge), :class:`Deselect` (the runs of other shards deselected, before any
               other check) and :class:`Deselected` (a worker's count of them, shipped)
aggregating    the note, :class:`ShardFacet` (what the merge needs in the report:
               the shard, the suite and what identifies the cases it collected
               (:func:`collected_suite`), the features' handovers, the cases) and
               :class:`EmptyShard` (a shard whose runs all fell to others exits 0)
=============  ==========================================================================

The merge itself is :mod:`.merge`, which ``python -m pytest_probability merge`` runs.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

import pytest

from ...collect.items import Run
from ...model.case import CaseRef, shard_of
from ...protocols import COUNT, Facet, Finisher, ItemsCheck, Link, Registry
from ...roles.wiring import Aggregation, Feature, Wiring

if TYPE_CHECKING:
    from ...config.settings import Settings
    from ...model.rows import Summary
    from ...record.intake import Intake

#: An xdist worker's output key: how many runs of other shards it deselected.
DESELECTED = "prob_shard_deselected"


def feature(config: pytest.Config, settings: Settings) -> Shards:
    """With ``--prob-shard`` (the composition root's decision)."""
    assert settings.shard is not None
    return Shards(*settings.shard)


def deferred_text(index: int, count: int) -> str:
    """A shard's verdict items' skip reason: the verdict needs every shard's runs."""
    return (
        f"decided at the merge: this session is shard {index}/{count}, and the verdict is made over every "
        "shard's runs by python -m pytest_probability merge"
    )


class Shards(Feature):
    def __init__(self, index: int, count: int) -> None:
        self.index = index
        self.count = count
        self.deselect = Deselect(index, count)
        self.empty: EmptyShard | None = None

    def every(self, wiring: Wiring) -> None:
        wiring.scope.divide(
            deferred_text(self.index, self.count),
            f"shard-{self.index}-of-{self.count}",
            lambda: self.empty is not None and self.empty.empty,
        )
        wiring.parts.add(checks=self.deselect, links=Deselected(self.deselect))

    def aggregating(self, wiring: Aggregation) -> None:
        wiring.notes.append(
            f"shard {self.index}/{self.count}: its gates, baselines and comparisons are decided at the "
            "merge (python -m pytest_probability merge)"
        )
        self.empty = EmptyShard(self.deselect, wiring.intake, bool(wiring.config.option.collectonly))
        deselect = self.deselect
        wiring.parts.add(
            facets=ShardFacet(
                (self.index, self.count),
                wiring.intake.cases,
                wiring.book.expected,
                wiring.settings.suite,
                wiring.parts,
                lambda: deselect.collected,
            ),
            finishers=self.empty,
        )


def collected_suite(cases: Iterable[CaseRef]) -> dict[str, Any]:
    """What identifies the suite a shard collected, before its deselection: its cases, their runs, and the
    digest of every case's key, runs and marks (``sha256:…``). The shards of one session collect the same
    cases, with the same specs; the merge refuses shards that differ in it (one ran without a file the
    other had)."""
    digest = hashlib.sha256()
    count = runs = 0
    for case in sorted(cases, key=lambda c: c.key):
        marks = [[name, list(value) if isinstance(value, tuple) else value] for name, value in case.marks]
        digest.update(json.dumps([case.key, case.runs, marks], separators=(",", ":"), default=str).encode("utf-8"))
        digest.update(b"\n")
        count += 1
        runs += case.runs
    return {"cases": count, "runs": runs, "digest": "sha256:" + digest.hexdigest()}


class Deselect(ItemsCheck):
    """The runs of other shards deselected (``model.case.shard_of``), before any other check. Every shard
    collects the same items and keeps its verdict items, which defer to the merge; under xdist every worker
    deselects the same runs, so their collections agree."""

    selects = True

    def __init__(self, index: int, count: int) -> None:
        self.index = index
        self.count = count
        #: Runs of other shards deselected (by this process, or the most a worker shipped).
        self.runs = 0
        #: What identifies the cases collected (:func:`collected_suite`), by this process or shipped by a worker;
        #: None before collection (or when every worker died before its end).
        self.collected: dict[str, Any] | None = None

    def check_items(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        kept: list[pytest.Item] = []
        dropped: list[pytest.Item] = []
        self.collected = collected_suite(
            {item.prob_case.key: item.prob_case for item in items if isinstance(item, Run)}.values()
        )
        for item in items:
            if isinstance(item, Run) and shard_of(item.prob_case.key, item.prob_run, self.count) != self.index:
                dropped.append(item)
            else:
                kept.append(item)
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = kept
        self.runs = len(dropped)

    def received(self, runs: int, collected: dict[str, Any] | None) -> None:
        self.runs = max(self.runs, runs)
        if collected is not None:
            self.collected = collected  # every worker collects the same items


class Deselected(Link):
    """An xdist worker's count of runs deselected for other shards and what identifies the cases it collected,
    shipped at its end to the controller: its :class:`EmptyShard` tells an empty shard from one that collected
    nothing, and its :class:`ShardFacet` writes the collected suite into the report."""

    attribute = DESELECTED

    def __init__(self, deselect: Deselect) -> None:
        self.deselect = deselect

    def receive(self, value: Any) -> None:
        self.deselect.received(int(value["runs"]), value.get("collected"))

    def leftover(self) -> Any:
        deselect = self.deselect
        return {"runs": deselect.runs, "collected": deselect.collected} if deselect.collected is not None else None


class EmptyShard(Finisher):
    """A shard whose every run is in other shards (more shards than some case has runs) executed nothing,
    which pytest calls exit status 5 (no tests ran). It is a shard all the same: it exits 0 and writes its
    report, which the merge needs. A shard that collected no run at all (a wrong path) keeps its 5."""

    phase = COUNT

    def __init__(self, deselect: Deselect, intake: Intake, collect_only: bool) -> None:
        self.deselect = deselect
        self.intake = intake
        self.collect_only = collect_only

    @property
    def empty(self) -> bool:
        """Whether this session is a shard that collected runs, all of them other shards'."""
        return not self.collect_only and self.deselect.runs > 0 and not self.intake.records

    def finish(self, session: pytest.Session, summary: Summary) -> None:
        if self.empty and session.exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
            session.exitstatus = pytest.ExitCode.OK


class ShardFacet(Facet):
    """What the merge needs beyond the records, as top-level fields of the report: the shard, the suite and
    the cases it collected, what each feature hands the merge (``Registry.handovers``: the comparisons'
    settings), the runs selected, the cases."""

    def __init__(
        self,
        shard: tuple[int, int],
        cases: Mapping[str, CaseRef],
        selected: Mapping[str, int],
        suite: str,
        parts: Registry,
        collected: Callable[[], dict[str, Any] | None] = lambda: None,
    ) -> None:
        """``cases``: the session's CaseRefs by key; ``selected``: case key -> runs selected in this shard;
        ``collected``: what identifies the cases collected (:func:`collected_suite`), once known."""
        self.shard = shard
        self.cases = cases
        self.selected = selected
        self.suite = suite
        self.parts = parts
        self.collected = collected

    def report_fields(self) -> Mapping[str, Any]:
        index, count = self.shard
        cases = sorted(self.cases.values(), key=lambda c: (c.order, c.key))
        handed: dict[str, Callable[[], Any]] = dict(self.parts.handovers)
        return {
            "shard": {
                "index": index,
                "count": count,
                "suite": self.suite,
                "collected": self.collected(),
                **{name: give() for name, give in handed.items()},
                "runs_selected": {key: n for key, n in self.selected.items() if key in self.cases},
            },
            "cases": [case.to_dict() for case in cases],
        }
