"""The JSON and HTML reports (``--prob-json``, ``--prob-html``), a part of the core the composition root turns on.

:class:`Reports` is wired as a feature is (``configure.FEATURES``), so that a session without either option
imports neither the writers nor the report's modules. Both files are written from the one report dict of
the session (``Aggregation.report()``), which the history folder and the CI outputs share.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import files
from ..report.writers import HtmlReport, JsonReport
from .wiring import Aggregation, Feature

if TYPE_CHECKING:
    import pytest

    from ..config.settings import Settings


def feature(config: pytest.Config, settings: Settings) -> Reports:
    """With ``--prob-json`` or ``--prob-html`` (the composition root's decision)."""
    return Reports()


class Reports(Feature):
    def aggregating(self, wiring: Aggregation) -> None:
        settings, scope = wiring.settings, wiring.scope
        if settings.json_path is not None:
            files.check_path(settings.json_path)
            wiring.parts.add(finishers=JsonReport(settings.json_path, wiring.report(), wiring.notes, scope.keep_empty))
        if settings.html_path is not None:
            files.check_path(settings.html_path, "--prob-html")
            wiring.parts.add(
                finishers=HtmlReport(
                    settings.html_path, wiring.report(), wiring.notes, settings.trace_url, scope.keep_empty
                )
            )
