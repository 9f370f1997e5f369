"""``python -m pytest_probability merge``: the shards' reports judged as one session (``__main__`` parses it).

The merge's composition: the features with a part in the merged report, in a session's order, imported
at the top here, so that the command line's other commands (``report``, ``diff``) do not pay for them; the
HTML report with ``--html``, and the exporter (``otel.replay``) with ``--otel-file`` or ``--otel-send``
only, each in its one place below.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import pytest

from . import files
from .config.otel import check_url, protocol_from_env
from .config.values import check_trace_url
from .features.ci_outputs.feature import CiOutputsFeature, merge_summary_path, write_outputs
from .features.compare.baseline import history_name
from .features.compare.feature import ComparisonFeature
from .features.quarantine.feature import MergedQuarantine
from .features.shards.merge import MergeError, gate_lines, merge
from .features.spend.feature import Spend
from .features.states.feature import MergedStates
from .report import html_report, json_report


def merge_command(args: argparse.Namespace) -> int:
    """``merge``: the shards' reports judged as one session; its exit status (2: a report or an output refused)."""
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
                ComparisonFeature(on=False),
                MergedStates(args.prob_history),
                MergedQuarantine(),
                CiOutputsFeature(None, False, summary is not None or annotate),
            ),
            args,
        )
    except (MergeError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    outputs = [(Path(args.output), lambda: json_report.dumps(merged.report))]
    if args.prob_history:  # the night's report joins the history the next night's states are decided over
        outputs.append((Path(args.prob_history) / history_name(), lambda: json_report.dumps(merged.report)))
    if args.html:
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
        try:
            check_url(
                args.otel_endpoint, "--otel-endpoint", args.otel_protocol or protocol_from_env(os.environ, "metrics")
            )
        except pytest.UsageError as exc:
            raise ValueError(str(exc)) from None
