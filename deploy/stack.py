#!/usr/bin/env python3
"""The deploy/ stack without containers: the Collector, Jaeger v2, Prometheus 3
and Alertmanager, as built by deploy/build-backends.sh (``make backends``),
started on 127.0.0.1 with deploy/'s own configuration files.

    python3 deploy/stack.py            # or: make stack; Ctrl-C stops it
    python3 deploy/stack.py --data-dir DIR

Only the addresses in the files change: the compose host names (``jaeger``,
``prometheus``, ``alertmanager``, ``otel-collector``) and ``0.0.0.0`` become
127.0.0.1 and the ports below (compose.yaml publishes the same ones where it
publishes any; those it keeps inside its network get ports of their own, since
here all programs share one host). The servers get the flags that compose.yaml
gives them. Python's standard library only.

Ctrl-C (SIGINT), SIGTERM or SIGHUP stops it at any moment, while the
programs start too: every wait (the Collector's config check, each program
getting ready, the running stack) ends within a tenth of a second of the
signal, and every program started is stopped (terminated, and killed if it is
still there after 15 s, or at once on a second signal).

tests/deploy uses the same code (``Stack``) with free ports and temporary
folders, and checks that the rewritten files differ from deploy/'s only in
addresses.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

DEPLOY = Path(__file__).resolve().parent
COLLECTOR_CONFIG = DEPLOY / "otel-collector" / "config.yaml"
JAEGER_CONFIG = DEPLOY / "jaeger" / "config.yaml"
PROMETHEUS_CONFIG = DEPLOY / "prometheus" / "prometheus.yml"
RULES_DIR = DEPLOY / "prometheus" / "rules"
ALERTMANAGER_CONFIG = DEPLOY / "alertmanager" / "alertmanager.yml"

#: The programs, in the order they start (each one's receivers before its senders).
PROGRAMS = ("alertmanager", "jaeger", "prometheus", "otelcol-probability")

#: The ports of ``make stack``. Published ones as in compose.yaml; the rest
#: (inside compose's network there) moved where they would collide.
DEFAULT_PORTS = {
    "otlp_grpc": 4317,  # the collector's OTLP/gRPC receiver
    "otlp_http": 4318,  # the collector's OTLP/HTTP receiver
    "collector_metrics": 8888,  # the collector's own metrics (Prometheus scrapes them)
    "jaeger_otlp": 14317,  # Jaeger's OTLP/gRPC receiver (jaeger:4317 in compose)
    "jaeger_ui": 16686,  # Jaeger's UI and HTTP API
    "jaeger_grpc": 16685,  # Jaeger's gRPC query API
    "jaeger_health": 13133,  # Jaeger's health check (GET /status)
    "jaeger_metrics": 14269,  # Jaeger's own metrics (jaeger:8888 in compose)
    "prometheus": 9090,
    "alertmanager": 9093,
}

#: How often a wait looks at the stop request (and at the program it waits for).
POLL = 0.1
#: How long a stopped program may take to exit before it is killed.
STOP_TIMEOUT = 15.0


class Interrupted(Exception):
    """A stop was requested (``Stack.interrupt()``: Ctrl-C, SIGTERM, SIGHUP) while the stack was starting."""


class Flag:
    """A ``threading.Event`` that a signal handler may set: a plain attribute, waited for in short sleeps (which
    the signal interrupts). Setting an Event from a handler can deadlock on the Event's lock, which the main
    thread the handler interrupted may be holding inside ``wait()``."""

    def __init__(self) -> None:
        self._set = False

    def set(self) -> None:
        self._set = True

    def is_set(self) -> bool:
        return self._set

    def wait(self, timeout: float) -> bool:
        """True as soon as it is set (within 20 ms), else False after ``timeout`` s."""
        deadline = time.monotonic() + timeout
        while not self._set:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            time.sleep(min(left, 0.02))
        return self._set


#: The flags compose.yaml gives each server, less the ones naming paths and
#: addresses (set by ``Stack``). tests/deploy checks they match compose.yaml.
PROMETHEUS_FLAGS = [
    "--storage.tsdb.retention.time=400d",
    "--web.enable-otlp-receiver",
    "--enable-feature=exemplar-storage",
    "--web.enable-lifecycle",
]
ALERTMANAGER_FLAGS = ["--cluster.listen-address="]


def default_backends_dir() -> Path:
    """Where deploy/build-backends.sh puts the programs."""
    if os.environ.get("PROB_BACKENDS_DIR"):
        return Path(os.environ["PROB_BACKENDS_DIR"])
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "pytest-probability" / "backends"


def default_data_dir() -> Path:
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "pytest-probability" / "stack"


# ---------------------------------------------------------------------------
# deploy/'s files with loopback addresses
# ---------------------------------------------------------------------------
def _rewrite(text: str, name: str, substitutions: list[tuple[str, str, int]]) -> str:
    """Apply (regex, replacement, expected count); a count that differs means
    the file changed shape and the rewrite would be wrong: refuse it."""
    for pattern, replacement, expected in substitutions:
        text, n = re.subn(pattern, replacement, text)
        if n != expected:
            raise ValueError(f"{name}: expected {expected} match(es) of {pattern!r}, found {n}")
    return text


def _telemetry(port: int) -> tuple[str, str, int]:
    # service.telemetry.metrics' pull reader: host 0.0.0.0, port 8888.
    return r"host: 0\.0\.0\.0(\s+)port: 8888\b", rf"host: 127.0.0.1\g<1>port: {port}", 1


def collector_config(ports: dict[str, int], text: str | None = None) -> str:
    text = COLLECTOR_CONFIG.read_text() if text is None else text
    return _rewrite(
        text,
        "otel-collector/config.yaml",
        [
            (r"endpoint: 0\.0\.0\.0:4317\b", f"endpoint: 127.0.0.1:{ports['otlp_grpc']}", 1),
            (r"endpoint: 0\.0\.0\.0:4318\b", f"endpoint: 127.0.0.1:{ports['otlp_http']}", 1),
            (r"endpoint: jaeger:4317\b", f"endpoint: 127.0.0.1:{ports['jaeger_otlp']}", 1),
            (
                r"metrics_endpoint: http://prometheus:9090/",
                f"metrics_endpoint: http://127.0.0.1:{ports['prometheus']}/",
                1,
            ),
            _telemetry(ports["collector_metrics"]),
        ],
    )


def jaeger_config(ports: dict[str, int], text: str | None = None) -> str:
    text = JAEGER_CONFIG.read_text() if text is None else text
    return _rewrite(
        text,
        "jaeger/config.yaml",
        [
            (r"endpoint: 0\.0\.0\.0:16686\b", f"endpoint: 127.0.0.1:{ports['jaeger_ui']}", 1),
            (r"endpoint: 0\.0\.0\.0:16685\b", f"endpoint: 127.0.0.1:{ports['jaeger_grpc']}", 1),
            (r"endpoint: 0\.0\.0\.0:13133\b", f"endpoint: 127.0.0.1:{ports['jaeger_health']}", 1),
            (r"endpoint: 0\.0\.0\.0:4317\b", f"endpoint: 127.0.0.1:{ports['jaeger_otlp']}", 1),
            _telemetry(ports["jaeger_metrics"]),
        ],
    )


def prometheus_config(ports: dict[str, int], text: str | None = None) -> str:
    text = PROMETHEUS_CONFIG.read_text() if text is None else text
    return _rewrite(
        text,
        "prometheus/prometheus.yml",
        [
            # The alerting target and the alertmanager scrape job.
            (r'"alertmanager:9093"', f'"127.0.0.1:{ports["alertmanager"]}"', 2),
            (r'"localhost:9090"', f'"127.0.0.1:{ports["prometheus"]}"', 1),
            (r'"otel-collector:8888"', f'"127.0.0.1:{ports["collector_metrics"]}"', 1),
        ],
    )


# ---------------------------------------------------------------------------
# Processes
# ---------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def free_ports() -> dict[str, int]:
    """A free loopback port for every entry of DEFAULT_PORTS, all different."""
    ports: dict[str, int] = {}
    while len(ports) < len(DEFAULT_PORTS):
        port = free_port()
        if port not in ports.values():
            ports[list(DEFAULT_PORTS)[len(ports)]] = port
    return ports


def _http_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1) as resp:  # noqa: S310 - loopback only
            return resp.status == 200
    except (urllib.error.URLError, OSError, ValueError):
        return False


def _port_open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


@dataclass
class Program:
    name: str
    argv: list[str]
    log: Path
    ready: list[str]  # URLs that answer 200 once it serves
    ports: list[int] = field(default_factory=list)  # ports that accept connections once it serves
    proc: subprocess.Popen | None = None

    def start(self) -> None:
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(self.argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def wait_ready(self, timeout: float = 60.0, stopping: Flag | None = None) -> None:
        """Until every URL answers 200 and every port accepts; ``Interrupted`` as soon as ``stopping`` is set
        (checked before each probe, so a program that is slow to start never holds up a stop)."""
        stopping = stopping or Flag()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if stopping.is_set():
                raise Interrupted(f"stopped while {self.name} was starting")
            if not self.running():
                raise RuntimeError(f"{self.name} exited with {self.proc and self.proc.returncode}:\n{self.log_tail()}")
            probes = [(_http_ok, url) for url in self.ready] + [(_port_open, port) for port in self.ports]
            if all(not stopping.is_set() and probe(target) for probe, target in probes):
                return
            stopping.wait(POLL)
        raise RuntimeError(f"{self.name} did not get ready within {timeout:.0f} s:\n{self.log_tail()}")

    def stop(self, timeout: float = STOP_TIMEOUT, hurry: Flag | None = None) -> None:
        """Terminate it and wait until it exits; killed after ``timeout`` s, or as soon as ``hurry`` is set."""
        if self.proc is None or self.proc.poll() is not None:
            return
        hurry = hurry or Flag()
        if not hurry.is_set():
            self.proc.terminate()
            deadline = time.monotonic() + timeout
            while self.proc.poll() is None and time.monotonic() < deadline and not hurry.wait(POLL / 2):
                pass
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


class Stack:
    """The four programs on 127.0.0.1 with deploy/'s files, rewritten by the
    functions above into ``workdir``. ``rules_dir`` replaces
    deploy/prometheus/rules (the tests' copies with a short interval);
    ``prometheus_text``/``alertmanager_text`` are written instead of deploy/'s
    files (the tests' overlays, built from the rewritten files)."""

    def __init__(
        self,
        workdir: Path,
        ports: dict[str, int] | None = None,
        backends: Path | None = None,
        rules_dir: Path | None = None,
        prometheus_text: str | None = None,
        alertmanager_text: str | None = None,
        prometheus_flags: list[str] | None = None,
        log_level: str = "info",
    ):
        self.workdir = Path(workdir)
        self.ports = dict(ports or DEFAULT_PORTS)
        self.backends = Path(backends or default_backends_dir())
        self.rules_dir = Path(rules_dir or RULES_DIR)
        self.prometheus_text = prometheus_text
        self.alertmanager_text = alertmanager_text
        self.prometheus_flags = list(PROMETHEUS_FLAGS if prometheus_flags is None else prometheus_flags)
        self.log_level = log_level
        self.programs: dict[str, Program] = {}
        self._config_paths: dict[str, Path] | None = None
        #: A stop was requested: every wait of ``start()`` ends with ``Interrupted``.
        self.stopping = Flag()
        #: A second request: ``stop()`` kills what is left instead of waiting for it.
        self.hurry = Flag()

    def interrupt(self) -> None:
        """Ask the stack to stop (safe in a signal handler: it only sets flags); a second call hurries the stop."""
        if self.stopping.is_set():
            self.hurry.set()
        self.stopping.set()

    # URLs
    @property
    def otlp_http(self) -> str:
        return f"http://127.0.0.1:{self.ports['otlp_http']}"

    @property
    def otlp_grpc(self) -> str:
        return f"http://127.0.0.1:{self.ports['otlp_grpc']}"

    @property
    def jaeger(self) -> str:
        return f"http://127.0.0.1:{self.ports['jaeger_ui']}"

    @property
    def prometheus(self) -> str:
        return f"http://127.0.0.1:{self.ports['prometheus']}"

    @property
    def alertmanager(self) -> str:
        return f"http://127.0.0.1:{self.ports['alertmanager']}"

    def binary(self, name: str) -> Path:
        path = self.backends / name
        if not os.access(path, os.X_OK):
            raise FileNotFoundError(f"{path} is missing: build it with `make backends` (deploy/build-backends.sh)")
        return path

    def write_configs(self) -> dict[str, Path]:
        """Write every program's configuration into workdir/config, once; returns their paths.
        (Not again for each program: a program that is starting would read a file being rewritten.)"""
        if self._config_paths is not None:
            return self._config_paths
        config = self.workdir / "config"
        (config / "prometheus").mkdir(parents=True, exist_ok=True)
        paths = {
            "otelcol-probability": config / "otel-collector.yaml",
            "jaeger": config / "jaeger.yaml",
            "prometheus": config / "prometheus" / "prometheus.yml",
            "alertmanager": config / "alertmanager.yml",
        }
        paths["otelcol-probability"].write_text(collector_config(self.ports))
        paths["jaeger"].write_text(jaeger_config(self.ports))
        paths["prometheus"].write_text(
            prometheus_config(self.ports) if self.prometheus_text is None else self.prometheus_text
        )
        # prometheus.yml reads rules/*.yml beside itself, as in the container.
        rules = config / "prometheus" / "rules"
        if rules.is_symlink() or rules.is_file():
            rules.unlink()
        if not rules.exists():
            rules.symlink_to(self.rules_dir.resolve(), target_is_directory=True)
        text = ALERTMANAGER_CONFIG.read_text() if self.alertmanager_text is None else self.alertmanager_text
        paths["alertmanager"].write_text(text)
        self._config_paths = paths
        return paths

    def validate_collector_config(self, timeout: float = 60.0) -> subprocess.CompletedProcess:
        """``otelcol validate`` on the rewritten config: errors in it fail here, before anything starts.
        ``Interrupted`` (the check killed) as soon as a stop is requested."""
        path = self.write_configs()["otelcol-probability"]
        argv = [str(self.binary("otelcol-probability")), "validate", f"--config={path}"]
        with subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True
        ) as proc:
            deadline = time.monotonic() + timeout
            while True:
                try:
                    out, err = proc.communicate(timeout=POLL)
                    return subprocess.CompletedProcess(argv, proc.returncode, out, err)
                except subprocess.TimeoutExpired:
                    if self.stopping.is_set() or time.monotonic() >= deadline:
                        proc.kill()
                        proc.communicate()
                        if self.stopping.is_set():
                            raise Interrupted("stopped while the Collector's config was checked") from None
                        raise subprocess.TimeoutExpired(argv, timeout) from None

    def program(self, name: str) -> Program:
        if name in self.programs:
            return self.programs[name]
        paths = self.write_configs()
        data, logs, p = self.workdir / "data", self.workdir / "logs", self.ports
        if name == "alertmanager":
            prog = Program(
                name,
                [
                    str(self.binary(name)),
                    f"--config.file={paths[name]}",
                    f"--storage.path={data / 'alertmanager'}",
                    f"--web.listen-address=127.0.0.1:{p['alertmanager']}",
                    f"--web.external-url={self.alertmanager}",
                    *ALERTMANAGER_FLAGS,
                    f"--log.level={self.log_level}",
                ],
                logs / "alertmanager.log",
                [f"{self.alertmanager}/-/ready"],
            )
        elif name == "jaeger":
            prog = Program(
                name,
                [str(self.binary(name)), f"--config={paths[name]}"],
                logs / "jaeger.log",
                [f"http://127.0.0.1:{p['jaeger_health']}/status", f"{self.jaeger}/api/services"],
                [p["jaeger_otlp"]],
            )
        elif name == "prometheus":
            prog = Program(
                name,
                [
                    str(self.binary(name)),
                    f"--config.file={paths[name]}",
                    f"--storage.tsdb.path={data / 'prometheus'}",
                    f"--web.listen-address=127.0.0.1:{p['prometheus']}",
                    f"--web.external-url={self.prometheus}",
                    *self.prometheus_flags,
                    f"--log.level={self.log_level}",
                ],
                logs / "prometheus.log",
                [f"{self.prometheus}/-/ready"],
            )
        elif name == "otelcol-probability":
            prog = Program(
                name,
                [str(self.binary(name)), f"--config={paths[name]}"],
                logs / "otelcol.log",
                [f"http://127.0.0.1:{p['collector_metrics']}/metrics"],
                [p["otlp_grpc"], p["otlp_http"]],
            )
        else:
            raise KeyError(name)
        self.programs[name] = prog
        return prog

    def start(self, names=PROGRAMS, timeout: float = 60.0) -> None:
        """Start the programs and wait until each serves; ``Interrupted`` as soon as a stop is requested
        (``interrupt()``), with what started still running: ``stop()`` stops it."""
        if "otelcol-probability" in names:
            checked = self.validate_collector_config()
            if checked.returncode != 0:
                raise RuntimeError(f"otelcol validate refused the config:\n{checked.stdout}{checked.stderr}")
        for name in names:
            if self.stopping.is_set():
                raise Interrupted(f"stopped before {name} started")
            prog = self.program(name)
            if not prog.running():
                prog.start()
        for name in names:
            self.program(name).wait_ready(timeout, self.stopping)

    def stop(self, names=None, timeout: float = STOP_TIMEOUT) -> None:
        """Stop the programs, senders before receivers, each within ``timeout`` s (killed after it, or at once
        once ``interrupt()`` was called twice)."""
        for name in reversed(list(names or self.programs)):
            if name in self.programs:
                self.programs[name].stop(timeout, self.hurry)

    def logs(self, lines: int = 30) -> dict[str, str]:
        return {name: prog.log_tail(lines) for name, prog in self.programs.items()}

    def __enter__(self) -> Stack:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def _describe(stack: Stack) -> str:
    return f"""\
pytest-probability's stack is up (Ctrl-C stops it; data and logs in {stack.workdir}):

  send to it      OTEL_EXPORTER_OTLP_ENDPOINT={stack.otlp_http} pytest benchmarks/ --prob-runs=10
                  (OTLP/HTTP; OTLP/gRPC on {stack.otlp_grpc})
  Jaeger          {stack.jaeger}/api/traces?service=pytest-probability   HTTP API (JSON); this build's UI is a placeholder page
  Prometheus      {stack.prometheus}/api/v1/query?query=probability_session_runs_total   HTTP API; no web UI in this build
                  {stack.prometheus}/api/v1/rules   the rules and alerts, with their state
  Alertmanager    {stack.alertmanager}/api/v2/alerts   the alerts it holds; no web UI in this build
  the collector   http://127.0.0.1:{stack.ports["collector_metrics"]}/metrics   its own metrics (exporter failures, queues)
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=default_data_dir(),
        help="Prometheus's and Alertmanager's data, the written configs and the logs (default: %(default)s)",
    )
    parser.add_argument(
        "--backends",
        type=Path,
        default=default_backends_dir(),
        help="where `make backends` put the programs (default: %(default)s; PROB_BACKENDS_DIR)",
    )
    args = parser.parse_args(argv)
    stack = Stack(args.data_dir, backends=args.backends)
    try:
        for name in PROGRAMS:
            stack.binary(name)
    except FileNotFoundError as e:
        print(e, file=sys.stderr)
        return 1
    busy = [f"{k} {v}" for k, v in stack.ports.items() if _port_open(v)]
    if busy:
        print(
            f"these ports are taken: {', '.join(busy)}; is the stack (or compose's) already running?", file=sys.stderr
        )
        return 1

    def on_signal(signum, frame):
        stack.interrupt()  # a flag: every wait looks at it within POLL s; a second signal kills at once

    # SIGHUP too: a closed terminal would leave Prometheus and Alertmanager running (they reload on it).
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, on_signal)
    try:
        stack.start()
        print(_describe(stack), flush=True)
        while not stack.stopping.wait(0.5):
            dead = [p for p in stack.programs.values() if not p.running()]
            if dead:
                for p in dead:
                    print(f"{p.name} exited ({p.proc.returncode}):\n{p.log_tail()}", file=sys.stderr)
                return 1
        return 0
    except Interrupted as e:
        print(f"{e}; stopping", file=sys.stderr)
        return 0
    except RuntimeError as e:
        print(e, file=sys.stderr)
        return 1
    finally:
        stack.stop()


if __name__ == "__main__":
    sys.exit(main())
