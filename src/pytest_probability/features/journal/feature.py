"""The journal as one feature (``--prob-journal``), in every role.

=============  ==========================================================================
role           parts
=============  ==========================================================================
aggregating    the journal locked, read and checked (a refusal is a usage error); its
               records fed to the intake as if they had just reported (rows, verdicts,
               early stops and budgets see them); the writer (a record log: every
               finished run first); the journal's facet; :class:`~.resume.ResumedOutcomes`
serial         :class:`~.resume.Resume`: the journal's runs deselected
controller     :class:`~.resume.JournalLink` (each worker reads the journal up to the length
               resumed from) and :class:`~.resume.JournalHooks` (a worker's refusal ends
               the session as a usage error)
worker         :class:`~.resume.Resume`, on the journal as its controller read it
=============  ==========================================================================

``--collect-only`` only deselects what the journal holds: it shows what a resumed session would run.
Wired after every feature with a sink (the composition root's order), so that they see the resumed records.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ...model.run import RunRecord
from ...roles.wiring import Aggregation, Feature, WorkerWiring
from . import file
from .facet import JournalFacet
from .resume import WORKER_INPUT, JournalHooks, JournalLink, Resume, ResumedOutcomes
from .writer import start

if TYPE_CHECKING:
    from ...config.settings import Settings
    from .file import Contents


def feature(config: pytest.Config, settings: Settings) -> Journal:
    """With ``--prob-journal`` (the composition root's decision)."""
    assert settings.journal is not None
    return Journal(settings.journal)


class Journal(Feature):
    def __init__(self, path: Path) -> None:
        self.path = path
        self.contents: Contents | None = None

    def output_files(self) -> list[tuple[str, Path]]:
        """A report written at the end over the journal would replace it (and the same command then be
        refused: the report is no journal); so would the OTLP file or the spill, line by line."""
        return [("--prob-journal", self.path)]

    def aggregating(self, wiring: Aggregation) -> None:
        path, config = self.path, wiring.config
        head = file.header(wiring.settings.suite, wiring.settings.to_dict(), wiring.stats.to_dict())
        try:
            writer, contents = start(path, head, wiring.notes, write=not config.option.collectonly)
            self.contents = contents
            if writer is None:
                return
            intake = wiring.intake
            for data in contents.cases.values():
                intake.learn(data)
            resumed = [RunRecord.from_dict(data, intake.cases) for data in contents.records]
        except file.JournalError as exc:
            raise pytest.UsageError(str(exc)) from None
        except (KeyError, TypeError, ValueError) as exc:
            raise pytest.UsageError(
                f"--prob-journal: {path} holds an entry this version cannot read ({exc!r}); give "
                "another path to start over"
            ) from None
        counts: dict[str, int] = {}
        for record in {record.nodeid: record for record in resumed}.values():  # a run reported twice counts once
            counts[record.case.key] = counts.get(record.case.key, 0) + 1
        wiring.book.count_resumed(counts)
        for record in resumed:  # as if they had just reported: rows, verdicts, early stops and budgets see them
            intake.add(record, finished=False)
        intake.add_late(contents.late, finished=False)
        specs = wiring.specs
        wiring.parts.add(
            logs=writer,
            facets=JournalFacet(path, resumed, writer),
            finishers=ResumedOutcomes(resumed, lambda case: specs.of(case).gated, bool(config.option.runxfail)),
        )
        config.add_cleanup(writer.close)

    def serial(self, wiring: Aggregation) -> None:
        assert self.contents is not None
        wiring.parts.add(checks=Resume(self.path, self.contents))

    def controller(self, wiring: Aggregation) -> None:
        assert self.contents is not None
        # The workers collect: each deselects what was resumed, reading the journal up to this length.
        book = wiring.book
        wiring.parts.add(links=JournalLink(self.path, self.contents.length))
        wiring.register(JournalHooks(lambda: book.folder), "probability-journal")

    def worker(self, wiring: WorkerWiring) -> None:
        """Deselect the runs the controller resumed from the journal (as of the controller's start)."""
        given = wiring.workerinput.get(WORKER_INPUT)
        if given is None:
            return
        path = Path(given["path"])
        try:
            contents = file.read(path, limit=given["length"])
        except file.JournalError as exc:
            raise pytest.UsageError(str(exc)) from None
        wiring.parts.add(checks=Resume(path, contents, wiring.folder, wiring.worker_id))
