"""``python -m pytest_probability report DIR_OR_FILES -o report.html``: the history report."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import files
from .config.values import check_trace_url
from .report import history as report_history


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pytest_probability")
    commands = parser.add_subparsers(dest="command", required=True)
    report = commands.add_parser("report", help="Build one HTML page over several sessions' JSON reports.")
    report.add_argument("paths", nargs="+", metavar="DIR_OR_FILES", help="--prob-json reports, or folders of them (e.g. --prob-history)")
    report.add_argument("-o", "--output", default="report.html", help="the HTML file to write (default report.html)")
    report.add_argument("--trace-url", default=None, help="URL template of a run's trace, with {trace_id}")
    args = parser.parse_args(argv)
    try:
        trace_url = check_trace_url(args.trace_url) if args.trace_url else None
        reports = report_history.load(report_history.report_paths(args.paths))
        page = report_history.render(reports, trace_url=trace_url)
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
    print(f"wrote {output} ({len(reports)} sessions)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
