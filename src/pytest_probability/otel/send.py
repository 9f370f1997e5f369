"""OTLP requests sent with the SDK's exporters, with each result read honestly.

The SDK's OTLP exporters (``opentelemetry-exporter-otlp-proto-http`` and
``-grpc``) do the transport and its configuration: endpoints, per-signal
variables, headers, TLS and mTLS, compression, timeouts, ``INSECURE``, retries.
Their ``export()`` takes SDK objects and returns a bare SUCCESS or FAILURE;
it never reads an OTLP partial success. The plugin needs more: the reason of a
failure (for the note), the rejected count of a partial success, and sending a
request that is already encoded (spans from xdist workers, lines of a spill
file). So :class:`Sender` uses each exporter one level below ``export()``:

* HTTP: ``exporter._client.export(body)`` (the SDK's retrying client, which
  takes serialized bytes), with the exporter's transport wrapped to keep the
  last response, whose body is the ``Export*ServiceResponse``;
* gRPC: ``exporter._export(request)`` (the SDK's retry loop) with
  ``_translate_data`` passing the ready request through, and the stub wrapped
  to keep the response or the ``RpcError``.

Everything shown to people goes through :func:`scrub`: header values and
URL credentials are replaced *before* the text is cut, and so is any piece of
them (a server may echo a cut token).
"""

from __future__ import annotations

import base64
import logging
import os
import threading
import urllib.parse
from typing import Any, Callable, Mapping, NamedTuple

from ..text import clip

# OpenTelemetry, grpc and requests are imported where a sender is built or sends: ``otel.options`` imports
# this module (``redact_url``) at configure, before anything is sent.

SIGNALS = ("traces", "metrics", "logs")
REASON_LIMIT = 200
#: A piece of a secret this long (or the whole secret, if shorter) counts as the secret.
SECRET_PIECE = 6
_SCAN_LIMIT = 65536


class Result(NamedTuple):
    ok: bool
    rejected: int = 0
    reason: str = ""


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


def scrub(text: str, secrets: list[str], limit: int = REASON_LIMIT) -> str:
    """Control characters out, every secret (or piece of one) redacted, then cut to ``limit``."""
    text = "".join(ch if ch.isprintable() else " " for ch in str(text)[:_SCAN_LIMIT])
    marked = bytearray(len(text))
    for secret in secrets:
        size = min(len(secret), SECRET_PIECE)
        pieces = {secret[i : i + size] for i in range(len(secret) - size + 1)}
        for i in range(len(text) - size + 1):
            if text[i : i + size] in pieces:
                marked[i : i + size] = b"\1" * size
    out: list[str] = []
    for ch, secret in zip(text, marked):
        if not secret:
            out.append(ch)
        elif not out or out[-1] != "[redacted]":
            out.append("[redacted]")
    clean = " ".join("".join(out).split())
    return clip(clean, limit)


def redact_url(url: str) -> str:
    """Drop user info, query and fragment: they may hold credentials."""
    try:
        parts = urllib.parse.urlsplit(url.strip())
    except ValueError:
        return "<malformed URL>"
    if not parts.netloc:
        return url.strip().split("?")[0].split("@")[-1]
    host = parts.netloc.rpartition("@")[2]
    return urllib.parse.urlunsplit((parts.scheme, host, parts.path, "", ""))


class _Capture:
    """What the last request of one sender got (filled by the transport or stub wrappers)."""

    def __init__(self) -> None:
        self.response: Any = None
        self.error = ""


class _HttpTransport:
    """The SDK's HTTP transport, keeping each response."""

    def __init__(self, inner: Any, capture: _Capture) -> None:
        self._inner = inner
        self._capture = capture

    def request(self, *args: Any, **kwargs: Any) -> Any:
        result = self._inner.request(*args, **kwargs)
        self._capture.response = result
        return result

    def is_connection_error(self, exception: Any) -> bool:
        return self._inner.is_connection_error(exception)

    def close(self) -> None:
        self._inner.close()


class _GrpcStub:
    """The SDK's gRPC stub, keeping each response or error."""

    def __init__(self, inner: Any, capture: _Capture) -> None:
        self._inner = inner
        self._capture = capture

    def Export(self, request: Any, metadata: Any = None, timeout: Any = None) -> Any:  # noqa: N802 - gRPC's name
        try:
            response = self._inner.Export(request=request, metadata=metadata, timeout=timeout)
        except Exception as exc:
            code = getattr(exc, "code", None)
            details = getattr(exc, "details", None)
            self._capture.error = f"gRPC {code().name}: {details()}" if callable(code) and callable(details) else repr(exc)
            raise
        self._capture.response = response
        return response


def _response_types(signal: str) -> tuple[type, type]:
    if signal == "traces":
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # when sending
            ExportTraceServiceRequest,
            ExportTraceServiceResponse,
        )

        return ExportTraceServiceRequest, ExportTraceServiceResponse
    if signal == "logs":
        from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (  # when sending
            ExportLogsServiceRequest,
            ExportLogsServiceResponse,
        )

        return ExportLogsServiceRequest, ExportLogsServiceResponse
    from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (  # when sending
        ExportMetricsServiceRequest,
        ExportMetricsServiceResponse,
    )

    return ExportMetricsServiceRequest, ExportMetricsServiceResponse


def _grpc_exporter(signal: str, capture: _Capture, **kwargs: Any) -> Any:
    if signal == "traces":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as Base  # grpc only
    elif signal == "logs":
        from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter as Base  # grpc only
    else:
        from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter as Base  # grpc only

    class Exporter(Base):
        def _initialize_channel_and_stub(self) -> None:
            super()._initialize_channel_and_stub()
            self._client = _GrpcStub(self._client, capture)

        def _translate_data(self, data: Any, *args: Any) -> Any:
            return data  # already an Export*ServiceRequest

        def _count_data(self, data: Any) -> int:
            return 0

    return Exporter(**kwargs)


def _requests_session() -> Any:
    """A requests session that keeps the CA the exporter set (OTEL_EXPORTER_OTLP_*CERTIFICATE).

    requests lets REQUESTS_CA_BUNDLE / CURL_CA_BUNDLE replace a session's
    ``verify`` at each request, so with either set the SDK's certificate
    setting would be ignored.
    """
    import requests  # http/protobuf only

    class Session(requests.Session):
        def merge_environment_settings(self, *args: Any, **kwargs: Any) -> Any:
            settings = super().merge_environment_settings(*args, **kwargs)
            if isinstance(self.verify, str):
                settings["verify"] = self.verify
            return settings

    return Session()


def _http_exporter(signal: str, capture: _Capture, **kwargs: Any) -> Any:
    if not any(name.startswith("OTEL_PYTHON_EXPORTER_OTLP_HTTP") and name.endswith("CREDENTIAL_PROVIDER") for name in os.environ):
        kwargs.setdefault("session", _requests_session())
    if signal == "traces":
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as Exporter  # http/protobuf only
    elif signal == "logs":
        from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter as Exporter  # http/protobuf only
    else:
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter as Exporter  # http/protobuf only
    exporter = Exporter(**kwargs)
    exporter._client._transport = _HttpTransport(exporter._client._transport, capture)
    return exporter


class SdkWarnings(logging.Handler):
    """Collects what the SDK logs at WARNING or above while an exporter is built, in the building thread
    (the logs' exporter is built on the export thread, while the runs and their instrumentation go on)."""

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
        cert = next((n for n in (name("CLIENT_CERTIFICATE", True), name("CLIENT_CERTIFICATE", False)) if value(n)), None)
        if key and not cert:
            return [f"{key} is set without a client certificate ({name('CLIENT_CERTIFICATE', False)}); "
                    "the key is not used and no client certificate is sent"], None
        return [], None
    own = bool(value(name("CERTIFICATE", True)))
    if not own and not value(name("CERTIFICATE", False)):
        return [f"{' and '.join(present)} apply over gRPC only beside a CA certificate "
                f"({name('CERTIFICATE', False)}); no client certificate is sent"], None
    read = [name(kind, own) for kind in kinds]
    unread = [n for n in present if n not in read]
    warnings = []
    if unread:
        warnings.append(f"{' and '.join(unread)} not read: over gRPC, with {name('CERTIFICATE', own)} set, "
                        f"the exporter reads {' and '.join(read)}")
    ca_only = None
    if sum(1 for n in read if value(n)) == 1:
        (alone,) = [n for n in read if value(n)]
        other = read[1] if alone == read[0] else read[0]
        warnings.append(f"{alone} is set without {other}; no client certificate is sent")
        ca_only = value(name("CERTIFICATE", own))
    return warnings, ca_only


class _Routed(logging.Filter):
    """Keeps what the SDK's exporters log during the plugin's own sends out of the logging system.

    Installed (once) on the SDK's exporter loggers, it passes every record but those logged in a
    thread that is inside :meth:`Sender.send`: the SDK logs each failure and each retry there
    (``Transient error … retrying``, ``Failed to export spans batch due to timeout…``), and with no
    handler of pytest's at that moment (``-p no:logging``, a send still running after the session's
    end, the replay command) Python's last-resort handler printed them to stderr, beside the
    plugin's own note of the same failure. They go to the sending :class:`Sender` instead (its
    ``logged``); a user's own exporters, and the user's handlers, levels and filters, are untouched.
    """

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
        self, signal: str, protocol: str, endpoint: str | None, env: Mapping[str, str] | None = None,
        grpc_hint: str = "--prob-otel-protocol=grpc (or OTEL_EXPORTER_OTLP_PROTOCOL=grpc)",
    ) -> None:
        self.signal = signal
        #: What a note tells someone whose HTTP request reached a gRPC port.
        self.grpc_hint = grpc_hint
        self.protocol = protocol
        self.capture = _Capture()
        self.warnings: list[str] = []
        self.secrets = secrets_from_env(os.environ if env is None else env, (endpoint,))
        build = _grpc_exporter if protocol == "grpc" else _http_exporter
        kwargs: dict[str, Any] = {"endpoint": endpoint} if endpoint else {}
        certificate_warnings, ca_only = client_certificate_check(signal, protocol, os.environ if env is None else env)
        if ca_only is not None:  # half a client pair: grpc would abort the process
            from opentelemetry.exporter.otlp.proto.grpc.exporter import _load_credentials  # grpc only

            kwargs["credentials"] = _load_credentials(ca_only, None, None)
        with SdkWarnings() as logged:
            try:
                self.exporter = build(signal, self.capture, **kwargs)
            except Exception as exc:  # an OTEL_* value the exporter refuses (gRPC raises where HTTP warns)
                logged.messages.append(f"{type(exc).__name__}: {exc}; using the SDK's defaults for it")
                self.exporter = build(signal, self.capture, **kwargs, **_defaults(protocol))
        if not (protocol == "grpc" and self.exporter._insecure):  # plaintext gRPC reads no TLS variable
            logged.messages += certificate_warnings
        self.warnings = [scrub(message, self.secrets, 300) for message in logged.messages]
        if protocol == "grpc":
            scheme = "http" if self.exporter._insecure else "https"
            self.display = f"{scheme}://{redact_url(str(self.exporter._endpoint))}"
        else:
            self.display = redact_url(str(self.exporter._client._endpoint))
        self.timeout = float(self.exporter._timeout if protocol == "grpc" else self.exporter._client._timeout)
        self._types = _response_types(signal)
        #: What the SDK logged during this sender's sends (kept out of stderr by ROUTED), the latest last.
        self.logged: list[str] = []
        ROUTED.install()

    def send(self, body: bytes, timeout: float) -> Result:
        """Send one serialized Export*ServiceRequest, retrying (the SDK's rules) within ``timeout`` seconds."""
        from opentelemetry import context  # when sending

        # As the SDK's batch processor does: an instrumented HTTP client (requests, grpc)
        # must not make spans of the export itself.
        token = context.attach(context.set_value(context._SUPPRESS_INSTRUMENTATION_KEY, True))
        logged: list[str] = []
        outer = getattr(ROUTED.local, "sink", None)
        ROUTED.local.sink = logged
        try:
            result = self._send(body, timeout)
        finally:
            ROUTED.local.sink = outer
            context.detach(token)
            self.logged = (self.logged + [scrub(message, self.secrets) for message in logged])[-20:]
        if not result.ok and logged and (result.reason == "no answer" or "timeout to 0" in result.reason):
            # No reason, or the SDK's retry started with no time left (urllib3's "Attempted to set
            # connect timeout to 0.0"): the SDK's own account of the attempts says more.
            result = Result(False, 0, scrub(f"no time left to retry after: {logged[0]}", self.secrets)
                            if "timeout to 0" in result.reason else scrub(logged[-1], self.secrets))
        return result

    def _send(self, body: bytes, timeout: float) -> Result:
        timeout = max(0.001, min(self.timeout, timeout))
        self.capture.response, self.capture.error = None, ""
        if self.protocol == "grpc":
            self.exporter._timeout = timeout
            request = self._types[0].FromString(body)
            ok = self.exporter._export(request).name == "SUCCESS"
            response = self.capture.response
            reason = self.capture.error or "no answer"
        else:
            self.exporter._client._timeout = timeout
            result = self.exporter._client.export(body)
            ok = result.success
            response = None
            reason = ""
            http = self.capture.response
            if ok and http is not None:
                try:
                    response = self._types[1].FromString(http.content())
                except Exception:  # not a protobuf answer: a success all the same
                    response = None
            elif not ok:
                if result.status_code is not None:
                    body_text = ""
                    try:
                        body_text = http.content().decode("utf-8", "replace") if http is not None else ""
                    except Exception:
                        pass
                    reason = f"HTTP {result.status_code} {result.reason or ''} {body_text}"
                else:
                    error = result.error or (http.error if http is not None else None)
                    reason = f"{type(error).__name__}: {error}" if error else "no answer"
                    if error is not None and _http2_answer(error):
                        reason = ("the endpoint answered with HTTP/2 frames: it looks like an OTLP/gRPC endpoint; "
                                  f"use {self.grpc_hint}")
        if not ok:
            return Result(False, 0, scrub(reason, self.secrets))
        partial = getattr(response, "partial_success", None)
        if partial is None:
            return Result(True)
        field = {"traces": "rejected_spans", "logs": "rejected_log_records"}.get(self.signal, "rejected_data_points")
        rejected = getattr(partial, field)
        message = scrub(partial.error_message, self.secrets) if partial.error_message else ""
        return Result(True, int(rejected), message)

    def close(self) -> None:
        try:
            self.exporter.shutdown()
        except Exception:  # pragma: no cover - shutting down must not fail the session
            pass


class Deferred:
    """A :class:`Sender` made on its first use, for the log records.

    The SDK's OTLP log exporter imports ``opentelemetry.sdk._logs._internal.export``, whose module makes
    a non-propagating logger (``…export.propagate.false``). pytest 9 attaches its two capture handlers
    to every non-propagating logger, and takes them off again, in each phase of every run: 12 µs a run,
    measured (docs/performance.md). Most sessions emit no log record, and never need that exporter; the
    first batch of log records builds it, on the export thread. The session's end builds it too when
    nothing did (:meth:`get`), so that what the SDK says of its configuration is still a note.
    """

    def __init__(self, make: Callable[[], Sender], display: str) -> None:
        self._make = make
        self._lock = threading.Lock()
        self._sender: Sender | None = None
        self._display = display

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
    import http.client  # only to read a failed request

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
        from grpc import Compression  # grpc only

        return {"compression": Compression.NoCompression, "timeout": 10.0}
    return {"timeout": 10.0}

