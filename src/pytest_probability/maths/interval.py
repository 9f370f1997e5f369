"""An interval and how it was drawn: what every interval of the statistics is (:class:`Interval`)."""

from __future__ import annotations

from typing import Any, Final

from ..value_classes import Value


class Interval(Value):
    """An interval of a fraction, a mean score or a difference, with its method and level."""

    method: Final[str]
    level: Final[float]
    low: Final[float]
    high: Final[float]

    __slots__ = FIELDS = ("method", "level", "low", "high")

    def __init__(self, method: str, level: float, low: float, high: float) -> None:
        self.method = method
        self.level = level
        self.low = low
        self.high = high

    @property
    def bounds(self) -> tuple[float, float]:
        """``(low, high)``."""
        return self.low, self.high

    def to_dict(self) -> dict[str, Any]:
        return {"method": self.method, "level": self.level, "low": self.low, "high": self.high}
