"""Each case's state across nights, as one feature: on with ``--prob-history`` (a session) or ``merge --prob-history``.

==========  ===========================================================================
role        parts
==========  ===========================================================================
aggregating the folder's newest ``prob_history_window`` nights read at configure (before
            the comparisons add tonight's report to it), :class:`~.facet.StatesFacet`
merged      the same over the merged rows, from the merge's ``--prob-history``
==========  ===========================================================================

A shard decides no state (its rows hold part of each case's runs; the
comparisons refuse ``--prob-history`` with ``--prob-shard``): the merge does.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ...maths.states import Rule
from ...roles.wiring import Aggregation, Feature
from .facet import StatesFacet
from .nights import read, today

if TYPE_CHECKING:
    from ...config.settings import Settings, StatsConfig
    from ...roles.merging import MergeWiring


def feature(config: pytest.Config, settings: Settings) -> States:
    """On with ``--prob-history`` outside a shard (the composition root's decision)."""
    return States(Path(config.getoption("prob_history")), settings)


def rule_of(settings: Settings, stats: StatsConfig) -> Rule:
    return Rule(
        window=settings.history_window,
        flaky_bar=settings.flaky_bar,
        broken_runs=settings.broken_runs,
        fixed_nights=settings.fixed_nights,
        method=stats.method,
        confidence=stats.confidence,
        prior=stats.prior,
    )


class States(Feature):
    def __init__(self, folder: Path, settings: Settings) -> None:
        self.folder = folder
        self.settings = settings

    def aggregating(self, wiring: Aggregation) -> None:
        rule = rule_of(self.settings, wiring.stats)
        nights = read(self.folder, rule.window - 1)  # tonight is the window's last night
        wiring.notes.extend(f"--prob-history: {note}" for note in nights.skipped)
        wiring.parts.add(facets=StatesFacet(wiring.results.summary, nights, rule, today(), str(self.folder)))


class MergedStates(Feature):
    """The states feature in the merge (``merge --prob-history DIR``): the states of the merged rows, with
    the rule's default parameters and the shards' interval (their ini keys are not in their reports)."""

    def __init__(self, folder: str | None) -> None:
        self.folder = folder

    def merged(self, wiring: MergeWiring) -> None:
        if not self.folder:
            return
        stats = wiring.stats
        rule = Rule(method=stats.method, confidence=stats.confidence, prior=stats.prior)
        nights = read(Path(self.folder), rule.window - 1)
        wiring.add_facet(StatesFacet(lambda: wiring.summary, nights, rule, today(), self.folder), shown=True)
