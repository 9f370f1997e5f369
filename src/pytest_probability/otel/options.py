"""OpenTelemetry options: declared and validated without importing OpenTelemetry.

Whether export is on is decided here; only when it is does the plugin import
its export modules (:mod:`pytest_probability.otel.transport` and the rest).
"""

from __future__ import annotations

import argparse
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

import pytest

PROTOCOLS = ("http/protobuf", "grpc")
CAPTURE_MODES = ("all", "ids")
DEFAULT_TIMEOUT = 10.0
# The same as transport's (a unit test checks); transport is imported only when export is on.
DEFAULT_HTTP_ENDPOINT = "http://localhost:4318"
DEFAULT_GRPC_ENDPOINT = "http://localhost:4317"
_TRACEPARENT = re.compile(r"^[0-9a-f]{2}-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$")


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("probability-otel", "pytest-probability: OpenTelemetry export")
    group.addoption(
        "--prob-otel",
        choices=("auto", "on", "off"),
        default=None,
        help="Export runs as spans and rows as metrics over OTLP. auto (default): on when an "
        "OTEL_EXPORTER_OTLP_*ENDPOINT variable, --prob-otel-endpoint or --prob-otel-file is set.",
    )
    group.addoption("--prob-otel-endpoint", default=None, metavar="URL", help="OTLP endpoint for this session (wins over OTEL_EXPORTER_OTLP_ENDPOINT).")
    group.addoption(
        "--prob-otel-protocol",
        default=None,
        metavar="PROTOCOL",
        help="http/protobuf (default) or grpc (wins over OTEL_EXPORTER_OTLP_PROTOCOL).",
    )
    group.addoption("--prob-otel-file", default=None, metavar="PATH", help="Also write spans and metrics to PATH as OTLP JSON lines (no server needed).")
    group.addoption("--prob-otel-spill", default=None, metavar="PATH", help="Where telemetry that could not be exported is kept (default .pytest-probability/otel-spill-<time>.jsonl).")
    group.addoption("--prob-otel-timeout", default=None, metavar="SECONDS", help="Extra time export may add to the session in total (default 10).")
    group.addoption("--prob-otel-capture", choices=CAPTURE_MODES, default=None, help="all (default), or ids: keep parameter values, messages and stack traces out of everything exported.")
    group.addoption("--prob-otel-traceparent", default=None, metavar="TRACEPARENT", help="W3C traceparent to nest the session span under (default: the TRACEPARENT variable).")
    group.addoption("--prob-suite", default=None, metavar="NAME", help="Suite name on every span and metric (test.suite.name); default the rootdir name.")
    parser.addini("prob_otel", "auto, on or off (default auto).", default="auto")
    parser.addini("prob_otel_file", "Path of the OTLP JSON-lines file.", default="")
    parser.addini("prob_otel_spill", "Path of the spill file.", default="")
    parser.addini("prob_otel_timeout", "Extra seconds export may add in total (default 10).", default=str(DEFAULT_TIMEOUT))
    parser.addini("prob_otel_capture", "all or ids (default all).", default="all")
    parser.addini("prob_suite", "Suite name (test.suite.name); default the rootdir name.", default="")


@dataclass(frozen=True)
class OtelSettings:
    """Validated export settings. ``network`` is False when only a file is written."""

    network: bool
    #: Protocol of the traces; the metrics' may differ (OTEL_EXPORTER_OTLP_METRICS_PROTOCOL).
    protocol: str
    #: Endpoint per signal: a full URL (http) or host URL (grpc); None lets the exporter use OTEL_* variables.
    traces_endpoint: str | None
    metrics_endpoint: str | None
    #: The endpoint as shown to people: no credentials, no query.
    display_endpoint: str
    timeout: float
    file: Path | None
    spill: Path | None
    capture: str
    suite: str
    traceparent: str | None
    notes: tuple[str, ...] = field(default=())
    metrics_protocol: str = "http/protobuf"

    @property
    def capture_values(self) -> bool:
        return self.capture == "all"


def _usage(message: str) -> pytest.UsageError:
    return pytest.UsageError(message)


def redact_url(url: str) -> str:
    """Drop user info, query and fragment: they may hold credentials."""
    from . import transport

    return transport.redact_url(url)


def check_url(url: str, source: str) -> str:
    from . import transport

    try:
        return transport.check_url(url, source)
    except ValueError as exc:
        raise _usage(str(exc)) from None


def parse_headers(text: str, source: str) -> dict[str, str]:
    """``key1=value1,key2=value2`` (URL-encoded values), as OTEL_EXPORTER_OTLP_HEADERS."""
    from . import transport

    try:
        return transport.parse_headers(text, source)
    except ValueError as exc:  # the message shows nothing of the malformed item
        raise _usage(str(exc)) from None


def check_traceparent(value: str, source: str) -> str:
    text = value.strip().lower()
    match = _TRACEPARENT.match(text)
    if not match or set(match.group(1)) == {"0"} or set(match.group(2)) == {"0"} or text.startswith("ff"):
        raise _usage(f"{source}: malformed traceparent {value!r}; expected 00-<32 hex>-<16 hex>-<2 hex>")
    return text


def _parse_timeout(value: str, source: str) -> float:
    try:
        number = float(str(value).strip())
    except ValueError:
        raise _usage(f"{source} must be a number of seconds, got {value!r}") from None
    if not math.isfinite(number) or number <= 0:
        raise _usage(f"{source} must be more than zero seconds, got {value!r}")
    return number


def _check_writable_file(path: Path, source: str) -> None:
    if path.is_dir():
        raise _usage(f"{source}: {path} is a directory; give a file path")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _usage(f"{source}: cannot create the folder {path.parent}: {exc.strerror or exc}") from None
    if not os.access(path.parent, os.W_OK | os.X_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise _usage(f"{source}: {path} is not writable")


def _path(config: pytest.Config, value: str) -> Path:
    path = Path(os.path.expanduser(value))
    return path if path.is_absolute() else Path(config.invocation_params.dir) / path


def _env(env: Mapping[str, str], name: str) -> str:
    return env.get(name, "").strip()


def resolve(config: pytest.Config, env: Mapping[str, str] | None = None) -> OtelSettings | None:
    """Return the export settings, or None when export is off. Raise UsageError on bad input."""
    env = os.environ if env is None else env
    mode = config.getoption("prob_otel") or str(config.getini("prob_otel")).strip() or "auto"
    if mode not in ("auto", "on", "off"):
        raise _usage(f"ini prob_otel must be auto, on or off, got {mode!r}")
    if mode == "off" or _env(env, "OTEL_SDK_DISABLED").lower() == "true":
        return None

    file_option = config.getoption("prob_otel_file") or str(config.getini("prob_otel_file")).strip()
    endpoint_option = config.getoption("prob_otel_endpoint")
    env_endpoints = {
        signal: _env(env, f"OTEL_EXPORTER_OTLP_{signal.upper()}_ENDPOINT") or None for signal in ("traces", "metrics")
    }
    base_env = _env(env, "OTEL_EXPORTER_OTLP_ENDPOINT") or None
    network = mode == "on" or bool(endpoint_option or base_env or any(env_endpoints.values()))
    if not network and not file_option:
        return None

    protocol = _protocol(config, env, "TRACES")
    metrics_protocol = _protocol(config, env, "METRICS")

    traces_endpoint = metrics_endpoint = None
    display = ""
    if network:
        if endpoint_option:
            from . import transport

            base = check_url(endpoint_option, "--prob-otel-endpoint")
            # http/protobuf: /v1/<signal> appended (or put in place of the other's); gRPC: as given.
            traces_endpoint = base if protocol == "grpc" else transport.signal_url(base, "traces")
            metrics_endpoint = base if metrics_protocol == "grpc" else transport.signal_url(base, "metrics")
            display = redact_url(base)
        else:
            if base_env:
                check_url(base_env, "OTEL_EXPORTER_OTLP_ENDPOINT")
            for signal, value in env_endpoints.items():
                if value:
                    check_url(value, f"OTEL_EXPORTER_OTLP_{signal.upper()}_ENDPOINT")
            default = DEFAULT_GRPC_ENDPOINT if protocol == "grpc" else DEFAULT_HTTP_ENDPOINT
            display = redact_url(env_endpoints["traces"] or base_env or default)
            if protocol == "grpc" and not (base_env or env_endpoints["traces"]):
                traces_endpoint = DEFAULT_GRPC_ENDPOINT
            if metrics_protocol == "grpc" and not (base_env or env_endpoints["metrics"]):
                metrics_endpoint = DEFAULT_GRPC_ENDPOINT
        for name in ("OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_METRICS_HEADERS"):
            if _env(env, name):
                parse_headers(_env(env, name), name)
        for name in ("OTEL_EXPORTER_OTLP_COMPRESSION", "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "OTEL_EXPORTER_OTLP_METRICS_COMPRESSION"):
            value = _env(env, name).lower()
            if value and value not in ("gzip", "deflate", "none"):
                raise _usage(f"{name}: unknown compression {value!r}; use gzip or none")

    timeout_option = config.getoption("prob_otel_timeout")
    timeout = _parse_timeout(
        timeout_option if timeout_option is not None else config.getini("prob_otel_timeout"),
        "--prob-otel-timeout" if timeout_option is not None else "ini prob_otel_timeout",
    )
    if network:
        from . import transport

        # Everything else the transport reads (certificates, INSECURE, per-signal
        # variables) is checked now, before any run, as the exporter will read it.
        for kind, kind_protocol, endpoint in (
            ("traces", protocol, traces_endpoint),
            ("metrics", metrics_protocol, metrics_endpoint),
        ):
            try:
                transport.target_from_env(
                    kind, kind_protocol, env, endpoint=endpoint, default_timeout=timeout,
                    endpoint_source="--prob-otel-endpoint",
                )
            except ValueError as exc:  # messages never show a header value
                raise _usage(str(exc)) from None
    file_path = None
    if file_option:
        file_path = _path(config, file_option)
        _check_writable_file(file_path, "--prob-otel-file")
    spill_option = config.getoption("prob_otel_spill") or str(config.getini("prob_otel_spill")).strip()
    spill = _path(config, spill_option) if spill_option else None
    if spill is not None:
        _check_writable_file(spill, "--prob-otel-spill")
    capture = config.getoption("prob_otel_capture") or str(config.getini("prob_otel_capture")).strip() or "all"
    if capture not in CAPTURE_MODES:
        raise _usage(f"ini prob_otel_capture must be all or ids, got {capture!r}")
    suite = config.getoption("prob_suite") or str(config.getini("prob_suite")).strip() or config.rootpath.name

    notes = []
    traceparent = None
    if config.getoption("prob_otel_traceparent"):
        traceparent = check_traceparent(config.getoption("prob_otel_traceparent"), "--prob-otel-traceparent")
    elif _env(env, "TRACEPARENT"):
        try:
            traceparent = check_traceparent(_env(env, "TRACEPARENT"), "TRACEPARENT")
        except pytest.UsageError as exc:
            notes.append(f"ignored {exc}")
    return OtelSettings(
        network=network,
        protocol=protocol,
        metrics_protocol=metrics_protocol,
        traces_endpoint=traces_endpoint,
        metrics_endpoint=metrics_endpoint,
        display_endpoint=display,
        timeout=timeout,
        file=file_path,
        spill=spill,
        capture=capture,
        suite=suite,
        traceparent=traceparent,
        notes=tuple(notes),
    )


def _protocol(config: pytest.Config, env: Mapping[str, str], signal: str) -> str:
    """The protocol of one signal: --prob-otel-protocol, OTEL_EXPORTER_OTLP_<SIGNAL>_PROTOCOL, OTEL_EXPORTER_OTLP_PROTOCOL."""
    option = config.getoption("prob_otel_protocol")
    source, value = "--prob-otel-protocol", option
    if not value:
        for name in (f"OTEL_EXPORTER_OTLP_{signal}_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"):
            if _env(env, name):
                source, value = name, _env(env, name)
                break
    protocol = (value or "http/protobuf").strip().lower()
    if protocol == "http":
        protocol = "http/protobuf"
    if protocol not in PROTOCOLS:
        hint = " (http/json is not supported; use http/protobuf)" if protocol == "http/json" else ""
        raise _usage(f"{source}: unknown protocol {protocol!r}; use one of {', '.join(PROTOCOLS)}{hint}")
    return protocol


def parse_cli_timeout(text: str) -> float:  # pragma: no cover - argparse adapter kept for symmetry
    try:
        return _parse_timeout(text, "--prob-otel-timeout")
    except pytest.UsageError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
