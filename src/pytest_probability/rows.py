"""Aggregation: run records in, rows and session totals out.

Pure and pytest-free. Every reporter and exporter consumes the
:class:`Summary` built here, so they all agree on every number.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from .model import CaseRef, Counts, RunRecord, UsageTotals, sum_usage

# Row statuses.
STATUS_PASS = "pass"  # every counted run passed
STATUS_FLAKY = "flaky"  # passes and fails (errors possibly too)
STATUS_ERRORED = "errored"  # passes and errors, no fails
STATUS_FAIL = "fail"  # fails, no pass
STATUS_ERROR = "error"  # every counted run errored
STATUS_SKIP = "skip"  # no counted run: every run skipped
STATUSES = (STATUS_PASS, STATUS_FLAKY, STATUS_ERRORED, STATUS_FAIL, STATUS_ERROR, STATUS_SKIP)


def row_status(counts: Counts) -> str:
    """The status of a row from its counts (see docs/reference.md)."""
    if counts.total == 0:
        return STATUS_SKIP
    if counts.passes == counts.total:
        return STATUS_PASS
    if counts.passes:
        return STATUS_FLAKY if counts.fails else STATUS_ERRORED
    return STATUS_FAIL if counts.fails else STATUS_ERROR


#: The usage of every row without any (one shared empty dict: rows are read, never changed).
NO_USAGE: dict[str, UsageTotals] = {}


@dataclass(slots=True)
class Row:
    """The aggregate of all runs of one case."""

    case: CaseRef
    #: The case's runs by run number (a run reported twice: its last report).
    records: tuple[RunRecord, ...]
    #: Shared by the rows with equal counts: read it, never change it.
    counts: Counts
    status: str
    cost: float
    usage: dict[str, UsageTotals]

    @property
    def label(self) -> str:
        return self.case.label

    @property
    def has_cost(self) -> bool:
        """True when a run recorded spend; token-only usage records no cost."""
        return any(r.cost for r in self.records)


@dataclass
class Summary:
    """Rows in collection order plus session totals."""

    rows: list[Row] = field(default_factory=list)
    counts: Counts = field(default_factory=Counts)
    cost: float = 0.0
    usage: dict[str, UsageTotals] = field(default_factory=dict)
    #: Runs reported more than once (counted once, the last report winning).
    duplicates: int = 0

    @property
    def records(self) -> list[RunRecord]:
        """All records, sorted by row then run."""
        return [record for row in self.rows for record in row.records]

    @property
    def has_cost(self) -> bool:
        return any(row.has_cost for row in self.rows)

    @property
    def status_counts(self) -> dict[str, int]:
        counts = {status: 0 for status in STATUSES}
        for row in self.rows:
            counts[row.status] += 1
        return counts


#: The cost of every row without spend (one shared float, not one zero per row).
NO_COST = 0.0


def aggregate(records: Iterable[RunRecord]) -> Summary:
    """Group records by case; rows in collection order, records by run.

    A run recorded twice (same node id, e.g. a rerun plugin reporting again)
    counts once: the last record wins.

    Linear in the records and lean at 50,000 cases: the only index is the one
    grouping records by case. A run's node id is its case key and run number,
    so the duplicates of a run sort next to each other within its case (a
    stable sort: the last report last) and are dropped there. Each row keeps
    its records as a tuple, and rows with equal counts share one :class:`Counts`.
    """
    by_case: dict[str, list[RunRecord]] = {}
    for record in records:
        group = by_case.get(record.case.key)
        if group is None:
            by_case[record.case.key] = [record]
        else:
            group.append(record)
    groups = sorted(by_case.values(), key=lambda rs: (rs[0].case.order, rs[0].case.key))
    del by_case
    summary = Summary()
    total = summary.counts
    shared_counts: dict[tuple[int, int, int, int, int], Counts] = {}
    for index, group in enumerate(groups):
        groups[index] = None  # type: ignore[call-overload] # each group is let go once its row is built
        if len(group) > 1:
            group.sort(key=_run_number)
            kept = [r for r, after in zip(group, group[1:]) if r.nodeid != after.nodeid]
            kept.append(group[-1])
            summary.duplicates += len(group) - len(kept)
            group = kept
        counts = Counts()
        for record in group:
            counts.add(record.outcome, record.stopped)
            total.add(record.outcome, record.stopped)
        # Rows with the same counts share one Counts (rows are read, never changed), as they
        # share NO_USAGE: with one run per case there are only a handful of distinct ones.
        counts = shared_counts.setdefault((counts.passes, counts.fails, counts.errors, counts.skipped,
                                           counts.stopped), counts)
        cost = sum(r.cost for r in group) or NO_COST
        usage = sum_usage(u for r in group for u in r.usage) if any(r.usage for r in group) else NO_USAGE
        summary.rows.append(Row(case=group[0].case, records=tuple(group), counts=counts,
                                status=row_status(counts), cost=cost, usage=usage))
        summary.cost += cost
    summary.usage = sum_usage(u for row in summary.rows if row.usage for r in row.records for u in r.usage)
    return summary


def _run_number(record: RunRecord) -> int:
    return record.run
