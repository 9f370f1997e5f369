"""The export's options: declared and read once, without importing OpenTelemetry.

Whether export is on is decided here; only when it is does the plugin import
its export modules (``otel/``, and with them the OpenTelemetry SDK). Like the
other features' settings it lives in ``config/``: pytest needs the options at
every start-up, and reading them needs only the standard library and pytest.
:func:`secrets_from_env` is every value of the ``OTEL_EXPORTER_OTLP_*``
variables that must never be shown; :func:`client_certificate_check` what the
SDK's exporters would silently not use of their client certificate variables.
"""

from __future__ import annotations

import base64
import math
import os
import re
import urllib.parse
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..text import redact_url
from .values import pick

if TYPE_CHECKING:
    from .otel_settings import OtelSettings

PROTOCOLS = ("http/protobuf", "grpc")
CAPTURE_MODES = ("all", "ids")
DEFAULT_TIMEOUT = 10.0
LIMIT_VARIABLES = (
    "OTEL_ATTRIBUTE_COUNT_LIMIT",
    "OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT",
    "OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT",
    "OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT",
    "OTEL_SPAN_EVENT_COUNT_LIMIT",
    "OTEL_SPAN_LINK_COUNT_LIMIT",
    "OTEL_EVENT_ATTRIBUTE_COUNT_LIMIT",
    "OTEL_LINK_ATTRIBUTE_COUNT_LIMIT",
)
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
    group.addoption(
        "--prob-otel-endpoint",
        default=None,
        metavar="URL",
        help="OTLP endpoint for this session (wins over OTEL_EXPORTER_OTLP_ENDPOINT).",
    )
    group.addoption(
        "--prob-otel-protocol",
        default=None,
        metavar="PROTOCOL",
        help="http/protobuf (default) or grpc (wins over OTEL_EXPORTER_OTLP_PROTOCOL).",
    )
    group.addoption(
        "--prob-otel-file",
        default=None,
        metavar="PATH",
        help="Also write spans, metrics and log records to PATH as OTLP JSON lines (no server needed).",
    )
    group.addoption(
        "--prob-otel-spill",
        default=None,
        metavar="PATH",
        help="Where telemetry that could not be exported is kept (default .pytest-probability/otel-spill-<time>.jsonl).",
    )
    group.addoption(
        "--prob-otel-timeout",
        default=None,
        metavar="SECONDS",
        help="Extra time export may add to the session in total (default 10).",
    )
    group.addoption(
        "--prob-otel-capture",
        choices=CAPTURE_MODES,
        default=None,
        help="all (default), or ids: keep parameter values, messages and stack traces out of everything exported.",
    )
    group.addoption(
        "--prob-otel-traceparent",
        default=None,
        metavar="TRACEPARENT",
        help="W3C traceparent to nest the session span under (default: the TRACEPARENT variable).",
    )
    group.addoption(
        "--prob-suite",
        default=None,
        metavar="NAME",
        help="Suite name on every span and metric (test.suite.name), and of shards and journals; default the "
        "repository's name (with the rootdir's path in it), else the rootdir's name.",
    )
    parser.addini("prob_otel", "auto, on or off (default auto).", default="auto")
    parser.addini("prob_otel_file", "Path of the OTLP JSON-lines file.", default="")
    parser.addini("prob_otel_spill", "Path of the spill file.", default="")
    parser.addini(
        "prob_otel_timeout", "Extra seconds export may add in total (default 10).", default=str(DEFAULT_TIMEOUT)
    )
    parser.addini("prob_otel_capture", "all or ids (default all).", default="all")
    parser.addini("prob_suite", "Suite name (test.suite.name); default the repository's name.", default="")


def signal_url(base: str, signal: str) -> str:
    """The OTLP/HTTP URL of ``signal`` under ``base``: ``/v1/<signal>`` appended, or put in place of the other's."""
    url = base.rstrip("/")
    for other in ("traces", "metrics", "logs"):
        if url.endswith(f"/v1/{other}"):
            url = url[: -len(f"/v1/{other}")]
            break
    return f"{url}/v1/{signal}"


def check_url(url: str, source: str, protocol: str = "http/protobuf") -> str:
    """An endpoint given on the command line: http(s)://host[:port][/path] (gRPC: also host:port)."""
    text = url.strip()
    try:
        parts = urllib.parse.urlsplit(text)
    except ValueError:
        parts = None
    bare = re.fullmatch(r"[\w.-]+:(\d+)", text) if protocol == "grpc" else None
    port = bare.group(1) if bare else _port_text(parts)
    if port is not None and not (port.isdigit() and 1 <= int(port) <= 65535):
        what = f"port {port} is out of range (1 to 65535)" if port.isdigit() else f"port {port!r} is not a number"
        raise pytest.UsageError(f"{source}: {redact_url(text)!r}: {what}")
    if not bare and (parts is None or parts.scheme not in ("http", "https") or not parts.hostname):
        raise pytest.UsageError(f"{source}: {redact_url(text)!r} is not an http:// or https:// URL with a host")
    return text


def _port_text(parts: Any) -> str | None:
    """The port of a split URL as written (None without one): ``SplitResult.port`` raises on a bad one
    without saying which, and a bad port deserves a message naming it."""
    if parts is None:
        return None
    host = parts.netloc.rpartition("@")[2]
    if host.startswith("["):
        host = host.partition("]")[2]
    if ":" not in host:
        return None
    return host.rpartition(":")[2].strip() or None


def check_traceparent(value: str, source: str) -> str:
    text = value.strip().lower()
    match = _TRACEPARENT.match(text)
    if not match or set(match.group(1)) == {"0"} or set(match.group(2)) == {"0"} or text.startswith("ff"):
        raise pytest.UsageError(f"{source}: malformed traceparent {value!r}; expected 00-<32 hex>-<16 hex>-<2 hex>")
    return text


def _parse_timeout(value: str, source: str) -> float:
    try:
        number = float(str(value).strip())
    except ValueError:
        raise pytest.UsageError(f"{source} must be a number of seconds, got {value!r}") from None
    if not math.isfinite(number) or number <= 0:
        raise pytest.UsageError(f"{source} must be more than zero seconds, got {value!r}")
    return number


def _check_writable_file(path: Path, source: str) -> None:
    if path.is_dir():
        raise pytest.UsageError(f"{source}: {path} is a directory; give a file path")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise pytest.UsageError(f"{source}: cannot create the folder {path.parent}: {exc.strerror or exc}") from None
    if not os.access(path.parent, os.W_OK | os.X_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise pytest.UsageError(f"{source}: {path} is not writable")


def _path(config: pytest.Config, value: str) -> Path:
    path = Path(os.path.expanduser(value))
    return path if path.is_absolute() else Path(config.invocation_params.dir) / path


def _env(env: Mapping[str, str], name: str) -> str:
    return env.get(name, "").strip()


def resolve(config: pytest.Config, env: Mapping[str, str] | None = None) -> OtelSettings | None:
    """Return the export settings, or None when export is off. Raise UsageError on a bad option.

    ``OTEL_*`` variables are the SDK's: a value it cannot use gets a note (the
    SDK's exporters add their own warnings) and the SDK's default, never an error.
    """
    env = os.environ if env is None else env
    value, source = pick(config, "prob_otel")
    mode = str(value).strip() or "auto"
    if mode not in ("auto", "on", "off"):
        raise pytest.UsageError(f"{source} must be auto, on or off, got {mode!r}")
    # The plugin's own values are checked whether or not export is on, as pytest checks every option's
    # choices: a typo in an ini file shared by a repository's jobs must fail the job that has it, not wait
    # for the night export is turned on. The OTEL_* variables are the SDK's and are read only when
    # exporting; the files are touched only then too.
    timeout = _parse_timeout(*pick(config, "prob_otel_timeout"))
    value, source = pick(config, "prob_otel_capture")
    capture = str(value).strip() or "all"
    if capture not in CAPTURE_MODES:
        raise pytest.UsageError(f"{source} must be all or ids, got {capture!r}")
    option_protocol = _option_protocol(config)
    traceparent = None
    if config.getoption("prob_otel_traceparent"):
        traceparent = check_traceparent(config.getoption("prob_otel_traceparent"), "--prob-otel-traceparent")
    if mode == "off" or _env(env, "OTEL_SDK_DISABLED").lower() == "true":
        return None

    notes: list[str] = []
    bad_limits = tuple(name for name in LIMIT_VARIABLES if _env(env, name) and not _env(env, name).isdigit())
    notes += [
        f"OpenTelemetry: {name}={_env(env, name)!r} is not a whole number; using the SDK's default"
        for name in bad_limits
    ]
    file_option = str(pick(config, "prob_otel_file")[0]).strip()
    endpoint_option = config.getoption("prob_otel_endpoint")
    protocols = {
        signal: option_protocol or protocol_from_env(env, signal.upper(), notes)
        for signal in ("traces", "metrics", "logs")
    }
    wanted = {signal: _exporter_on(env, signal, notes) for signal in ("traces", "metrics", "logs")}
    base_env = _env(env, "OTEL_EXPORTER_OTLP_ENDPOINT")
    endpoints: dict[str, str] = {}
    for signal in ("traces", "metrics"):
        own = _env(env, f"OTEL_EXPORTER_OTLP_{signal.upper()}_ENDPOINT")
        if endpoint_option:
            base = check_url(endpoint_option, "--prob-otel-endpoint", protocols[signal])
            endpoints[signal] = base if protocols[signal] == "grpc" else signal_url(base, signal)
        elif own or base_env or mode == "on":
            endpoints[signal] = ""  # the SDK's exporter reads its variables (or uses its default)
    if not endpoints and not file_option:
        return None
    if len(endpoints) == 1:
        (signal,) = endpoints
        other = "metrics" if signal == "traces" else "traces"
        notes.append(
            f"OpenTelemetry: {other} are not sent: only OTEL_EXPORTER_OTLP_{signal.upper()}_ENDPOINT is set "
            f"(set OTEL_EXPORTER_OTLP_{other.upper()}_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT, or --prob-otel=on)"
        )
    # The logs signal (instrumentation's log records, docs/observability.md) goes where the others go:
    # --prob-otel-endpoint, its own variable or the generic one; it never turns export on by itself.
    if endpoint_option:
        base = check_url(endpoint_option, "--prob-otel-endpoint", protocols["logs"])
        endpoints["logs"] = base if protocols["logs"] == "grpc" else signal_url(base, "logs")
    elif _env(env, "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT") or base_env or mode == "on":
        endpoints["logs"] = ""
    endpoints = {signal: url for signal, url in endpoints.items() if wanted[signal]}

    file_path = None
    if file_option:
        file_path = _path(config, file_option)
        _check_writable_file(file_path, "--prob-otel-file")
    spill_option = str(pick(config, "prob_otel_spill")[0]).strip()
    spill = _path(config, spill_option) if spill_option else None
    if spill is not None:
        _check_writable_file(spill, "--prob-otel-spill")
    suite = str(pick(config, "prob_suite")[0]).strip() or config.rootpath.name

    if traceparent is None and _env(env, "TRACEPARENT"):
        try:
            traceparent = check_traceparent(_env(env, "TRACEPARENT"), "TRACEPARENT")
        except pytest.UsageError as exc:
            notes.append(f"OpenTelemetry: ignored {exc}")
    from .otel_settings import OtelSettings  # export on: a session without export does not create the class

    return OtelSettings(
        endpoints=endpoints,
        protocols=protocols,
        timeout=timeout,
        file=file_path,
        spill=spill,
        capture=capture,
        suite=suite,
        traceparent=traceparent,
        tracestate=_env(env, "TRACESTATE") or None,
        notes=tuple(notes),
        metrics_on="metrics" in endpoints or file_path is not None,
        logs_on="logs" in endpoints or file_path is not None,
        bad_limits=bad_limits,
    )


def _exporter_on(env: Mapping[str, str], signal: str, notes: list[str]) -> bool:
    """OTEL_TRACES_EXPORTER / OTEL_METRICS_EXPORTER / OTEL_LOGS_EXPORTER: ``none`` turns the signal's
    network export off."""
    name = f"OTEL_{signal.upper()}_EXPORTER"
    values = {v.strip().lower() for v in _env(env, name).split(",") if v.strip()}
    if not values or "otlp" in values:
        return True
    if values == {"none"}:
        return False
    notes.append(f"OpenTelemetry: {name}={_env(env, name)!r}: only otlp (or none) applies here; using otlp")
    return True


def _option_protocol(config: pytest.Config) -> str | None:
    """--prob-otel-protocol (``http`` is http/protobuf), which wins over the OTEL_EXPORTER_OTLP_*PROTOCOL
    variables for every signal; None when not given."""
    option = config.getoption("prob_otel_protocol")
    if not option:
        return None
    protocol = option.strip().lower()
    protocol = "http/protobuf" if protocol == "http" else protocol
    if protocol not in PROTOCOLS:
        raise pytest.UsageError(
            f"--prob-otel-protocol: unknown protocol {protocol!r}; use one of {', '.join(PROTOCOLS)}"
        )
    return protocol


def protocol_from_env(env: Mapping[str, str], signal: str, notes: list[str] | None = None) -> str:
    """OTEL_EXPORTER_OTLP_<SIGNAL>_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf (with a note)."""
    for name in (f"OTEL_EXPORTER_OTLP_{signal.upper()}_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"):
        value = _env(env, name).lower()
        if not value:
            continue
        if value in PROTOCOLS:
            return value
        note = f"OpenTelemetry: {name}={value!r} is not supported here; using http/protobuf"
        if notes is not None and note not in notes:
            notes.append(note)
        return "http/protobuf"
    return "http/protobuf"


def secrets_from_env(env: Mapping[str, str], urls: tuple[str | None, ...] = ()) -> list[str]:
    """Every value that must never be shown: header values, URL user info and query values."""
    found: list[str] = []
    for name, value in env.items():
        if name.startswith("OTEL_EXPORTER_OTLP") and name.endswith("HEADERS"):
            for item in value.split(","):
                name_part, sep, raw = item.partition("=")
                raw = raw.strip() if sep else item.strip()  # a malformed item may be all secret
                for text in (raw, urllib.parse.unquote(raw)):
                    found.append(text)
                    found += text.replace(":", " ").split()  # "Bearer abc": the token alone too
        if name.startswith("OTEL_EXPORTER_OTLP") and name.endswith("ENDPOINT"):
            urls = (*urls, value)
    for url in urls:
        try:
            parts = urllib.parse.urlsplit((url or "").strip())
        except ValueError:
            continue
        userinfo = parts.netloc.rpartition("@")[0]
        if userinfo:
            user, _, password = userinfo.partition(":")
            plain = f"{urllib.parse.unquote(user)}:{urllib.parse.unquote(password)}"
            found += [userinfo, user, password, urllib.parse.unquote(password), plain]
            found.append(base64.b64encode(plain.encode()).decode())
        for _, value in urllib.parse.parse_qsl(parts.query):
            found.append(value)
    return [s for s in dict.fromkeys(found) if len(s) >= 3]


def client_certificate_check(signal: str, protocol: str, env: Mapping[str, str]) -> tuple[list[str], str | None]:
    """What the SDK's exporter would silently not use of the client certificate variables (mTLS),
    and, for gRPC, the CA to use alone when the exporter would read half a pair.

    The HTTP exporter reads each of the key and the certificate from the signal's variable, else
    the generic one, and sends a key only with a certificate. The gRPC exporter reads a pair only
    beside a CA (the signal's ``…_CERTIFICATE`` and its pair, else the generic ones), and half a
    pair makes grpc abort the whole process (``Check failed: cert_chain != nullptr``): then the
    plugin gives the exporter credentials with the CA alone.
    """

    def name(kind: str, own: bool) -> str:
        return f"OTEL_EXPORTER_OTLP_{signal.upper()}_{kind}" if own else f"OTEL_EXPORTER_OTLP_{kind}"

    def value(variable: str) -> str:
        return env.get(variable, "").strip()

    kinds = ("CLIENT_KEY", "CLIENT_CERTIFICATE")
    present = [name(kind, own) for own in (True, False) for kind in kinds if value(name(kind, own))]
    if not present:
        return [], None
    if protocol != "grpc":
        key = next((n for n in (name("CLIENT_KEY", True), name("CLIENT_KEY", False)) if value(n)), None)
        cert = next(
            (n for n in (name("CLIENT_CERTIFICATE", True), name("CLIENT_CERTIFICATE", False)) if value(n)), None
        )
        if key and not cert:
            return [
                f"{key} is set without a client certificate ({name('CLIENT_CERTIFICATE', False)}); "
                "the key is not used and no client certificate is sent"
            ], None
        return [], None
    own = bool(value(name("CERTIFICATE", True)))
    if not own and not value(name("CERTIFICATE", False)):
        return [
            f"{' and '.join(present)} apply over gRPC only beside a CA certificate "
            f"({name('CERTIFICATE', False)}); no client certificate is sent"
        ], None
    read = [name(kind, own) for kind in kinds]
    unread = [n for n in present if n not in read]
    warnings = []
    if unread:
        warnings.append(
            f"{' and '.join(unread)} not read: over gRPC, with {name('CERTIFICATE', own)} set, "
            f"the exporter reads {' and '.join(read)}"
        )
    ca_only = None
    if sum(1 for n in read if value(n)) == 1:
        (alone,) = [n for n in read if value(n)]
        other = read[1] if alone == read[0] else read[0]
        warnings.append(f"{alone} is set without {other}; no client certificate is sent")
        ca_only = value(name("CERTIFICATE", own))
    return warnings, ca_only
