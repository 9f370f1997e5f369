"""The JSON report (``--prob-json``): rows, totals and raw per-run records.

Field names that pytest-probability 0.3.0 also wrote keep their 0.3.0 name
and meaning (``case``, ``pass_rate`` in percent, ``elapsed``, ``error``,
``runs``, ...), so tools built for it keep working. See docs/reference.md
for every field.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
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
    parent = path.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise pytest.UsageError(f"{option}: cannot create the folder {parent}: {exc.strerror or exc}") from None
    if not os.access(parent, os.W_OK | os.X_OK):
        raise pytest.UsageError(f"{option}: the folder {parent} is not writable")
    if path.exists() and not os.access(path, os.W_OK):
        raise pytest.UsageError(f"{option}: {path} exists and is not writable")


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


def write(path: Path, report: dict[str, Any]) -> None:
    write_atomic(path, json.dumps(report, indent=2, ensure_ascii=False) + "\n")
