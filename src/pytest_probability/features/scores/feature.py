"""Graded results as one feature: ``record_score()``'s rules on every run, score gates, and their outputs.

==========  ========================================================================
role        parts
==========  ========================================================================
criteria    :func:`.rules.criteria`: each case's score gates, part of its spec (so a
            case with ``min_score`` has a ``[gate]`` item, is judged with its rate and
            latency gates, and may stop early under ``--prob-stop=sequential``)
aggregating :class:`RulesObserver` (each run knows its range: ``record_score``
            checks against it), the scores' facet, :class:`Unscored` (one warning
            for bars no run of a case met with a score)
worker      :class:`RulesObserver`
merged      the scores' facet over every shard's records
==========  ========================================================================
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pytest

from ...errors import ProbabilityGateWarning
from ...protocols import Finisher, RunObserver
from ...roles.wiring import Aggregation, Feature, Wiring, WorkerWiring
from ...text import printable
from . import rules
from .facet import ScoresFacet

if TYPE_CHECKING:
    from ...config.settings import Settings, StatsConfig
    from ...config.spec import CriteriaMaker
    from ...decide.results import Results
    from ...model.case import CaseRef
    from ...model.rows import Summary
    from ...model.run import CurrentRun
    from ...roles.merging import MergeWiring

#: Cases named in the one warning about a bar with no score; the rest are counted.
SHOWN = 5


def feature(config: pytest.Config, settings: Settings) -> Scores:
    return Scores()


class Scores(Feature):
    def __init__(self) -> None:
        self.stats: StatsConfig | None = None
        self._rules: dict[Any, rules.ScoreRules] = {}

    def criteria(self) -> Sequence[CriteriaMaker]:
        return [rules.criteria]

    def rules_of(self, case: CaseRef) -> rules.ScoreRules:
        """A case's score rules, once per distinct marks (cases of a benchmark share theirs)."""
        found = self._rules.get(case.marks)
        if found is None:
            assert self.stats is not None
            found = self._rules[case.marks] = rules.rules_of(dict(case.marks), self.stats)
        return found

    def every(self, wiring: Wiring) -> None:
        self.stats = wiring.stats

    def aggregating(self, wiring: Aggregation) -> None:
        wiring.parts.add(
            observers=RulesObserver(self.rules_of),
            facets=ScoresFacet(wiring.results, wiring.stats, self.rules_of),
            finishers=Unscored(wiring.results),
        )

    def worker(self, wiring: WorkerWiring) -> None:
        wiring.parts.add(observers=RulesObserver(self.rules_of))

    def merged(self, wiring: MergeWiring) -> None:
        self.stats = wiring.stats
        wiring.add_facet(ScoresFacet(wiring.results, wiring.stats, self.rules_of))


class RulesObserver(RunObserver):
    """Each run starts knowing its case's score rules, which ``record_score()`` checks against."""

    def __init__(self, rules_of: Any) -> None:
        self.rules_of = rules_of

    def run_started(self, item: pytest.Item, run: CurrentRun) -> None:
        run.score_rules = self.rules_of(run.case)


class Unscored(Finisher):
    """One ``ProbabilityGateWarning`` naming the cases whose score gate had no score to judge (UNDECIDED, never
    PASS): a ``min_score`` naming a score the case never recorded (a typo, or a grader that did not run)."""

    def __init__(self, results: Results) -> None:
        self.results = results

    def finish(self, session: pytest.Session, summary: Summary) -> None:
        missing: dict[str, list[str]] = {}
        for result in self.results.analysis().rows:
            for judgement in result.judgements:
                if judgement.text.endswith("none recorded: UNDECIDED") and result.row.counts.total:
                    missing.setdefault(judgement.name, []).append(result.row.label)
        for name, labels in missing.items():
            shown = ", ".join(labels[:SHOWN]) + (f" and {len(labels) - SHOWN} more" if len(labels) > SHOWN else "")
            warnings.warn(
                ProbabilityGateWarning(
                    printable(
                        f"min_score names score {name!r}, which {len(labels)} case(s) never recorded: {shown}; their gates "
                        "are UNDECIDED (check the name given to record_score())"
                    )
                ),
                stacklevel=1,
            )
