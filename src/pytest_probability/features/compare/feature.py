"""Comparisons as one feature: baselines, the history folder and A/B arms, in every role.

==========  ===========================================================================
role        parts
==========  ===========================================================================
prepare     ``--prob-plan`` with ``-n``: xdist starts no worker (the plan runs nothing)
every       :class:`~.comparing.SessionComparisons` (an items check: A/B axes, ``--prob-plan``),
            started at configure when an option asks (the baseline read now); the
            ``compare`` verdict kind (always: the marks say), and the ``baseline`` one
            under a baseline
aggregating the comparisons' facet and readings, their settlement (a finisher), the
            history folder's writer, and their settings handed to the merge
merged      the comparisons over every shard's rows, with the shards' settings
==========  ===========================================================================
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ...compat import xdist
from ...config.options import comparisons_requested
from ...report import schema as shape
from ...roles.wiring import Aggregation, Feature, Wiring
from ...vocabulary import ADJUSTMENTS
from .comparing import ArmVerdicts, BaselineVerdicts, Comparer, SessionComparisons
from .comparison_readings import ComparisonReadings
from .facet import ComparisonsFacet

if TYPE_CHECKING:
    from ...config.settings import Settings
    from ...model.case import CaseRef
    from ...roles.merging import MergeWiring
    from .comparisons import Comparisons

#: The merge's name of the comparisons' settings (a shard's report's ``shard.compare``).
HANDOVER = "compare"
#: The comparisons' settings as a shard hands them over (:func:`handover`), and the kind of each.
HANDOVER_FIELDS: dict[str, shape.Kind] = {
    "baselines": shape.ARRAY,
    "history": shape.or_null(shape.TEXT),
    "history_depth": shape.whole(1),
    "margin": shape.number(0),
    "margin_given": shape.BOOL,
    "adjust": shape.one_of(*ADJUSTMENTS),
    "compare": shape.or_null(shape.TEXT),
}
#: Handed over too, but absent from the reports of shards of earlier versions.
OPTIONAL_FIELDS: dict[str, shape.Kind] = {"baseline_digest": shape.or_null(shape.TEXT)}


def feature(config: pytest.Config, settings: Settings) -> ComparisonFeature:
    return ComparisonFeature(comparisons_requested(config))


class ComparisonFeature(Feature):
    """The comparisons feature; ``on``: an option or ini key of comparisons is set (else only ``compare=``
    marks start them, when the outputs first ask)."""

    def __init__(self, on: bool) -> None:
        self.on = on
        self.comparing: SessionComparisons | None = None

    def prepare(self, config: pytest.Config) -> None:
        if self.on and config.getoption("prob_plan") and xdist.distributes(config):
            # --prob-plan runs nothing: no workers to start, and the plan is printed here. xdist decides
            # from these options, after this hook (tryfirst), whether to start workers.
            config.option.dist = "no"
            config.option.numprocesses = 0
            config.option.tx = []

    def every(self, wiring: Wiring) -> None:
        self.comparing = comparing = SessionComparisons(wiring.config, wiring.specs)
        wiring.parts.add(checks=comparing)
        # A benchmark's verdicts: its A/B arms' under margin= (the marks say, so always on), then the
        # baseline's under a margin; their items come in this order after the benchmark's runs.
        wiring.parts.add(verdict_kinds=ArmVerdicts(comparing))
        if self.on:
            compared = comparing.start()
            if compared.baseline is not None:
                wiring.parts.add(verdict_kinds=BaselineVerdicts(comparing, compared))

    def aggregating(self, wiring: Aggregation) -> None:
        comparing = self.comparing
        assert comparing is not None
        history = comparing.session.config.history if comparing.session is not None else None
        if history is not None and wiring.scope.partial is not None:
            # A shard's report holds part of the night: as a baseline it would compare every case with a part.
            raise pytest.UsageError(
                "--prob-history cannot be used with --prob-shard: a shard's report holds only "
                "part of the runs (the merge does not keep a history yet)"
            )
        comparing.aggregate(wiring.results)
        cases = wiring.intake.cases
        wiring.parts.add(
            facets=ComparisonsFacet(comparing.current, cases),
            readings=ComparisonReadings(comparing.current, wiring.stats),
            finishers=comparing,
            handovers=(HANDOVER, lambda: handover(comparing, cases)),
        )
        if history is not None:
            from .history_folder import HistoryReport  # only with --prob-history

            wiring.parts.add(finishers=HistoryReport(Path(history), wiring.report()))

    def handover_paths(self) -> Mapping[str, frozenset[str]]:
        """Where each shard's baseline was (as given: absolute in one checkout, relative in another) is no
        difference: what it held is (``baseline_digest``)."""
        return {HANDOVER: frozenset({"baselines", "history"})}

    def check_handover(self, shard: Mapping[str, Any]) -> None:
        handed = shard.get(HANDOVER)
        if handed is None:
            return
        where = f"shard.{HANDOVER}"
        shape.fields(shape.an_object(handed, where), where, HANDOVER_FIELDS, frozenset(HANDOVER_FIELDS))
        shape.fields(handed, where, OPTIONAL_FIELDS)
        if not all(isinstance(baseline, str) for baseline in handed["baselines"]):
            raise shape.Malformed(
                f"{where}.baselines must be an array of paths, got {shape.shown(handed['baselines'])}"
            )

    def merged(self, wiring: MergeWiring) -> None:
        result = merged_comparisons(wiring)
        wiring.add_facet(ComparisonsFacet(lambda: result, wiring.cases), shown=True)
        wiring.readings.append(ComparisonReadings(lambda: result, wiring.stats))
        wiring.failed.append(result is not None and bool(result.failed))


def handover(comparing: SessionComparisons, cases: dict[str, CaseRef]) -> dict[str, Any] | None:
    """A shard's comparison settings, for the merge to compare as the session would have; None when the
    session compares nothing (no option of comparisons, no case marked ``compare=``)."""
    session = comparing.session
    if session is None:
        if not any(key == "compare" for case in cases.values() for key, _ in case.marks):
            return None
        session = comparing.start()
    digest = session.baseline.digest if session.baseline is not None else None
    return {**session.config.to_dict(), "margin_given": session.config.margin_given, "baseline_digest": digest}


def merged_comparisons(wiring: MergeWiring) -> Comparisons | None:
    """The comparisons the session would have made, with the shards' settings; None when it compares nothing.
    The shards' baseline is needed as the merge's ``--prob-baseline`` (and only then is one allowed); a
    mismatch is a ValueError (exit status 2) naming the shard's file."""
    path = wiring.reports[0][0]
    settings = wiring.handover(HANDOVER)
    baselines = tuple(getattr(wiring.options, "prob_baseline", None) or ())
    had = (
        list(settings.get("baselines") or ()) + ([settings["history"]] if settings.get("history") else [])
        if settings
        else []
    )
    if had and not baselines:
        raise ValueError(
            f"the shards compared with a baseline ({', '.join(had)}, in {path}): give it to the "
            "merge too, --prob-baseline PATH"
        )
    if baselines and not had:
        raise ValueError(
            f"--prob-baseline: the shards were run without a baseline ({path}), so their verdict "
            "items and runs were not judged by one; run them with it"
        )
    if settings is None:
        return None
    from . import baseline, compare_config  # only when the shards compared

    config = compare_config.CompareConfig(
        baselines=baselines,
        margin=settings["margin"],
        margin_given=settings["margin_given"],
        adjust=settings["adjust"],
        compare_axis=settings["compare"],
    )
    loaded = None
    if baselines:
        try:
            loaded = baseline.load(baseline.expand(baselines, Path.cwd()))
        except baseline.BaselineError as exc:
            raise ValueError(str(exc)) from None
    return Comparer(config, loaded, wiring.stats).result(wiring.summary)
