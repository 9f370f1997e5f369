"""``python -m pytest_probability.otel replay FILE``: send a spill (or any OTLP JSON-lines) file.

Each line is sent as one OTLP request, in order. On the first failure it
stops, writes the lines not yet sent to ``FILE.rest`` and exits 1, so a
second replay of that file sends nothing twice.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from . import options as otel_options
from . import otlp_json


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m pytest_probability.otel")
    commands = parser.add_subparsers(dest="command", required=True)
    replay = commands.add_parser("replay", help="send an OTLP JSON-lines file (a spill file) to an OTLP endpoint")
    replay.add_argument("file", type=Path)
    replay.add_argument("--endpoint", help="OTLP endpoint (default OTEL_EXPORTER_OTLP_ENDPOINT, else localhost)")
    replay.add_argument("--protocol", choices=otel_options.PROTOCOLS, help="default OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf")
    replay.add_argument("--timeout", type=float, default=10.0, help="seconds per request (default 10)")
    return parser


def replay(file: Path, endpoint: str | None, protocol: str | None, timeout: float, out=sys.stdout, err=sys.stderr) -> int:
    env = os.environ
    protocol = (protocol or env.get("OTEL_EXPORTER_OTLP_PROTOCOL", "").strip() or "http/protobuf").lower()
    if protocol not in otel_options.PROTOCOLS:
        print(f"error: unknown protocol {protocol!r}; use one of {', '.join(otel_options.PROTOCOLS)}", file=err)
        return 2
    default = otel_options.DEFAULT_GRPC_ENDPOINT if protocol == "grpc" else otel_options.DEFAULT_HTTP_ENDPOINT
    endpoint = endpoint or env.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip() or default
    try:
        otel_options.check_url(endpoint, "--endpoint")
        headers = otel_options.parse_headers(env.get("OTEL_EXPORTER_OTLP_HEADERS", ""), "OTEL_EXPORTER_OTLP_HEADERS")
        lines = file.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        print(f"error: cannot read {file}: {exc.strerror or exc}", file=err)
        return 2
    except Exception as exc:  # a UsageError from the checks
        print(f"error: {exc}", file=err)
        return 2
    shown = otel_options.redact_url(endpoint)
    sent = {"traces": 0, "metrics": 0}
    for index, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            kind, request = otlp_json.decode_line(line)
        except ValueError as exc:
            print(f"error: {file}, line {index + 1}: {exc}", file=err)
            return 2
        try:
            otlp_json.send(kind, request, endpoint, protocol, headers, timeout)
        except otlp_json.OtlpSendError as exc:
            rest = file.with_name(file.name + ".rest")
            rest.write_text("".join(rest_line + "\n" for rest_line in lines[index:] if rest_line.strip()), encoding="utf-8")
            print(
                f"error: sending line {index + 1} to {shown} failed: {exc}; "
                f"sent {sent['traces']} trace and {sent['metrics']} metric requests; "
                f"the lines not sent are in {rest}",
                file=err,
            )
            return 1
        sent[kind] += 1
    print(f"sent {sent['traces']} trace and {sent['metrics']} metric requests from {file} to {shown}", file=out)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    return replay(args.file, args.endpoint, args.protocol, args.timeout)


if __name__ == "__main__":
    sys.exit(main())
