"""The journal's writer: one line per finished run, appended as it ends, durable before its outcome is shown.

:class:`JournalWriter` is a :class:`~pytest_probability.protocols.RecordLog` in the
aggregating process; :func:`start` locks the journal, reads what it holds and
checks that this session may resume from it.
"""

from __future__ import annotations

import fcntl
import os
import stat
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ...files import write_all
from ...model.run import RunRecord
from ...protocols import RecordLog
from ...session import Notes
from ...text import printable
from .journal_file import Contents, JournalError, differences, dumps, not_regular, read, refusal

#: Least seconds between two fsyncs of the journal (group commit): a machine crash loses at most the
#: records of this long; a killed session none, since each record is written before its outcome shows.
SYNC_INTERVAL = 0.05


class JournalWriter(RecordLog):
    """The journal's writer in the aggregating process: one line per finished run, as it ends.

    Each line is one ``write`` on the main thread, before pytest shows the run's
    outcome: from then on it is the kernel's, and survives the session being
    killed (``kill -9``, a CI job cancelled). A background thread fsyncs it
    (group commit: at most every :data:`SYNC_INTERVAL` seconds, each fsync
    covering every line written before it), so that a machine crash loses at
    most the last 50 ms of records, and the session's main thread never waits
    for the disk (benchmarks/journal.py: the fsync is most of the cost).
    Closing syncs what is left. It holds an exclusive ``flock`` until the session ends: a second
    session on the same journal is refused. A write or fsync that fails (a full
    disk) stops the journal with one note; the session and its reports go on.
    """

    def __init__(self, path: Path, fd: int, head: Mapping[str, Any], contents: Contents, notes: Notes) -> None:
        """``fd``: the journal opened for appending and locked (:func:`start`)."""
        self.path = path
        self.notes = notes
        self.written = 0
        self.failed: str | None = None
        self._cases = set(contents.cases)
        self._fd: int | None = fd
        self._dirty = threading.Event()
        self._closing = threading.Event()
        self._syncer: threading.Thread | None = None
        if contents.torn:
            os.ftruncate(fd, contents.length)  # a line cut short by a kill: the journal is its whole lines
        if contents.header is None:
            self._append(dumps({**head}) + "\n")

    def write(self, record: RunRecord) -> None:
        """A finished run's record (its case first, the first time), in one write. A run not executed
        (decided early, a budget reached) is not one: a resumed session decides it again, on the same
        records for a case decided early or a cost or token budget, and on its own clock for a time budget."""
        if self._fd is None or record.stopped:
            return
        key = record.case.key
        text = dumps({"record": record.to_dict(case=False)}) + "\n"
        if key not in self._cases:
            text = dumps({"case": record.case.to_dict()}) + "\n" + text
        if self._append(text):
            self._cases.add(key)
            self.written += 1

    def write_late(
        self, nodeid: str, usage: Mapping[str, Any] | None, extra_cost: float, scores: Sequence[Mapping[str, Any]] = ()
    ) -> None:
        entry: dict[str, Any] = {"nodeid": nodeid, "usage": usage, "extra_cost": extra_cost}
        if scores:  # a late score (record_score); without one the entry is as before
            entry["scores"] = list(scores)
        self._append(dumps({"late": entry}) + "\n")

    def _append(self, text: str) -> bool:
        fd = self._fd
        if fd is None or self.failed is not None:
            return False
        try:
            write_all(fd, text.encode("utf-8"))
        except (OSError, ValueError) as exc:
            self._fail(exc)
            self.close()
            return False
        if self._syncer is None:
            self._syncer = threading.Thread(target=self._sync, name="pytest-probability-journal", daemon=True)
            self._syncer.start()
        self._dirty.set()
        return True

    def _sync(self) -> None:
        """The background fsync: after every batch of writes, until the journal closes."""
        fd = self._fd
        while fd is not None:
            self._dirty.wait()
            self._dirty.clear()
            if self._closing.is_set():
                return  # close() syncs what is left
            try:
                os.fsync(fd)
            except OSError as exc:
                self._fail(exc)
                return
            if self._closing.wait(SYNC_INTERVAL):  # the writes meanwhile wait for the next fsync
                return

    def _fail(self, exc: BaseException) -> None:
        if self.failed is not None:
            return
        self.failed = str(getattr(exc, "strerror", None) or exc)
        self.notes.append(
            printable(
                f"could not write to the journal {self.path} ({self.failed}); the runs after "
                f"its {self.written} record(s) are not in it, and would run again on resume"
            )
        )

    def close(self) -> None:
        """Sync what the background thread has not, and let the file (and its lock) go."""
        fd = self._fd
        if fd is None:
            return
        self._closing.set()
        self._dirty.set()
        syncer = self._syncer
        if syncer is not None and syncer is not threading.current_thread():
            syncer.join()
        try:
            if self.failed is None:
                os.fsync(fd)
        except OSError as exc:
            self._fail(exc)
        finally:
            self._fd = None
            os.close(fd)


def start(
    path: Path, head: Mapping[str, Any], notes: Notes, *, write: bool = True
) -> tuple[JournalWriter | None, Contents]:
    """Lock the journal at ``path`` (``write``: else only read it, as ``--collect-only`` does), read it and
    check that this session may resume from it. Raises :class:`JournalError` when it is refused."""
    if path.is_dir():
        raise JournalError(f"--prob-journal: {path} is a directory; give a file path")
    try:
        mode = os.stat(path).st_mode
    except OSError:  # none yet (or unreachable: the open says why)
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        raise not_regular(path, mode)  # before the open: a FIFO's blocks until someone reads it
    fd = _open_locked(path) if write else None
    try:
        contents = read(path)
        if contents.header is not None:
            diffs = differences(contents.header, head)
            if diffs:
                raise JournalError(refusal(path, diffs))
    except BaseException:
        if fd is not None:
            os.close(fd)
        raise
    return (JournalWriter(path, fd, head, contents, notes) if fd is not None else None), contents


def _open_locked(path: Path) -> int:
    """The journal opened for appending, with an exclusive ``flock`` held until it is closed."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # O_NONBLOCK: a FIFO put there since the check is refused (ENXIO), not waited on
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC | os.O_NONBLOCK, 0o644)
    except OSError as exc:
        raise JournalError(f"--prob-journal: cannot open {path}: {exc.strerror or exc}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise not_regular(path, mode)
    os.set_blocking(fd, True)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise JournalError(
            f"--prob-journal: {path} is in use by another session; give each session its own journal (one per shard)"
        ) from None
    return fd
