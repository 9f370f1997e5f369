"""Concurrent runs' figures between processes: a worker's to the aggregating process at its end, and the
controller's scheduling to each worker (whether its runs may execute ahead at all).

Apart from the facet (``report.concurrency``) because every xdist worker has the link and none aggregates.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..protocols import Link

#: The ``workeroutput`` key of a worker's figures, and the ``workerinput`` key of why its runs may not
#: execute ahead (its controller's scheduling).
ATTRIBUTE = "prob_concurrency"
REFUSED = "prob_ahead_refused"

#: pytest-xdist's schedulings under which a worker executes every item it was sent, in the order sent:
#: what it has queued is what it will execute. ``worksteal`` takes queued items back.
SURE = frozenset({"load", "loadscope", "loadfile", "loadgroup", "each"})


def refusal(dist: str) -> str | None:
    """Why a worker may not execute runs ahead under ``--dist=dist``; None when it may."""
    if dist in SURE:
        return None
    return (
        f"pytest-xdist's --dist {dist} may take queued runs back from a worker, so no worker knows which runs it "
        "will execute: runs execute one at a time in each worker (use --dist load, the default, or loadscope)"
    )


class ConcurrencyLink(Link):
    """A worker's figures at its end, to the aggregating process; the controller's scheduling to each worker."""

    attribute = ATTRIBUTE

    def __init__(
        self,
        received: list[dict[str, Any]] | None = None,
        local: Callable[[], dict[str, Any] | None] | None = None,
        refused: str | None = None,
    ) -> None:
        """``received``: where the aggregating process keeps what workers ship; ``local``: this process's own
        figures (a worker's leftover); ``refused``: the controller's reason for its workers not to run ahead."""
        self.received = received
        self.local = local
        self.refused = refused

    def worker_input(self) -> Mapping[str, Any]:
        return {REFUSED: self.refused} if self.refused else {}

    def receive(self, value: Any) -> None:
        if self.received is not None and isinstance(value, Mapping):
            self.received.append(dict(value))

    def leftover(self) -> Any:
        return self.local() if self.local is not None else None
