"""``python -m pytest_probability merge``: the shards' ``--prob-json`` reports judged as one session.

Each shard (``--prob-shard=K/N``) ran part of every case's runs and deferred
every whole-case decision. The merge checks each report's shape once, as it
reads it (:func:`check_shape`: every field it reads, by its path), then that
the reports are the N shards of one suite (the same cases collected) with the
same settings, and that no run is in two of them; then
it rebuilds every run's :class:`~pytest_probability.model.run.RunRecord`
(``records[]`` and ``skipped_runs[]`` with the report's ``cases``) and decides
again over all of them by the code a session uses: the one aggregator
(``aggregate.cases.aggregate``), the analysis (``decide.analysis.analyze``:
intervals, gates, latency, pass^k), the facets and ``json_report.build``. The
cost is linear in the runs: one pass to check, one to aggregate.

Comparisons (A/B arms, and a baseline given to the merge as the shards were
given it) are made by the session's ``features.compare.comparing.CompareSession``
with the shards' comparison settings (``shard.compare``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...aggregate.cases import aggregate
from ...config.reported import stats_from_dict
from ...config.settings import PATH_FIELDS, StatsConfig
from ...config.spec import Specs
from ...config.values import MAX_SHARDS
from ...decide.analysis import Analysis, analyze
from ...decide.results import FixedResults
from ...model.case import CaseRef, shard_of
from ...model.rows import Summary
from ...model.run import RunRecord
from ...protocols import Facet
from ...record import bulk, shape
from ...record.shape import Malformed
from ...report.concurrency import ConcurrencyFacet
from ...report.explain import ExplainFacet
from ...report.intervals import StatsFacet
from ...report.json_report import build, record_from_dict
from ...roles.merging import MergeWiring
from ...roles.wiring import Feature
from ...text import printable_line

#: Runs named in a refusal; the rest are counted.
SHOWN = 5
#: A shard report's ``shard`` fields of the shards feature's own; the others are what features handed over
#: (``Registry.handovers``: the comparisons' settings), which every shard must agree on.
SHARD_FIELDS = frozenset({"index", "count", "suite", "collected", "runs_selected"})
#: The ``settings`` fields the merge reads, and their kinds (the others are compared between shards only).
SETTINGS_FIELDS: dict[str, shape.Kind] = {
    "runs": shape.whole(1),
    "max_cost": shape.or_null(shape.number(0)),
    "max_tokens": shape.or_null(shape.whole(0)),
    "max_time": shape.or_null(shape.number(0)),
    "prices": shape.or_null(shape.TEXT),
    "prices_digest": shape.or_null(shape.TEXT),
    "shard": shape.or_null(shape.TEXT),
}
COLLECTED_FIELDS: dict[str, shape.Kind] = {"cases": shape.whole(0), "runs": shape.whole(0), "digest": shape.NAME}


class MergeError(ValueError):
    """The reports cannot be merged (exit status 2); the message names the files and the runs."""


@dataclass
class Merged:
    """The shards' runs, and everything decided over them."""

    paths: list[Path]
    count: int
    settings: dict[str, Any]
    stats: StatsConfig
    summary: Summary
    analysis: Analysis
    facets: list[Facet]
    #: The status a single session would have had.
    exit_status: int
    report: dict[str, Any] = field(default_factory=dict)
    #: The suite's name the shards ran with (``test.suite.name`` of the merged metrics).
    report_suite: str = ""
    #: The facets whose lines the merge prints (the gates section, the comparisons').
    shown: list[Facet] = field(default_factory=list)


def load(paths: Sequence[str | Path], features: Sequence[Feature] = ()) -> list[tuple[Path, dict[str, Any]]]:
    """Every report read and its shape checked (:func:`check_shape`, with each feature's handover)."""
    reports = []
    for given in paths:
        path = Path(given)
        try:
            report, _ = shape.read_json(path)
        except shape.Unreadable as exc:  # unreadable, not UTF-8, not JSON, nested too deeply
            raise MergeError(str(exc)) from None
        if not isinstance(report, dict) or "records" not in report and "shard" not in report:
            raise MergeError(f"{path} is not a --prob-json report")
        if "shard" not in report:
            raise MergeError(
                f"{path} is not a shard's report (no shard and cases fields): run each shard with "
                "--prob-shard=K/N --prob-json=PATH"
            )
        try:
            check_shape(report)
            for feature in features:
                feature.check_handover(report["shard"])
        except ValueError as exc:  # Malformed, and what stats_from_dict and the features raise
            raise MergeError(f"{path}: {exc}") from None
        reports.append((path, report))
    if not reports:
        raise MergeError("no report to merge")
    return reports


def check_shape(report: Mapping[str, Any]) -> None:
    """Every field of a shard's report that the merge reads, checked once, before anything is merged:
    :class:`~pytest_probability.record.shape.Malformed` (a ``ValueError``) names the first one missing or of
    another kind by its path (``shard.count``, ``records[3].run``, ``cases[0].marks[1]``)."""
    shard = shape.field(report, "shard", "", shape.OBJECT)
    count = shape.field(
        shard,
        "count",
        "shard",
        (lambda v: type(v) is int and 1 <= v <= MAX_SHARDS, f"a whole number from 1 to {MAX_SHARDS}"),
    )
    shape.field(
        shard,
        "index",
        "shard",
        (lambda v: type(v) is int and 1 <= v <= count, f"a whole number from 1 to {count} (shard.count)"),
    )
    shape.field(shard, "suite", "shard", shape.TEXT, required=False)
    if shard.get("collected", {}) is None:
        raise Malformed(
            "shard.collected is null: the shard's cases are not known (every xdist worker of it died before its "
            "end), so it cannot be checked to be a shard of this suite; run that shard again"
        )
    collected = shape.field(shard, "collected", "shard", shape.OBJECT)
    shape.fields(collected, "shard.collected", COLLECTED_FIELDS, frozenset(COLLECTED_FIELDS))
    selected = shape.field(shard, "runs_selected", "shard", shape.OBJECT, required=False) or {}
    for key, runs in selected.items():
        if type(runs) is not int or runs < 0:
            raise Malformed(
                f"shard.runs_selected[{key!r}] must be a whole number of at least 0, got {shape.shown(runs)}"
            )
    for name in sorted(set(shard) - SHARD_FIELDS):  # what features handed over: checked by each (check_handover)
        shape.field(shard, name, "shard", shape.or_null(shape.OBJECT))
    shape.fields(shape.field(report, "settings", "", shape.OBJECT), "settings", SETTINGS_FIELDS)
    stats_from_dict(shape.field(report, "stats_config", "", shape.OBJECT))
    shape.field(report, "exit_status", "", shape.whole(0), required=False)
    keys = set(bulk.check_cases(shape.field(report, "cases", "", shape.ARRAY), "cases"))
    for name in ("records", "skipped_runs"):
        entries = shape.field(report, name, "", shape.ARRAY, required=name == "records") or []
        of = bulk.check_records(entries, name, shape.REPORT)
        if not keys.issuperset(of):
            i = next(i for i, key in enumerate(of) if key not in keys)
            raise Malformed(
                f"{name}[{i}].case_key {of[i]!r} is no case of the report's cases (run {entries[i]['nodeid']})"
            )


def _compared(settings: Mapping[str, Any], paths: frozenset[str] = PATH_FIELDS) -> dict[str, Any]:
    """The settings (or a feature's handover) the shards must agree on: all but the shard, and where a file was
    (``paths``: the settings' ``PATH_FIELDS``, a handover's ``Feature.handover_paths``); what the file held is
    compared instead (the prices' digest, the quarantine's entries, the baseline's digest), since checkouts at
    other paths differ in where it was and nothing else."""
    return {k: v for k, v in settings.items() if k != "shard" and k not in paths}


def _counted(names: list[str], total: int) -> str:
    """The first :data:`SHOWN` of ``names`` (``total`` in all), and how many more."""
    return ", ".join(names[:SHOWN]) + (f" and {total - SHOWN} more" if total > SHOWN else "")


def _runs_text(nodeids: list[str]) -> str:
    shown = ", ".join(nodeids[:SHOWN])
    return shown + (f" and {len(nodeids) - SHOWN} more" if len(nodeids) > SHOWN else "")


def check(reports: list[tuple[Path, dict[str, Any]]], paths: Mapping[str, frozenset[str]] | None = None) -> int:
    """The shards' count N, once the reports are checked to be the N shards of one suite and settings;
    ``paths``: each handover's fields that say where a file was (``Feature.handover_paths``), not compared."""
    paths = paths or {}
    first_path, first = reports[0]
    count = first["shard"]["count"]
    by_index: dict[int, Path] = {}
    for path, report in reports:
        shard = report["shard"]
        if shard["count"] != count:
            raise MergeError(
                f"{first_path} is shard {first['shard']['index']}/{count} and {path} is shard "
                f"{shard['index']}/{shard['count']}: the shards of one session have the same N"
            )
        if shard.get("suite") != first["shard"].get("suite"):
            raise MergeError(
                f"{first_path} is of suite {first['shard'].get('suite')!r} and {path} of suite "
                f"{shard.get('suite')!r}: the shards of one session run one suite"
            )
        if shard["index"] in by_index:
            raise MergeError(
                f"{by_index[shard['index']]} and {path} are both shard {shard['index']}/{count}: "
                "each shard is merged once"
            )
        by_index[shard["index"]] = path
        handed = sorted(set(shard) - SHARD_FIELDS | set(first["shard"]) - SHARD_FIELDS)
        for name in ("settings", "stats_config", *handed):
            where = paths.get(name, frozenset()) if name in handed else PATH_FIELDS
            mine = _compared((report["shard"] if name in handed else report).get(name) or {}, where)
            theirs = _compared((first["shard"] if name in handed else first).get(name) or {}, where)
            if mine != theirs:
                keys = sorted(k for k in set(mine) | set(theirs) if mine.get(k) != theirs.get(k))
                shown = "; ".join(f"{k}: {theirs.get(k)!r} in {first_path}, {mine.get(k)!r} in {path}" for k in keys)
                raise MergeError(
                    f"{path} and {first_path} were run with different settings ({name}: {shown}); "
                    "the shards of one session share every setting but --prob-shard"
                )
        mine, theirs = shard["collected"], first["shard"]["collected"]
        if mine != theirs:
            raise MergeError(
                f"{path} and {first_path} are not shards of one suite: they collected different cases "
                f"({theirs['cases']} cases, {theirs['runs']} runs in {first_path}; {mine['cases']} cases, "
                f"{mine['runs']} runs in {path}){_differing(first_path, first, path, report, count)}; run every "
                "shard on the same checkout, files and selection (-k, -m)"
            )
    missing = count - len(by_index)
    if missing:
        names = [f"{k}/{count}" for k in range(1, count + 1) if k not in by_index][:SHOWN]
        given = _counted([f"{k}/{count} ({by_index[k]})" for k in sorted(by_index)[:SHOWN]], len(by_index))
        what = f"shard {names[0]}" if missing == 1 else f"{missing} shards"
        shown = "" if missing == 1 else f" ({_counted(names, missing)})"
        raise MergeError(f"{what} missing{shown}: got {given}; merge all {count} shards")
    return count


def _differing(first_path: Path, first: Mapping[str, Any], path: Path, other: Mapping[str, Any], count: int) -> str:
    """Which cases two shards of two versions of a suite differ in, as far as their reports tell: a case one
    shard ran whose runs would have fallen in the other's part too (``model.case.shard_of``) but that the other
    did not select is missing there (or has other runs); a case both ran with other runs or marks changed. The
    first :data:`SHOWN` of each, then how many more; "" when the reports tell none (the cases that differ ran
    in other shards only)."""
    own = {name: {c["key"]: c for c in report["cases"]} for name, report in (("first", first), ("other", other))}

    def lacks(mine: Mapping[str, Any], theirs: Mapping[str, Any], their_cases: Mapping[str, Any]) -> list[str]:
        index, selected = theirs["shard"]["index"], theirs["shard"].get("runs_selected") or {}
        return [
            key
            for key, case in {c["key"]: c for c in mine["cases"]}.items()
            if key not in selected and key not in their_cases and _falls_in(key, case.get("runs", 1), index, count)
        ]

    only_first = lacks(first, other, own["other"])
    only_other = lacks(other, first, own["first"])
    changed = [
        key
        for key, case in own["first"].items()
        if key in own["other"]
        and (case.get("runs"), case.get("marks")) != (own["other"][key].get("runs"), own["other"][key].get("marks"))
    ]
    parts = [
        f"{what}: {_counted(keys, len(keys))}"
        for what, keys in (
            (f"only in {first_path}", only_first),
            (f"only in {path}", only_other),
            ("with other runs or marks", changed),
        )
        if keys
    ]
    return "; " + "; ".join(parts) if parts else ""


def _falls_in(key: str, runs: int, index: int, count: int) -> bool:
    """Whether a case of ``runs`` runs has one in shard ``index`` of ``count``: its runs take consecutive shards
    from its offset (``model.case.shard_of``)."""
    return runs >= count or (index - shard_of(key, 1, count)) % count < runs


def _cases(reports: list[tuple[Path, dict[str, Any]]]) -> dict[str, CaseRef]:
    """Every shard's cases by key; a case two shards describe differently means two suites."""
    cases: dict[str, CaseRef] = {}
    seen: dict[str, tuple[Path, dict[str, Any]]] = {}
    for path, report in reports:
        for data in report["cases"]:
            key = data["key"]
            before = seen.get(key)
            if before is None:
                seen[key] = (path, data)
                cases[key] = CaseRef.from_dict(data)
            elif before[1] != data:
                fields = sorted(k for k in set(data) | set(before[1]) if data.get(k) != before[1].get(k))
                raise MergeError(
                    f"{path} and {before[0]} are not shards of one suite: case {key} differs in {', '.join(fields)}"
                )
    return cases


def records_of(reports: list[tuple[Path, dict[str, Any]]], count: int, cases: dict[str, CaseRef]) -> list[RunRecord]:
    """Every shard's records, checked: a run in two reports, twice in one, or in the wrong shard is refused."""
    where: dict[str, Path] = {}
    repeated: dict[tuple[Path, Path], list[str]] = {}
    misplaced: dict[Path, list[str]] = {}
    records: list[RunRecord] = []
    for path, report in reports:
        index = report["shard"]["index"]
        for name in ("records", "skipped_runs"):
            for data in report.get(name) or ():
                nodeid = data["nodeid"]
                before = where.get(nodeid)
                if before is not None:
                    repeated.setdefault((before, path), []).append(nodeid)
                    continue
                where[nodeid] = path
                key = data["case_key"]  # a case of the report's (check_shape)
                if shard_of(key, data["run"], count) != index:
                    misplaced.setdefault(path, []).append(nodeid)
                records.append(record_from_dict(data, cases))
    if repeated:
        (a, b), nodeids = next(iter(repeated.items()))
        same = "twice in " + str(a) if a == b else f"in both {a} and {b}"
        total = sum(len(v) for v in repeated.values())
        raise MergeError(
            f"{total} run(s) are {same}: {_runs_text(nodeids)}; the shards overlap or a report was given twice"
        )
    if misplaced:
        path, nodeids = next(iter(misplaced.items()))
        raise MergeError(
            f"{path} has {len(nodeids)} run(s) of other shards: {_runs_text(nodeids)}; the shards "
            "overlap (was it run with another --prob-shard, or without its deselection?)"
        )
    return records


def merge(paths: Sequence[str | Path], features: Sequence[Feature] = (), options: Any = None) -> Merged:
    """The shards' reports judged as one session: checked, their records rebuilt and aggregated, then each
    feature's merge part (``Feature.merged``: its facets over the merged rows), the readings last."""
    reports = load(paths, features)
    count = check(reports, {name: fields for feature in features for name, fields in feature.handover_paths().items()})
    cases = _cases(reports)
    records = records_of(reports, count, cases)
    first = reports[0][1]
    settings = dict(first["settings"])
    settings["shard"] = None
    stats = stats_from_dict(first["stats_config"])
    selected: dict[str, int] = {}
    for _, report in reports:
        for key, runs in report["shard"].get("runs_selected", {}).items():
            selected[key] = selected.get(key, 0) + runs
    summary = aggregate(records)
    missing = {
        row.case.key: selected[row.case.key] - len(row.records)
        for row in summary.rows
        if selected.get(row.case.key, 0) > len(row.records)
    }
    specs = Specs(stats, [make for feature in features for make in feature.criteria()])
    analysis = analyze(summary, stats, specs.of, missing)
    results = FixedResults(summary, analysis)
    wiring = MergeWiring(reports, settings, stats, cases, records, summary, analysis, results, options)
    wiring.add_facet(StatsFacet(results, stats), shown=True)
    for feature in features:
        feature.merged(wiring)
    # the shards' concurrent runs added up (each shard's own object, as a session's workers' are)
    wiring.add_facet(ConcurrencyFacet([r["concurrency"] for _, r in reports if isinstance(r.get("concurrency"), dict)]))
    # last, as in a session: its JSON fields are the others' with the readings added
    wiring.add_facet(ExplainFacet(results, wiring, stats, lambda: 80))
    statuses = [int(report.get("exit_status", 0)) for _, report in reports]
    failed_gates = [
        row for row in analysis.failed_gates if not any(waiver.waives(row.row.case) for waiver in wiring.waivers)
    ]  # quarantined cases
    exit_status = exit_status_of(statuses, failed_gates=bool(failed_gates) or any(wiring.failed))
    merged = Merged(
        [p for p, _ in reports],
        count,
        settings,
        stats,
        summary,
        analysis,
        wiring.facets,
        exit_status,
        shown=wiring.shown,
    )
    merged.report_suite = str(first["shard"].get("suite") or "")
    merged.report = build(summary, settings=settings, exit_status=exit_status, facets=wiring.facets)
    merged.report["merged"] = {
        "shards": count,
        "files": [str(p) for p in merged.paths],
        "exit_statuses": statuses,
    }
    return merged


def exit_status_of(statuses: Sequence[int], *, failed_gates: bool) -> int:
    """The status one session over all the runs would have had: a shard's interruption or error (2 to 5)
    first; then 1 if a shard's own runs failed it (an ungated run or a normal test) or a gate decided
    over all the runs failed; else 0."""
    for status in statuses:
        if status not in (0, 1, 5):  # 5: every run of the shard was in other shards
            return status
    return 1 if failed_gates or 1 in statuses else 0


def gate_lines(merged: Merged) -> list[str]:
    """What the merge prints: the runs, the gates section as the session's table shows it."""
    # the gates section, and the comparisons' (the statistics' facet and the comparisons')
    lines = [printable_line(text) for facet in merged.shown for text, _ in facet.lines() if text.strip()]
    counts = merged.summary.counts
    rate = "" if counts.pass_rate is None or math.isnan(counts.pass_rate) else f" ({counts.pass_rate:.0%})"
    head = (
        f"merged {merged.count} shards: {len(merged.summary.rows)} cases, {counts.passes}/{counts.total} "
        f"runs passed{rate}, exit status {merged.exit_status}"
    )
    return [head, *lines]
