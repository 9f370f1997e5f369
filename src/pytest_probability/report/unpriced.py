"""``--prob-prices``' one warning at the session's end: the models whose tokens had no cost and no price."""

from __future__ import annotations

import warnings

import pytest

from ..errors import ProbabilityUsageWarning
from ..model.prices import unpriced_models
from ..model.rows import Summary
from ..protocols import Finisher


class UnpricedModels(Finisher):
    """With ``--prob-prices``: one ``ProbabilityUsageWarning`` at the session's end that lists the models
    whose tokens had no cost recorded and no price in the file (they cost nothing anywhere)."""

    def __init__(self, source: str) -> None:
        self.source = source

    def finish(self, session: pytest.Session, summary: Summary) -> None:
        models = unpriced_models(u for row in summary.rows if row.usage for r in row.records for u in r.usage)
        if not models:
            return
        warnings.warn(
            ProbabilityUsageWarning(
                f"no price in {self.source} for model(s) {', '.join(models)}, and no cost was recorded for "
                "their tokens: they count as $0 in the table, the JSON report and the budgets; add them to the file"
            ),
            stacklevel=1,
        )
