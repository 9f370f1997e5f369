"""``--prob-prices``'s warning of the models no price covered, a part of the core the composition root turns on.

The prices themselves are read with the settings (``config.price_file``) and applied where each run executes
(``run.context``); the aggregating process adds :class:`~pytest_probability.report.unpriced.UnpricedModels`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..report.unpriced import UnpricedModels
from .wiring import Aggregation, Feature

if TYPE_CHECKING:
    import pytest

    from ..config.settings import Settings


def feature(config: pytest.Config, settings: Settings) -> Prices:
    """With ``--prob-prices`` (the composition root's decision)."""
    assert settings.prices is not None
    return Prices(settings.prices.source)


class Prices(Feature):
    def __init__(self, source: str) -> None:
        self.source = source

    def aggregating(self, wiring: Aggregation) -> None:
        wiring.parts.add(finishers=UnpricedModels(self.source))
