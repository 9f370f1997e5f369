"""One safe file writer for every file the plugin writes: reports, the history, the decisions channel.

:func:`write_text` writes by the kind of path: atomically for a regular file
(or a symlink's target: the link stays), through for a FIFO, a character
device or an open descriptor (``/dev/stdout``), never onto a block device.
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
from pathlib import Path

import pytest


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
