"""What concurrent runs (``--prob-concurrency``) did, in every output: K, runs in flight, wall time against the ideal.

Each process that executed runs concurrently has its figures (``model.concurrency.Concurrency``, from
its run stage's window); an xdist worker ships its own at its end (``record.concurrency.ConcurrencyLink``),
as a plain dict, and the aggregating process adds them up (:class:`ConcurrencyFacet`, which imports the model only
when there is a figure: every session has this module, few run concurrently): the terminal's ``Concurrency:`` lines, the
JSON report's ``concurrency`` object (which the HTML report shows), and the
``probability.session.concurrency.*`` gauges. A session in which no case asked for more than one run in
flight shows none of them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..model.outputs import Line, Series
from ..protocols import Facet

if TYPE_CHECKING:
    from ..model.concurrency import Concurrency


class ConcurrencyFacet(Facet):
    """The session's concurrent runs in every output; nothing when none ran."""

    def __init__(
        self, received: list[dict[str, Any]], local: Callable[[], dict[str, Any] | None] | None = None
    ) -> None:
        self.received = received
        self.local = local

    def total(self) -> Concurrency | None:
        parts = list(self.received)
        own = self.local() if self.local is not None else None
        if own:
            parts.append(own)
        if not parts:
            return None
        from ..model.concurrency import Concurrency  # only once a process ran runs concurrently

        return Concurrency.merged(Concurrency.from_dict(part) for part in parts)

    def report_fields(self) -> Mapping[str, Any]:
        total = self.total()
        return {"concurrency": total.to_dict()} if total is not None else {}

    def lines(self) -> Sequence[Line]:
        total = self.total()
        if total is None:
            return []
        return [("", {}), *((text, {}) for text in describe(total))]

    def series(self) -> list[Series]:
        total = self.total()
        if total is None:
            return []
        in_flight = Series(
            "probability.session.concurrency.in_flight",
            "gauge",
            "{run}",
            "Runs in flight at once in one process: the limit asked for (K), the mean and the peak reached",
        )
        for stat, value in (("limit", total.limit), ("mean", total.mean), ("peak", total.peak)):
            in_flight.points.append(({"probability.concurrency.stat": stat}, value))
        ratio = Series(
            "probability.session.concurrency.wall_over_ideal",
            "gauge",
            "1",
            "Wall time of the concurrent runs over the ideal (their calls' time over K and the processes)",
        )
        if total.ratio is not None:
            ratio.points.append(({}, total.ratio))
        return [in_flight, ratio] if ratio.points else [in_flight]


def describe(total: Concurrency) -> list[str]:
    """The terminal's lines (and the HTML report's paragraphs) for the session's concurrent runs."""
    where = f"per process ({total.processes} processes)" if total.processes > 1 else "in one process"
    if not total.runs:
        lines = [f"  Concurrency: {total.limit} runs in flight asked for {where}; every run executed one at a time"]
    else:
        lines = [
            f"  Concurrency: up to {total.limit} runs in flight {where}; mean {total.mean:.1f}, peak {total.peak}; "
            f"{total.runs} run(s)"
        ]
    if total.ratio is not None:
        lines.append(
            f"               their calls took {total.wall_seconds:.2f}s of wall time, {total.ratio:.2f} x the ideal "
            f"{total.ideal_seconds:.2f}s ({total.call_seconds:.1f}s of calls / {total.limit * max(1, total.processes)})"
        )
    if total.faults:
        lines.append(
            f"               {total.faults} call(s) raised a provider fault; the window was halved {total.cuts} time(s)"
        )
    if total.unreported or total.cancelled:
        lines.append(
            f"               the session stopped with runs in flight: {total.unreported} finished (their outcomes "
            f"and spend are counted here; pytest, stopped, reported none of them), {total.cancelled} cancelled"
        )
    if total.one_at_a_time:
        shown = ", ".join(total.one_at_a_time[:3]) + (
            f" and {len(total.one_at_a_time) - 3} more" if len(total.one_at_a_time) > 3 else ""
        )
        lines.append(f"               one run at a time: {shown}")
    return lines
