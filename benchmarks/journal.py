"""What ``--prob-journal`` costs per run, against the floor of the same writes made by a bare loop.

Side by side, in fresh processes, variants alternating, medians of --repetitions:

- ``off``: ``--prob-runs=N`` of a benchmark (trivial, or sleeping --sleep seconds);
- ``on``: the same with ``--prob-journal`` (one write and one ``fsync`` per run);
- ``resume``: the same again on the finished journal: every run read back, nothing executed;
- ``floor``: the bare loop, in this process: N lines of the journal's own size, each one
  ``os.write`` on an ``O_APPEND`` descriptor and one ``os.fsync``, on the same file system;
- ``write``: the same loop without the fsync (what the session's main thread does: the journal
  fsyncs on a background thread).

The journal's cost per run is (on − off) / N; the floors' are the loops' times / N. The fsync is the
file system's, so the figures depend on the disk (tmpfs makes it nearly free: pass --dir).

    .venv/bin/python benchmarks/journal.py                        # N = 2000 trivial runs, 5 repetitions
    .venv/bin/python benchmarks/journal.py -n 500 --sleep 0.01    # runs of 10 ms
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _measure import (  # noqa: E402
    add_session_arguments,
    describe_machine,
    loadavg,
    machine,
    order,
    parse_session_arguments,
    run_session,
    write_folder,
)

BENCH = "import time\n\n\ndef bench_journal():\n    {body}\n"


def floor(path: Path, line: bytes, n: int, sync: bool = True) -> float:
    """Seconds for n appended lines, each fsynced (``sync``): what a journal of these records costs at least."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_TRUNC, 0o644)
    try:
        start = time.perf_counter()
        for _ in range(n):
            os.write(fd, line)
            if sync:
                os.fsync(fd)
        return time.perf_counter() - start
    finally:
        os.close(fd)
        path.unlink()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_session_arguments(parser)
    parser.set_defaults(runs=[2000])
    parser.add_argument("--sleep", type=float, default=0.0, help="seconds each run sleeps (default 0: trivial)")
    parser.add_argument("--dir", default=None, help="folder for the sessions and journals (default: the temp folder)")
    args = parse_session_arguments(parser, argv)
    info = machine(args.python)
    print(describe_machine(info))
    print(f"load average at start: {loadavg()}")
    body = f"time.sleep({args.sleep})" if args.sleep else "pass"
    results = []
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        for n in args.runs:
            folder = write_folder(Path(tmp) / f"n{n}", {"bench_journal.py": BENCH.format(body=body)})
            journal = folder / "journal.jsonl"
            base = [f"--prob-runs={n}"]
            variants = {"off": base, "on": base + [f"--prob-journal={journal}"]}
            samples: dict[str, list[float]] = {"off": [], "on": [], "resume": [], "floor": [], "write": []}
            for repetition in range(args.warmup + args.repetitions):
                for name in order(list(variants), repetition):
                    journal.unlink(missing_ok=True)
                    wall = run_session(
                        folder, variants[name], python=args.python, autoload=args.autoload, expected_items=n
                    ).wall
                    if repetition >= args.warmup:
                        samples[name].append(wall)
                    if name == "on":
                        resumed = run_session(
                            folder, variants["on"], python=args.python, autoload=args.autoload, expected_items=0
                        ).wall  # every run read back and deselected
                        lines = journal.read_bytes().splitlines(keepends=True)
                        if repetition >= args.warmup:
                            samples["resume"].append(resumed)
                            record = max(lines[2:], key=len) if len(lines) > 2 else lines[-1]
                            samples["floor"].append(floor(folder / "floor.jsonl", record, n))
                            samples["write"].append(floor(folder / "floor.jsonl", record, n, sync=False))
                if not args.quiet:
                    print(f"  N={n} repetition {repetition + 1}/{args.warmup + args.repetitions}", file=sys.stderr)
            med = {name: statistics.median(values) for name, values in samples.items()}
            results.append(
                {
                    "n": n,
                    "sleep": args.sleep,
                    "median_s": med,
                    "samples": samples,
                    "journal_us_per_run": (med["on"] - med["off"]) / n * 1e6,
                    "floor_us_per_run": med["floor"] / n * 1e6,
                    "write_us_per_run": med["write"] / n * 1e6,
                    "on_over_off": med["on"] / med["off"],
                }
            )
    print(f"load average at end: {loadavg()}")
    if args.json:
        print(json.dumps({"machine": info, "results": results}, indent=2))
        return 0
    print(
        f"{'N':>7} {'sleep':>6} {'off s':>8} {'on s':>8} {'on/off':>7} {'resume s':>9} "
        f"{'journal µs/run':>15} {'write+fsync µs/run':>19} {'write µs/run':>13}"
    )
    for r in results:
        m = r["median_s"]
        print(
            f"{r['n']:>7} {r['sleep']:>6g} {m['off']:>8.2f} {m['on']:>8.2f} {r['on_over_off']:>7.3f} "
            f"{m['resume']:>9.2f} {r['journal_us_per_run']:>15.0f} {r['floor_us_per_run']:>19.0f} "
            f"{r['write_us_per_run']:>13.1f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
