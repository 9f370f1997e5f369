"""``python -m pytest_probability.otel replay FILE``: send a spill (or any OTLP JSON-lines) file.

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

import argparse
import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

from . import options as otel_options
from . import otlp_json


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m pytest_probability.otel")
    commands = parser.add_subparsers(dest="command", required=True)
    replay = commands.add_parser("replay", help="send an OTLP JSON-lines file (a spill file) to an OTLP endpoint")
    replay.add_argument("file", type=Path)
    replay.add_argument("--endpoint", help="OTLP endpoint (default: the OTEL_EXPORTER_OTLP_* variables, else localhost)")
    replay.add_argument("--protocol", choices=otel_options.PROTOCOLS, help="default OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf")
    replay.add_argument("--timeout", type=float, default=10.0, help="seconds per request (default 10)")
    return parser


def _digest(lines: list[bytes]) -> str:
    digest = hashlib.sha256()
    for line in lines:
        digest.update(line + b"\n")
    return digest.hexdigest()


def _save_progress(path: Path, sent: int, digest: str) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps({"sent": sent, "sha256": digest}), encoding="utf-8")
    os.replace(temporary, path)


def _read(file: Path, err: Any) -> list[tuple[int, bytes, str, Any]] | None:
    """(line number, raw line, kind, request) of every non-blank line, or None after printing the errors."""
    try:
        data = file.read_bytes()
    except OSError as exc:
        print(f"error: cannot read {file}: {exc.strerror or exc}", file=err)
        return None
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        print(f"error: {file} is not UTF-8 text (byte {exc.start}); nothing was sent", file=err)
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
        for problem in problems[:10]:
            print(problem, file=err)
        print(f"error: {len(problems)} malformed line(s) in {file}; nothing was sent", file=err)
        return None
    return parsed


def replay(file: Path, endpoint: str | None, protocol: str | None, timeout: float, out: Any = sys.stdout, err: Any = sys.stderr) -> int:
    env = os.environ
    if endpoint:
        try:
            otel_options.check_url(endpoint, "--endpoint", protocol or "http/protobuf")
        except Exception as exc:  # a UsageError
            print(f"error: {exc}", file=err)
            return 2
    lines = _read(file, err)
    if lines is None:
        return 2
    progress = file.with_name(file.name + ".replayed")
    done = 0
    if progress.exists():
        try:
            saved = json.loads(progress.read_text(encoding="utf-8"))
            done = int(saved["sent"])
            matches = 0 <= done <= len(lines) and saved["sha256"] == _digest([raw for _, raw, _, _ in lines[:done]])
        except (OSError, ValueError, KeyError, TypeError):
            matches = False
        if not matches:
            print(f"error: {progress} does not match {file}; delete it to send the whole file", file=err)
            return 2
        if done == len(lines):
            print(f"nothing to send: all {done} requests of {file} were sent before ({progress}; delete it to send them again)", file=out)
            return 0
    from .send import Sender, redact_url

    senders: dict[str, Sender] = {}
    rejected = {"traces": 0, "metrics": 0, "logs": 0}
    sent = {"traces": 0, "metrics": 0, "logs": 0}
    digest = hashlib.sha256()
    for _, raw, _, _ in lines[:done]:
        digest.update(raw + b"\n")
    for position in range(done, len(lines)):
        number, _, kind, request = lines[position]
        sender = senders.get(kind)
        if sender is None:
            chosen = protocol or otel_options.protocol_from_env(env, kind)
            url = None
            if endpoint:
                url = endpoint if chosen == "grpc" else otel_options.signal_url(endpoint, kind)
            sender = senders[kind] = Sender(kind, chosen, url, env, grpc_hint="--protocol grpc")
            for warning in sender.warnings:
                print(f"warning: {warning}", file=err)
        result = sender.send(request.SerializeToString(), timeout)
        if not result.ok:
            print(
                f"error: sending line {number} of {file} to {sender.display} failed: {result.reason}; "
                f"sent {position} of {len(lines)} requests; run the same command again to send the rest",
                file=err,
            )
            return 1
        sent[kind] += 1
        rejected[kind] += result.rejected
        digest.update(lines[position][1] + b"\n")
        _save_progress(progress, position + 1, digest.hexdigest())
    shown = ", ".join(sorted({s.display for s in senders.values()})) or (redact_url(endpoint) if endpoint else "")
    kinds = f"{sent['traces']} trace and {sent['metrics']} metric" if not sent["logs"] else (
        f"{sent['traces']} trace, {sent['metrics']} metric and {sent['logs']} log")
    message = f"sent {kinds} requests from {file} to {shown}"
    if rejected["traces"] or rejected["metrics"] or rejected["logs"]:
        message += f"; the endpoint rejected {rejected['traces']} spans and {rejected['metrics']} metric points"
        if rejected["logs"]:
            message += f" and {rejected['logs']} log records"
    print(message, file=out)
    for sender in senders.values():
        sender.close()
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    return replay(args.file, args.endpoint, args.protocol, args.timeout)


if __name__ == "__main__":
    sys.exit(main())
