"""What decisions hand to the outputs: a verdict item's verdict, a metric series, a line of text.

Pure and pytest-free: plain data that the terminal, the JSON and HTML reports
and the OpenTelemetry exporter all read (only ``otel/`` turns a
:class:`Series` into OpenTelemetry metric data).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ..value_classes import Record
from .case import CaseRef
from .run import RunRecord

#: One line of terminal output and the markup it is written with (``{"bold": True}``).
Line = tuple[str, dict[str, bool]]


class Verdict(NamedTuple):
    """What a verdict item does: pass (``passed``), fail, or skip (``skipped``: every run skipped).

    Also the content of a verdict file in the decisions channel.
    """

    passed: bool
    text: str
    skipped: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"passed": self.passed, "text": self.text, "skipped": self.skipped}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Verdict:
        return cls(bool(data["passed"]), str(data["text"]), bool(data.get("skipped", False)))


#: Exemplars per data point of a series: e.g. the latest failed or errored runs, the runs of the lowest scores.
EXEMPLARS = 8


class Series(Record):
    """One metric's points: (attributes, value), or (attributes, durations) for a histogram.

    ``kind`` is ``counter``, ``gauge`` or ``histogram``. ``exemplars``: per point
    index, the records whose span ids become its exemplars; for a histogram,
    ``exemplar_values`` the value each of them measured (default: its duration),
    and ``buckets`` its explicit bucket bounds (none: the SDK's default).
    """

    name: str
    kind: str
    unit: str
    description: str
    points: list[tuple[dict[str, Any], Any]]
    exemplars: dict[int, list[RunRecord]]
    exemplar_values: dict[int, list[float]]
    buckets: tuple[float, ...]

    FIELDS = ("name", "kind", "unit", "description", "points", "exemplars", "exemplar_values", "buckets")

    def __init__(
        self,
        name: str,
        kind: str,
        unit: str,
        description: str,
        points: list[tuple[dict[str, Any], Any]] | None = None,
        exemplars: dict[int, list[RunRecord]] | None = None,
        exemplar_values: dict[int, list[float]] | None = None,
        buckets: tuple[float, ...] = (),
    ) -> None:
        self.name = name
        self.kind = kind
        self.unit = unit
        self.description = description
        self.points = [] if points is None else points
        self.exemplars = {} if exemplars is None else exemplars
        self.exemplar_values = {} if exemplar_values is None else exemplar_values
        self.buckets = buckets


def case_name(case: CaseRef) -> str:
    """``test.case.name``: the benchmark file's path (as in the node id) and the row label."""
    return f"{case.key.split('::', 1)[0]}::{case.label}"


def case_attributes(case: CaseRef) -> dict[str, str]:
    """The attributes that name a case on every per-case series and span."""
    return {"test.case.name": case_name(case), "probability.benchmark": case.benchmark, "probability.case": case.case}
