"""``--prob-journal``: every finished run's record appended as the run ends, and a session resumed from it.

The journal is JSON Lines (UTF-8, one object per line). Each line is written
with one ``write`` on a descriptor opened with ``O_APPEND`` in the aggregating
process (the serial session, or the xdist controller) as the record is taken
in, before pytest shows the run's outcome, and fsynced right after by a
background thread (:class:`Journal`):

* the header, first: ``{"journal": "pytest-probability", "format": 1, "suite": ...,
  "settings": {...}, "stats_config": {...}}`` (the JSON report's ``settings`` and
  ``stats_config``);
* ``{"case": {...}}``, a case as the JSON report's ``cases[]`` has it, before the
  first record of that case (in the same write as that record);
* ``{"record": {...}}``, a finished run: the record as it travels between
  processes, its case by key;
* ``{"late": {"nodeid": ..., "usage": ..., "extra_cost": ...}}``, usage charged to
  a run after its record (late usage).

A session started with a journal that exists reads it first (:func:`read`). A
journal of another suite or other settings is refused (:func:`differences`,
exit status 4, naming the difference). Otherwise its records are the session's
first records, and :class:`Resume` deselects their runs, so that only the runs
the journal lacks are executed. A killed session (``kill -9``) loses only the
run in flight: a last line cut short is dropped, and cut off the file before
the session appends. A line that is not JSON anywhere else means the file is
no journal (or was edited): refused.
"""

from __future__ import annotations

import fcntl
import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import pytest

from ..collect.items import Run
from ..collect.nodeid import set_lastfailed
from ..files import write_all
from ..model.run import RunRecord
from ..model.rows import Summary
from ..protocols import Finisher, Link
from ..text import printable
from ..vocabulary import ERROR, FAIL

MAGIC = "pytest-probability"
FORMAT = 1
#: An xdist worker's ``workerinput`` key: the journal's path and the length resumed from.
WORKER_INPUT = "prob_journal"
#: A case's fields that may differ between the journal and the session: where it sits in the file.
PLACE_FIELDS = frozenset({"order", "lineno"})
#: Least seconds between two fsyncs of the journal (group commit): a machine crash loses at most the
#: records of this long; a killed session none, since each record is written before its outcome shows.
SYNC_INTERVAL = 0.05
#: Differences named in a refusal; the rest are counted.
SHOWN = 5

_dumps = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode


class JournalError(ValueError):
    """The journal cannot be resumed from (a usage error, exit status 4); the message says why."""


@dataclass
class Contents:
    """What a journal holds, read once at the session's start."""

    header: dict[str, Any] | None = None
    #: case key -> the case, as written
    cases: dict[str, dict[str, Any]] = field(default_factory=dict)
    records: list[dict[str, Any]] = field(default_factory=list)
    late: list[dict[str, Any]] = field(default_factory=list)
    #: Bytes of whole lines: a torn last line (a kill mid-write) starts here.
    length: int = 0
    #: Bytes of a torn last line, dropped.
    torn: int = 0

    @property
    def nodeids(self) -> set[str]:
        return {record["nodeid"] for record in self.records}


def header(suite: str, settings: Mapping[str, Any], stats_config: Mapping[str, Any]) -> dict[str, Any]:
    return {"journal": MAGIC, "format": FORMAT, "suite": suite, "settings": dict(settings),
            "stats_config": dict(stats_config)}


def read(path: Path, limit: int | None = None) -> Contents:
    """The journal at ``path`` (empty Contents when there is none yet); ``limit``: read only its first
    ``limit`` bytes (an xdist worker reads what its controller resumed from, not what it appends since)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read() if limit is None else handle.read(limit)
    except FileNotFoundError:
        return Contents()
    except OSError as exc:
        raise JournalError(f"--prob-journal: cannot read {path}: {exc.strerror or exc}") from None
    contents = Contents()
    end = data.rfind(b"\n") + 1
    contents.length = end
    contents.torn = len(data) - end
    number = 0
    for line in data[:end].split(b"\n")[:-1]:
        number += 1
        try:
            entry = json.loads(line)
        except ValueError:
            raise JournalError(f"--prob-journal: {path} line {number} is not JSON: the file is no journal of "
                               "pytest-probability, or was edited; give another path to start over") from None
        if number == 1:
            if not isinstance(entry, dict) or entry.get("journal") != MAGIC:
                raise JournalError(f"--prob-journal: {path} is not a journal of pytest-probability (its first line "
                                   "is no journal header); give another path")
            if entry.get("format") != FORMAT:
                raise JournalError(f"--prob-journal: {path} is in journal format {entry.get('format')!r}, and this "
                                   f"version reads format {FORMAT}; finish it with the version that wrote it, or "
                                   "start over with another path")
            contents.header = entry
            continue
        if not isinstance(entry, dict) or len(entry) != 1:
            raise JournalError(f"--prob-journal: {path} line {number} is no journal entry")
        (kind, value), = entry.items()
        if kind == "record":
            contents.records.append(value)
        elif kind == "case":
            contents.cases[value["key"]] = value
        elif kind == "late":
            contents.late.append(value)
        else:
            raise JournalError(f"--prob-journal: {path} line {number} is an entry of unknown kind {kind!r}")
    if contents.header is None and contents.length:
        raise JournalError(f"--prob-journal: {path} has no journal header")
    return contents


def differences(found: Mapping[str, Any], wanted: Mapping[str, Any]) -> list[str]:
    """What differs between a journal's header and this session's, one text per setting."""
    out = []
    if found.get("suite") != wanted.get("suite"):
        out.append(f"suite: {found.get('suite')!r} in the journal, {wanted.get('suite')!r} now")
    for part in ("settings", "stats_config"):
        theirs, mine = found.get(part) or {}, wanted.get(part) or {}
        for key in sorted(set(theirs) | set(mine)):
            if theirs.get(key) != mine.get(key):
                name = key if part == "settings" else f"{part}.{key}"
                out.append(f"{name}: {theirs.get(key)!r} in the journal, {mine.get(key)!r} now")
    return out


def refusal(path: Path, diffs: list[str]) -> str:
    shown = "; ".join(diffs[:SHOWN]) + (f"; and {len(diffs) - SHOWN} more" if len(diffs) > SHOWN else "")
    return (f"--prob-journal: {path} was written by a session with other settings ({shown}); resume with the "
            "settings it was written with, or give another journal path to start over")


def case_difference(journaled: Mapping[str, Any], collected: Mapping[str, Any]) -> list[str]:
    """The fields in which a journal's case differs from the session's case of the same key, where
    it sits in its file (its order and line) aside."""
    return sorted(k for k in set(journaled) | set(collected)
                  if k not in PLACE_FIELDS and journaled.get(k) != collected.get(k))


class Journal:
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

    def __init__(self, path: Path, fd: int, head: Mapping[str, Any], contents: Contents, notes: list[str]) -> None:
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
            self._append(_dumps({**head}) + "\n")

    def write(self, record: RunRecord) -> None:
        """A finished run's record (its case first, the first time), in one write. A run not executed
        (decided early, a budget reached) is not one: a resumed session decides it again, on the same
        records for a case decided early or a cost or token budget, and on its own clock for a time budget."""
        if self._fd is None or record.stopped:
            return
        key = record.case.key
        text = _dumps({"record": record.to_dict(case=False)}) + "\n"
        if key not in self._cases:
            text = _dumps({"case": record.case.to_dict()}) + "\n" + text
        if self._append(text):
            self._cases.add(key)
            self.written += 1

    def write_late(self, nodeid: str, usage: Mapping[str, Any] | None, extra_cost: float) -> None:
        self._append(_dumps({"late": {"nodeid": nodeid, "usage": usage, "extra_cost": extra_cost}}) + "\n")

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
        self.notes.append(printable(f"could not write to the journal {self.path} ({self.failed}); the runs after "
                                    f"its {self.written} record(s) are not in it, and would run again on resume"))

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


def start(path: Path, head: Mapping[str, Any], notes: list[str], *, write: bool = True) -> tuple[Journal | None, Contents]:
    """Lock the journal at ``path`` (``write``: else only read it, as ``--collect-only`` does), read it and
    check that this session may resume from it. Raises :class:`JournalError` when it is refused."""
    if path.is_dir():
        raise JournalError(f"--prob-journal: {path} is a directory; give a file path")
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
    return (Journal(path, fd, head, contents, notes) if fd is not None else None), contents


def _open_locked(path: Path) -> int:
    """The journal opened for appending, with an exclusive ``flock`` held until it is closed."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        raise JournalError(f"--prob-journal: cannot open {path}: {exc.strerror or exc}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise JournalError(f"--prob-journal: {path} is in use by another session; give each session its "
                           "own journal (one per shard)") from None
    return fd


class Resume:
    """The runs a journal holds are deselected, in every process that collects (an
    :class:`~pytest_probability.protocols.ItemsCheck`); a case the journal knows must be the session's
    own, selected and unchanged (its marks, parameters and runs).

    A serial session refuses a difference at once (a usage error). An xdist worker cannot (its
    controller would see a crash): it writes the refusal into the decisions channel's folder, where
    :class:`JournalHooks` on the controller reads it when the worker's collection arrives.
    """

    def __init__(self, path: Path, contents: Contents, folder: Path | None = None, worker: str = "") -> None:
        self.path = path
        self.cases = contents.cases
        self.nodeids = contents.nodeids
        self.folder = folder
        self.worker = worker

    def check_items(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        if not self.cases:
            return
        kept: list[pytest.Item] = []
        dropped: list[pytest.Item] = []
        seen: dict[str, dict[str, Any]] = {}
        nodeids = self.nodeids
        for item in items:
            if isinstance(item, Run):
                case = item.prob_case
                if case.key in self.cases and case.key not in seen:
                    seen[case.key] = case.to_dict()
                if item.nodeid in nodeids:
                    dropped.append(item)
                    continue
            kept.append(item)
        text = self._refusal(seen)
        if text is not None:
            if self.folder is None:
                raise pytest.UsageError(text)
            (self.folder / f"journal-refused-{self.worker}.txt").write_text(text, encoding="utf-8")
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = kept

    def _refusal(self, seen: Mapping[str, Mapping[str, Any]]) -> str | None:
        missing = [key for key in self.cases if key not in seen]
        if missing:
            shown = ", ".join(missing[:SHOWN]) + (f" and {len(missing) - SHOWN} more" if len(missing) > SHOWN else "")
            return printable(f"--prob-journal: {self.path} has runs of {len(missing)} case(s) this session does not "
                             f"select: {shown}; resume with the same files and selection (-k, -m) it was written "
                             "with, or give another journal path to start over")
        for key, collected in seen.items():
            diff = case_difference(self.cases[key], collected)
            if diff:
                return printable(f"--prob-journal: {self.path} has runs of case {key} as it was before: it differs "
                                 f"now in {', '.join(diff)}; resume with the suite it was written for, or give "
                                 "another journal path to start over")
        return None


class JournalHooks:
    """The xdist controller's part: a worker's refusal (:class:`Resume`) ends the session as a usage error."""

    def __init__(self, folder: Any) -> None:
        """``folder``: returns the decisions channel's folder (None before it is opened)."""
        self.folder = folder

    @pytest.hookimpl(optionalhook=True, tryfirst=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        folder = self.folder()
        if folder is None:
            return
        for path in sorted(Path(folder).glob("journal-refused-*.txt")):
            raise pytest.UsageError(path.read_text(encoding="utf-8"))


class JournalLink(Link):
    """Each xdist worker gets the journal's path and the length the controller resumed from: a worker reads
    what was resumed, never what the controller appends meanwhile (so every worker deselects the same runs)."""

    def __init__(self, path: Path, length: int) -> None:
        self.path = path
        self.length = length

    def worker_input(self) -> Mapping[str, Any]:
        return {WORKER_INPUT: {"path": str(self.path), "length": self.length}}


class ResumedOutcomes(Finisher):
    """The exit status and ``--lf``'s cache count the resumed runs as the session that executed them: a
    failed or errored run fails the session as it did there (unless its case is gated: a gate item decides
    it, and the run was xfailed), and the next ``--lf`` reruns it; a session whose every run was resumed ran
    no item, which pytest calls exit status 5, but it has its runs: 0 (or 1). First of the finishers, so
    that a failed gate's settling (every run of its case rerun by ``--lf``) comes after it."""

    def __init__(self, resumed: list[RunRecord], gated: Any, runxfail: bool) -> None:
        """``gated``: whether a case's runs are gated (their failures xfailed)."""
        self.resumed = resumed
        self.gated = gated
        self.runxfail = runxfail

    def finish(self, session: pytest.Session, summary: Summary) -> None:
        if not self.resumed:
            return
        if session.exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
            session.exitstatus = pytest.ExitCode.OK
        failed = {record.nodeid for record in self.resumed
                  if record.outcome in (FAIL, ERROR) and (self.runxfail or not self.gated(record.case))}
        if failed and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        # --lf: the session that executed them was killed before pytest's cache was written.
        set_lastfailed(session.config, failed=failed,
                       passed=[record.nodeid for record in self.resumed if record.nodeid not in failed])
