"""Quarantine as one feature: ``--prob-quarantine=FILE`` (ini ``prob_quarantine``), in every role.

==========  ===========================================================================
role        parts
==========  ===========================================================================
every       the file read and checked (a usage error naming the entry), and
            :class:`Hooks`: a quarantined case's failing runs and failing gate item
            are reported as xfailed where they execute (an xdist worker too)
aggregating one warning per expired entry (naming its owner), :class:`Waive` (its failed
            verdict fails no session and marks no ``--lf`` cache), the facet, and the
            entries in force handed to the merge (``shard.quarantine``)
merged      the shards' entries: the waiver and the facet over the merged rows
==========  ===========================================================================

An entry in force quarantines the cases whose key (node id without the run)
its pattern matches: their runs execute, count and are exported as always;
what changes is only that nothing of theirs fails the session. A benchmark's
own verdicts (``[baseline]``, ``[compare:ARM]``) judge the benchmark, not a
case, and are not quarantined.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Generator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pytest

from ...errors import ProbabilityQuarantineWarning
from ...protocols import Waiver
from ...roles.wiring import Aggregation, Feature, Wiring
from ...text import printable
from . import file
from .facet import QuarantineFacet
from .file import Cases, Entry

if TYPE_CHECKING:
    from ...config.settings import Settings
    from ...model.case import CaseRef
    from ...roles.merging import MergeWiring

#: The merge's name of the entries in force (a shard's report's ``shard.quarantine``).
HANDOVER = "quarantine"


def feature(config: pytest.Config, settings: Settings) -> Quarantine:
    """With ``--prob-quarantine`` (the composition root's decision): the file read and checked now."""
    assert settings.quarantine is not None
    try:
        entries = file.read(settings.quarantine)
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None
    return Quarantine(str(settings.quarantine), entries, file.today())


class Waive(Waiver):
    def __init__(self, cases: Cases) -> None:
        self.cases = cases

    def waives(self, case: CaseRef) -> bool:
        return self.cases.entry(case.key) is not None


def xfail_text(entry: Entry, message: str) -> str:
    """A quarantined failure's xfail reason: ``probability quarantine (alice, until 2026-12-31: PROJ-123): …``."""
    why = f"{entry.owner}, until {entry.until.isoformat()}" + (f": {entry.reason}" if entry.reason else "")
    return f"probability quarantine ({why}): {message or 'failed'}"


class Hooks:
    """In every process that executes: a quarantined case's failed report (a run's phase, its gate item's call)
    becomes xfailed, so the session does not fail on it; ``--runxfail`` reports it as failed."""

    def __init__(self, cases: Cases) -> None:
        self.cases = cases

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
        case = getattr(item, "prob_case", None)
        entry = self.cases.entry(case.key) if case is not None else None
        if entry is not None and call.when == "setup" and getattr(item, "prob_kind", None) is not None:
            # Its gate item: on the item, as record_property puts it, so that every report made from now on
            # carries it; junitxml writes the teardown report's properties.
            quarantined = ("probability_quarantine", xfail_text(entry, "").removesuffix(": failed"))
            if quarantined not in item.user_properties:
                item.user_properties.append(quarantined)
        report = yield
        if entry is None:
            return report
        if report.failed and not item.config.option.runxfail:
            message = ""
            if call.excinfo is not None:
                message = (
                    str(call.excinfo.value).strip().splitlines()[0]
                    if str(call.excinfo.value).strip()
                    else call.excinfo.typename
                )
            report.outcome = "skipped"
            report.wasxfail = printable(xfail_text(entry, message))
        return report


class Quarantine(Feature):
    def __init__(self, source: str, entries: Sequence[Entry], today: _dt.date) -> None:
        self.source = source
        self.today = today
        self.entries = list(entries)
        self.active = [entry for entry in entries if not entry.expired(today)]
        self.cases = Cases(self.active)

    def every(self, wiring: Wiring) -> None:
        wiring.register(Hooks(self.cases), "probability-quarantine")

    def aggregating(self, wiring: Aggregation) -> None:
        for entry in self.entries:
            if entry.expired(self.today):
                wiring.config.issue_config_time_warning(
                    ProbabilityQuarantineWarning(
                        f"--prob-quarantine: {self.source}: {entry.name} ended on {entry.until.isoformat()}: its cases "
                        f"gate again; {entry.owner}, renew it or remove it"
                    ),
                    stacklevel=2,
                )
        facet = QuarantineFacet(
            self.cases, self.source, self.entries, self.today, wiring.results.summary, wiring.results.analysis
        )
        wiring.parts.add(waivers=Waive(self.cases), facets=facet, handovers=(HANDOVER, self.handover))

    def handover(self) -> dict[str, Any]:
        """The entries in force, as the merge needs them (every shard must have the same)."""
        return {
            "file": self.source,
            "entries": [entry.to_dict() for entry in self.active],
            "expired": [entry.to_dict() for entry in self.entries if entry.expired(self.today)],
        }


class MergedQuarantine(Feature):
    """The merge's part: the shards' entries in force (``shard.quarantine``), their waiver and facet."""

    def handover_paths(self) -> Mapping[str, frozenset[str]]:
        """Where each shard's file was is no difference: its entries are compared."""
        return {HANDOVER: frozenset({"file"})}

    def merged(self, wiring: MergeWiring) -> None:
        handed: Mapping[str, Any] | None = wiring.handover(HANDOVER)
        if not handed:
            return
        active = [Entry.from_dict(index, data) for index, data in enumerate(handed.get("entries") or (), 1)]
        expired = [Entry.from_dict(index, data) for index, data in enumerate(handed.get("expired") or (), 1)]
        cases = Cases(active)
        wiring.waivers.append(Waive(cases))
        wiring.add_facet(
            QuarantineFacet(
                cases,
                str(handed.get("file") or ""),
                active + expired,
                None,
                lambda: wiring.summary,
                lambda: wiring.analysis,
            ),
            shown=True,
        )
