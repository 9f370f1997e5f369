"""Sending an OTLP JSON-lines file, resumably: ``python -m pytest_probability.otel replay FILE``; and the
metrics of rows decided outside a session (``python -m pytest_probability merge --otel-file``, ``--otel-send``):
the whole-case gauges (the counters are left out: each shard sent its own, which add), written as OTLP JSON
lines (:func:`write_metrics`) and sent as replay sends a file (:func:`send_metrics`).

Replay is resumable and never sends a line twice:

* every line is checked before anything is sent: a file that is not UTF-8,
  or has a malformed line (a last line cut short by a crash included), is an
  error (exit 2) naming the file and the line, and nothing is sent;
* each line is one OTLP request, sent in order with the SDK's exporters (the
  ``OTEL_EXPORTER_OTLP_*`` variables apply, as in a session); after each one
  the count of lines sent is saved in ``FILE.replayed``, with a digest of them;
* on a failure it stops (exit 1); running the same command again sends the
  rest, and once everything is sent it sends nothing more. Delete
  ``FILE.replayed`` to send the file again.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import __version__, files
from ..config import otel as otel_options
from ..model.rows import Summary
from ..protocols import Facet
from . import metrics, otlp_json
from . import resource as resource_module


def digest(lines: list[bytes]) -> str:
    """The SHA-256 of ``lines``, each with its newline: what ``FILE.replayed`` keeps of the lines sent."""
    running = hashlib.sha256()
    for line in lines:
        running.update(line + b"\n")
    return running.hexdigest()


def save_progress(path: Path, sent: int, sha256: str) -> None:
    files.write_atomic(path, json.dumps({"sent": sent, "sha256": sha256}), durable=False)


def read(file: Path, errors: list[str]) -> list[tuple[int, bytes, otlp_json.Kind, otlp_json.OtlpRequest]] | None:
    """(line number, raw line, kind, request) of every non-blank line, or None with ``errors`` said."""
    try:
        data = file.read_bytes()
    except OSError as exc:
        errors.append(f"error: cannot read {file}: {exc.strerror or exc}")
        return None
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        errors.append(f"error: {file} is not UTF-8 text (byte {exc.start}); nothing was sent")
        return None
    raw_lines = data.split(b"\n")
    cut = data and not data.endswith(b"\n")
    parsed, problems = [], []
    for index, raw in enumerate(raw_lines):
        if not raw.strip():
            continue
        try:
            kind, request = otlp_json.decode_line(raw.decode("utf-8"))
        except ValueError as exc:
            last = cut and index == len(raw_lines) - 1
            problems.append(
                f"error: {file}, line {index + 1}: {exc}" + (" (the last line is cut short)" if last else "")
            )
            continue
        parsed.append((index + 1, raw, kind, request))
    if problems:
        errors += problems[:10]
        errors.append(f"error: {len(problems)} malformed line(s) in {file}; nothing was sent")
        return None
    return parsed


@dataclass
class Replayed:
    """What sending a file did: ``code`` 0 (everything sent, or nothing was left), 1 (a request failed) or
    2 (bad input, nothing sent); lines for stderr (``errors``, ``warnings``) and stdout (``done``); requests
    ``sent`` and items ``rejected`` (a partial success) per signal; where they went (redacted, ``shown``)
    and why the failed one failed."""

    code: int
    done: str = ""
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    sent: dict[str, int] = field(default_factory=lambda: {"traces": 0, "metrics": 0, "logs": 0})
    rejected: dict[str, int] = field(default_factory=lambda: {"traces": 0, "metrics": 0, "logs": 0})
    shown: str = ""
    reason: str = ""


def send(
    file: Path, endpoint: str | None, protocol: str | None, timeout: float, grpc_hint: str = "--protocol grpc"
) -> Replayed:
    """Send ``file``'s requests that ``FILE.replayed`` does not count as sent, in order, saving the progress
    after each one; stop at the first that fails. ``grpc_hint``: the option that picks gRPC, for the note
    on an HTTP request that reached a gRPC port."""
    env = os.environ
    if endpoint:
        try:  # the protocol the first signal would use (a gRPC host:port is no HTTP URL)
            otel_options.check_url(endpoint, "--endpoint", protocol or otel_options.protocol_from_env(env, "traces"))
        except Exception as exc:  # a UsageError
            return Replayed(2, errors=[f"error: {exc}"])
    failed = Replayed(2)
    lines = read(file, failed.errors)
    if lines is None:
        return failed
    progress = file.with_name(file.name + ".replayed")
    done = 0
    if progress.exists():
        try:
            saved = json.loads(progress.read_text(encoding="utf-8"))
            done = int(saved["sent"])
            matches = 0 <= done <= len(lines) and saved["sha256"] == digest([raw for _, raw, _, _ in lines[:done]])
        except (OSError, ValueError, KeyError, TypeError):
            matches = False
        if not matches:
            return Replayed(2, errors=[f"error: {progress} does not match {file}; delete it to send the whole file"])
        if done == len(lines):
            return Replayed(
                0,
                done=f"nothing to send: all {done} requests of {file} were sent before ({progress}; "
                "delete it to send them again)",
            )
    from ..text import redact_url
    from .request_sender import Sender

    result = Replayed(0)
    senders: dict[str, Sender] = {}
    rejected = result.rejected
    sent = result.sent
    running = hashlib.sha256()
    for _, raw, _, _ in lines[:done]:
        running.update(raw + b"\n")
    try:
        for position in range(done, len(lines)):
            number, _, kind, request = lines[position]
            sender = senders.get(kind)
            if sender is None:
                chosen = protocol or otel_options.protocol_from_env(env, kind)
                url = None
                if endpoint:
                    url = endpoint if chosen == "grpc" else otel_options.signal_url(endpoint, kind)
                sender = senders[kind] = Sender(kind, chosen, url, env, grpc_hint=grpc_hint)
                result.warnings += [f"warning: {warning}" for warning in sender.warnings]
            answer = sender.send(request.SerializeToString(), timeout)
            if not answer.ok:
                result.code, result.shown, result.reason = 1, sender.display, str(answer.reason)
                result.errors.append(
                    f"error: sending line {number} of {file} to {sender.display} failed: {answer.reason}; "
                    f"sent {position} of {len(lines)} requests; run the same command again to send the rest"
                )
                return result
            sent[kind] += 1
            rejected[kind] += answer.rejected
            running.update(lines[position][1] + b"\n")
            save_progress(progress, position + 1, running.hexdigest())
    finally:
        for sender in senders.values():
            sender.close()
    shown = ", ".join(sorted({s.display for s in senders.values()}))
    result.shown = shown or (redact_url(endpoint) if endpoint else "")
    kinds = (
        f"{sent['traces']} trace and {sent['metrics']} metric"
        if not sent["logs"]
        else (f"{sent['traces']} trace, {sent['metrics']} metric and {sent['logs']} log")
    )
    result.done = f"sent {kinds} requests from {file} to {result.shown}"
    if rejected["traces"] or rejected["metrics"] or rejected["logs"]:
        result.done += f"; the endpoint rejected {rejected['traces']} spans and {rejected['metrics']} metric points"
        if rejected["logs"]:
            result.done += f" and {rejected['logs']} log records"
    return result


def replay(
    file: Path, endpoint: str | None, protocol: str | None, timeout: float, out: Any = sys.stdout, err: Any = sys.stderr
) -> int:
    """``replay FILE``: send it, print what happened; the exit status."""
    result = send(file, endpoint, protocol, timeout)
    for line in result.warnings + result.errors:
        print(line, file=err)
    if result.done:
        print(result.done, file=out)
    return result.code


def write_metrics(path: Path, summary: Summary, facets: Iterable[Facet], suite: str, root: Path) -> int:
    """Write the metric requests of ``summary`` to ``path``; the number of data points."""
    from .sdk_exporters import MetricOut

    resource = resource_module.build(suite, root, os.environ)
    # The gauges only: each shard sent its counters, as series of its own, which add.
    data = metrics.collect(summary, resource, facets, version=__version__, gauges_only=True)
    requests = MetricOut(lambda *_: True).requests(data) if data is not None else []
    text = "".join(otlp_json.request_to_line(otlp_json.parse("metrics", body)) + "\n" for body, _ in requests)
    files.write_text(path, text)
    return sum(points for _, points in requests)


def spill_path(root: Path) -> Path:
    """Where the merge keeps the metrics it is to send when no ``--otel-file`` was given: removed once
    they are sent, kept for replay when they could not be (as a session's spill file)."""
    return root / ".pytest-probability" / f"otel-spill-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}.jsonl"


def send_metrics(
    path: Path, endpoint: str | None, protocol: str | None, timeout: float, keep: bool
) -> tuple[bool, list[str]]:
    """Send the metrics file ``path`` as replay does (``FILE.replayed`` counts what was sent); (sent, lines
    to print). Sent and not ``keep``: the file is removed with its progress. Not sent: both stay, for replay."""
    try:
        result = send(path, endpoint, protocol, timeout, grpc_hint="--otel-protocol grpc")
    except Exception as exc:  # noqa: BLE001 - an exporter's or the disk's: exporting never fails the merge
        result = Replayed(1, errors=[f"error: {type(exc).__name__}: {exc}"], reason=f"{type(exc).__name__}: {exc}")
    lines = list(result.warnings)
    if result.code == 0:
        rejected = result.rejected["metrics"]
        lines.append(
            f"sent {result.sent['metrics']} metric requests to {result.shown}"
            + (f"; the endpoint rejected {rejected} metric points" if rejected else "")
        )
        if not keep:
            for made in (path, path.with_name(path.name + ".replayed")):
                made.unlink(missing_ok=True)
        return True, lines
    where = f"sending to {result.shown}" if result.shown else "sending"
    reason = (
        f"{where} failed: {result.reason}"
        if result.code == 1
        else "; ".join(line.removeprefix("error: ") for line in result.errors)
    )
    lines.append(
        f"warning: the merged metrics were not sent ({reason}); they are kept in {path}: send them with "
        f"python -m pytest_probability.otel replay {path}"
    )
    return False, lines
