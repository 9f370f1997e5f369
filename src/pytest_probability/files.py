"""One safe file writer for every file the plugin writes: reports, the history, the decisions channel,
the OTLP file and the spill.

:func:`write_text` writes by the kind of path: atomically for a regular file
(or a symlink's target: the link stays), through for a FIFO, a character
device or an open descriptor (``/dev/stdout``), never onto a block device.
:class:`Lines` writes a file line by line, each line whole, the file put in
place at the end (or appended to).
:func:`check_path` refuses at start, before any run, a path that could not be
written, and :func:`same_file` tells two paths of one file (one output over
another, or over an input). A leaf: standard library and pytest (for the
usage error) only.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import sys
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

if sys.platform != "win32":
    import fcntl


def check_path(path: Path, option: str = "--prob-json") -> None:
    """Fail fast, before any run, when the report could not be written."""
    if path.is_dir() or str(path).endswith(("/", os.sep)):
        raise pytest.UsageError(f"{option}: {path} is a directory; give a file path")
    kind = _special_kind(path)
    if kind == "block device":
        raise pytest.UsageError(f"{option}: {path} is a block device; a report is never written onto a device")
    if kind == "socket":
        raise pytest.UsageError(f"{option}: {path} is a socket; give a file path")
    if kind is not None:  # a FIFO, a character device or an open file descriptor: written through
        if not os.access(path, os.W_OK):
            raise pytest.UsageError(f"{option}: {path} is not writable")
        return
    target = Path(os.path.realpath(path))  # a symlink's target is what gets replaced
    parent = target.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise pytest.UsageError(f"{option}: cannot create the folder {parent}: {exc.strerror or exc}") from None
    if not os.access(parent, os.W_OK | os.X_OK):
        raise pytest.UsageError(f"{option}: the folder {parent} is not writable")
    if target.exists() and not os.access(target, os.W_OK):
        raise pytest.UsageError(f"{option}: {path} exists and is not writable")


def same_file(a: Path, b: Path) -> bool:
    """Whether writing ``a`` would replace the regular file ``b`` (or the reverse): the same path once
    symlinks are followed, or the same file by another name (a hard link). A device, a FIFO or a descriptor
    (``/dev/stdout``) is written through, never replaced: it clashes with nothing."""
    for path in (a, b):
        if _special_kind(path) is not None:
            return False
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet)
        return False


def first_clash(outputs: Sequence[tuple[str, Path]]) -> tuple[tuple[str, Path], tuple[str, Path]] | None:
    """The first two of ``outputs`` (each an option and the path it names) that are one file
    (:func:`same_file`): the earlier, then the later; None when every output has a file of its own."""
    for index, (option, path) in enumerate(outputs):
        for other, earlier in outputs[:index]:
            if same_file(path, earlier):
                return (other, earlier), (option, path)
    return None


def partial_path(path: Path) -> Path | None:
    """Where :class:`Lines` writes a fresh file's lines until its end (``PATH.partial`` beside a symlink's
    target), which is an output of the session too; None for a stream or a device, written through."""
    if _special_kind(path) is not None:
        return None
    target = Path(os.path.realpath(path))
    return target.with_name(target.name + ".partial")


def check_outputs(outputs: Sequence[tuple[str, Path]]) -> None:
    """A usage error, before any run, when two of the session's outputs are one file: one would replace
    the other (a report over the journal, the OTLP file over the JSON report), and a run's data be lost."""
    clash = first_clash(outputs)
    if clash is not None:
        (first, earlier), (second, path) = clash
        raise pytest.UsageError(
            f"{second}: {path} is also the {first} path ({earlier}): one output would replace "
            "the other; give each its own path"
        )


def _proc_path(path: Path) -> str | None:
    """Where ``path`` leads into ``/proc`` through symlinks (``/dev/stdout``, ``/dev/fd/1``), else None.

    Such a path names an open file descriptor: the report is written into
    whatever is open there (a terminal, a pipe, or the file a shell
    redirected stdout to), never replaced.
    """
    current = os.path.abspath(path)
    for _ in range(40):  # the kernel's own limit on symlinks followed
        current = os.path.join(os.path.realpath(os.path.dirname(current)), os.path.basename(current))
        if current == "/proc" or current.startswith("/proc/"):
            return current
        if not os.path.islink(current):
            return None
        current = os.path.normpath(os.path.join(os.path.dirname(current), os.readlink(current)))
    return None


def _own_descriptor(path: Path) -> int | None:
    """The descriptor number when ``path`` names one of this process's own (``/dev/stdout`` → 1)."""
    proc = _proc_path(path)
    if proc is None:
        return None
    match = re.fullmatch(r"/proc/(self|thread-self|\d+)/fd/(\d+)", proc)
    if match is None or match.group(1) not in ("self", "thread-self", str(os.getpid())):
        return None
    return int(match.group(2))


def _special_kind(path: Path) -> str | None:
    """What kind of non-regular file ``path`` (followed through symlinks) is, or None."""
    if _proc_path(path) is not None:
        return "descriptor"
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    if stat.S_ISBLK(mode):
        return "block device"
    if stat.S_ISCHR(mode):
        return "character device"
    if stat.S_ISFIFO(mode):
        return "FIFO"
    if stat.S_ISSOCK(mode):
        return "socket"
    return None


def _file_mode(path: Path) -> int:
    """Keep an existing report's mode; a new one gets 0o666 less the umask, like open() would."""
    try:
        return path.stat().st_mode & 0o777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def write_atomic(path: Path, text: str, *, durable: bool = True) -> None:
    """Write to a temporary file beside ``path`` and rename it into place.

    ``durable``: flushed to disk before the rename, so that a crash leaves the old file or
    the new one, whole (reports); the decisions channel's small files, in a folder deleted at
    the session's end, skip it."""
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.chmod(temp, _file_mode(path))
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise


def write_text(path: Path, text: str) -> None:
    """Write a report to ``path`` safely, whatever ``path`` is.

    * a regular file (or none yet): atomically, a temporary file renamed into place;
    * a symlink: its target is replaced, the link stays;
    * a FIFO, a character device (``/dev/null``, a terminal) or a path naming an
      open descriptor (``/dev/stdout``): written through, never replaced; a FIFO
      without a reader is an error, not a hang;
    * a block device: never written (also refused by :func:`check_path`).
    """
    kind = _special_kind(path)
    if kind is None:
        write_atomic(Path(os.path.realpath(path)), text)
    elif kind in ("block device", "socket"):
        raise OSError(f"{path} is a {kind}; the report was not written")
    else:
        _write_through(path, text)


def _write_through(path: Path, text: str) -> None:
    data = text.encode("utf-8")
    own = _own_descriptor(path)
    if own is not None:
        # This process's own stdout (or another descriptor it has open): write into it, after
        # what Python buffered for it, so that the report and pytest's output share one offset.
        for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
            try:
                if stream is not None:
                    stream.flush()
            except (OSError, ValueError):
                pass
        write_all(own, data)
        return
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise OSError(f"{path} is a FIFO that nobody is reading") from None
        raise
    try:
        os.set_blocking(fd, True)
        write_all(fd, data)
    finally:
        os.close(fd)


def write_all(fd: int, data: bytes) -> None:
    """Every byte of ``data`` to ``fd``, however many ``os.write`` calls it takes (one, for a regular file)."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


class Lines:
    """A file of lines, each written whole by one ``O_APPEND`` write (the OTLP JSON-lines file and the spill).

    ``fresh`` (the OTLP file): the session's lines go to ``PATH.partial`` beside it (a symlink's
    target), renamed over ``PATH`` at :meth:`close`, so a previous file stays whole until this session
    has a file to put in its place: a session that crashes or is killed leaves it as it was (and its
    own lines in ``PATH.partial``, until the next session starts). If another session is writing the
    same file right now (it holds the lock on ``PATH.partial``), both append whole lines to that one
    partial file and ``shared`` says so; the session that started it renames it. A FIFO or a device
    is written through. Not fresh (the spill file): appended to, created on the first line.
    """

    def __init__(self, path: Path, fresh: bool) -> None:
        self.path = path
        self.fresh = fresh
        self.shared = False
        self.lines = 0
        #: Items written, and items that could not be, per kind (what each line counts: spans, points).
        self.counts: dict[str, int] = {}
        self.lost: dict[str, int] = {}
        self._fd: int | None = None
        self._lock = threading.Lock()
        #: Where a fresh file's lines go until the end (None: written in place).
        self._partial: Path | None = None
        self._target: Path | None = None
        self._closed = False
        #: The first write that failed (a full disk, a file size limit): nothing more is written, and
        #: a fresh file is not put in place. What could not be written is counted.
        self.failure: OSError | None = None
        if fresh:
            try:
                self._open()
            except OSError as exc:
                self.failure = exc

    def _open(self) -> int:
        if self._fd is None:
            if self.fresh:
                self._fd = self._open_fresh()
            else:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        return self._fd

    def _open_fresh(self) -> int:
        try:
            special = not stat.S_ISREG(os.stat(self.path).st_mode)
        except OSError:
            special = False
        if special:  # a FIFO, /dev/stdout, /dev/null: written through, never replaced
            return os.open(self.path, os.O_WRONLY | os.O_APPEND)
        target = Path(os.path.realpath(self.path))
        partial = target.with_name(target.name + ".partial")  # partial_path's
        target.parent.mkdir(parents=True, exist_ok=True)
        for _ in range(20):
            fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            if sys.platform == "win32":  # pragma: no cover - no concurrent-session detection
                os.ftruncate(fd, 0)
                break
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # held until close
            except OSError:
                self.shared = True  # another session is writing it: append to its partial file
                return fd
            try:
                same = os.fstat(fd).st_ino == os.stat(partial).st_ino
            except OSError:
                same = False
            if same:
                os.ftruncate(fd, 0)  # a crashed session's leftover, or nothing
                break
            os.close(fd)  # the session we waited for renamed it into place meanwhile: start a new one
        else:  # pragma: no cover - twenty sessions finishing at once
            self.shared = True
            return fd
        self._partial, self._target = partial, target
        return fd

    def write(self, line: str, kind: str, count: int) -> None:
        """One line holding ``count`` items of ``kind``."""
        data = (line + "\n").encode("utf-8")
        with self._lock:
            if self._closed:
                return  # a send that outlived the session's end: the end already kept its batch
            if self.failure is None:
                try:
                    self._write_line(data)
                except OSError as exc:
                    self.failure = exc
            if self.failure is not None:
                self.lost[kind] = self.lost.get(kind, 0) + count
                return
            self.lines += 1
            self.counts[kind] = self.counts.get(kind, 0) + count

    def _write_line(self, data: bytes) -> None:
        fd = self._open()
        size = None
        if not self.shared:
            try:
                size = os.fstat(fd).st_size
            except OSError:
                pass
        view = memoryview(data)
        try:
            while view:  # a regular file takes it in one write unless the disk is full
                view = view[os.write(fd, view) :]
        except OSError:
            if size is not None and len(view) < len(data):
                try:
                    os.ftruncate(fd, size)  # no line cut short: the file stays as it was before it
                except OSError:
                    pass
            raise

    def close(self) -> None:
        """Put a fresh file in place (when something was written to it); then no more lines."""
        with self._lock:
            self._closed = True
            if self._fd is None:
                return
            fd, self._fd = self._fd, None
            try:
                if self._partial is not None and self._target is not None:
                    if self.failure is None and os.fstat(fd).st_size:
                        try:
                            os.fsync(fd)
                        except OSError as exc:  # a full disk may only show here
                            self.failure = exc
                    if self.failure is not None or os.fstat(fd).st_size == 0:
                        os.unlink(self._partial)  # nothing (whole) to put in the previous file's place
                    else:
                        try:
                            os.chmod(self._partial, os.stat(self._target).st_mode & 0o777)
                        except OSError:
                            pass  # no previous file: the partial file's own mode
                        os.replace(self._partial, self._target)
            finally:
                os.close(fd)
