"""The JSON report (``--prob-json``): rows, totals and raw per-run records.

Field names that pytest-probability 0.3.0 also wrote keep their 0.3.0 name
and meaning (``case``, ``pass_rate`` in percent, ``elapsed``, ``error``,
``runs``, ...), so tools built for it keep working. See docs/reference.md
for every field.
"""

from __future__ import annotations

import datetime as _dt
import errno
import json
import math
import os
import platform
import re
import stat
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, Iterable

import pytest

from . import __version__
from .model import ERROR, Counts, RunRecord, UsageTotals
from .rows import Row, Summary

SCHEMA_VERSION = 1

#: Extra fields other concerns add: (summary, row) -> dict merged into the row.
RowFields = Callable[[Row], dict[str, Any]]


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


def write_atomic(path: Path, text: str) -> None:
    """Write to a temporary file beside ``path`` and rename it into place."""
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
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


def _usage(usage: dict[str, UsageTotals]) -> dict[str, dict[str, Any]]:
    return {
        model: {
            "input_tokens": u.input_tokens,
            "output_tokens": u.output_tokens,
            "cached_input_tokens": u.cached_input_tokens,
            "cost": u.cost,
        }
        for model, u in usage.items()
    }


def _counts(counts: Counts) -> dict[str, Any]:
    rate = counts.pass_rate
    return {
        "passes": counts.passes,
        "fails": counts.fails,
        "errors": counts.errors,
        "skipped": counts.skipped,
        "total": counts.total,
        "pass_rate": None if rate is None else 100.0 * rate,
        "pass_fraction": rate,
    }


def row_dict(row: Row) -> dict[str, Any]:
    return {
        "case": row.label,
        "label": row.label,
        "nodeid": row.case.key,
        "benchmark": row.case.benchmark,
        "case_id": row.case.case,
        "params": dict(row.case.params),
        **_counts(row.counts),
        "runs": row.case.runs,
        "status": row.status,
        "cost": row.cost,
        "usage": _usage(row.usage),
    }


def record_dict(record: RunRecord) -> dict[str, Any]:
    # As in 0.3.0: for errored runs only (a failed assert is a fail, not an error).
    error = f"{record.error_type}: {record.error_text}" if record.outcome == ERROR and record.error_type else None
    return {
        "case": record.case.label,
        "run": record.run,
        "nodeid": record.nodeid,
        "outcome": record.outcome,
        "phase": record.phase,
        "message": record.message or None,
        "error": error,
        "error_type": record.error_type or None,
        "error_text": record.error_text or None,
        "duration": record.duration,
        "elapsed": record.duration,
        "cost": record.cost,
        "usage": [u.to_dict() for u in record.usage],
        "trace_id": record.trace_id or None,
        "span_id": record.span_id or None,
        "stopped": record.stopped or None,
        "attempts": record.attempts,
        "retries": [dict(r) for r in record.retries],
        "transcript": [dict(t) for t in record.transcript],
    }


def build(
    summary: Summary,
    *,
    settings: dict[str, Any],
    exit_status: int,
    row_fields: Iterable[RowFields] = (),
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    row_fields = list(row_fields)
    totals = _counts(summary.counts)
    totals["count"] = totals.pop("total")
    rows = []
    for row in summary.rows:
        data = row_dict(row)
        for fields in row_fields:
            data.update(fields(row))
        rows.append(data)
    report = {
        "schema_version": SCHEMA_VERSION,
        "created": _dt.datetime.now(_dt.timezone.utc).astimezone().isoformat(timespec="seconds"),
        "versions": {
            "pytest_probability": __version__,
            "pytest": pytest.__version__,
            "python": platform.python_version(),
        },
        "runs": settings.get("runs"),
        "settings": settings,
        "exit_status": int(exit_status),
        "totals": {
            **totals,
            "cost": summary.cost,
            "usage": _usage(summary.usage),
            "rows": len(summary.rows),
            "statuses": summary.status_counts,
        },
        "rows": rows,
        "records": [record_dict(r) for r in summary.records],
    }
    if extra:
        report.update(extra)
    return report


def dumps(report: dict[str, Any]) -> str:
    """Strict JSON (RFC 8259: no ``NaN`` or ``Infinity``), with one row and one record per line.

    The top level is indented; each element of ``rows`` and ``records`` is
    written on one line by the standard library's C encoder, which keeps
    the report linear and fast at 50,000 rows. A value that is not a finite
    number (none should be: recorded costs are bounded, see
    ``recording.MAX_COST``) is written as ``null`` rather than as invalid JSON.
    """
    try:
        return _dumps(report)
    except ValueError:  # a non-finite float somewhere: null is the only strict JSON for it
        return _dumps(_finite(report))


def _dumps(report: dict[str, Any]) -> str:
    parts = []
    for key, value in report.items():
        if key in _ONE_PER_LINE and isinstance(value, list) and value:
            text = "[\n    " + ",\n    ".join(_compact(item) for item in value) + "\n  ]"
        else:
            text = json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False).replace("\n", "\n  ")
        parts.append(f"  {_compact(key)}: {text}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


_ONE_PER_LINE = ("rows", "records")
_compact = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(", ", ": ")).encode


def _finite(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def write(path: Path, report: dict[str, Any]) -> None:
    write_text(path, dumps(report))


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
        _write_all(own, data)
        return
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise OSError(f"{path} is a FIFO that nobody is reading") from None
        raise
    try:
        os.set_blocking(fd, True)
        _write_all(fd, data)
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
