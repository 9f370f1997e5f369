"""Aggregated data: run counts, usage totals per model, a case's :class:`Row` and the session's :class:`Summary`.

Pure and pytest-free; built by :mod:`pytest_probability.aggregate.cases`, read
by every decision, reporter and exporter.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..value_classes import Record
from ..vocabulary import ERROR, FAIL, PASS, SKIP, STATUSES
from .case import CaseRef
from .run import RunRecord, Usage


class UsageTotals(Record):
    """Tokens and spend summed over calls, for one model."""

    model: str
    input_tokens: int
    output_tokens: int
    cached_input_tokens: int
    cost: float
    calls: int

    FIELDS = ("model", "input_tokens", "output_tokens", "cached_input_tokens", "cost", "calls")

    def __init__(
        self,
        model: str,
        input_tokens: int = 0,
        output_tokens: int = 0,
        cached_input_tokens: int = 0,
        cost: float = 0.0,
        calls: int = 0,
    ) -> None:
        self.model = model
        self.input_tokens = input_tokens
        self.output_tokens = output_tokens
        self.cached_input_tokens = cached_input_tokens
        self.cost = cost
        self.calls = calls

    def add(self, usage: Usage) -> None:
        self.input_tokens += usage.input_tokens
        self.output_tokens += usage.output_tokens
        self.cached_input_tokens += usage.cached_input_tokens
        self.cost += usage.cost
        self.calls += 1

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.FIELDS}


def sum_usage(usages: Iterable[Usage]) -> dict[str, UsageTotals]:
    """Sum usage per model, models in order of first appearance."""
    totals: dict[str, UsageTotals] = {}
    for usage in usages:
        totals.setdefault(usage.model, UsageTotals(usage.model)).add(usage)
    return totals


class Counts(Record):
    """Run counts of a row or of the whole session."""

    passes: int
    fails: int
    errors: int
    skipped: int
    #: Runs not executed (early stopping, budgets): no sample, and not "skipped".
    stopped: int

    __slots__ = FIELDS = ("passes", "fails", "errors", "skipped", "stopped")

    def __init__(self, passes: int = 0, fails: int = 0, errors: int = 0, skipped: int = 0, stopped: int = 0) -> None:
        self.passes = passes
        self.fails = fails
        self.errors = errors
        self.skipped = skipped
        self.stopped = stopped

    @property
    def total(self) -> int:
        """Counted runs: skipped runs are no sample."""
        return self.passes + self.fails + self.errors

    @property
    def pass_rate(self) -> float | None:
        return self.passes / self.total if self.total else None

    def add(self, outcome: str, stopped: str = "") -> None:
        if stopped:
            self.stopped += 1
        elif outcome == PASS:
            self.passes += 1
        elif outcome == FAIL:
            self.fails += 1
        elif outcome == ERROR:
            self.errors += 1
        elif outcome == SKIP:
            self.skipped += 1
        else:  # pragma: no cover - records are built by this package
            raise ValueError(f"unknown outcome {outcome!r}")


#: The usage of every row without any (one shared empty dict: rows are read, never changed).
NO_USAGE: dict[str, UsageTotals] = {}


class Row(Record):
    """The aggregate of all runs of one case."""

    case: CaseRef
    #: The case's runs by run number (a run reported twice: its last report).
    records: tuple[RunRecord, ...]
    #: Shared by the rows with equal counts: read it, never change it.
    counts: Counts
    status: str
    cost: float
    usage: dict[str, UsageTotals]
    #: The judge's usage per model and spend (``judging()``), apart from the system's ``usage``/``cost``.
    judge_usage: dict[str, UsageTotals]
    judge_cost: float

    __slots__ = FIELDS = ("case", "records", "counts", "status", "cost", "usage", "judge_usage", "judge_cost")

    def __init__(
        self,
        case: CaseRef,
        records: tuple[RunRecord, ...],
        counts: Counts,
        status: str,
        cost: float,
        usage: dict[str, UsageTotals],
        judge_usage: dict[str, UsageTotals] | None = None,
        judge_cost: float = 0.0,
    ) -> None:
        self.case = case
        self.records = records
        self.counts = counts
        self.status = status
        self.cost = cost
        self.usage = usage
        self.judge_usage = {} if judge_usage is None else judge_usage
        self.judge_cost = judge_cost

    @property
    def label(self) -> str:
        return self.case.label

    @property
    def has_cost(self) -> bool:
        """True when a run recorded spend; token-only usage records no cost."""
        return any(r.cost for r in self.records)


class Summary(Record):
    """Rows in collection order plus session totals."""

    rows: list[Row]
    counts: Counts
    cost: float
    usage: dict[str, UsageTotals]
    #: The judge's spend and usage per model, apart from the system's.
    judge_cost: float
    judge_usage: dict[str, UsageTotals]
    #: Runs reported more than once (counted once, the last report winning).
    duplicates: int

    FIELDS = ("rows", "counts", "cost", "usage", "judge_cost", "judge_usage", "duplicates")

    def __init__(
        self,
        rows: list[Row] | None = None,
        counts: Counts | None = None,
        cost: float = 0.0,
        usage: dict[str, UsageTotals] | None = None,
        judge_cost: float = 0.0,
        judge_usage: dict[str, UsageTotals] | None = None,
        duplicates: int = 0,
    ) -> None:
        self.rows = [] if rows is None else rows
        self.counts = Counts() if counts is None else counts
        self.cost = cost
        self.usage = {} if usage is None else usage
        self.judge_cost = judge_cost
        self.judge_usage = {} if judge_usage is None else judge_usage
        self.duplicates = duplicates

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
