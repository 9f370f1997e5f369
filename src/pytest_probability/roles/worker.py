"""An xdist worker: it executes runs and ships what they produced; the controller aggregates.

Its decisions are the channel's reader (the folder its controller gave it),
its runs ship their records (and announce each case before its first run,
so that a crash in that run's setup still has a record), and at its end each
link's leftover goes into its ``workeroutput``.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ..compat import xdist
from ..decide.channel import ChannelReader
from ..protocols import Registry
from ..record.concurrency import REFUSED, ConcurrencyLink
from ..run.announce import CaseAnnouncements
from ..session import Scope
from ..text import well_formed_data
from ..vocabulary import WORKER_CHANNEL
from .role import Role
from .wiring import WorkerWiring

if TYPE_CHECKING:
    from ..config.settings import Settings
    from ..config.spec import Specs
    from ..model.case import CaseRef


class Worker(Role):
    name = "probability-worker"
    ships = True

    @property
    def workerinput(self) -> dict[str, object]:
        return dict(xdist.workerinput(self.config) or {})

    @property
    def folder(self) -> Path | None:
        folder = self.workerinput.get(WORKER_CHANNEL)
        return Path(str(folder)) if folder is not None else None

    def decisions(self, settings: Settings, specs: Specs, parts: Registry, scope: Scope) -> ChannelReader | None:
        folder = self.folder
        if folder is None:
            return None
        return ChannelReader(folder, specs, settings.gate_timeout)

    def announcer(self) -> Callable[[CaseRef], None] | None:
        folder = self.folder
        if folder is None:
            return None
        return CaseAnnouncements(folder, str(self.workerinput.get("workerid", "gw"))).announce

    def ahead(self) -> tuple[Callable[[], list[int]] | None, str | None]:
        queued = xdist.worker_queue(self.config)
        refused = self.workerinput.get(REFUSED)
        if refused:
            return queued, str(refused)
        if queued is None:
            return None, (
                f"pytest-xdist {xdist.version()} does not let a worker see which runs it will execute (3.5 and later "
                "do): runs execute one at a time in each worker"
            )
        return queued, None

    def wire(self) -> None:
        runs = self.runs
        self.session.parts.add(
            links=ConcurrencyLink(local=lambda: runs.window.stats() if runs.window is not None else None)
        )
        wiring = WorkerWiring(self.config, self.session, self.runs, self.workerinput, self.folder)
        for feature in self.features:
            feature.worker(wiring)

    @pytest.hookimpl(wrapper=True)
    def pytest_report_to_serializable(self, config: pytest.Config, report: object) -> Generator[None, object, object]:
        """A failure's or a skip's text is any text (an assert's message holding a model's answer cut inside an
        escaped emoji): its report goes to the controller well-formed, which execnet can send (pytest-xdist
        alone ends such a session with an INTERNALERROR). Reports without a ``longrepr`` carry only what the
        plugin made well-formed already (the record), and are not walked."""
        data = yield
        if getattr(report, "longrepr", None) is None:
            return data
        return well_formed_data(data)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """Module teardowns, then what is left to ship (late usage, spans ended after the last run)."""
        self.runs.finish()  # their errors are the controller's to show: none reach it from here
        output = xdist.workeroutput(self.config)
        for link in self.session.parts.links:
            if link.attribute is not None:
                value = link.leftover()
                if value is not None:
                    output[link.attribute] = value
