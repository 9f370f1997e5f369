"""What the merge's shape check costs per 100,000 records, against the floor of reading the same report.

One shard's ``--prob-json`` report of --records runs (as a shard session writes it: ``benchmarks/merge.py``'s
``shard_reports``, gated cases, usage on every run; ``--scores`` adds two scores per run), then, in this
process, variants alternating, medians of --reps:

- ``parse``: ``json.loads`` of the file's text (the floor: the merge reads every report this way);
- ``check``: ``features.shards.merge.check_shape`` on the parsed report (every field the merge reads, by
  its path);
- ``walk``: the bare loop over the same cases and records that reads every field the check reads and tests
  its type with ``type(value) in ...``, nothing else (no range, no marker keyword parsed): what a check of
  these fields costs at least.

Prints each median of CPU time (``time.process_time``: the machine is shared) per 100,000 records, and
``check / parse``, ``check / walk``. ``--runs 1`` makes a case per record (the cases' check then counts
as much as the records').

    .venv/bin/python benchmarks/shape_check.py                      # 100,000 records of 10,000 cases, 7 repetitions
    .venv/bin/python benchmarks/shape_check.py --runs 1             # 100,000 records of 100,000 cases
    .venv/bin/python benchmarks/shape_check.py --records 1000000 --reps 3
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _measure import describe_machine, loadavg, machine  # noqa: E402
from merge import shard_reports  # noqa: E402

from pytest_probability.features.shards.merge import check_shape  # noqa: E402

_NUMBER = (int, float)


def walk(report: dict[str, Any]) -> None:
    """Every field the check reads, read and its type tested: the floor of any check of them."""
    for case in report["cases"]:
        if type(case) is not dict:
            raise ValueError("cases")
        for key in ("key", "benchmark", "case", "label", "path", "function"):
            if type(case.get(key, "")) is not str:
                raise ValueError(key)
        for key in ("order", "runs", "lineno"):
            if type(case.get(key, 0)) is not int:
                raise ValueError(key)
        for pair in case.get("params") or ():
            if type(pair) is not list or len(pair) != 2:
                raise ValueError("params")
        for pair in case.get("marks") or ():
            if type(pair) is not list or len(pair) != 2 or type(pair[0]) is not str:
                raise ValueError("marks")
    for name in ("records", "skipped_runs"):
        for record in report.get(name) or ():
            if type(record) is not dict:
                raise ValueError(name)
            get = record.get
            for key in ("run", "transcript_dropped"):
                if type(get(key, 0)) is not int:
                    raise ValueError(key)
            for key in ("duration", "extra_cost", "start_time"):
                if type(get(key, 0.0)) not in _NUMBER:
                    raise ValueError(key)
            for key in ("nodeid", "outcome", "phase", "case_key", "message", "error_type", "error_text"):
                if type(get(key, "")) not in (str, type(None)):
                    raise ValueError(key)
            for key in ("usage", "retries", "transcript", "scores"):
                if type(get(key, [])) is not list:
                    raise ValueError(key)
            for usage in get("usage") or ():
                for value in usage.values():
                    if type(value) not in (str, int, float, bool):
                        raise ValueError("usage")
            for score in get("scores") or ():
                if type(score.get("name")) is not str or type(score.get("value")) not in _NUMBER:
                    raise ValueError("scores")


def with_scores(report: dict[str, Any]) -> None:
    for record in report["records"]:
        record["scores"] = [
            {"name": "judge", "value": 0.75, "threshold": None, "explanation": "fine"},
            {"name": "similarity", "value": 0.5, "threshold": 0.25, "explanation": None},
        ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=100_000, help="records in the report (default 100,000)")
    parser.add_argument("--runs", type=int, default=10, help="runs per case (default 10)")
    parser.add_argument("--reps", type=int, default=7, help="repetitions (default 7)")
    parser.add_argument("--scores", action="store_true", help="two scores on every record")
    args = parser.parse_args(argv)
    print(describe_machine(machine(sys.executable)))
    print(f"load average at start: {loadavg()}")
    with tempfile.TemporaryDirectory() as tmp:
        (path,) = shard_reports(Path(tmp), 1, args.records // args.runs, args.runs)
        text = path.read_text(encoding="utf-8")
    if args.scores:
        data = json.loads(text)
        with_scores(data)
        text = json.dumps(data)
    records = len(json.loads(text)["records"])
    samples: dict[str, list[float]] = {"parse": [], "check": [], "walk": []}
    for rep in range(args.reps):
        names = list(samples) if rep % 2 == 0 else list(reversed(samples))
        for name in names:
            report = json.loads(text)
            start = time.process_time()
            if name == "parse":
                json.loads(text)
            elif name == "check":
                check_shape(report)
            else:
                walk(report)
            samples[name].append(time.process_time() - start)
    per = 100_000 / records
    medians = {name: statistics.median(values) * per for name, values in samples.items()}
    print(f"{records:,} records ({len(text) / 1e6:.1f} MB), {args.reps} repetitions, per 100,000 records (median):")
    for name, value in medians.items():
        low, high = min(samples[name]) * per, max(samples[name]) * per
        print(f"  {name:5}  {value * 1000:8.1f} ms   ({low * 1000:.1f} to {high * 1000:.1f})")
    print(
        f"  check / parse {medians['check'] / medians['parse']:.2f}, check / walk {medians['check'] / medians['walk']:.2f}"
    )
    print(f"load average at end: {loadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
