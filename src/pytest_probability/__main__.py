"""The command line: ``report`` (the history page over sessions), ``merge`` (shards judged as one session) and ``diff``.

``python -m pytest_probability report DIR_OR_FILES -o report.html``
``python -m pytest_probability merge SHARD.json... -o merged.json [--html PATH] [--otel-file PATH] [--otel-send]``
``python -m pytest_probability diff BASE.json NEW.json [--format=markdown|text|json] [--fail-on-drop]``

This is the command line's composition root: each command loads in one place,
``report`` here at the top, ``merge`` and ``diff`` by their entry points in
:data:`COMMANDS` (:mod:`.merge_command`: the features with a part in the merged
report; with ``--otel-file`` and ``--otel-send`` the one place outside the
session's, ``configure``, that imports the exporter, and only when asked;
``features/compare/diff.py``).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable
from pathlib import Path

from . import files
from .config.values import check_trace_url
from .report import history as report_history

#: The commands whose modules only they need, by their entry point (``MODULE:FUNCTION``, as
#: ``configure.FEATURES``): ``report`` is this module's own.
COMMANDS = {"merge": "merge_command:merge_command", "diff": "features.compare.diff:command"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pytest_probability")
    commands = parser.add_subparsers(dest="command", required=True)
    report = commands.add_parser("report", help="Build one HTML page over several sessions' JSON reports.")
    report.add_argument(
        "paths", nargs="+", metavar="DIR_OR_FILES", help="--prob-json reports, or folders of them (e.g. --prob-history)"
    )
    report.add_argument("-o", "--output", default="report.html", help="the HTML file to write (default report.html)")
    report.add_argument("--trace-url", default=None, help="URL template of a run's trace, with {trace_id}")
    merge = commands.add_parser("merge", help="Merge the --prob-json reports of --prob-shard sessions into one.")
    merge.add_argument("paths", nargs="+", metavar="FILES", help="every shard's --prob-json report")
    merge.add_argument("-o", "--output", required=True, help="the merged JSON report to write")
    merge.add_argument("--html", default=None, metavar="PATH", help="also write the merged HTML report")
    merge.add_argument(
        "--otel-file",
        default=None,
        metavar="PATH",
        help="also write the merged metrics as OTLP JSON lines (send with python -m pytest_probability.otel replay)",
    )
    merge.add_argument(
        "--otel-send",
        action="store_true",
        help="also send the merged metrics over OTLP (the OTEL_EXPORTER_OTLP_* variables apply)",
    )
    merge.add_argument("--otel-endpoint", default=None, metavar="URL", help="send them to URL (implies --otel-send)")
    merge.add_argument(
        "--otel-protocol",
        default=None,
        choices=("http/protobuf", "grpc"),
        help="http/protobuf or grpc (default OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf)",
    )
    merge.add_argument(
        "--otel-timeout", default=None, type=float, metavar="SECONDS", help="seconds per OTLP request (default 10)"
    )
    merge.add_argument(
        "--prob-baseline",
        action="append",
        default=[],
        metavar="PATH",
        help="the baseline the shards compared with (as they were given it; repeatable, globs)",
    )
    merge.add_argument(
        "--trace-url", default=None, help="URL template of a run's trace in the HTML report, with {trace_id}"
    )
    merge.add_argument(
        "--summary",
        default=None,
        metavar="PATH",
        help="write the night's CI summary (Markdown) to PATH (default: append to $GITHUB_STEP_SUMMARY "
        "when set; off: none)",
    )
    merge.add_argument(
        "--annotations",
        default="auto",
        choices=("auto", "on", "off"),
        help="print GitHub workflow commands for failed, dropped and undecided cases (auto: when GITHUB_ACTIONS=true)",
    )
    merge.add_argument(
        "--prob-history",
        default=None,
        metavar="DIR",
        help="decide each case's state over the newest reports in DIR, and add the merged report to DIR",
    )
    diff = commands.add_parser("diff", help="Compare two --prob-json reports as --prob-baseline compares a session.")
    diff.add_argument("base", metavar="BASE.json", help="the base's report (the main branch's)")
    diff.add_argument("new", metavar="NEW.json", help="the change's report")
    diff.add_argument("--format", default="markdown", choices=("markdown", "text", "json"))
    diff.add_argument(
        "--fail-on-drop",
        action="store_true",
        help="exit 1 when a case or a benchmark dropped, of any measure: its pass fraction or a score (its verdict "
        "against the base is FAIL)",
    )
    diff.add_argument("--prob-margin", default=None, metavar="M", help="the drop tolerated (as --prob-margin)")
    diff.add_argument("--prob-adjust", default="holm", choices=("holm", "bonferroni", "bh", "none"))
    diff.add_argument("-o", "--output", default=None, help="write to this file instead of standard output")
    args = parser.parse_args(argv)
    if args.command in COMMANDS:  # each command's module imported here, for its command only
        module, _, name = COMMANDS[args.command].partition(":")
        command: Callable[[argparse.Namespace], int] = getattr(importlib.import_module(f"{__package__}.{module}"), name)
        return command(args)
    try:
        trace_url = check_trace_url(args.trace_url, source="--trace-url") if args.trace_url else None
        loaded = report_history.load(report_history.report_paths(args.paths))
        for note in loaded.skipped:  # a folder's other JSON files: the page is made of the reports
            print(f"note: {note}", file=sys.stderr)
        page = report_history.render(loaded.reports, trace_url=trace_url)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    output = Path(args.output)
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        files.write_text(output, page)  # a symlink's target, a FIFO or /dev/stdout: never replaced
    except OSError as exc:
        print(f"error: cannot write {output}: {exc}", file=sys.stderr)
        return 2
    sessions, skipped = len(loaded.reports), len(loaded.skipped)
    print(
        f"wrote {output} ({sessions} session{'s' * (sessions != 1)}"
        + (f"; {skipped} file{'s' * (skipped != 1)} skipped)" if skipped else ")")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
