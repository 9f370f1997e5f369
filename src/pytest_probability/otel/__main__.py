"""``python -m pytest_probability.otel replay FILE``: send a spill (or any OTLP JSON-lines) file; the command
line of :mod:`pytest_probability.otel.replay`, which says what it does."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..config import otel as otel_options
from .replay import replay


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m pytest_probability.otel")
    commands = parser.add_subparsers(dest="command", required=True)
    command = commands.add_parser("replay", help="send an OTLP JSON-lines file (a spill file) to an OTLP endpoint")
    command.add_argument("file", type=Path)
    command.add_argument(
        "--endpoint", help="OTLP endpoint (default: the OTEL_EXPORTER_OTLP_* variables, else localhost)"
    )
    command.add_argument(
        "--protocol", choices=otel_options.PROTOCOLS, help="default OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf"
    )
    command.add_argument("--timeout", type=float, default=10.0, help="seconds per request (default 10)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if not (args.timeout > 0 and args.timeout != float("inf")):  # NaN too: the SDK would wait forever or not at all
        print(
            f"error: --timeout must be a number of seconds > 0, got {args.timeout}; nothing was sent", file=sys.stderr
        )
        return 2
    return replay(args.file, args.endpoint, args.protocol, args.timeout)


if __name__ == "__main__":
    sys.exit(main())
