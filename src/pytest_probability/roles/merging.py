"""What the merge (``python -m pytest_probability merge``) offers a feature: :class:`MergeWiring`.

A feature's :meth:`~.wiring.Feature.merged` part gets it; only the merge imports this module (a session's
start-up does not pay for the class).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..config.settings import StatsConfig
    from ..decide.analysis import Analysis
    from ..model.case import CaseRef
    from ..model.rows import Summary
    from ..model.run import RunRecord
    from ..protocols import Facet, Waiver


@dataclass(eq=False)
class MergeWiring:
    """The merge's (``python -m pytest_probability merge``): the shards' reports and what was rebuilt from them."""

    #: (path, report) of every shard, the first first.
    reports: Sequence[tuple[Path, Mapping[str, Any]]]
    #: The session's settings (the shards', without ``shard``) and statistics settings.
    settings: Mapping[str, Any]
    stats: StatsConfig
    cases: Mapping[str, CaseRef]
    records: Sequence[RunRecord]
    summary: Summary
    analysis: Analysis
    #: The results the facets read, as a session's ``Results`` (``summary()``, ``analysis()``).
    results: Any
    #: The merge command's options (``--prob-baseline`` and the like).
    options: Any
    #: The merged report's facets, in registration order (the statistics' first).
    facets: list[Facet] = field(default_factory=list)
    #: The facets whose lines the merge prints (the gates section, the comparisons).
    shown: list[Facet] = field(default_factory=list)
    #: Whether a decision over all the runs failed (the merged session's exit status 1).
    failed: list[bool] = field(default_factory=list)
    readings: list[Any] = field(default_factory=list)
    #: What excuses a case from failing the merged session (quarantine); its verdicts are still decided.
    waivers: list[Waiver] = field(default_factory=list)

    def handover(self, name: str) -> Any:
        """What a feature handed the merge under ``name`` (the first shard's ``shard`` object's field)."""
        return self.reports[0][1]["shard"].get(name)

    def add_facet(self, facet: Facet, *, shown: bool = False) -> None:
        self.facets.append(facet)
        if shown:
            self.shown.append(facet)
