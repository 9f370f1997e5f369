"""The command line: ``report`` (the history page over sessions), ``merge`` (shards judged as one session) and ``diff``.

``python -m pytest_probability report DIR_OR_FILES -o report.html``
``python -m pytest_probability merge SHARD.json... -o merged.json [--html PATH] [--otel-file PATH] [--otel-send]``
``python -m pytest_probability diff BASE.json NEW.json [--format=markdown|text|json] [--fail-on-drop]``

This is the command line's composition root: ``merge --otel-file`` and
``--otel-send`` are the one place outside the session's (``configure``) that
imports the exporter, and only when asked.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import pytest

from . import files
from .config.values import check_trace_url
from .report import history as report_history


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
        help="exit 1 when a case or benchmark dropped (its verdict against the base is FAIL)",
    )
    diff.add_argument("--prob-margin", default=None, metavar="M", help="the drop tolerated (as --prob-margin)")
    diff.add_argument("--prob-adjust", default="holm", choices=("holm", "bonferroni", "bh", "none"))
    diff.add_argument("-o", "--output", default=None, help="write to this file instead of standard output")
    args = parser.parse_args(argv)
    if args.command == "merge":
        return _merge(args)
    if args.command == "diff":
        return _diff(args)
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


def _merge(args: argparse.Namespace) -> int:
    from .features.compare.feature import Compare  # merge only: the report command does not pay for it
    from .features.nightly.feature import Nightly, merge_summary_path, write_outputs
    from .features.quarantine.feature import MergedQuarantine
    from .features.scores.feature import Scores
    from .features.shards.merge import MergeError, gate_lines, merge
    from .features.spend.feature import Spend
    from .features.states.feature import MergedStates
    from .report import json_report

    sending = args.otel_send or args.otel_endpoint is not None
    try:
        trace_url = check_trace_url(args.trace_url, source="--trace-url") if args.trace_url else None
        _check_sending(args, sending)
        _check_outputs(args)
        summary, appends = merge_summary_path(args.summary)
        annotate = args.annotations == "on" or (
            args.annotations == "auto" and os.environ.get("GITHUB_ACTIONS") == "true"
        )
        # The features with a part in the merged report, in a session's order: the facets follow it.
        merged = merge(
            args.paths,
            (
                Spend(),
                Compare(on=False),
                Scores(),
                MergedStates(args.prob_history),
                MergedQuarantine(),
                Nightly(None, False, summary is not None or annotate),
            ),
            args,
        )
    except (MergeError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    outputs = [(Path(args.output), lambda: json_report.dumps(merged.report))]
    if args.prob_history:  # the night's report joins the history the next night's states are decided over
        from .features.compare.baseline import history_name

        outputs.append((Path(args.prob_history) / history_name(), lambda: json_report.dumps(merged.report)))
    if args.html:
        from .report import html_report  # only with --html

        outputs.append((Path(args.html), lambda: html_report.render(merged.report, trace_url=trace_url)))
    for path, text in outputs:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            files.write_text(path, text())
        except OSError as exc:
            print(f"error: cannot write {path}: {exc}", file=sys.stderr)
            return 2
    if args.otel_file or sending:
        from .otel.replay import send_metrics, spill_path, write_metrics  # only with --otel-file or --otel-send

        path = Path(args.otel_file) if args.otel_file else spill_path(Path.cwd())
        suite = merged.report_suite
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            points = write_metrics(path, merged.summary, merged.facets, suite, Path.cwd())
            Path(str(path) + ".replayed").unlink(missing_ok=True)  # a new file: none of it was sent
        except OSError as exc:
            if args.otel_file:  # an output asked for, as --html
                print(f"error: cannot write {path}: {exc}", file=sys.stderr)
                return 2
            # the file only carries what is sent: exporting never changes the exit status
            print(f"warning: the merged metrics were not sent: cannot write {path}: {exc}", file=sys.stderr)
            sending = False
        if args.otel_file:
            print(f"wrote {path} ({points} metric points)")
        if sending:  # never changes the exit status, as in a session
            sent, lines = send_metrics(
                path, args.otel_endpoint, args.otel_protocol, args.otel_timeout, keep=bool(args.otel_file)
            )
            for line in lines:
                print(line, file=sys.stdout if sent and not line.startswith("warning:") else sys.stderr)
    try:
        write_outputs(
            merged.report,
            suite=merged.report_suite,
            summary=summary,
            appends=appends,
            annotate=annotate,
            trace_url=trace_url,
            out=sys.stdout,
        )
    except OSError as exc:
        print(f"error: cannot write the summary: {exc}", file=sys.stderr)
        return 2
    for line in gate_lines(merged):
        print(line)
    print(f"wrote {args.output}" + (f" and {args.html}" if args.html else ""))
    return merged.exit_status


def _diff(args: argparse.Namespace) -> int:
    """``diff``: exit 0, 1 with ``--fail-on-drop`` and a drop, 2 for a report that cannot be read."""
    from .config.values import parse_margin
    from .features.compare import diff

    try:
        margin = parse_margin(args.prob_margin) if args.prob_margin is not None else None
        found = diff.compare_reports(Path(args.base), Path(args.new), margin, args.prob_adjust)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    text = {"markdown": diff.markdown, "text": diff.text, "json": diff.dumps}[args.format](found)
    if args.output:
        try:
            files.write_text(Path(args.output), text)
        except OSError as exc:
            print(f"error: cannot write {args.output}: {exc}", file=sys.stderr)
            return 2
    else:
        sys.stdout.write(text)
    return 1 if args.fail_on_drop and (found["dropped"] or found["benchmarks_failed"]) else 0


#: The merge's outputs: option, what it writes.
OUTPUTS = (("output", "-o", "report"), ("html", "--html", "HTML report"), ("otel_file", "--otel-file", "metrics file"))


def _check_outputs(args: argparse.Namespace) -> None:
    """No output of the merge replaces one of its inputs (the merge could not be run again) or another of its
    outputs (ValueError, before anything is read or written)."""
    outputs = [
        (option, what, Path(getattr(args, name))) for name, option, what in OUTPUTS if getattr(args, name) is not None
    ]
    if args.otel_file is not None:  # writing the metrics file removes its replay progress: an output as well
        outputs.append(("--otel-file's PATH.replayed", "metrics file", Path(args.otel_file + ".replayed")))
    for option, what, path in outputs:
        for given in args.paths:
            if files.same_file(path, Path(given)):
                raise ValueError(
                    f"{option} {path} would replace {given}, one of the reports to merge: give the "
                    f"merged {what} another path"
                )
    clash = files.first_clash([(option, path) for option, _, path in outputs])
    if clash is not None:
        (other, earlier), (option, path) = clash
        what = next(what for name, what, _ in outputs if name == option)
        raise ValueError(f"{option} {path} is also {other} {earlier}: give the merged {what} another path")


def _check_sending(args: argparse.Namespace, sending: bool) -> None:
    """The OTLP options of ``merge``, checked before anything is merged or written (ValueError)."""
    if not sending:
        options = (("--otel-protocol", args.otel_protocol), ("--otel-timeout", args.otel_timeout))
        given = [name for name, value in options if value is not None]
        if given:
            verb = "apply" if len(given) > 1 else "applies"
            raise ValueError(
                f"{' and '.join(given)} {verb} to sending the merged metrics: add --otel-send (or --otel-endpoint URL)"
            )
        return
    if args.otel_timeout is None:
        args.otel_timeout = 10.0
    if not (args.otel_timeout > 0 and args.otel_timeout != float("inf")):  # NaN too
        raise ValueError(f"--otel-timeout must be a number of seconds > 0, got {args.otel_timeout}")
    if args.otel_endpoint is not None:
        from .config.otel import check_url, protocol_from_env  # only with --otel-endpoint

        try:
            check_url(
                args.otel_endpoint, "--otel-endpoint", args.otel_protocol or protocol_from_env(os.environ, "metrics")
            )
        except pytest.UsageError as exc:
            raise ValueError(str(exc)) from None


if __name__ == "__main__":
    sys.exit(main())
