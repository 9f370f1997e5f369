"""OTLP requests sent with the SDK's exporters, with each result read honestly.

The SDK's OTLP exporters (``opentelemetry-exporter-otlp-proto-http`` and
``-grpc``) do the transport and its configuration: endpoints, per-signal
variables, headers, TLS and mTLS, compression, timeouts, ``INSECURE``, retries.
:class:`Sender` gives one of them a request that is already encoded and reads
its answer: the reason of a failure (for the note) and the rejected count of a
partial success. ``export()`` does neither, so the exporter is used one level
below it, in :mod:`pytest_probability.compat.otel_sdk`, which says why.

Everything shown to people goes through :func:`scrub`: header values and
URL credentials are replaced *before* the text is cut, and so is any piece of
them (a server may echo a cut token).
"""

from __future__ import annotations

import importlib
import logging
import os
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from ..compat import otel_sdk as compat
from ..config.otel import client_certificate_check, secrets_from_env
from ..text import redact_url, scrub
from . import otlp_json

if TYPE_CHECKING:
    from google.protobuf.message import Message


class Result(NamedTuple):
    ok: bool
    rejected: int = 0
    reason: str = ""


#: Per signal: the request's service module (its response type), and the SDK exporter class of each protocol.
_SERVICES = {
    "traces": ("trace.v1.trace_service_pb2", "ExportTraceServiceResponse", "trace_exporter", "OTLPSpanExporter"),
    "metrics": (
        "metrics.v1.metrics_service_pb2",
        "ExportMetricsServiceResponse",
        "metric_exporter",
        "OTLPMetricExporter",
    ),
    "logs": ("logs.v1.logs_service_pb2", "ExportLogsServiceResponse", "_log_exporter", "OTLPLogExporter"),
}


def _response_type(signal: str) -> type[Message]:
    module, name, _, _ = _SERVICES[signal]
    return getattr(importlib.import_module(f"opentelemetry.proto.collector.{module}"), name)


def _exporter_class(signal: str, protocol: str) -> type:
    _, _, module, name = _SERVICES[signal]
    package = "grpc" if protocol == "grpc" else "http"
    return getattr(importlib.import_module(f"opentelemetry.exporter.otlp.proto.{package}.{module}"), name)


def _requests_session() -> Any:
    """A requests session that keeps the CA the exporter set (``OTEL_EXPORTER_OTLP_*CERTIFICATE``): requests
    lets ``REQUESTS_CA_BUNDLE`` / ``CURL_CA_BUNDLE`` replace a session's ``verify`` at each request."""
    import requests

    class CertifiedSession(requests.Session):
        def merge_environment_settings(self, *args: Any, **kwargs: Any) -> Any:
            settings = super().merge_environment_settings(*args, **kwargs)
            if isinstance(self.verify, str):
                settings["verify"] = self.verify
            return settings

    return CertifiedSession()


def _build(signal: str, protocol: str, **kwargs: Any) -> Any:
    if protocol != "grpc" and not any(
        name.startswith("OTEL_PYTHON_EXPORTER_OTLP_HTTP") and name.endswith("CREDENTIAL_PROVIDER")
        for name in os.environ
    ):
        kwargs.setdefault("session", _requests_session())
    return compat.exporter(signal, protocol, _exporter_class(signal, protocol), **kwargs)


def _credentials(certificate: str) -> Any:
    """gRPC channel credentials trusting the CA in ``certificate`` alone (no client pair)."""
    import grpc

    try:
        with open(certificate, "rb") as handle:
            root = handle.read()
    except OSError:
        root = None
    return grpc.ssl_channel_credentials(root_certificates=root)


class SdkWarnings(logging.Handler):
    """What the SDK logs at WARNING or above while an exporter is built, in the building thread (the logs'
    exporter is built on an export thread, while the runs and their instrumentation go on)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []
        self.thread = threading.get_ident()

    def emit(self, record: logging.LogRecord) -> None:
        if record.thread is not None and record.thread != self.thread:  # None: logging.logThreads is off
            return
        try:
            self.messages.append(record.getMessage())
        except Exception:  # pragma: no cover - a malformed log call
            pass

    def __enter__(self) -> SdkWarnings:
        logging.getLogger("opentelemetry").addHandler(self)
        return self

    def __exit__(self, *exc: object) -> None:
        logging.getLogger("opentelemetry").removeHandler(self)


class _Routed(logging.Filter):
    """Keeps what the SDK's exporters log during the plugin's own sends out of the logging system.

    On the SDK's exporter loggers, it passes every record but those logged in a thread inside
    :meth:`Sender.send` (each retry and failure: ``Transient error … retrying``), which Python's
    last-resort handler would print to stderr beside the plugin's note of the same failure when no
    handler of pytest's is there (``-p no:logging``, the replay command): they go to the sending
    :class:`Sender`'s ``logged``. A user's own exporters, handlers, levels and filters are untouched."""

    def __init__(self) -> None:
        super().__init__()
        self.local = threading.local()

    def filter(self, record: logging.LogRecord) -> bool:
        sink = getattr(self.local, "sink", None)
        if sink is None:
            return True
        try:
            sink.append(record.getMessage())
        except Exception:  # pragma: no cover - a malformed log call
            pass
        return False

    def install(self) -> None:
        """On every logger of the SDK's exporters (their modules are imported by now)."""
        names = [name for name in list(logging.Logger.manager.loggerDict) if name.startswith("opentelemetry.exporter")]
        for name in names:
            logger = logging.getLogger(name)
            if self not in logger.filters:
                logger.addFilter(self)


ROUTED = _Routed()


class Sender:
    """One signal's SDK OTLP exporter, sending ready requests and reading their results."""

    def __init__(
        self,
        signal: str,
        protocol: str,
        endpoint: str | None,
        env: Mapping[str, str] | None = None,
        grpc_hint: str = "--prob-otel-protocol=grpc (or OTEL_EXPORTER_OTLP_PROTOCOL=grpc)",
    ) -> None:
        self.signal = signal
        #: What a note tells someone whose HTTP request reached a gRPC port.
        self.grpc_hint = grpc_hint
        self.protocol = protocol
        self.warnings: list[str] = []
        self.secrets = secrets_from_env(os.environ if env is None else env, (endpoint,))
        kwargs: dict[str, Any] = {"endpoint": endpoint} if endpoint else {}
        certificate_warnings, ca_only = client_certificate_check(signal, protocol, os.environ if env is None else env)
        if ca_only is not None:  # half a client pair: grpc would abort the process
            kwargs["credentials"] = _credentials(ca_only)
        with SdkWarnings() as logged:
            try:
                self.exporter = _build(signal, protocol, **kwargs)
            except Exception as exc:  # an OTEL_* value the exporter refuses (gRPC raises where HTTP warns)
                logged.messages.append(f"{type(exc).__name__}: {exc}; using the SDK's defaults for it")
                self.exporter = _build(signal, protocol, **kwargs, **_defaults(protocol))
        if not (protocol == "grpc" and compat.insecure(self.exporter)):  # plaintext gRPC reads no TLS variable
            logged.messages += certificate_warnings
        self.warnings = [scrub(message, self.secrets, 300) for message in logged.messages]
        self.display = redact_url(compat.endpoint(self.exporter, protocol))
        self.timeout = compat.timeout(self.exporter, protocol)
        self._response = _response_type(signal)
        self._lock = threading.Lock()
        #: What the SDK logged during this sender's sends (kept out of stderr by ROUTED), the latest last.
        self.logged: list[str] = []
        ROUTED.install()

    def send(self, body: bytes, timeout: float) -> Result:
        """Send one serialized Export*ServiceRequest, retrying (the SDK's rules) within ``timeout`` seconds."""
        logged: list[str] = []
        outer = getattr(ROUTED.local, "sink", None)
        ROUTED.local.sink = logged
        try:
            with self._lock, compat.suppressed():  # as the SDK's processors: no spans of the export itself
                result = self._send(body, timeout)
        finally:
            ROUTED.local.sink = outer
            self.logged = (self.logged + [scrub(message, self.secrets) for message in logged])[-20:]
        if not result.ok and logged and (result.reason == "no answer" or "timeout to 0" in result.reason):
            # No reason, or the SDK's retry started with no time left (urllib3's "Attempted to set
            # connect timeout to 0.0"): the SDK's own account of the attempts says more.
            result = Result(
                False,
                0,
                scrub(f"no time left to retry after: {logged[0]}", self.secrets)
                if "timeout to 0" in result.reason
                else scrub(logged[-1], self.secrets),
            )
        return result

    def _send(self, body: bytes, timeout: float) -> Result:
        request = otlp_json.parse(self.signal, body) if self.protocol == "grpc" else None
        sent = compat.send(self.exporter, self.protocol, request, body, max(0.001, min(self.timeout, timeout)))
        if not sent.ok:
            reason = sent.reason
            if sent.error is not None and _http2_answer(sent.error):
                reason = (
                    "the endpoint answered with HTTP/2 frames: it looks like an OTLP/gRPC endpoint; "
                    f"use {self.grpc_hint}"
                )
            return Result(False, 0, scrub(reason, self.secrets))
        try:
            response = self._response.FromString(sent.answer) if sent.answer else None
        except Exception:  # not a protobuf answer: a success all the same
            response = None
        partial = getattr(response, "partial_success", None)
        if partial is None:
            return Result(True)
        field = {"traces": "rejected_spans", "logs": "rejected_log_records"}.get(self.signal, "rejected_data_points")
        message = scrub(partial.error_message, self.secrets) if partial.error_message else ""
        return Result(True, int(getattr(partial, field)), message)

    def close(self) -> None:
        try:
            self.exporter.shutdown()
        except Exception:  # pragma: no cover - shutting down must not fail the session
            pass


class Deferred:
    """A :class:`Sender` made on its first use, for the log records: the SDK's OTLP log exporter imports
    the SDK's log export module, whose non-propagating logger pytest's log capture attaches to in each
    phase of every run (docs/performance.md). The first batch of log records builds it, on an export
    thread; the session's end, when nothing did, so that what the SDK says of its configuration is a note."""

    def __init__(self, make: Callable[[], Sender], display: str) -> None:
        self._make, self._display, self._lock = make, display, threading.Lock()
        self._sender: Sender | None = None

    def get(self) -> Sender:
        """The sender, built now if it was not yet (an exception from building it propagates)."""
        with self._lock:
            if self._sender is None:
                self._sender = self._make()
            return self._sender

    @property
    def built(self) -> Sender | None:
        return self._sender

    @property
    def warnings(self) -> list[str]:
        return self.get().warnings

    @property
    def display(self) -> str:
        """Where it sends: the exporter's own account once built, else the endpoint as configured."""
        return self._sender.display if self._sender is not None else self._display

    def send(self, body: bytes, timeout: float) -> Result:
        return self.get().send(body, timeout)

    def close(self) -> None:
        if self._sender is not None:
            self._sender.close()


def _http2_answer(error: BaseException) -> bool:
    """Whether an HTTP/1.1 request got HTTP/2 frames back (a gRPC server's SETTINGS or GOAWAY frame,
    which http.client reads as a bad status line): the OTLP/HTTP exporter was pointed at a gRPC port."""
    import http.client

    seen: set[int] = set()
    todo: list[Any] = [error]
    while todo:
        item = todo.pop()
        if not isinstance(item, BaseException) or id(item) in seen or len(seen) > 50:
            continue
        seen.add(id(item))
        if isinstance(item, http.client.BadStatusLine):
            line = str(item.args[0]) if item.args else ""
            # A frame header: 3 bytes of length, the type (4 SETTINGS, 7 GOAWAY), flags, stream 0.
            return len(line) >= 9 and line[3] in "\x04\x07" and line[5:9] == "\x00" * 4
        todo += [*item.args, item.__cause__, item.__context__]
    return False


def _defaults(protocol: str) -> dict[str, Any]:
    if protocol == "grpc":
        from grpc import Compression

        return {"compression": Compression.NoCompression, "timeout": 10.0}
    return {"timeout": 10.0}
