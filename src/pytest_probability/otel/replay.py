"""Sending an OTLP JSON-lines file, resumably: ``python -m pytest_probability.otel replay FILE``, and
``python -m pytest_probability merge --otel-send``.

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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import options as otel_options
from . import otlp_json
from .send import Sender, redact_url


def digest(lines: list[bytes]) -> str:
    """The SHA-256 of ``lines``, each with its newline: what ``FILE.replayed`` keeps of the lines sent."""
    running = hashlib.sha256()
    for line in lines:
        running.update(line + b"\n")
    return running.hexdigest()


def save_progress(path: Path, sent: int, sha256: str) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps({"sent": sent, "sha256": sha256}), encoding="utf-8")
    os.replace(temporary, path)


def read(file: Path, errors: list[str]) -> list[tuple[int, bytes, str, Any]] | None:
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
            problems.append(f"error: {file}, line {index + 1}: {exc}" + (" (the last line is cut short)" if last else ""))
            continue
        parsed.append((index + 1, raw, kind, request))
    if problems:
        errors += problems[:10]
        errors.append(f"error: {len(problems)} malformed line(s) in {file}; nothing was sent")
        return None
    return parsed


@dataclass
class Replayed:
    """What sending a file did: ``code`` 0 (everything sent, or nothing was left), 1 (a request failed)
    or 2 (bad input, nothing sent); ``errors`` and ``warnings`` are lines for stderr, ``done`` the line
    for stdout."""

    code: int
    done: str = ""
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: requests sent, per signal
    sent: dict[str, int] = field(default_factory=lambda: {"traces": 0, "metrics": 0, "logs": 0})
    #: spans, metric points and log records the endpoint rejected (a partial success), per signal
    rejected: dict[str, int] = field(default_factory=lambda: {"traces": 0, "metrics": 0, "logs": 0})
    #: where they went (redacted), and why the failed one failed
    shown: str = ""
    reason: str = ""


def send(file: Path, endpoint: str | None, protocol: str | None, timeout: float,
         grpc_hint: str = "--protocol grpc") -> Replayed:
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
            return Replayed(0, done=f"nothing to send: all {done} requests of {file} were sent before ({progress}; "
                                    "delete it to send them again)")
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
                    f"sent {position} of {len(lines)} requests; run the same command again to send the rest")
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
    kinds = f"{sent['traces']} trace and {sent['metrics']} metric" if not sent["logs"] else (
        f"{sent['traces']} trace, {sent['metrics']} metric and {sent['logs']} log")
    result.done = f"sent {kinds} requests from {file} to {result.shown}"
    if rejected["traces"] or rejected["metrics"] or rejected["logs"]:
        result.done += f"; the endpoint rejected {rejected['traces']} spans and {rejected['metrics']} metric points"
        if rejected["logs"]:
            result.done += f" and {rejected['logs']} log records"
    return result


def replay(file: Path, endpoint: str | None, protocol: str | None, timeout: float, out: Any = sys.stdout,
           err: Any = sys.stderr) -> int:
    """``replay FILE``: send it, print what happened; the exit status."""
    result = send(file, endpoint, protocol, timeout)
    for line in result.warnings + result.errors:
        print(line, file=err)
    if result.done:
        print(result.done, file=out)
    return result.code
