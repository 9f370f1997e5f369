"""An interval and how it was drawn: what every interval of the statistics is (:class:`Interval`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Interval:
    """An interval of a fraction, a mean score or a difference, with its method and level."""

    method: str
    level: float
    low: float
    high: float

    @property
    def bounds(self) -> tuple[float, float]:
        """``(low, high)``."""
        return self.low, self.high

    def to_dict(self) -> dict[str, Any]:
        return {"method": self.method, "level": self.level, "low": self.low, "high": self.high}
