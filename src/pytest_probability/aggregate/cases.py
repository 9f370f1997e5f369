"""Aggregation: run records in, rows and session totals out; the one aggregator.

Pure and pytest-free. Every reporter, exporter and decision reads rows built
here, so they all agree on every number: :func:`aggregate` builds the
session's :class:`~pytest_probability.model.rows.Summary`, :func:`row_of` the
row of one case (what a verdict is made from before the session ends).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..model.rows import NO_USAGE, Counts, Row, Summary, sum_usage
from ..model.run import RunRecord
from ..vocabulary import ROLE_JUDGE, STATUS_ERROR, STATUS_ERRORED, STATUS_FAIL, STATUS_FLAKY, STATUS_PASS, STATUS_SKIP


def row_status(counts: Counts) -> str:
    """The status of a row from its counts (see docs/reference.md)."""
    if counts.total == 0:
        return STATUS_SKIP
    if counts.passes == counts.total:
        return STATUS_PASS
    if counts.passes:
        return STATUS_FLAKY if counts.fails else STATUS_ERRORED
    return STATUS_FAIL if counts.fails else STATUS_ERROR


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
    # Last case first, so that popping from the end builds the rows in order and lets each group go
    # once its row is built. The keys are unique (one group per case key): no ties to keep stable.
    groups = sorted(by_case.values(), key=lambda rs: (rs[0].case.order, rs[0].case.key), reverse=True)
    del by_case
    summary = Summary()
    total = summary.counts
    shared_counts: dict[tuple[int, int, int, int, int], Counts] = {}
    while groups:
        group = groups.pop()
        row, duplicates = _row(group, shared_counts)
        summary.duplicates += duplicates
        for record in row.records:
            total.add(record.outcome, record.stopped)
        summary.rows.append(row)
        summary.cost += row.cost
        summary.judge_cost += row.judge_cost
    summary.usage = sum_usage(
        u for row in summary.rows if row.usage for r in row.records for u in r.usage if u.role != ROLE_JUDGE
    )
    if any(row.judge_usage for row in summary.rows):
        summary.judge_usage = sum_usage(
            u for row in summary.rows if row.judge_usage for r in row.records for u in r.usage if u.role == ROLE_JUDGE
        )
    return summary


def row_of(records: Sequence[RunRecord]) -> Row:
    """The row of one case's records (at least one), as :func:`aggregate` builds it."""
    return _row(list(records), {})[0]


def _row(group: list[RunRecord], shared_counts: dict[tuple[int, int, int, int, int], Counts]) -> tuple[Row, int]:
    """One case's row from its records, and how many duplicate reports were dropped."""
    duplicates = 0
    if len(group) > 1:
        group.sort(key=_run_number)
        kept = [r for r, after in zip(group, group[1:], strict=False) if r.nodeid != after.nodeid]
        kept.append(group[-1])
        duplicates = len(group) - len(kept)
        group = kept
    counts = Counts()
    for record in group:
        counts.add(record.outcome, record.stopped)
    # Rows with the same counts share one Counts (rows are read, never changed), as they
    # share NO_USAGE: with one run per case there are only a handful of distinct ones.
    counts = shared_counts.setdefault(
        (counts.passes, counts.fails, counts.errors, counts.skipped, counts.stopped), counts
    )
    cost = sum(r.cost for r in group) or NO_COST
    usage = judge_usage = NO_USAGE
    judge_cost = NO_COST
    if any(r.usage for r in group):
        usage = sum_usage(u for r in group for u in r.usage if u.role != ROLE_JUDGE) or NO_USAGE
        if any(u.role == ROLE_JUDGE for r in group for u in r.usage):
            judge_usage = sum_usage(u for r in group for u in r.usage if u.role == ROLE_JUDGE)
            judge_cost = sum(r.judge_cost for r in group) or NO_COST
    return Row(
        case=group[0].case,
        records=tuple(group),
        counts=counts,
        status=row_status(counts),
        cost=cost,
        usage=usage,
        judge_usage=judge_usage,
        judge_cost=judge_cost,
    ), duplicates


def _run_number(record: RunRecord) -> int:
    return record.run
