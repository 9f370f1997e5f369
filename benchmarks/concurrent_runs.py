"""Concurrent runs (``--prob-concurrency=K``, issue 44): 640 fake model calls, against the ideal, the bare
library and inspect_ai, in one run.

Every session executes the same work: 8 cases x 80 runs of a fake model call (``provider.py``, written
into the session folder) that waits ``--latency`` seconds (0.25): ``await asyncio.sleep`` for async
benchmarks, ``time.sleep`` for sync ones. The same sessions at zero latency (``asyncio.sleep(0)``,
``time.sleep(0)``) give what the sessions cost apart from waiting, so that

    excess = wall(latency) - wall(zero latency)      (paired within each round)

is the time the waits added, which with K calls in flight is at best the ideal ``640 x 0.25 / K``
(2.5 s at K=64). Variants, each in a fresh process, all alternating in a rotating order over the rounds:

- ``async-win``: pytest-asyncio, the default function loop scope, so runs execute in windows of K;
- ``async-slide``: ``loop_scope="module"`` (``--slide-scope``): the window slides;
- ``sync``: a sync benchmark blocking in ``time.sleep``, in K threads;
- each at K=64 with latency, K=64 at zero latency, and K=1 at zero latency (the CPU per run one at a time;
  K=1 with latency waits 160 s, so ``--k1-latency`` adds it only when asked);
- ``n2-win``, ``n2-slide``: ``-n 2`` with K=32 in each worker (the ideal is again 2.5 s);
- ``limit-slide``, ``limit-win``: a provider that refuses a call when 16 are in flight already (it raises
  ``RateLimited``, with ``status_code = 429`` and ``retry_after = 0.2``, before its wait), at K=64 with
  ``--prob-retry=50 --prob-retry-on=RateLimited``; case ``c`` fails ``c`` of every 8 of its accepted calls,
  so the fractions are fixed whatever the order, and ``nolimit-slide`` (the same without the limit) shows
  them; ``mixed-*`` at zero latency are their base; the ideal at 16 is 640 x 0.25 / 16 = 10 s;
- ``floor-async``, ``floor-threads``, ``floor-limit``: the bare library on the same calls in one process:
  ``asyncio.gather`` under ``Semaphore(K)``, a ``ThreadPoolExecutor(K)``, and ``Semaphore(16)`` against the
  limited provider;
- ``inspect``: inspect_ai 0.3.285 (``--inspect-python``, a separate venv; skipped with a message when it is
  missing): a custom model API whose ``generate`` awaits the same call, 8 samples x 80 epochs,
  ``max_connections=64``, ``display="none"``, its log written to the session folder.

Per session: wall time around the process; its CPU (``os.wait4``: its own and its reaped children's, an
xdist controller's workers included); the CPU of pytest's run loop (``pytest_runtestloop``, all threads;
the controller's own under xdist); the calls the provider saw and refused, and the calls in flight over
time (on average from the first call to the last one's end, and the seconds with none), written to
``stats-<pid>.json`` at each process's exit; the JSON report's counts, fractions and ``concurrency`` object.

Usage::

    .venv/bin/python benchmarks/concurrent_runs.py                 # everything, 3 rounds (~25-30 min on 2 shared cores)
    .venv/bin/python benchmarks/concurrent_runs.py -r 1 --only async   # one group (the floors always run)
    .venv/bin/python benchmarks/concurrent_runs.py --k1-latency -r 2 --only async sync   # K=1 sessions that wait too
    .venv/bin/python benchmarks/concurrent_runs.py --save concurrent.json   # the table, and the samples as JSON

Goals (issue 44): excess at most 1.3 x the ideal (async, sync, -n 2); CPU per run at K=64 at most 1.2 x the
K=1 session's (with the latency when ``--k1-latency`` measured it); our wall at most 0.5 x inspect's; with the limit: every fraction as without it, at most 15 %
of calls refused, excess at most 1.5 x the ideal at 16. It asserts nothing: it measures. The machine is
shared: it prints the load average seen before each session, and each figure's spread over the rounds.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import statistics
import sys
import tempfile
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import (  # noqa: E402 - shared helpers next to this script
    child_env,
    describe_machine,
    loadavg,
    machine,
    order,
    paired_median,
    run_process,
    run_session_output,
    warn_if_busy,
    write_folder,
)

ROOT = Path(__file__).resolve().parent.parent
INSPECT_PYTHON = ROOT / ".venv-inspect" / "bin" / "python"
INSPECT_VERSION = "0.3.285"

LATENCY_ENV = "PROB_CR_LATENCY"
LIMIT_ENV = "PROB_CR_LIMIT"
MIXED_ENV = "PROB_CR_MIXED"
STATS_ENV = "PROB_CR_STATS"

#: The fake provider every variant calls: the benchmarks, the floors and inspect's model API alike.
PROVIDER = textwrap.dedent(
    f'''
    """A fake model API: waits {LATENCY_ENV} seconds; with {LIMIT_ENV}=N it refuses a call while N are in flight.

    Counts the calls it saw and refused, and writes them at exit to {STATS_ENV}/stats-<pid>.json.
    """
    import asyncio
    import atexit
    import json
    import os
    import threading
    import time

    LATENCY = float(os.environ.get("{LATENCY_ENV}", "0.25"))
    LIMIT = int(os.environ.get("{LIMIT_ENV}", "0"))
    MIXED = os.environ.get("{MIXED_ENV}") == "1"
    CASES = 8
    RETRY_AFTER = 0.2

    _lock = threading.Lock()
    _in_flight = 0
    _stats = {{"calls": 0, "refused": 0, "peak": 0}}
    _accepted = {{}}
    #: calls in flight over time: [first call, last change, integral of calls in flight, seconds with none]
    _time = [None, 0.0, 0.0, 0.0]


    def _account(now):
        # called under the lock before _in_flight changes
        if _time[0] is None:
            _time[0] = _time[1] = now
        elapsed = now - _time[1]
        _time[2] += _in_flight * elapsed
        if not _in_flight:
            _time[3] += elapsed
        _time[1] = now


    class RateLimited(Exception):
        """429 Too Many Requests, with the wait the provider asks for."""

        status_code = 429

        def __init__(self):
            super().__init__("429 Too Many Requests: rate limit, retry after 0.2 s")
            self.retry_after = RETRY_AFTER


    def _admit(case):
        global _in_flight
        with _lock:
            _stats["calls"] += 1
            if LIMIT and _in_flight >= LIMIT:
                _stats["refused"] += 1
                raise RateLimited()
            _account(time.perf_counter())
            _in_flight += 1
            _stats["peak"] = max(_stats["peak"], _in_flight)
            accepted = _accepted.get(case, 0)
            _accepted[case] = accepted + 1
        return accepted


    def _release():
        global _in_flight
        with _lock:
            _account(time.perf_counter())
            _in_flight -= 1


    def _answer(case, accepted):
        # case c fails c of every CASES accepted calls: its fraction is fixed whatever the order of the calls
        return not MIXED or accepted % CASES >= case


    async def acall(case):
        accepted = _admit(case)
        try:
            await asyncio.sleep(LATENCY)
        finally:
            _release()
        return _answer(case, accepted)


    def call(case):
        accepted = _admit(case)
        try:
            time.sleep(LATENCY)
        finally:
            _release()
        return _answer(case, accepted)


    @atexit.register
    def _write():
        folder = os.environ.get("{STATS_ENV}")
        if folder and _stats["calls"]:
            span = _time[1] - _time[0]
            _stats.update(span=span, idle=_time[3], mean=_time[2] / span if span else 0.0)
            with open(os.path.join(folder, f"stats-{{os.getpid()}}.json"), "w") as handle:
                json.dump(_stats, handle)
    '''
)

BENCH_ASYNC = textwrap.dedent(
    """
    import pytest

    import provider


    @pytest.mark.asyncio{marker}
    @pytest.mark.parametrize("case", range(provider.CASES))
    async def bench_call(case):
        assert await provider.acall(case)
    """
)

BENCH_SYNC = textwrap.dedent(
    """
    import pytest

    import provider


    @pytest.mark.parametrize("case", range(provider.CASES))
    def bench_call(case):
        assert provider.call(case)
    """
)

#: The bare library on the same calls: argv mode K runs-per-case.
FLOOR = textwrap.dedent(
    """
    import asyncio
    import concurrent.futures
    import sys

    import provider

    mode, k, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    calls = [case for case in range(provider.CASES) for _ in range(runs)]  # the plugin's order: a case's runs together


    async def main():
        semaphore = asyncio.Semaphore(k)

        async def one(case):
            async with semaphore:
                return await provider.acall(case)

        return await asyncio.gather(*(one(case) for case in calls))


    if mode == "async":
        results = asyncio.run(main())
    else:
        with concurrent.futures.ThreadPoolExecutor(max_workers=k) as pool:
            results = list(pool.map(provider.call, calls))
    print(sum(results), "of", len(results), "passed")
    """
)

#: inspect_ai on the same calls: argv runs-per-case K log-folder.
INSPECT = textwrap.dedent(
    """
    import sys

    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import GenerateConfig, ModelAPI, ModelOutput, modelapi
    from inspect_ai.scorer import includes
    from inspect_ai.solver import generate

    import provider

    runs, k, logs = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]


    @modelapi(name="fakeprovider")
    class FakeProvider(ModelAPI):
        def __init__(self, model_name, base_url=None, api_key=None, config=GenerateConfig(), **model_args):
            super().__init__(model_name, base_url, api_key, [], config)

        async def generate(self, input, tools, tool_choice, config):
            case = int(input[-1].text.split()[-1])
            answer = "yes" if await provider.acall(case) else "no"
            return ModelOutput.from_content(model=self.model_name, content=answer)


    dataset = [Sample(input=f"case {case}", target="yes") for case in range(provider.CASES)]
    task = Task(dataset=dataset, solver=generate(), scorer=includes())
    log = eval(task, model="fakeprovider/fake", max_connections=k, epochs=runs, display="none", log_dir=logs)[0]
    samples = len(log.samples or [])
    print(log.status, samples, "samples", log.results.scores[0].metrics["accuracy"].value if log.results else None)
    if log.status != "success" or samples != provider.CASES * runs:
        sys.exit(1)
    """
)


@dataclass(frozen=True)
class Variant:
    name: str
    #: "session" (pytest), "floor" (the bare library) or "inspect".
    kind: str
    latency: float
    k: int
    #: The bench file (a session), the floor's mode, or "".
    target: str = ""
    workers: int = 0
    limit: int = 0
    mixed: bool = False
    retry: bool = False
    group: str = ""

    @property
    def label(self) -> str:
        return f"{self.name} K={self.k} {self.latency:g}s"


@dataclass
class Result:
    variant: Variant
    samples: list[dict[str, Any]] = field(default_factory=list)

    def values(self, key: str) -> list[float]:
        return [s[key] for s in self.samples if s.get(key) is not None]

    def median(self, key: str) -> float | None:
        values = self.values(key)
        return statistics.median(values) if values else None


def variants(args: argparse.Namespace) -> list[Variant]:
    lat, k, k2 = args.latency, args.k, args.k_xdist
    groups = set(args.only)
    out: list[Variant] = []
    families = [("async-win", "bench_async_win.py"), ("async-slide", "bench_async_slide.py"), ("sync", "bench_sync.py")]
    for name, target in families:
        group = "sync" if name == "sync" else "async"
        if group not in groups:
            continue
        out += [
            Variant(name, "session", lat, k, target, group=group),
            Variant(name, "session", 0.0, k, target, group=group),
            Variant(name, "session", 0.0, 1, target, group=group),
        ]
        if args.k1_latency:
            out.append(Variant(name, "session", lat, 1, target, group=group))
    if "xdist" in groups:
        for name, target in (("n2-win", "bench_async_win.py"), ("n2-slide", "bench_async_slide.py")):
            out += [Variant(name, "session", x, k2, target, workers=2, group="xdist") for x in (lat, 0.0)]
    if "limit" in groups:
        for name, target in (("limit-slide", "bench_async_slide.py"), ("limit-win", "bench_async_win.py")):
            out.append(
                Variant(name, "session", lat, k, target, limit=args.limit, mixed=True, retry=True, group="limit")
            )
        out.append(Variant("nolimit-slide", "session", lat, k, "bench_async_slide.py", mixed=True, group="limit"))
        for name, target in (("mixed-slide", "bench_async_slide.py"), ("mixed-win", "bench_async_win.py")):
            out.append(Variant(name, "session", 0.0, k, target, mixed=True, group="limit"))
    # the floors are in every run: each figure beside what the bare library does at that moment
    floors = [("floor-async", "async", k), ("floor-threads", "threads", k)]
    for name, mode, size in floors:
        out += [Variant(name, "floor", x, size, mode, group="floors") for x in (lat, 0.0)]
    if "limit" in groups:
        out.append(Variant("floor-limit", "floor", lat, args.limit, "async", limit=args.limit, group="floors"))
    if "inspect" in groups and args.inspect_python:
        out += [Variant("inspect", "inspect", x, k, group="inspect") for x in (lat, 0.0)]
    return out


def session_args(v: Variant, args: argparse.Namespace) -> list[str]:
    command = ["-p", "asyncio", f"--prob-runs={args.runs}", f"--prob-concurrency={v.k}", "--prob-json=report.json"]
    command += ["-o", "asyncio_default_fixture_loop_scope=function"]  # pytest-asyncio's warning otherwise
    if v.workers:
        command += ["-p", "xdist", "-n", str(v.workers), f"--dist={args.dist}"]
    if v.retry:
        command += ["--prob-retry=50", "--prob-retry-on=RateLimited"]
    return command + [v.target]


def run_one(v: Variant, folder: Path, args: argparse.Namespace) -> dict[str, Any]:
    stats = folder / "stats"
    shutil.rmtree(stats, ignore_errors=True)
    stats.mkdir()
    env_extra = {LATENCY_ENV: repr(v.latency), LIMIT_ENV: str(v.limit), MIXED_ENV: "1" if v.mixed else "0"}
    env_extra[STATS_ENV] = str(stats)
    expected = 8 * args.runs
    load = loadavg()
    sample: dict[str, Any] = {"load1": load[0] if load else None}
    if v.kind == "session":
        report = folder / "report.json"
        report.unlink(missing_ok=True)
        measured, text = run_session_output(
            folder,
            session_args(v, args),
            python=args.python,
            autoload=False,
            expected_items=None if v.workers else expected,
            extra_env=env_extra,
            statuses=(0, 1) if v.mixed else (0,),
        )
        data = json.loads(report.read_text())
        count = data["totals"]["count"]
        if count != expected:
            raise SystemExit(f"{v.label}: {count} runs in the report, expected {expected}\n{text[-2000:]}")
        sample.update(wall=measured.wall, cpu=measured.cpu, run=measured.run, run_cpu=measured.run_cpu)
        sample["fractions"] = {row["case_id"]: row["pass_fraction"] for row in data["rows"]}
        sample["errors"] = data["totals"]["errors"]
        sample["retries"] = sum(len(r.get("retries") or ()) for r in data["records"])
        sample["concurrency"] = data.get("concurrency")
        sample["duplicates"] = "were reported more than once" in text
    else:
        if v.kind == "floor":
            command = [args.python, "floor.py", v.target, str(v.k), str(args.runs)]
        else:
            logs = folder / "inspect-logs"
            shutil.rmtree(logs, ignore_errors=True)
            command = [str(args.inspect_python), "inspect_eval.py", str(args.runs), str(v.k), str(logs)]
        process = run_process(command, cwd=folder, env=child_env(folder / "pycache", autoload=False, extra=env_extra))
        if process.status != 0:
            raise SystemExit(f"{v.label} failed ({process.status}):\n{process.output[-3000:]}")
        sample.update(wall=process.wall, cpu=process.cpu)
    counted = [json.loads(p.read_text()) for p in stats.glob("stats-*.json")]
    sample["calls"] = sum(c["calls"] for c in counted)
    sample["refused"] = sum(c["refused"] for c in counted)
    sample["provider_peak"] = max((c["peak"] for c in counted), default=0)
    # from the first call to the last one's end: calls in flight on average, seconds with none (per process)
    sample["provider_mean"] = sum(c.get("mean", 0.0) for c in counted)
    sample["provider_span"] = max((c.get("span", 0.0) for c in counted), default=0.0)
    sample["provider_idle"] = max((c.get("idle", 0.0) for c in counted), default=0.0)
    return sample


def measure(args: argparse.Namespace, log) -> dict[str, Any]:
    plan = variants(args)
    results = {v: Result(v) for v in plan}
    with tempfile.TemporaryDirectory(prefix="prob-concurrent-runs-") as temp:
        files = {
            "provider.py": PROVIDER,
            "bench_async_win.py": BENCH_ASYNC.format(marker=""),
            "bench_async_slide.py": BENCH_ASYNC.format(marker=f'(loop_scope="{args.slide_scope}")'),
            "bench_sync.py": BENCH_SYNC,
            "floor.py": FLOOR,
            "inspect_eval.py": INSPECT,
        }
        folder = write_folder(Path(temp) / "session", files)
        # warm-up: the bytecode caches, once for each command, at zero latency (untimed)
        seen = set()
        for v in plan:
            key = (v.kind, v.target, v.workers)
            if key not in seen and args.warmup:
                seen.add(key)
                run_one(Variant(v.name, v.kind, 0.0, v.k, v.target, v.workers, mixed=v.mixed), folder, args)
        for repetition in range(args.repetitions):
            for v in order(plan, repetition):
                sample = run_one(v, folder, args)
                results[v].samples.append(sample)
                extra = f"  {sample['refused']}/{sample['calls']} refused" if v.limit else f"  {sample['calls']} calls"
                if "run_cpu" in sample:
                    extra += f"  run-loop cpu {sample['run_cpu']:.2f} s"
                log(
                    f"round {repetition + 1} {v.label:<26} {sample['wall']:6.2f} s wall {sample['cpu']:6.2f} s cpu"
                    f"{extra}  load {sample['load1']}"
                )
    return {"results": results, "plan": plan}


# -- figures -------------------------------------------------------------------------------------------


def find(results: dict[Variant, Result], name: str, latency: float, k: int | None = None) -> Result | None:
    for v, result in results.items():
        if v.name == name and v.latency == latency and (k is None or v.k == k) and result.samples:
            return result
    return None


def ideal(calls: int, latency: float, slots: int) -> float:
    """The least wall time of ``calls`` waits of ``latency`` with ``slots`` in flight: ``calls x latency / slots``
    when ``slots`` divides ``calls`` (640 x 0.25 / 64 = 2.5 s), else the waits of the whole batches."""
    return math.ceil(calls / slots) * latency


def spread(values: list[float]) -> list[float]:
    return [min(values), max(values)] if values else []


def excess(high: Result, zero: Result, ideal: float) -> dict[str, Any]:
    """What the waits added (paired per round), against the ideal."""
    a, b = high.values("wall"), zero.values("wall")
    per_round = [x - y for x, y in zip(a, b, strict=False)]
    value = paired_median(a, b)
    return {
        "wall": statistics.median(a),
        "wall_spread": spread(a),
        "zero_wall": statistics.median(b),
        "zero_wall_spread": spread(b),
        "excess": value,
        "excess_spread": spread(per_round),
        "ideal": ideal,
        "ratio": value / ideal,
        "ratio_spread": [x / ideal for x in spread(per_round)],
        "load": spread([s["load1"] for s in high.samples + zero.samples if s["load1"] is not None]),
    }


def figures(data: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    results = data["results"]
    lat, k, runs = args.latency, args.k, args.runs
    calls = 8 * runs
    out: dict[str, Any] = {"ideal": ideal(calls, lat, k), "calls": calls}
    for name in ("async-win", "async-slide", "sync", "floor-async", "floor-threads", "n2-win", "n2-slide", "inspect"):
        size = args.k_xdist if name.startswith("n2-") else k
        high, zero = find(results, name, lat, size), find(results, name, 0.0, size)
        if high is None or zero is None:
            continue
        fig = excess(high, zero, ideal(calls, lat, size * (2 if name.startswith("n2-") else 1)))
        fig["cpu"] = high.median("cpu")
        fig["zero_cpu"] = zero.median("cpu")
        fig["calls_made"] = spread(high.values("calls"))
        one = find(results, name, 0.0, 1)
        waited = find(results, name, lat, 1)
        baseline = waited or one  # the K=1 session: with the latency when measured (--k1-latency), else at zero
        if baseline is not None:  # CPU per run against the K=1 session
            fig["run_cpu_per_run_ms"] = 1000 * high.median("run_cpu") / calls
            fig["zero_run_cpu_per_run_ms"] = 1000 * zero.median("run_cpu") / calls
            fig["k1_latency"] = baseline.variant.latency
            fig["k1_run_cpu_per_run_ms"] = 1000 * baseline.median("run_cpu") / calls
            fig["cpu_ratio"] = high.median("run_cpu") / baseline.median("run_cpu")
            per_round = [a / b for a, b in zip(high.values("run_cpu"), baseline.values("run_cpu"), strict=False)]
            fig["cpu_ratio_spread"] = spread(per_round)
            fig["process_cpu_ratio"] = high.median("cpu") / baseline.median("cpu")
            if one is not None and waited is not None:
                fig["k1_zero_run_cpu_per_run_ms"] = 1000 * one.median("run_cpu") / calls
                fig["k1_latency_wall"] = waited.median("wall")
        if high.samples[0].get("concurrency"):
            fig["concurrency"] = high.samples[-1]["concurrency"]
        if any(s.get("duplicates") for s in high.samples):
            fig["duplicates"] = True
        out[name] = fig
    inspect = find(results, "inspect", lat)
    if inspect is not None:
        for name in ("async-win", "async-slide", "sync"):
            ours = find(results, name, lat, k)
            if ours is None:
                continue
            per_round = [a / b for a, b in zip(ours.values("wall"), inspect.values("wall"), strict=False)]
            out.setdefault("against_inspect", {})[name] = {
                "ratio": statistics.median(ours.values("wall")) / statistics.median(inspect.values("wall")),
                "ratio_spread": spread(per_round),
            }
    nolimit = find(results, "nolimit-slide", lat)
    for name, base in (("limit-slide", "mixed-slide"), ("limit-win", "mixed-win")):
        high, zero = find(results, name, lat), find(results, base, 0.0)
        if high is None or zero is None:
            continue
        fig = excess(high, zero, ideal(calls, lat, args.limit))
        shares = [s["refused"] / s["calls"] for s in high.samples]
        fig["refused_share"] = statistics.median(shares)
        fig["refused_share_spread"] = spread(shares)
        fig["refused"] = spread(high.values("refused"))
        fig["calls_made"] = spread(high.values("calls"))
        fig["provider_peak"] = spread(high.values("provider_peak"))
        fig["errors"] = spread(high.values("errors"))
        reference = nolimit.samples[0]["fractions"] if nolimit is not None else None
        fig["fractions"] = high.samples[0]["fractions"]
        fig["fractions_same"] = reference is not None and all(s["fractions"] == reference for s in high.samples)
        fig["reference_fractions"] = reference
        concurrency = [s.get("concurrency") for s in high.samples if s.get("concurrency")]
        if concurrency:
            fig["window_cuts"] = spread([c.get("window_cuts", 0) for c in concurrency])
            fig["faults"] = spread([c.get("faults", 0) for c in concurrency])
            fig["mean_in_flight"] = spread([c.get("mean_in_flight", 0) for c in concurrency])
        out[name] = fig
    floor = find(results, "floor-limit", lat)
    zero = find(results, "floor-async", 0.0)
    if floor is not None and zero is not None:
        out["floor-limit"] = excess(floor, zero, ideal(calls, lat, args.limit))
    return out


def _range(values: list[float], fmt: str = "{:.2f}") -> str:
    return "-".join(fmt.format(x) for x in values) if values else "n/a"


def report_text(data: dict[str, Any], figs: dict[str, Any], args: argparse.Namespace) -> str:
    lines = [f"machine: {describe_machine(data['machine'])}", ""]
    lines.append(
        f"{figs['calls']} calls (8 cases x {args.runs}) of {args.latency:g} s; medians of {args.repetitions} "
        f"rounds, variants alternating; [min-max over the rounds]; excess = wall - wall at zero latency, paired"
    )
    lines.append("")
    lines.append(
        f"{'variant':<26} {'wall s':>16} {'cpu s':>6} {'run-loop cpu ms/run':>20} {'calls':>10}"
        f" {'in flight':>9} {'calls s':>7} {'idle s':>6} {'load':>10}"
    )
    for v, result in data["results"].items():
        if not result.samples:
            continue
        run_cpu = result.values("run_cpu")
        per_run = f"{1000 * statistics.median(run_cpu) / figs['calls']:.3f}" if run_cpu else ""
        calls = result.values("calls")
        load = [s["load1"] for s in result.samples if s["load1"] is not None]
        lines.append(
            f"{v.label:<26} {result.median('wall'):6.2f} [{_range(spread(result.values('wall')))}]"
            f" {result.median('cpu'):6.2f} {per_run:>20} {_range(spread(calls), '{:.0f}'):>10}"
            f" {result.median('provider_mean') or 0:9.1f} {result.median('provider_span') or 0:7.2f}"
            f" {result.median('provider_idle') or 0:6.2f} {_range(spread(load), '{:.1f}'):>10}"
        )
    lines.append(
        "in flight: calls in flight at the provider on average, from the first call to the last one's end (calls s);"
        " idle s: the time in it with none in flight (per process: the sum, and the longest, under -n 2)"
    )
    lines.append("")
    lines.append("goals (issue 44):")

    def goal(label: str, value: float | None, bound: float, spread_: list[float], unit: str = "x") -> None:
        if value is None:
            return
        met = "met" if value <= bound else "MISSED"
        lines.append(f"  {label:<58} {value:6.3f}{unit} [{_range(spread_, '{:.3f}')}]  goal <= {bound:g}{unit}: {met}")

    for name, what in (
        ("async-win", "async, loop per function (windows)"),
        ("async-slide", f"async, loop_scope={args.slide_scope} (slides)"),
        ("sync", "sync, threads"),
        ("n2-win", f"-n 2, K={args.k_xdist} each, async windows"),
        ("n2-slide", f"-n 2, K={args.k_xdist} each, async slides"),
        ("floor-async", "floor: asyncio.gather under Semaphore(K)"),
        ("floor-threads", "floor: ThreadPoolExecutor(K)"),
        ("inspect", "inspect_ai (not a goal: its own excess)"),
    ):
        fig = figs.get(name)
        if fig is None:
            continue
        goal(
            f"{what}: excess {fig['excess']:.2f} s / ideal {fig['ideal']:.2f} s",
            fig["ratio"],
            1.3,
            fig["ratio_spread"],
        )
        if "cpu_ratio" in fig:
            goal(
                f"{what}: run-loop CPU/run {fig['run_cpu_per_run_ms']:.3f} ms / K=1's "
                f"{fig['k1_run_cpu_per_run_ms']:.3f} ms ({fig['k1_latency']:g} s)",
                fig["cpu_ratio"],
                1.2,
                fig["cpu_ratio_spread"],
            )
            lines.append(
                f"    whole process CPU against K=1's: {fig['process_cpu_ratio']:.3f}; K=64 at zero latency: "
                f"{fig['zero_run_cpu_per_run_ms']:.3f} ms/run"
                + (
                    f"; K=1 at zero latency: {fig['k1_zero_run_cpu_per_run_ms']:.3f} ms/run"
                    if "k1_zero_run_cpu_per_run_ms" in fig
                    else ""
                )
            )
        if fig.get("concurrency"):
            c = fig["concurrency"]
            lines.append(
                f"    report: mean in flight {c.get('mean_in_flight')}, peak {c.get('peak_in_flight')}, "
                f"wall over ideal {c.get('wall_over_ideal')}"
            )
        if fig.get("duplicates"):
            lines.append("    the session reported runs more than once: executions duplicated across workers")
        if fig.get("calls_made") and fig["calls_made"] != [figs["calls"], figs["calls"]]:
            lines.append(f"    the provider saw {_range(fig['calls_made'], '{:.0f}')} calls, not {figs['calls']}")
    for name, fig in figs.get("against_inspect", {}).items():
        goal(f"{name} wall / inspect_ai's wall", fig["ratio"], 0.5, fig["ratio_spread"])
    if "inspect" not in figs and "inspect" in args.only:
        lines.append(f"  inspect_ai: skipped ({args.inspect_skipped})")
    for name in ("limit-slide", "limit-win"):
        fig = figs.get(name)
        if fig is None:
            continue
        goal(
            f"{name}: excess {fig['excess']:.2f} s / ideal at {args.limit} {fig['ideal']:.2f} s",
            fig["ratio"],
            1.5,
            fig["ratio_spread"],
        )
        goal(f"{name}: refused share of calls", fig["refused_share"], 0.15, fig["refused_share_spread"])
        lines.append(
            f"    fractions the same as without the limit: {'yes' if fig['fractions_same'] else 'NO'} "
            f"({fig['fractions']} against {fig['reference_fractions']}); errors {_range(fig['errors'], '{:.0f}')}; "
            f"calls {_range(fig['calls_made'], '{:.0f}')}, refused {_range(fig['refused'], '{:.0f}')}, "
            f"peak in flight at the provider {_range(fig['provider_peak'], '{:.0f}')}"
            + (f"; window cuts {_range(fig['window_cuts'], '{:.0f}')}" if "window_cuts" in fig else "")
        )
    fig = figs.get("floor-limit")
    if fig is not None:
        goal(f"floor: Semaphore({args.limit}) against the limit: excess {fig['excess']:.2f} s", fig["ratio"], 1.5, [])
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-r", "--repetitions", type=int, default=3, help="timed rounds (default 3)")
    parser.add_argument("--warmup", type=int, default=1, help="0: no untimed warm-up sessions")
    parser.add_argument("--runs", type=int, default=80, help="runs per case (default 80: 640 runs)")
    parser.add_argument("--latency", type=float, default=0.25, help="the fake call's wait (default 0.25 s)")
    parser.add_argument("-k", type=int, default=64, help="--prob-concurrency, and the floors' K (default 64)")
    parser.add_argument("--k-xdist", type=int, default=32, help="K in each of -n 2's workers (default 32)")
    parser.add_argument("--dist", default="load", help="xdist's --dist for the -n 2 sessions (default load)")
    parser.add_argument("--limit", type=int, default=16, help="the limited provider's calls in flight (default 16)")
    parser.add_argument("--slide-scope", default="module", choices=("module", "session", "package", "class"))
    parser.add_argument(
        "--only",
        nargs="+",
        default=["async", "sync", "xdist", "inspect", "limit"],
        choices=("async", "sync", "xdist", "inspect", "limit"),
        help="the variants' groups (default all; the floors are always measured)",
    )
    parser.add_argument("--k1-latency", action="store_true", help="also K=1 with the latency (160 s a session)")
    parser.add_argument("--python", default=sys.executable, help="interpreter with pytest and the plugin")
    parser.add_argument(
        "--inspect-python",
        default=str(INSPECT_PYTHON),
        help=f"interpreter with inspect_ai {INSPECT_VERSION} (default .venv-inspect; see benchmarks/README.md)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.add_argument("--save", metavar="FILE", help="also write the JSON to FILE")
    parser.add_argument("-q", "--quiet", action="store_true", help="no per-session progress on stderr")
    args = parser.parse_args(argv)
    args.inspect_skipped = ""
    if "inspect" in args.only:
        if not Path(args.inspect_python).exists():
            args.inspect_skipped = (
                f"no interpreter at {args.inspect_python}: python3 -m venv .venv-inspect && "
                f".venv-inspect/bin/pip install inspect_ai=={INSPECT_VERSION}"
            )
            print(f"inspect_ai comparison skipped: {args.inspect_skipped}", file=sys.stderr)
            args.inspect_python = None
        else:
            version = run_process(
                [args.inspect_python, "-c", "import inspect_ai; print(inspect_ai.__version__)"],
                cwd=ROOT,
                env=child_env(Path(tempfile.gettempdir()), autoload=False),
            ).output.strip()
            if version != INSPECT_VERSION:
                print(f"warning: inspect_ai {version}, not {INSPECT_VERSION}", file=sys.stderr)
            args.inspect_version = version
    info = machine(args.python, ("pytest", "pytest-asyncio", "pytest-xdist"))
    if getattr(args, "inspect_version", None):
        info["versions"]["inspect_ai"] = args.inspect_version
    warn_if_busy(info)

    def log(text: str) -> None:
        if not args.quiet:
            print(text, file=sys.stderr, flush=True)

    data = measure(args, log)
    data["machine"] = info
    info["loadavg_end"] = loadavg()
    figs = figures(data, args)
    samples = {v.label: r.samples for v, r in data["results"].items()}
    document = json.dumps({"machine": info, "arguments": vars(args), "figures": figs, "samples": samples}, indent=2)
    if args.save:
        Path(args.save).write_text(document + "\n")
    if args.json:
        print(document)
    else:
        print(report_text(data, figs, args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
