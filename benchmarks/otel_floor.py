"""The export's floor: what one exported run costs the plugin, against the bare OpenTelemetry SDK.

Side by side in one run, for OTLP/HTTP (protobuf) and OTLP/gRPC, each against
a real receiver on 127.0.0.1 (``tests/otlp_receiver.py``, one per protocol,
the same for every variant of that protocol):

- **the plugin's marginal export cost per run**: export on minus export off,
  per run, between sessions of N1 and N2 trivial runs (2,000 and 6,000 by
  default), so that start-up, the session span, the metrics and the last
  flush cancel:
  ``((on(N2) - on(N1)) - (off(N2) - off(N1))) / (N2 - N1)``, paired within
  each round, median over the rounds; for passing runs
  (``def bench_pass(): pass``) and failing ones (``assert False``, with
  ``--tb=no`` on both sides, so pytest's own failure report is paid by both
  and printed by neither);
- **the bare SDK's cost of the same spans**: a subprocess (``--bare``) that
  makes, per "run", the span the plugin makes (the same name, resource,
  scope and attributes, the same ``exception`` event, assertion attribute
  and status for a failed run), made current (``context.attach``) while the
  run executes, ended, and sent by the SDK's own ``BatchSpanProcessor`` and
  OTLP exporter of the protocol, to the same receiver; and the same metric
  series (``probability.runs`` by outcome and the ``probability.run.duration``
  histogram recorded per run through SDK instruments, the gauges once),
  exported at the end by the SDK's OTLP metric exporter. Its per-run cost is
  ``(bare(N2) - bare(N1)) / (N2 - N1)`` (the loop itself costs well under
  1 us per run). The batch processor's queue is made large enough that no
  span is dropped (the plugin drops none either), and the script checks that
  every span arrived;
- **the bare SDK under pytest** (``pytestsdk``): the same spans and metric
  points made by the SDK from pytest's own hooks (a span per item, current
  while the item runs, ``Span.record_exception`` on a failed call), sent by
  its ``BatchSpanProcessor`` and OTLP exporters, in a session whose plugin
  export is off; its marginal cost is taken as the plugin's is (on minus off).
  This is the floor of any pytest plugin that exports runs with the SDK: it
  pays what the SDK's presence costs pytest's own per-run work (logging
  capture walks every logger, garbage collection over a larger heap), which
  the bare loop outside pytest does not;
- the ratio plugin / bare, and plugin / SDK under pytest, per protocol and
  outcome;
- **sleeping runs**: on/off wall ratio of sessions of runs of 10 ms (and
  100 ms) per protocol, and the extra per run;
- **peak RSS** (``VmHWM``) export off and on at 2,000 and 20,000 passing runs
  (``--rss``), and what importing the SDK with the protocol's exporters costs
  on top of pytest (``import_footprint``): the goal is on = off + that
  footprint, with no growth between the two sizes.

Every variant runs once per round, in an order rotated each round, after an
untimed warm-up of each kind of session; medians over the rounds. Timings are
wall time of the whole process; CPU time (user + system, ``os.wait4``) is
printed beside it. The script prints the machine and the load average at its
start and end. The plugin's sessions use ``_measure.py``'s session runner (no
other plugin auto-loaded, ``OTEL_*`` scrubbed).

    .venv/bin/python benchmarks/otel_floor.py                      # everything, 5 rounds (~25 min on 2 CPUs)
    .venv/bin/python benchmarks/otel_floor.py -r 7 --no-sleep --no-rss   # the floor alone (~8 min)
    .venv/bin/python benchmarks/otel_floor.py --sleep 10 --sleep-runs 1000 --json > floor.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _measure import child_env, describe_machine, loadavg, machine, run_session_output, warn_if_busy, write_folder  # noqa: E402
from otel_overhead import load_receiver  # noqa: E402

PASS_FILE = "def bench_pass():\n    pass\n"
FAIL_FILE = "def bench_fail():\n    assert False\n"
SLEEP_FILE = "import time\n\n\ndef bench_sleep():\n    time.sleep({seconds})\n"
PROTOCOLS = {"http": "http/protobuf", "grpc": "grpc"}
#: The source of ``floor_sdk.py``, the plugin of the ``imported`` variant (set once the modules are known).
SDK_IMPORTER = ""
SUITE = "floor"

#: The message the plugin puts on a failed run's span for ``def bench_fail(): assert False`` (``RunSpans._finish``).
FAIL_MESSAGE = "assert False"
#: A plugin that records the modules a session imported, for the import footprint and the ``imported`` variant.
MODULES_PLUGIN = (
    "import os, sys\n\n\n"
    "def pytest_unconfigure(config):\n"
    "    with open(os.environ['PROB_FLOOR_MODULES'], 'w') as handle:\n"
    "        handle.write('\\n'.join(sys.modules))\n"
)


def bare_loop(protocol: str, endpoint: str, runs: int, outcome: str) -> int:
    """The bare SDK making the plugin's run spans and metric points (run in a subprocess by ``--bare``)."""
    from traceback import format_exception

    from opentelemetry import context as otel_context
    from opentelemetry import trace
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from opentelemetry.trace import Status, StatusCode

    if protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

        span_exporter = OTLPSpanExporter(endpoint=endpoint, insecure=True)
        metric_exporter = OTLPMetricExporter(endpoint=endpoint, insecure=True)
    else:
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        span_exporter = OTLPSpanExporter(endpoint=f"{endpoint}/v1/traces")
        metric_exporter = OTLPMetricExporter(endpoint=f"{endpoint}/v1/metrics")
    import pytest_probability

    version = pytest_probability.__version__
    resource = Resource.create({"service.name": "pytest-probability", "test.suite.name": SUITE})
    provider = TracerProvider(resource=resource)
    # A queue that holds every span: the plugin never drops one, so neither may the floor.
    provider.add_span_processor(BatchSpanProcessor(span_exporter, max_queue_size=max(2048, runs + 16)))
    reader = PeriodicExportingMetricReader(metric_exporter, export_interval_millis=3_600_000)
    meters = MeterProvider(metric_readers=[reader], resource=resource)
    meter = meters.get_meter("pytest_probability", version)
    tracer = provider.get_tracer("pytest_probability", version)

    benchmark = "pass" if outcome == "pass" else "fail"
    case = {
        "test.case.name": f"bench_{benchmark}.py::{benchmark}",
        "probability.benchmark": benchmark,
        "probability.case": "",
    }
    shared = {
        **case,
        "code.function.name": f"bench_{benchmark}.bench_{benchmark}",
        "code.file.path": f"bench_{benchmark}.py",
        "code.line.number": 1,
    }
    name = f"probability.run {benchmark}"
    runs_counter = meter.create_counter("probability.runs", unit="{run}")
    duration = meter.create_histogram("probability.run.duration", unit="s")
    session = tracer.start_span("probability.session", attributes={"test.suite.name": SUITE})
    parent = trace.set_span_in_context(session)
    attach, detach, in_context = otel_context.attach, otel_context.detach, trace.set_span_in_context
    clock = time.perf_counter
    for run in range(1, runs + 1):
        started = clock()
        span = tracer.start_span(
            name,
            context=parent,
            attributes={
                **shared,
                "probability.run": run,
                "pytest.nodeid": f"bench_{benchmark}.py::bench_{benchmark}::run{run}",
            },
        )
        token = attach(in_context(span))
        if outcome == "pass":
            span.set_attributes({"probability.outcome": "pass", "test.case.result.status": "pass"})
        else:
            try:
                assert False, FAIL_MESSAGE  # noqa: B011 - the "run"
            except AssertionError as exc:
                # The stack as the SDK's own Span.record_exception formats it (the standard library's
                # traceback module), under the plugin's three attribute names.
                stack = "".join(format_exception(type(exc), exc, exc.__traceback__))
            span.set_attributes(
                {"probability.outcome": "fail", "test.case.result.status": "fail", "error.type": "AssertionError"}
            )
            span.set_attribute("probability.assertion", FAIL_MESSAGE)
            span.add_event(
                "exception",
                {"exception.type": "AssertionError", "exception.message": FAIL_MESSAGE, "exception.stacktrace": stack},
            )
            span.set_status(Status(StatusCode.ERROR, f"fail in call: {FAIL_MESSAGE}"))
        span.end()
        detach(token)
        runs_counter.add(1, {**case, "probability.outcome": outcome})
        duration.record(clock() - started, {**case, "probability.outcome": outcome})
    for other in ("pass", "fail", "error", "skip"):
        if other != outcome:
            runs_counter.add(0, {**case, "probability.outcome": other})
    for gauge, value in (
        ("probability.case.pass_fraction", 1.0 if outcome == "pass" else 0.0),
        ("probability.session.pass_fraction", 1.0 if outcome == "pass" else 0.0),
        ("probability.case.interval.lower", 0.0),
        ("probability.case.interval.upper", 1.0),
    ):
        meter.create_gauge(gauge).set(value, case)
    session.end()
    provider.shutdown()  # the batch processor's last batches, sent
    meters.shutdown()  # the metric points, sent
    return 0


#: The plugin of the ``pytestsdk`` variant: the bare SDK making the same spans and metric points from
#: pytest's own hooks, in a session where the plugin's export is off. ``{protocol}``, ``{endpoint}``.
PYTEST_SDK = """\
import time

import pytest
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import Status, StatusCode

if "{protocol}" == "grpc":
    from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

    _spans, _metrics = OTLPSpanExporter(endpoint="{endpoint}", insecure=True), OTLPMetricExporter(endpoint="{endpoint}", insecure=True)
else:
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    _spans, _metrics = OTLPSpanExporter(endpoint="{endpoint}/v1/traces"), OTLPMetricExporter(endpoint="{endpoint}/v1/metrics")

_resource = Resource.create({{"service.name": "pytest-probability", "test.suite.name": "{suite}"}})
_provider = TracerProvider(resource=_resource)
_provider.add_span_processor(BatchSpanProcessor(_spans, max_queue_size={queue}))
_reader = PeriodicExportingMetricReader(_metrics, export_interval_millis=3_600_000)
_meters = MeterProvider(metric_readers=[_reader], resource=_resource)
_tracer = _provider.get_tracer("pytest_probability")
_meter = _meters.get_meter("pytest_probability")
_runs = _meter.create_counter("probability.runs", unit="{{run}}")
_duration = _meter.create_histogram("probability.run.duration", unit="s")
_session = _tracer.start_span("probability.session", attributes={{"test.suite.name": "{suite}"}})
_parent = trace.set_span_in_context(_session)
_open = {{}}


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    started = time.perf_counter()
    case = item.originalname if hasattr(item, "originalname") else item.name
    attributes = {{"test.case.name": item.nodeid.rsplit("[", 1)[0], "probability.benchmark": case,
                  "probability.case": "", "code.function.name": f"{{item.module.__name__}}.{{case}}",
                  "code.file.path": item.location[0], "code.line.number": item.location[1] + 1,
                  "probability.run": 1, "pytest.nodeid": item.nodeid}}
    span = _tracer.start_span(f"probability.run {{case}}", context=_parent, attributes=attributes)
    token = otel_context.attach(trace.set_span_in_context(span))
    _open[item.nodeid] = [span, "pass"]
    try:
        return (yield)
    finally:
        outcome = _open.pop(item.nodeid)[1]
        span.set_attributes({{"probability.outcome": outcome,
                             "test.case.result.status": "pass" if outcome == "pass" else "fail"}})
        span.end()
        otel_context.detach(token)
        labels = {{"test.case.name": attributes["test.case.name"], "probability.benchmark": case,
                  "probability.case": "", "probability.outcome": outcome}}
        _runs.add(1, labels)
        _duration.record(time.perf_counter() - started, labels)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if call.excinfo is not None and call.when == "call":
        span, _ = _open[item.nodeid]
        _open[item.nodeid][1] = "fail"
        message = str(call.excinfo.value)
        span.set_attributes({{"error.type": call.excinfo.type.__name__, "probability.assertion": message}})
        span.record_exception(call.excinfo.value)  # the SDK's own: the whole stack, formatted by traceback
        span.set_status(Status(StatusCode.ERROR, f"fail in call: {{message}}"))
    return report


def pytest_unconfigure(config):
    for gauge in ("probability.case.pass_fraction", "probability.session.pass_fraction",
                  "probability.case.interval.lower", "probability.case.interval.upper"):
        _meter.create_gauge(gauge).set(0.0)
    _session.end()
    _provider.shutdown()
    _meters.shutdown()
"""


def run_process(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU (user + system, the child's own) seconds of one process, which must exit 0."""
    start = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    output = process.stdout.read().decode(errors="replace") if process.stdout else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed: {' '.join(command)}\n{output[-3000:]}")
    return wall, usage.ru_utime + usage.ru_stime


def vmhwm_of(code: str, python: str, env: dict[str, str]) -> int:
    """Peak RSS (KiB) of ``python -c code``, read by the child itself at its end."""
    tail = "\nfor line in open('/proc/self/status'):\n    if line.startswith('VmHWM:'): print(line.split()[1])\n"
    out = subprocess.run([python, "-c", code + tail], env=env, check=True, capture_output=True, text=True)
    return int(out.stdout.split()[-1])


def session_modules(python: str, tmp: Path, args: list[str], name: str) -> list[str]:
    """The modules (in import order) of a 10-run session with ``args``, at its end."""
    folder = write_folder(tmp / f"modules-{name}", {"bench_pass.py": PASS_FILE, "floor_modules.py": MODULES_PLUGIN})
    listing = folder / "modules.txt"
    run_session_output(
        folder,
        ["-p", "floor_modules", "--prob-runs=10", *args],
        python=python,
        autoload=False,
        expected_items=10,
        extra_env={"PROB_FLOOR_MODULES": str(listing)},
    )
    return listing.read_text().split("\n")


def importer(names: list[str]) -> str:
    """Python source importing ``names`` in order (a module that cannot be imported alone is skipped)."""
    return (
        "import importlib\n"
        f"for _name in {names!r}:\n"
        "    try:\n        importlib.import_module(_name)\n"
        "    except Exception:\n        pass\n"
    )


def import_footprint(
    python: str, env: dict[str, str], extra: dict[str, list[str]], repetitions: int = 5
) -> dict[str, float]:
    """MiB that the modules export on imports (those of an exporting session that an export-off one does not
    have: the SDK, the protocol's OTLP exporters and their libraries, the plugin's otel package) add to
    ``import pytest, pytest_probability.plugin``; per protocol, median of ``repetitions`` children."""
    base = "import pytest, pytest_probability.plugin\n"
    plain = statistics.median(vmhwm_of(base, python, env) for _ in range(repetitions))
    return {
        name: round(
            (statistics.median(vmhwm_of(base + importer(names), python, env) for _ in range(repetitions)) - plain)
            / 1024,
            1,
        )
        for name, names in extra.items()
    }


def spans_received(rx) -> int:
    return sum(
        len(scope.spans)
        for request in rx.trace_requests
        for resource in request.resource_spans
        for scope in resource.scope_spans
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-r", "--repetitions", type=int, default=5, help="timed rounds (default 5)")
    parser.add_argument(
        "--sizes",
        type=int,
        nargs=2,
        default=[2000, 6000],
        metavar=("N1", "N2"),
        help="trivial runs of the two sessions whose difference is the marginal cost",
    )
    parser.add_argument("--protocols", nargs="+", choices=sorted(PROTOCOLS), default=["http", "grpc"])
    parser.add_argument("--outcomes", nargs="+", choices=("pass", "fail"), default=["pass", "fail"])
    parser.add_argument(
        "--sleep",
        type=int,
        nargs="*",
        default=[10, 100],
        metavar="MS",
        help="sleeping runs' length in ms (default 10 100)",
    )
    parser.add_argument(
        "--sleep-runs",
        type=int,
        nargs="*",
        default=[1000, 200],
        metavar="N",
        help="runs per sleeping session, one per --sleep value (default 1000 200)",
    )
    parser.add_argument("--no-sleep", action="store_true", help="no sleeping runs")
    parser.add_argument(
        "--rss",
        type=int,
        nargs="*",
        default=[2000, 20000],
        metavar="N",
        help="passing runs of the peak-RSS sessions (default 2000 20000)",
    )
    parser.add_argument("--no-rss", action="store_true", help="no peak-RSS sessions")
    parser.add_argument("--python", default=sys.executable, help="interpreter with pytest and the plugin installed")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--bare", nargs=4, metavar=("PROTOCOL", "ENDPOINT", "RUNS", "OUTCOME"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.bare:
        protocol, endpoint, runs, outcome = args.bare
        return bare_loop(protocol, endpoint, int(runs), outcome)
    sleeps = [] if args.no_sleep else list(zip(args.sleep, args.sleep_runs, strict=False))
    rss_sizes = [] if args.no_rss else args.rss
    n1, n2 = args.sizes
    receiver_module = load_receiver()
    info = machine(
        args.python, ("pytest", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-grpc", "grpcio", "protobuf")
    )
    warn_if_busy(info)
    samples: dict[tuple, list[tuple[float, float, int]]] = {}
    with tempfile.TemporaryDirectory(prefix="prob-otel-floor-") as tmp:
        receivers = {name: receiver_module.OtlpReceiver(name).start() for name in args.protocols}
        try:
            off_modules = set(session_modules(args.python, Path(tmp), ["--prob-otel=off"], "off"))
            extra = {
                name: [
                    m
                    for m in session_modules(
                        args.python,
                        Path(tmp),
                        [f"--prob-otel-endpoint={rx.endpoint}", f"--prob-otel-protocol={PROTOCOLS[name]}"],
                        name,
                    )
                    if m and m not in off_modules
                ]
                for name, rx in receivers.items()
            }
            sdk_modules = list(
                dict.fromkeys(m for names in extra.values() for m in names if not m.startswith("pytest_probability"))
            )
            global SDK_IMPORTER
            SDK_IMPORTER = importer(sdk_modules)
            footprint = import_footprint(args.python, child_env(Path(tmp) / "pycache", autoload=False), extra)
            plan = _plan(args, receivers, n1, n2, sleeps, rss_sizes)
            kinds: dict[tuple, tuple] = {}
            for entry in plan:  # the warm-up: one session of each kind, at its smallest size
                kind = entry[:2] + entry[3:4]
                if kind not in kinds or entry[2] < kinds[kind][2]:
                    kinds[kind] = entry
            rounds = [list(kinds.values())] + [plan] * args.repetitions
            for repetition, sessions in enumerate(rounds):
                shift = (repetition * 7) % len(sessions)
                for entry in sessions[shift:] + sessions[:shift]:
                    sample = _run(entry, receivers, Path(tmp), repetition, args.python)
                    if repetition:
                        samples.setdefault(entry, []).append(sample)
                    print(
                        f"  round {repetition} {' '.join(map(str, entry)):40} wall {sample[0]:7.3f} s "
                        f"cpu {sample[1]:7.3f} s rss {sample[2] / 1024:6.1f} MiB",
                        file=sys.stderr,
                    )
        finally:
            for rx in receivers.values():
                rx.stop()
    info["loadavg_end"] = loadavg()
    result = _results(args, samples, n1, n2, sleeps, rss_sizes, footprint)
    result["machine"] = info
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        _print(result)
    return 0


def _plan(args, receivers, n1, n2, sleeps, rss_sizes) -> list[tuple]:
    """Every timed session: (what, variant, runs, outcome or ms); variant off, on-PROTO or bare-PROTO."""
    plan: list[tuple] = []
    for outcome in args.outcomes:
        for n in (n1, n2):
            plan.append(("floor", "off", n, outcome))
            plan.append(("floor", "imported", n, outcome))
            for name in receivers:
                plan += [
                    ("floor", f"on-{name}", n, outcome),
                    ("floor", f"bare-{name}", n, outcome),
                    ("floor", f"pytestsdk-{name}", n, outcome),
                ]
    for ms, n in sleeps:
        plan.append(("sleep", "off", n, ms))
        plan += [("sleep", f"on-{name}", n, ms) for name in receivers]
    for n in rss_sizes:
        plan.append(("rss", "off", n, "pass"))
        plan += [("rss", f"on-{name}", n, "pass") for name in receivers]
    return plan


def _run(entry: tuple, receivers, tmp: Path, repetition: int, python: str) -> tuple[float, float, int]:
    what, variant, n, detail = entry
    side, _, name = variant.partition("-")
    rx = receivers.get(name)
    if rx is not None:
        rx.clear()
    if side == "bare":
        env = child_env(tmp / "pycache", autoload=False)
        wall, cpu = run_process([python, __file__, "--bare", name, rx.endpoint, str(n), detail], env)
        sample = (wall, cpu, 0)
    else:
        if what == "sleep":
            files = {"bench_sleep.py": SLEEP_FILE.format(seconds=detail / 1000)}
        else:
            files = {f"bench_{detail}.py": PASS_FILE if detail == "pass" else FAIL_FILE}
        session_args = [f"--prob-runs={n}", "--tb=no", f"-o=prob_suite={SUITE}"]
        if side == "imported":  # export off, with every module export on imports but the plugin's own
            files["floor_sdk.py"] = SDK_IMPORTER
            session_args += ["-p", "floor_sdk"]
        if side == "pytestsdk":  # export off, the bare SDK making the spans from pytest's hooks
            files["floor_pytest_sdk.py"] = PYTEST_SDK.format(
                protocol=name, endpoint=rx.endpoint, suite=SUITE, queue=max(2048, n + 16)
            )
            session_args += ["-p", "floor_pytest_sdk"]
        session_args += (
            ["--prob-otel=off"]
            if rx is None or side == "pytestsdk"
            else [f"--prob-otel-endpoint={rx.endpoint}", f"--prob-otel-protocol={PROTOCOLS[name]}"]
        )
        folder = write_folder(tmp / f"{what}-{variant}-{n}-{detail}-{repetition}", files)
        session, text = run_session_output(
            folder, session_args, python=python, autoload=False, expected_items=n, statuses=(0, 1)
        )
        if rx is not None and "OpenTelemetry:" in text:
            raise SystemExit(f"{entry}: the export failed\n{text[-2000:]}")
        sample = (session.wall, session.cpu, session.maxrss_kib)
    if rx is not None:
        receiver_module = sys.modules["prob_bench_otlp_receiver"]
        receiver_module.wait_for(
            lambda: spans_received(rx) >= n + 1 and rx.count("metrics") >= 1,
            timeout=30,
            message=f"{entry}: {spans_received(rx)} spans of {n + 1} arrived",
        )
    return sample


def _median_pairs(values: list[float]) -> float:
    return statistics.median(values)


def _results(args, samples, n1, n2, sleeps, rss_sizes, footprint) -> dict:
    rounds = args.repetitions
    out: dict = {
        "repetitions": rounds,
        "sizes": [n1, n2],
        "floor": [],
        "sleep": [],
        "rss": [],
        "import_footprint_mib": footprint,
    }

    def per_round(key, index):
        return [s[index] for s in samples[key]]

    def slope(variant, outcome, index):
        a, b = per_round(("floor", variant, n1, outcome), index), per_round(("floor", variant, n2, outcome), index)
        return [(y - x) / (n2 - n1) * 1e6 for x, y in zip(a, b, strict=False)]

    for outcome in args.outcomes:
        off_wall, off_cpu = slope("off", outcome, 0), slope("off", outcome, 1)
        for name in args.protocols:
            on_wall, on_cpu = slope(f"on-{name}", outcome, 0), slope(f"on-{name}", outcome, 1)
            bare_wall, bare_cpu = slope(f"bare-{name}", outcome, 0), slope(f"bare-{name}", outcome, 1)
            plugin_wall = statistics.median(on - off for on, off in zip(on_wall, off_wall, strict=False))
            plugin_cpu = statistics.median(on - off for on, off in zip(on_cpu, off_cpu, strict=False))
            bare_w, bare_c = statistics.median(bare_wall), statistics.median(bare_cpu)
            under_wall = slope(f"pytestsdk-{name}", outcome, 0)
            under_cpu = slope(f"pytestsdk-{name}", outcome, 1)
            pytest_w = statistics.median(u - off for u, off in zip(under_wall, off_wall, strict=False))
            pytest_c = statistics.median(u - off for u, off in zip(under_cpu, off_cpu, strict=False))
            imp_wall, imp_cpu = slope("imported", outcome, 0), slope("imported", outcome, 1)
            imported_wall = statistics.median(i - off for i, off in zip(imp_wall, off_wall, strict=False))
            imported_cpu = statistics.median(i - off for i, off in zip(imp_cpu, off_cpu, strict=False))
            on_n2 = statistics.median(per_round(("floor", f"on-{name}", n2, outcome), 0))
            off_n2 = statistics.median(per_round(("floor", "off", n2, outcome), 0))
            out["floor"].append({
                "protocol": name, "outcome": outcome,
                "plugin_us": round(plugin_wall, 1), "bare_us": round(bare_w, 1),
                "ratio": round(plugin_wall / bare_w, 2) if bare_w > 0 else None,
                "plugin_cpu_us": round(plugin_cpu, 1), "bare_cpu_us": round(bare_c, 1),
                "cpu_ratio": round(plugin_cpu / bare_c, 2) if bare_c > 0 else None,
                "off_us_per_run": round(statistics.median(off_wall), 1),
                "imported_us": round(imported_wall, 1), "imported_cpu_us": round(imported_cpu, 1),
                "pytest_sdk_us": round(pytest_w, 1), "pytest_sdk_cpu_us": round(pytest_c, 1),
                "ratio_to_pytest_sdk": round(plugin_wall / pytest_w, 2) if pytest_w > 0 else None,
                "cpu_ratio_to_pytest_sdk": round(plugin_cpu / pytest_c, 2) if pytest_c > 0 else None,
                "pytest_sdk_us_rounds": [round(u - off, 1) for u, off in zip(under_wall, off_wall, strict=False)],
                f"on_off_{n2}": round(on_n2 / off_n2, 3),
                "plugin_us_rounds": [round(on - off, 1) for on, off in zip(on_wall, off_wall, strict=False)],
                "bare_us_rounds": [round(x, 1) for x in bare_wall],
            })  # fmt: skip
    for ms, n in sleeps:
        off = per_round(("sleep", "off", n, ms), 0)
        for name in args.protocols:
            on = per_round(("sleep", f"on-{name}", n, ms), 0)
            out["sleep"].append({
                "protocol": name, "ms": ms, "runs": n, "off_s": round(statistics.median(off), 3),
                "on_s": round(statistics.median(on), 3),
                "ratio": round(statistics.median(on) / statistics.median(off), 4),
                "ratio_rounds": [round(a / b, 4) for a, b in zip(on, off, strict=False)],
                "extra_us_per_run": round((statistics.median(on) - statistics.median(off)) / n * 1e6, 1),
            })  # fmt: skip
    for n in rss_sizes:
        off = statistics.median(per_round(("rss", "off", n, "pass"), 2)) / 1024
        row = {"runs": n, "off_mib": round(off, 1)}
        for name in args.protocols:
            on = statistics.median(per_round(("rss", f"on-{name}", n, "pass"), 2)) / 1024
            row[f"on_{name}_mib"] = round(on, 1)
            row[f"extra_{name}_mib"] = round(on - off, 1)
        out["rss"].append(row)
    return out


def _print(result: dict) -> None:
    print(describe_machine(result["machine"]))
    n1, n2 = result["sizes"]
    print(f"{result['repetitions']} rounds; marginal cost per run between {n1} and {n2} trivial runs (wall; CPU)")
    print(
        f"{'protocol':8} {'outcome':7} {'plugin us':>10} {'bare SDK us':>11} {'ratio':>6} "
        f"{'plugin cpu':>10} {'bare cpu':>9} {'ratio':>6} {'off us/run':>10} {f'on/off {n2}':>12} "
        f"{'imported us':>11} {'cpu':>6}"
    )
    for row in result["floor"]:
        print(
            f"{row['protocol']:8} {row['outcome']:7} {row['plugin_us']:>10.1f} {row['bare_us']:>11.1f} "
            f"{row['ratio'] or 0:>6.2f} {row['plugin_cpu_us']:>10.1f} {row['bare_cpu_us']:>9.1f} "
            f"{row['cpu_ratio'] or 0:>6.2f} {row['off_us_per_run']:>10.1f} {row[f'on_off_{n2}']:>12.3f} "
            f"{row['imported_us']:>11.1f} {row['imported_cpu_us']:>6.1f}"
        )
    print(
        "imported: export off with the modules export on imports loaded (the SDK, exporters and libraries): "
        "what their presence alone adds per run, part of the plugin's figure"
    )
    print(
        f"\n{'protocol':8} {'outcome':7} {'plugin us':>10} {'SDK under pytest us':>20} {'ratio':>6} "
        f"{'plugin cpu':>10} {'SDK cpu':>8} {'ratio':>6}"
    )
    for row in result["floor"]:
        print(
            f"{row['protocol']:8} {row['outcome']:7} {row['plugin_us']:>10.1f} {row['pytest_sdk_us']:>20.1f} "
            f"{row['ratio_to_pytest_sdk'] or 0:>6.2f} {row['plugin_cpu_us']:>10.1f} "
            f"{row['pytest_sdk_cpu_us']:>8.1f} {row['cpu_ratio_to_pytest_sdk'] or 0:>6.2f}"
        )
    print(
        "SDK under pytest: export off, the bare SDK making the same spans and metric points from pytest's hooks "
        "(span per item, record_exception on a failure), on minus off: the floor of any pytest plugin exporting runs"
    )
    if result["sleep"]:
        print(f"\n{'protocol':8} {'run ms':>6} {'runs':>6} {'off s':>8} {'on s':>8} {'on/off':>7} {'extra us/run':>12}")
        for row in result["sleep"]:
            print(
                f"{row['protocol']:8} {row['ms']:>6} {row['runs']:>6} {row['off_s']:>8.2f} {row['on_s']:>8.2f} "
                f"{row['ratio']:>7.4f} {row['extra_us_per_run']:>12.1f}"
            )
    print(
        "\nimport footprint of what export on imports, over pytest and the plugin (MiB): "
        + ", ".join(f"{k} {v}" for k, v in result["import_footprint_mib"].items())
    )
    if result["rss"]:
        names = [k[3:-4] for k in result["rss"][0] if k.startswith("on_")]
        print(f"peak RSS MiB\n{'runs':>6} {'off':>7} " + " ".join(f"{'on ' + n:>8} {'+' + n:>7}" for n in names))
        for row in result["rss"]:
            print(
                f"{row['runs']:>6} {row['off_mib']:>7.1f} "
                + " ".join(f"{row[f'on_{n}_mib']:>8.1f} {row[f'extra_{n}_mib']:>7.1f}" for n in names)
            )


if __name__ == "__main__":
    sys.exit(main())
