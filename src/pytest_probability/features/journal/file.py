"""The journal's file format: what ``--prob-journal`` writes, and reading it back.

The journal is JSON Lines (UTF-8, one object per line). Each line is written
with one ``write`` on a descriptor opened with ``O_APPEND`` in the aggregating
process (the serial session, or the xdist controller) as the record is taken
in, before pytest shows the run's outcome, and fsynced right after by a
background thread (``writer.Journal``):

* the header, first: ``{"journal": "pytest-probability", "format": 1, "suite": ...,
  "settings": {...}, "stats_config": {...}}`` (the JSON report's ``settings`` and
  ``stats_config``);
* ``{"case": {...}}``, a case as the JSON report's ``cases[]`` has it, before the
  first record of that case (in the same write as that record);
* ``{"record": {...}}``, a finished run: the record as it travels between
  processes, its case by key;
* ``{"late": {"nodeid": ..., "usage": ..., "extra_cost": ..., "scores": [...]}}``, usage or scores charged to
  a run after its record (late usage).

A session started with a journal that exists reads it first (:func:`read`),
and checks every entry's fields as it reads it (``record.shape``): a line that
is no journal entry is refused naming the line and the field, before any run.
A path that is not a regular file (a device such as ``/dev/full``, a FIFO) is
refused too. A journal of another suite or other settings is refused
(:func:`differences`, exit status 4, naming the difference; where a file was,
``config.settings.PATH_FIELDS``, is no difference). Otherwise its records are
the session's first records, and ``resume.Resume`` deselects their runs, so
that only the runs the journal lacks are executed. A killed session
(``kill -9``) loses only the runs in flight: a last line cut short is dropped,
and cut off the file before the session appends. A line that is not JSON
anywhere else means the file is no journal (or was edited): refused.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...config.settings import PATH_FIELDS
from ...record import shape

MAGIC = "pytest-probability"
FORMAT = 1
#: A case's fields that may differ between the journal and the session: where it sits in the file.
PLACE_FIELDS = frozenset({"order", "lineno"})
#: Differences named in a refusal; the rest are counted.
SHOWN = 5

#: The header's fields that a session compares with its own (:func:`differences`).
HEADER_FIELDS: dict[str, shape.Kind] = {"suite": shape.TEXT, "settings": shape.OBJECT, "stats_config": shape.OBJECT}
#: A late entry's fields (``writer.Journal.write_late``).
LATE_FIELDS: dict[str, shape.Kind] = {
    "nodeid": shape.NAME,
    "usage": shape.or_null(shape.OBJECT),
    "extra_cost": shape.number(),
    "scores": shape.ARRAY,
}
#: Why a line is refused, after what is wrong with it.
EDITED = "the file is no journal of pytest-probability, or was edited; give another path to start over"

#: One journal line's JSON: compact, strict.
dumps = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode


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
    return {
        "journal": MAGIC,
        "format": FORMAT,
        "suite": suite,
        "settings": dict(settings),
        "stats_config": dict(stats_config),
    }


def not_regular(path: Path, mode: int) -> JournalError:
    """The refusal of a path that is no regular file: reading a device such as ``/dev/full`` never ends, and
    neither does opening a FIFO nobody reads."""
    kinds = (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
    )
    kind = next((name for test, name in kinds if test(mode)), "not a regular file")
    return JournalError(
        f"--prob-journal: {path} is not a regular file ({kind}); give the path of a journal, or of a file to create"
    )


def read(path: Path, limit: int | None = None) -> Contents:
    """The journal at ``path`` (empty Contents when there is none yet); ``limit``: read only its first
    ``limit`` bytes (an xdist worker reads what its controller resumed from, not what it appends since).
    Every entry is checked as it is read (:class:`JournalError` naming the line and the field)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)  # a FIFO opens at once, to be refused
    except FileNotFoundError:
        return Contents()
    except OSError as exc:
        raise JournalError(f"--prob-journal: cannot read {path}: {exc.strerror or exc}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise not_regular(path, mode)
        with os.fdopen(fd, "rb") as handle:
            fd = -1  # the handle owns it now
            data = handle.read() if limit is None else handle.read(limit)
    except OSError as exc:
        raise JournalError(f"--prob-journal: cannot read {path}: {exc.strerror or exc}") from None
    finally:
        if fd >= 0:
            os.close(fd)
    contents = Contents()
    end = data.rfind(b"\n") + 1
    contents.length = end
    contents.torn = len(data) - end
    number = 0
    for line in data[:end].split(b"\n")[:-1]:
        number += 1
        try:
            entry = json.loads(line)
        except (ValueError, RecursionError):
            raise JournalError(f"--prob-journal: {path} line {number} is not JSON: {EDITED}") from None
        if number == 1:
            if not isinstance(entry, dict) or entry.get("journal") != MAGIC:
                raise JournalError(
                    f"--prob-journal: {path} is not a journal of pytest-probability (its first line "
                    "is no journal header); give another path"
                )
            if entry.get("format") != FORMAT:
                raise JournalError(
                    f"--prob-journal: {path} is in journal format {entry.get('format')!r}, and this "
                    f"version reads format {FORMAT}; finish it with the version that wrote it, or "
                    "start over with another path"
                )
            try:
                shape.fields(entry, "header", HEADER_FIELDS, frozenset(HEADER_FIELDS))
            except shape.Malformed as exc:
                raise JournalError(f"--prob-journal: {path} line 1: {exc}; {EDITED}") from None
            contents.header = entry
            continue
        if not isinstance(entry, dict) or len(entry) != 1:
            raise JournalError(f"--prob-journal: {path} line {number} is no journal entry")
        ((kind, value),) = entry.items()
        try:
            _check_entry(kind, value, contents)
        except shape.Malformed as exc:
            raise JournalError(f"--prob-journal: {path} line {number}: {exc}; {EDITED}") from None
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


def _check_entry(kind: str, value: Any, contents: Contents) -> None:
    """One entry's fields, as the writer wrote them: a record's case described by a line before it."""
    if kind == "record":
        key = shape.check_record(value, "record", shape.JOURNAL)
        if key not in contents.cases:
            raise shape.Malformed(f"record of case {key!r}, which no line before it describes")
    elif kind == "case":
        shape.check_case(value, "case")
    elif kind == "late":
        shape.fields(shape.an_object(value, "late"), "late", LATE_FIELDS, frozenset({"nodeid"}))
        if value.get("usage") is not None:
            shape.check_usage(value["usage"], "late.usage")
        shape.check_scores(value.get("scores") or [], "late.scores")


def differences(found: Mapping[str, Any], wanted: Mapping[str, Any]) -> list[str]:
    """What differs between a journal's header and this session's, one text per setting."""
    out = []
    if found.get("suite") != wanted.get("suite"):
        out.append(f"suite: {found.get('suite')!r} in the journal, {wanted.get('suite')!r} now")
    for part in ("settings", "stats_config"):
        theirs, mine = found.get(part) or {}, wanted.get(part) or {}
        for key in sorted(set(theirs) | set(mine)):
            if part == "settings" and key in PATH_FIELDS:
                continue  # where the prices file was: its digest is compared (a journal moved with its checkout)
            if theirs.get(key) != mine.get(key):
                name = key if part == "settings" else f"{part}.{key}"
                out.append(f"{name}: {theirs.get(key)!r} in the journal, {mine.get(key)!r} now")
    return out


def refusal(path: Path, diffs: list[str]) -> str:
    shown = "; ".join(diffs[:SHOWN]) + (f"; and {len(diffs) - SHOWN} more" if len(diffs) > SHOWN else "")
    return (
        f"--prob-journal: {path} was written by a session with other settings ({shown}); resume with the "
        "settings it was written with, or give another journal path to start over"
    )


def case_difference(journaled: Mapping[str, Any], collected: Mapping[str, Any]) -> list[str]:
    """The fields in which a journal's case differs from the session's case of the same key, where
    it sits in its file (its order and line) aside."""
    return sorted(
        k for k in set(journaled) | set(collected) if k not in PLACE_FIELDS and journaled.get(k) != collected.get(k)
    )
