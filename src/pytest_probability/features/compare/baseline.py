"""Baselines: earlier ``--prob-json`` reports, read and pooled by case.

Pure apart from reading and writing files; pytest-free. Reads reports whose
rows have ``nodeid``, ``case``, ``params``, ``passes`` and ``total``, and
reports whose rows have no node id and no parameters (``case``, ``passes``,
``fails``, ``errors``, ``total``, ``pass_rate`` in percent). A case is
matched by its node id when the baseline row has one, else by its row label
(``benchmark::case_id``), which every report has.
"""

from __future__ import annotations

import datetime as _dt
import glob
import hashlib
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...record.shape import Unreadable, finite_number, read_json, shown
from ...vocabulary import HISTORY_PREFIX


class BaselineError(ValueError):
    """A baseline that cannot be used: missing, unreadable, not a report."""


@dataclass
class BaselineCase:
    """One case, pooled over the baseline's reports."""

    label: str
    nodeid: str | None
    params: dict[str, str] | None
    passes: int = 0
    total: int = 0
    cost: float = 0.0
    #: Reports (nights) the case appears in.
    reports: int = 0
    #: Every score of the case in the baseline's records, by score name, in report then run order.
    scores: dict[str, list[float]] = field(default_factory=dict)

    @property
    def fraction(self) -> float | None:
        return self.passes / self.total if self.total else None


@dataclass
class Baseline:
    paths: list[str] = field(default_factory=list)
    created: list[str] = field(default_factory=list)
    versions: list[str] = field(default_factory=list)
    by_nodeid: dict[str, BaselineCase] = field(default_factory=dict)
    by_label: dict[str, BaselineCase] = field(default_factory=dict)
    #: The SHA-256 of the reports' contents, in the order read (``sha256:…``): what the baseline held,
    #: wherever its files were (the merge compares it between shards).
    digest: str = ""

    @property
    def cases(self) -> list[BaselineCase]:
        seen: dict[int, BaselineCase] = {}
        for case in list(self.by_nodeid.values()) + list(self.by_label.values()):
            seen.setdefault(id(case), case)
        return list(seen.values())

    def find(self, nodeid: str, label: str) -> BaselineCase | None:
        case = self.by_nodeid.get(nodeid)
        if case is not None:
            return case
        case = self.by_label.get(label)
        if case is not None and case.nodeid is None:
            return case
        return None

    def to_dict(self) -> dict[str, Any]:
        return {
            "paths": list(self.paths),
            "reports": len(self.paths),
            "created_each": list(self.created),
            "versions": list(self.versions),
        }


def expand(patterns: Iterable[str], base: Path) -> list[Path]:
    """Paths of the reports: each pattern a path or a glob, relative to ``base``."""
    found: list[Path] = []
    for pattern in patterns:
        text = os.path.expanduser(str(pattern))
        if not os.path.isabs(text):
            text = str(base / text)
        if glob.has_magic(text):
            matches = sorted(glob.glob(text))
            if not matches:
                raise BaselineError(f"--prob-baseline: no file matches {pattern}")
            found.extend(Path(m) for m in matches)
        else:
            path = Path(text)
            if not path.is_file():
                raise BaselineError(f"--prob-baseline: {pattern}: no such file")
            found.append(path)
    unique: dict[str, Path] = {}
    for path in found:
        unique.setdefault(str(path.resolve()), path)
    return list(unique.values())


def history_reports(folder: Path, depth: int) -> list[Path]:
    """The newest ``depth`` reports of a ``--prob-history`` folder (oldest first)."""
    if not folder.is_dir():
        return []
    names = sorted(p for p in folder.iterdir() if p.name.startswith(HISTORY_PREFIX) and p.suffix == ".json")
    return names[-depth:] if depth else []


def history_name(now: _dt.datetime | None = None) -> str:
    """``prob-report-20261201T021700.123456Z-<pid>.json``: sorts by time."""
    now = now or _dt.datetime.now(_dt.timezone.utc)
    return f"{HISTORY_PREFIX}{now.strftime('%Y%m%dT%H%M%S.%fZ')}-{os.getpid()}.json"


def whole_count(row: Mapping[str, Any], key: str, source: str) -> int:
    """A row's count ``key``: a whole number of at least 0, else a :class:`BaselineError` naming ``source``."""
    value = row.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise BaselineError(f"{source}: row {row.get('case')!r} has no valid {key!r} (got {shown(value)})")
    return value


def row_counts(row: Mapping[str, Any], source: str) -> tuple[int, int]:
    """A row's passes and counted runs (``total``, 0.3.0's ``count``, or passes, fails and errors)."""
    passes = whole_count(row, "passes", source)
    if "total" in row:
        total = whole_count(row, "total", source)
    elif "count" in row:
        total = whole_count(row, "count", source)
    else:
        total = passes + whole_count(row, "fails", source) + whole_count(row, "errors", source)
    if passes > total:
        raise BaselineError(f"{source}: row {row.get('case')!r} has more passes ({passes}) than counted runs ({total})")
    return passes, total


def read_report(path: Path, option: str = "--prob-baseline", digest: Any = None) -> dict[str, Any]:
    """A report read whole (``record.shape.read_json``: a file that is not UTF-8, not JSON or nested too deeply
    is a :class:`BaselineError` naming it); ``digest``, a ``hashlib`` hash, takes its bytes."""
    try:
        data, raw = read_json(path)
    except Unreadable as exc:
        raise BaselineError(f"{option}: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("rows"), list):
        raise BaselineError(f"{option}: {path} is not a --prob-json report (no 'rows' list)")
    if digest is not None:
        digest.update(raw)
    return data


def load(paths: Iterable[Path], option: str = "--prob-baseline", named: Mapping[Path, str] | None = None) -> Baseline:
    """Read and pool the reports; :class:`BaselineError` names the first bad one (and ``option``, the
    option that named it: ``--prob-baseline``, ``--prob-plan-report``; ``named`` gives another per path,
    ``--prob-history`` for its folder's reports)."""
    baseline = Baseline()
    digest = hashlib.sha256()
    for path in paths:
        option_of = (named or {}).get(path, option)
        data = read_report(path, option_of, digest)
        baseline.paths.append(str(path))
        baseline.created.append(str(data.get("created", "")))
        version = (
            (data.get("versions") or {}).get("pytest_probability") if isinstance(data.get("versions"), dict) else None
        )
        baseline.versions.append(str(version or "0.3.0"))
        for row in data["rows"]:
            if not isinstance(row, dict) or not isinstance(row.get("case"), str):
                raise BaselineError(f"{option_of}: {path}: a row without a 'case' label")
            passes, total = row_counts(row, str(path))
            nodeid = row.get("nodeid") if isinstance(row.get("nodeid"), str) else None
            params = row.get("params") if isinstance(row.get("params"), dict) else None
            label = row["case"]
            case = baseline.by_nodeid.get(nodeid) if nodeid else baseline.by_label.get(label)
            if case is None:
                case = BaselineCase(
                    label, nodeid, {str(k): str(v) for k, v in params.items()} if params is not None else None
                )
                if nodeid:
                    baseline.by_nodeid[nodeid] = case
                    baseline.by_label.setdefault(label, case)
                else:
                    baseline.by_label[label] = case
            elif (
                params is not None
                and case.params is not None
                and {str(k): str(v) for k, v in params.items()} != case.params
            ):
                # Parameters changed between baseline nights: the newest wins.
                case.params = {str(k): str(v) for k, v in params.items()}
                case.passes = case.total = 0
                case.cost = 0.0
                case.reports = 0
                case.scores = {}
            case.passes += passes
            case.total += total
            cost = row.get("cost")
            case.cost += float(cost) if _finite(cost) else 0.0
            case.reports += 1
        _pool_scores(baseline, data.get("records"))
    baseline.digest = "sha256:" + digest.hexdigest()
    return baseline


def _finite(value: Any) -> bool:
    """A finite JSON number (a bool is none; ``1e400`` reads as infinity, an integer may be too large)."""
    return finite_number(value)


def _pool_scores(baseline: Baseline, records: Any) -> None:
    """Each baseline case's scores (``records[].scores``), for the comparisons of graded results; a record of no
    case of the rows, or a score that is no number, is left out (a report of another version)."""
    if not isinstance(records, list):
        return
    for record in records:
        if not isinstance(record, dict) or not isinstance(record.get("scores"), list):
            continue
        key, label = record.get("case_key"), record.get("case")
        case = baseline.by_nodeid.get(key) if isinstance(key, str) else None
        if case is None and isinstance(label, str):
            case = baseline.by_label.get(label)
        if case is None:
            continue
        for score in record["scores"]:
            if isinstance(score, dict) and isinstance(score.get("name"), str) and _finite(score.get("value")):
                case.scores.setdefault(score["name"], []).append(float(score["value"]))
