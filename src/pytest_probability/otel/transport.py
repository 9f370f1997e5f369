"""Send already-serialized OTLP requests over http/protobuf or gRPC.

:class:`Target` says where and how (resolved from the ``OTEL_EXPORTER_OTLP_*``
variables by :func:`target_from_env`, per the OTLP exporter specification,
https://opentelemetry.io/docs/specs/otel/protocol/exporter/); :class:`Sender`
posts protobuf bytes there: one attempt (:meth:`Sender.send`) or retries with
exponential backoff until a deadline (:meth:`Sender.send_with_retry`).

* http/protobuf: ``urllib`` (redirects are not followed), gzip/deflate
  bodies, TLS from a CA bundle and an optional client certificate;
* gRPC: ``grpcio``, imported only when a gRPC target is first used; the
  request bytes go out as they are (identity serializer), over one channel
  per :class:`Sender`.

Every failure is an :class:`OtlpSendError`; header values (and URL
credentials) never appear in its text. Bad configuration is a
:class:`ValueError` naming the variable, never echoing a header value.

Importing this module imports only light standard-library modules (no
pytest, no OpenTelemetry, no grpc): :mod:`.options` uses its parsers.
"""

from __future__ import annotations

import math
import os
import random
import re
import threading
import time
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .. import __version__

__all__ = [
    "DEFAULT_GRPC_ENDPOINT",
    "DEFAULT_HTTP_ENDPOINT",
    "OtlpSendError",
    "Sender",
    "Target",
    "check_url",
    "parse_headers",
    "redact_url",
    "signal_url",
    "target_from_env",
]

KINDS = ("traces", "metrics")
PROTOCOLS = ("http/protobuf", "grpc")
DEFAULT_HTTP_ENDPOINT = "http://localhost:4318"
DEFAULT_GRPC_ENDPOINT = "http://localhost:4317"
USER_AGENT = f"pytest-probability/{__version__}"

# Per the OTLP spec: retryable HTTP statuses and gRPC codes.
RETRYABLE_HTTP = frozenset({429, 502, 503, 504})
RETRYABLE_GRPC = frozenset({"CANCELLED", "DEADLINE_EXCEEDED", "ABORTED", "OUT_OF_RANGE", "UNAVAILABLE", "DATA_LOSS"})
#: Backoff between attempts of :meth:`Sender.send_with_retry`.
BACKOFF_INITIAL = 0.25
BACKOFF_FACTOR = 2.0
BACKOFF_MAX = 5.0
#: A server's Retry-After (HTTP) / RetryInfo (gRPC) is honoured up to this many seconds.
RETRY_AFTER_MAX = 30.0

_SIGNAL_PATHS = {"traces": "/v1/traces", "metrics": "/v1/metrics"}
_GRPC_METHODS = {
    "traces": "/opentelemetry.proto.collector.trace.v1.TraceService/Export",
    "metrics": "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export",
}
# gRPC name-resolver schemes passed to grpcio as they are (https://grpc.github.io/grpc/core/md_doc_naming.html).
_GRPC_RESOLVER_SCHEMES = ("dns", "unix", "unix-abstract", "ipv4", "ipv6", "vsock")
_MAX_RESPONSE_BYTES = 1 << 20
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


# --------------------------------------------------------------------------
# errors
# --------------------------------------------------------------------------


class OtlpSendError(Exception):
    """Sending a request to an OTLP endpoint failed.

    ``endpoint`` is the URL/target (user info and query string redacted),
    ``reason`` a human-readable cause, ``status`` the HTTP status (int) or
    gRPC status code name (str) when there was one, ``retryable`` whether
    the OTLP spec calls the failure transient, ``retry_after`` the delay in
    seconds the server asked for (HTTP ``Retry-After``, gRPC ``RetryInfo``),
    if any. Header values never appear.
    """

    def __init__(
        self,
        endpoint: str,
        reason: str,
        *,
        status: int | str | None = None,
        retryable: bool = False,
        retry_after: float | None = None,
    ):
        self.endpoint = endpoint
        self.reason = reason
        self.status = status
        self.retryable = retryable
        self.retry_after = retry_after
        super().__init__(f"OTLP export to {endpoint} failed: {reason}")


# --------------------------------------------------------------------------
# parsing helpers (pure; options.py wraps them into pytest.UsageError)
# --------------------------------------------------------------------------


def redact_url(url: str) -> str:
    """Drop user info, query and fragment: they may hold credentials."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return "<malformed URL>"
    # host[:port] as written: parts.port raises on a bad port (check_url reports
    # those), and parts.hostname drops the brackets of an IPv6 address.
    netloc = parts.netloc.rpartition("@")[2]
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def check_url(url: str, source: str) -> str:
    """Return ``url`` stripped if it is an ``http(s)://host[:port][/path]`` URL, else raise ValueError."""
    try:
        parts = urllib.parse.urlsplit(url.strip())
        port = parts.port  # raises on a bad port
    except ValueError as exc:
        raise ValueError(f"{source}: malformed endpoint URL {redact_url(url)!r}: {exc}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(
            f"{source}: malformed endpoint URL {redact_url(url)!r}: expected http(s)://host[:port][/path]"
        )
    del port
    return url.strip()


def parse_headers(text: str, source: str) -> dict[str, str]:
    """``key1=value1,key2=value2`` (URL-encoded values), as OTEL_EXPORTER_OTLP_HEADERS.

    Names are lower-cased. A malformed item raises ValueError that shows
    nothing of the item (it may be the key itself).
    """
    headers: dict[str, str] = {}
    for index, item in enumerate(text.split(",")):
        if not item.strip():
            continue
        name, sep, value = item.partition("=")
        name = urllib.parse.unquote(name.strip())
        if not sep or not name or not _HEADER_NAME.fullmatch(name):
            # Echo nothing from the item: without "=", or with a bad name, the
            # text may be the value itself (e.g. "Authorization: Bearer <key>").
            raise ValueError(
                f"{source}: malformed header #{index + 1} (not shown: it may hold a key); "
                "expected name=value pairs separated by commas"
            )
        headers[name.lower()] = urllib.parse.unquote(value.strip())
    return headers


def signal_url(endpoint: str, kind: str) -> str:
    """Return the OTLP/HTTP URL for ``kind`` derived from the base URL ``endpoint``.

    Rule: a trailing ``/`` is dropped; if the path then ends with this
    signal's path (``/v1/traces`` or ``/v1/metrics``) the endpoint is used as
    is; if it ends with the *other* signal's path, that suffix is replaced
    (so one ``.../v1/traces`` URL also works for metrics instead of posting
    metrics to the traces route); otherwise the signal path is appended to
    the base (``http://host:4318`` -> ``http://host:4318/v1/traces``,
    ``http://host/otlp`` -> ``http://host/otlp/v1/traces``). Query strings
    are kept.
    """
    if kind not in _SIGNAL_PATHS:
        raise ValueError(f"unknown signal kind {kind!r}; expected 'traces' or 'metrics'")
    parts = urllib.parse.urlsplit(endpoint)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"OTLP/HTTP endpoint must be an http:// or https:// URL, got {redact_url(endpoint)!r}")
    path = parts.path.rstrip("/")
    own = _SIGNAL_PATHS[kind]
    if not path.endswith(own):
        for other in _SIGNAL_PATHS.values():
            if path.endswith(other):
                path = path[: -len(other)]
                break
        path += own
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


def _append_signal_path(base: str, kind: str) -> str:
    """OTEL_EXPORTER_OTLP_ENDPOINT rule: ``<base path without trailing />/v1/<signal>``."""
    parts = urllib.parse.urlsplit(base)
    path = parts.path.rstrip("/") + _SIGNAL_PATHS[kind]
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


def normalize_protocol(protocol: str) -> str:
    """``"http/protobuf"`` (aliases ``"http"``, ``"https"``) or ``"grpc"``; ValueError otherwise."""
    p = (protocol or "").strip().lower()
    if p in ("http/protobuf", "http", "https"):
        return "http/protobuf"
    if p == "grpc":
        return "grpc"
    raise ValueError(f"unsupported OTLP protocol {protocol!r}; expected 'http/protobuf' or 'grpc'")


def normalize_compression(compression: Any) -> str | None:
    """None, ``"gzip"`` or ``"deflate"`` (accepts ``"none"`` and enum members with a ``.value``)."""
    if compression is None:
        return None
    value = str(getattr(compression, "value", compression)).strip().lower()
    if value in ("", "none", "nocompression"):
        return None
    if value in ("gzip", "deflate"):
        return value
    raise ValueError(f"unsupported OTLP compression {compression!r}; expected None, 'gzip' or 'deflate'")


def _grpc_target(endpoint: str, insecure: bool | None) -> tuple[str, bool]:
    """Return ``(grpc target, use_tls)`` for an OTLP/gRPC endpoint.

    ``http://`` means plaintext and ``https://`` TLS whatever ``insecure``
    says (the spec: the scheme takes precedence); without a scheme TLS is
    used unless ``insecure`` is true. A path is ignored.
    """
    endpoint = endpoint.strip()
    if "://" in endpoint or endpoint.split(":", 1)[0].lower() in _GRPC_RESOLVER_SCHEMES:
        try:
            parts = urllib.parse.urlsplit(endpoint)
            parts.port  # noqa: B018 - raises on a bad port
        except ValueError:
            raise ValueError(f"invalid OTLP/gRPC endpoint {redact_url(endpoint)!r}") from None
        scheme = parts.scheme.lower()
        if scheme in _GRPC_RESOLVER_SCHEMES:
            if "@" in endpoint:
                raise ValueError("invalid OTLP/gRPC endpoint; user info is not supported")
            return endpoint, not bool(insecure)
        if scheme not in ("http", "https", "grpc", "grpcs") or not parts.hostname:
            raise ValueError(
                f"invalid OTLP/gRPC endpoint {redact_url(endpoint)!r}; expected http(s)://host:port or host:port"
            )
        return parts.netloc.rsplit("@", 1)[-1], scheme in ("https", "grpcs")
    target = endpoint.rstrip("/")
    if not target or "/" in target or "@" in target or any(c.isspace() for c in target):
        raise ValueError("invalid OTLP/gRPC endpoint; expected http(s)://host:port or host:port")
    return target, not bool(insecure)


def _check_header_items(headers: Mapping[str, str], protocol: str) -> dict[str, str]:
    """Validate headers without ever echoing a value (http.client would)."""
    out: dict[str, str] = {}
    for index, (key, value) in enumerate(dict(headers or {}).items()):
        if not isinstance(key, str) or not _HEADER_NAME.fullmatch(key):
            raise ValueError(f"invalid OTLP header name #{index + 1} (not shown: it may hold a key)")
        if not isinstance(value, str):
            raise ValueError(f"OTLP header {key!r}: value must be a str")
        if any(c in value for c in "\r\n\x00"):
            raise ValueError(f"OTLP header {key!r}: value contains a line break or NUL")
        if protocol == "grpc":
            if not key.lower().endswith("-bin") and not (value.isascii() and value.isprintable()):
                raise ValueError(f"OTLP header {key!r}: gRPC metadata values must be printable ASCII")
        else:
            try:
                value.encode("latin-1")
            except UnicodeEncodeError:
                raise ValueError(f"OTLP header {key!r}: HTTP header values must be Latin-1 text") from None
        out[key] = value
    return out


# --------------------------------------------------------------------------
# Target
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """Where and how to send one signal. Validated on construction (ValueError)."""

    kind: str  # "traces" | "metrics"
    protocol: str  # "http/protobuf" | "grpc"
    #: http: the full URL, signal path included; grpc: the URL or host:port as given.
    endpoint: str
    headers: Mapping[str, str] = field(default_factory=dict)
    timeout: float = 10.0  # seconds per request
    compression: str | None = None  # None | "gzip" | "deflate"
    certificate: str | None = None  # CA bundle (PEM) to trust
    client_key: str | None = None  # PEM private key for mTLS
    client_certificate: str | None = None  # PEM certificate (chain) for mTLS
    insecure: bool | None = None  # grpc only: plaintext for an endpoint without scheme

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown signal kind {self.kind!r}; expected 'traces' or 'metrics'")
        if self.protocol not in PROTOCOLS:
            raise ValueError(f"unsupported OTLP protocol {self.protocol!r}; expected 'http/protobuf' or 'grpc'")
        if not isinstance(self.endpoint, str) or not self.endpoint.strip():
            raise ValueError("OTLP endpoint must be a non-empty string")
        if self.protocol == "http/protobuf":
            check_url(self.endpoint, "OTLP endpoint")
        else:
            _grpc_target(self.endpoint, self.insecure)
        try:
            timeout = float(self.timeout)
        except (TypeError, ValueError):
            timeout = math.nan
        if not math.isfinite(timeout) or timeout <= 0:
            raise ValueError("OTLP timeout must be a positive number of seconds")
        object.__setattr__(self, "timeout", timeout)
        object.__setattr__(self, "compression", normalize_compression(self.compression))
        object.__setattr__(self, "headers", _check_header_items(self.headers, self.protocol))
        if bool(self.client_key) != bool(self.client_certificate):
            raise ValueError("OTLP client TLS needs both a client key and a client certificate")

    @property
    def display(self) -> str:
        """The endpoint for messages: no user info, query or fragment."""
        if self.protocol == "grpc" and "://" not in self.endpoint:
            return self.endpoint.strip()
        return redact_url(self.endpoint.strip())

    @property
    def uses_tls(self) -> bool:
        if self.protocol == "grpc":
            return _grpc_target(self.endpoint, self.insecure)[1]
        return urllib.parse.urlsplit(self.endpoint.strip()).scheme == "https"

    def __repr__(self) -> str:  # never shows header values
        return (
            f"Target(kind={self.kind!r}, protocol={self.protocol!r}, endpoint={self.display!r}, "
            f"headers={sorted(self.headers)!r}, timeout={self.timeout!r}, compression={self.compression!r}, "
            f"certificate={self.certificate!r}, client_key={self.client_key!r}, "
            f"client_certificate={self.client_certificate!r}, insecure={self.insecure!r})"
        )


def _setting(env: Mapping[str, str], kind: str, name: str) -> tuple[str, str]:
    """``(value, variable)``: the per-signal variable wins over the generic one; empty means unset."""
    for variable in (f"OTEL_EXPORTER_OTLP_{kind.upper()}_{name}", f"OTEL_EXPORTER_OTLP_{name}"):
        value = str(env.get(variable, "") or "").strip()
        if value:
            return value, variable
    return "", ""


def _timeout_from(text: str, default: float) -> float:
    """The variable is milliseconds; an invalid or non-positive value is ignored."""
    try:
        configured = float(text) / 1000.0
    except ValueError:
        return default
    if not math.isfinite(configured) or configured <= 0:
        return default
    return min(default, configured)


def _file_setting(env: Mapping[str, str], kind: str, name: str, check: bool) -> str | None:
    value, variable = _setting(env, kind, name)
    if not value:
        return None
    if check and not os.path.isfile(value):
        raise ValueError(f"{variable}: no such file {value!r}")
    return value


def target_from_env(
    kind: str,
    protocol: str,
    env: Mapping[str, str],
    endpoint: str | None = None,
    default_timeout: float = 10.0,
    *,
    endpoint_source: str = "endpoint",
) -> Target:
    """Resolve the :class:`Target` of ``kind`` from ``OTEL_EXPORTER_OTLP_[SIGNAL_]*`` in ``env``.

    For each setting the per-signal variable (``OTEL_EXPORTER_OTLP_TRACES_X``
    / ``..._METRICS_X``) wins over ``OTEL_EXPORTER_OTLP_X``; an empty value
    counts as unset.

    * endpoint, http/protobuf: the per-signal URL as is; else the generic
      URL with ``/v1/traces`` or ``/v1/metrics`` appended to its path
      (trailing ``/`` stripped); else ``http://localhost:4318/v1/<signal>``.
      gRPC: the URL or ``host:port`` as is; default ``http://localhost:4317``.
    * ``endpoint`` (a base URL, e.g. ``--prob-otel-endpoint``) overrides the
      variables: http gets the signal path as :func:`signal_url` says (an
      existing ``/v1/traces``/``/v1/metrics`` suffix is replaced); gRPC uses
      it as is. ``endpoint_source`` names it in error messages.
    * timeout: the variable is milliseconds; the per-request timeout is
      ``min(default_timeout, value)`` when the value is a number > 0,
      else ``default_timeout``.
    * headers (``name=value,...``, URL-encoded), compression (``gzip``,
      ``deflate``, ``none``), certificate / client key / client certificate
      (PEM files; they must exist when TLS is used), insecure (``true``/``false``; gRPC only,
      and only for an endpoint without ``http``/``https`` scheme).

    Raises ValueError naming the variable for a bad value; the message never
    contains a header value.
    """
    if kind not in KINDS:
        raise ValueError(f"unknown signal kind {kind!r}; expected 'traces' or 'metrics'")
    protocol = normalize_protocol(protocol)
    try:
        default_timeout = float(default_timeout)
    except (TypeError, ValueError):
        default_timeout = math.nan
    if not math.isfinite(default_timeout) or default_timeout <= 0:
        raise ValueError("default_timeout must be a positive number of seconds")

    # endpoint
    if endpoint is not None and endpoint.strip():
        if protocol == "grpc":
            url = endpoint.strip()
            try:
                _grpc_target(url, None)
            except ValueError as exc:
                raise ValueError(f"{endpoint_source}: {exc}") from None
        else:
            url = signal_url(check_url(endpoint, endpoint_source), kind)
    else:
        value, variable = _setting(env, kind, "ENDPOINT")
        if protocol == "grpc":
            url = value or DEFAULT_GRPC_ENDPOINT
            if value:
                try:
                    _grpc_target(url, None)
                except ValueError as exc:
                    raise ValueError(f"{variable}: {exc}") from None
        elif not value:
            url = _append_signal_path(DEFAULT_HTTP_ENDPOINT, kind)
        elif variable.startswith(f"OTEL_EXPORTER_OTLP_{kind.upper()}_"):
            url = check_url(value, variable)
        else:
            url = _append_signal_path(check_url(value, variable), kind)

    # headers
    text, variable = _setting(env, kind, "HEADERS")
    headers = parse_headers(text, variable) if text else {}
    try:
        _check_header_items(headers, protocol)
    except ValueError as exc:
        raise ValueError(f"{variable}: {exc}") from None

    # timeout
    text, _ = _setting(env, kind, "TIMEOUT")
    timeout = _timeout_from(text, default_timeout) if text else default_timeout

    # compression
    text, variable = _setting(env, kind, "COMPRESSION")
    compression = None
    if text:
        lowered = text.lower()
        if lowered not in ("gzip", "deflate", "none"):
            raise ValueError(f"{variable}: unknown compression {lowered!r}; use gzip or none")
        compression = None if lowered == "none" else lowered

    # insecure (gRPC only)
    insecure = None
    if protocol == "grpc":
        text, variable = _setting(env, kind, "INSECURE")
        if text:
            lowered = text.lower()
            if lowered not in ("true", "false"):
                raise ValueError(f"{variable}: expected true or false, got {text!r}")
            insecure = lowered == "true"

    # TLS files: checked only when the connection will use TLS
    if protocol == "grpc":
        tls = _grpc_target(url, insecure)[1]
    else:
        tls = urllib.parse.urlsplit(url).scheme == "https"
    certificate = _file_setting(env, kind, "CERTIFICATE", tls)
    client_key = _file_setting(env, kind, "CLIENT_KEY", tls)
    client_certificate = _file_setting(env, kind, "CLIENT_CERTIFICATE", tls)
    if bool(client_key) != bool(client_certificate):
        missing = "CLIENT_CERTIFICATE" if client_key else "CLIENT_KEY"
        raise ValueError(
            f"OTEL_EXPORTER_OTLP_[{kind.upper()}_]{missing} is not set: client TLS needs both a key and a certificate"
        )

    return Target(
        kind=kind,
        protocol=protocol,
        endpoint=url,
        headers=headers,
        timeout=timeout,
        compression=compression,
        certificate=certificate,
        client_key=client_key,
        client_certificate=client_certificate,
        insecure=insecure,
    )


# --------------------------------------------------------------------------
# Sender
# --------------------------------------------------------------------------


def _response_type(kind: str) -> Any:
    if kind == "traces":
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

        return ExportTraceServiceResponse
    from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceResponse

    return ExportMetricsServiceResponse


def partial_success_reason(kind: str, response: Any) -> str | None:
    """The failure text for an Export*ServiceResponse that rejected items, else None."""
    if not response.HasField("partial_success"):
        return None
    ps = response.partial_success
    rejected = ps.rejected_spans if kind == "traces" else ps.rejected_data_points
    if rejected <= 0:
        return None
    what = "spans" if kind == "traces" else "data points"
    msg = f"partial success: {rejected} {what} rejected"
    if ps.error_message:
        msg += f": {ps.error_message[:200]}"
    return msg


def _http_error_detail(body: bytes) -> str:
    if not body:
        return ""
    try:
        from google.rpc import status_pb2

        status = status_pb2.Status()
        status.ParseFromString(body)
        if status.message:
            return status.message
    except Exception:  # noqa: BLE001 - best effort only
        pass
    try:
        text = body.decode("utf-8").strip()
    except UnicodeDecodeError:
        return ""
    return text if text.isprintable() else ""


def _retry_after_seconds(value: str | None) -> float | None:
    """Retry-After as seconds (delta-seconds or an HTTP date), capped; None when absent or unusable."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            import email.utils

            when = email.utils.parsedate_to_datetime(value)
            seconds = when.timestamp() - time.time()
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
    if not math.isfinite(seconds):
        return None
    return min(max(0.0, seconds), RETRY_AFTER_MAX)


def _grpc_retry_delay(exc: Any) -> float | None:
    """The RetryInfo delay in a gRPC error's status details, if any."""
    try:
        trailers = exc.trailing_metadata() or ()
        raw = next((v for k, v in trailers if k == "grpc-status-details-bin"), None)
        if not raw:
            return None
        from google.rpc import error_details_pb2, status_pb2

        status = status_pb2.Status.FromString(raw)
        for detail in status.details:
            if detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
                info = error_details_pb2.RetryInfo()
                detail.Unpack(info)
                seconds = info.retry_delay.seconds + info.retry_delay.nanos / 1e9
                return min(max(0.0, seconds), RETRY_AFTER_MAX)
    except Exception:  # noqa: BLE001 - best effort only
        return None
    return None


def _read(path: str) -> bytes:
    with open(path, "rb") as fh:
        return fh.read()


class Sender:
    """Sends serialized ``Export*ServiceRequest`` bytes to one :class:`Target`.

    The HTTP opener (with its SSL context) or the gRPC channel is built on
    the first send and reused; building a Sender costs nothing. Safe to use
    from several threads. :meth:`close` releases the gRPC channel; a closed
    Sender refuses to send.
    """

    def __init__(self, target: Target):
        if not isinstance(target, Target):
            raise TypeError(f"expected a Target, got {type(target).__name__}")
        self.target = target
        self._lock = threading.Lock()
        self._closed = False
        self._opener: Any = None
        self._channel: Any = None
        self._call: Any = None
        self._grpc: Any = None
        self._metadata: tuple[tuple[str, str], ...] = tuple((k.lower(), v) for k, v in target.headers.items())
        self._url, self._http_headers = self._http_request_parts()
        self._secrets = self._secret_values()

    # -- helpers -------------------------------------------------------------

    def _http_request_parts(self) -> tuple[str, dict[str, str]]:
        """The URL to post to (no user info) and the fixed headers.

        ``user:password@`` in an http(s) URL becomes Basic authorization
        unless an ``authorization`` header is configured.
        """
        t = self.target
        headers = {"User-Agent": USER_AGENT}
        headers.update(t.headers)
        headers["Content-Type"] = "application/x-protobuf"
        url = t.endpoint.strip()
        if t.protocol != "http/protobuf":
            return url, headers
        parts = urllib.parse.urlsplit(url)
        userinfo, at, hostport = parts.netloc.rpartition("@")
        if at:
            url = urllib.parse.urlunsplit((parts.scheme, hostport, parts.path, parts.query, ""))
            if not any(k.lower() == "authorization" for k in headers):
                import base64

                user, _, password = userinfo.partition(":")
                pair = f"{urllib.parse.unquote(user)}:{urllib.parse.unquote(password)}"
                headers["Authorization"] = "Basic " + base64.b64encode(pair.encode("utf-8")).decode("ascii")
        return url, headers

    def _secret_values(self) -> list[str]:
        values = [str(v) for v in self.target.headers.values()]
        values += [v for k, v in self._http_headers.items() if k == "Authorization"]
        try:
            parts = urllib.parse.urlsplit(self.target.endpoint)
            values += [parts.password or "", parts.username or "", parts.query, parts.fragment]
        except ValueError:
            pass
        out = set()
        for value in values:
            if len(value) >= 3:
                out.add(value)
                out.add(urllib.parse.quote(value, safe=""))
        return sorted(out, key=len, reverse=True)

    def _scrub(self, text: str) -> str:
        for value in self._secrets:
            text = text.replace(value, "<redacted>")
        return text

    def _fail(
        self, reason: str, status: int | str | None = None, retryable: bool = False, retry_after: float | None = None
    ) -> OtlpSendError:
        return OtlpSendError(
            self.target.display, self._scrub(reason), status=status, retryable=retryable, retry_after=retry_after
        )

    def __enter__(self) -> Sender:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Sender {self.target.kind} {self.target.protocol} {self.target.display}>"

    # -- public API ------------------------------------------------------------

    def send(self, body: bytes, timeout: float | None = None) -> None:
        """Send ``body`` (a serialized Export*ServiceRequest) once.

        ``timeout`` (seconds, default ``target.timeout``) bounds the gRPC
        call, and each socket operation of the HTTP request. Raises
        :class:`OtlpSendError` on any failure, including a response that
        rejects items (partial success).
        """
        if not isinstance(body, (bytes, bytearray, memoryview)):
            raise TypeError(f"body must be bytes, got {type(body).__name__}")
        if timeout is None:
            timeout = self.target.timeout
        if not timeout > 0:  # also catches NaN
            raise self._fail("no time left for the request", retryable=True)
        if self._closed:
            raise self._fail("the sender is closed")
        if self.target.protocol == "grpc":
            self._send_grpc(bytes(body), float(timeout))
        else:
            self._send_http(bytes(body), float(timeout))

    def send_with_retry(self, body: bytes, deadline: float) -> None:
        """Send ``body``, retrying retryable failures until ``deadline`` (a ``time.monotonic()`` value).

        Backoff starts at 0.25 s and doubles up to 5 s, with jitter; a
        server's Retry-After/RetryInfo is honoured instead (up to 30 s).
        Each attempt gets ``min(target.timeout, time left)``. It never
        sleeps past the deadline: when the next attempt could not start in
        time it raises the last :class:`OtlpSendError` at once. A
        non-retryable failure is raised immediately.
        """
        delay = BACKOFF_INITIAL
        last: OtlpSendError | None = None
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise last or self._fail("no time left before the deadline", retryable=True)
            try:
                self.send(body, timeout=min(self.target.timeout, remaining))
                return
            except OtlpSendError as exc:
                if not exc.retryable or self._closed:
                    raise
                last = exc
            if last.retry_after is not None:
                wait = last.retry_after
            else:
                wait = delay * (0.5 + random.random() / 2)  # noqa: S311 - jitter, not crypto
            delay = min(delay * BACKOFF_FACTOR, BACKOFF_MAX)
            if time.monotonic() + wait >= deadline:
                raise last
            time.sleep(wait)

    def close(self) -> None:
        """Release the gRPC channel (if any). Idempotent."""
        with self._lock:
            self._closed = True
            channel, self._channel, self._call = self._channel, None, None
            self._opener = None
        if channel is not None:
            try:
                channel.close()
            except Exception:  # noqa: BLE001 - closing must not fail
                pass

    def prepare(self) -> None:
        """Import and set up what sending needs, without any network traffic.

        A session calls this before its first run: modules imported in the
        middle of a long session make objects that the garbage collector
        then counts as new long-lived ones, and at 10,000 runs that was one
        extra full collection (about 0.1 s). A setup problem (unreadable TLS
        files) is left for the first send to report.
        """
        _response_type(self.target.kind)
        try:
            if self.target.protocol == "grpc":
                self._grpc_call()
            else:
                import urllib.error  # noqa: F401 - imported for _send_http

                self._http_opener()
        except OtlpSendError:
            pass

    # -- HTTP ------------------------------------------------------------------

    def _ssl_context(self) -> Any:
        import ssl

        t = self.target
        context = ssl.create_default_context(cafile=t.certificate)
        if t.client_certificate and t.client_key:
            context.load_cert_chain(t.client_certificate, t.client_key)
        return context

    def _http_opener(self) -> Any:
        with self._lock:
            if self._opener is None:
                import urllib.request

                class NoRedirect(urllib.request.HTTPRedirectHandler):
                    def redirect_request(self, req, fp, code, msg, headers, newurl):  # noqa: D102
                        return None  # surface 3xx as HTTPError; never re-post elsewhere

                handlers: list[Any] = [NoRedirect]
                if self.target.uses_tls:
                    try:
                        context = self._ssl_context()
                    except (OSError, ValueError) as exc:
                        raise self._fail(f"cannot set up TLS: {exc}") from None
                    handlers.append(urllib.request.HTTPSHandler(context=context))
                self._opener = urllib.request.build_opener(*handlers)
            return self._opener

    def _send_http(self, body: bytes, timeout: float) -> None:
        import urllib.error
        import urllib.request

        t = self.target
        opener = self._http_opener()
        headers = dict(self._http_headers)
        if t.compression == "gzip":
            import gzip

            body = gzip.compress(body, compresslevel=6, mtime=0)
            headers["Content-Encoding"] = "gzip"
        elif t.compression == "deflate":
            import zlib

            body = zlib.compress(body)
            headers["Content-Encoding"] = "deflate"
        request = urllib.request.Request(self._url, data=body, headers=headers, method="POST")
        try:
            with opener.open(request, timeout=timeout) as resp:
                status = resp.status
                payload = resp.read(_MAX_RESPONSE_BYTES)
        except urllib.error.HTTPError as exc:
            try:
                detail = _http_error_detail(exc.read(_MAX_RESPONSE_BYTES))
            except Exception:  # noqa: BLE001
                detail = ""
            retry_after = _retry_after_seconds(exc.headers.get("Retry-After") if exc.headers else None)
            try:
                exc.close()
            except Exception:  # noqa: BLE001
                pass
            reason = f"HTTP {exc.code} {exc.reason or ''}".rstrip()
            if 300 <= exc.code < 400:
                reason += " (redirects are not followed; give the final URL)"
            if detail:
                reason += f": {detail[:200]}"
            raise self._fail(reason, exc.code, exc.code in RETRYABLE_HTTP, retry_after) from None
        except urllib.error.URLError as exc:
            raise self._connection_error(exc.reason, timeout) from None
        except OtlpSendError:
            raise
        except Exception as exc:  # noqa: BLE001 - timeouts while reading, resets, http.client errors
            raise self._connection_error(exc, timeout) from None
        if not 200 <= status < 300:  # pragma: no cover - urllib raises HTTPError for these
            raise self._fail(f"HTTP {status}", status, status in RETRYABLE_HTTP)
        response = _response_type(t.kind)()
        try:
            response.ParseFromString(payload)
        except Exception:  # noqa: BLE001 - DecodeError: a 2xx with a non-protobuf body is accepted
            return
        partial = partial_success_reason(t.kind, response)
        if partial:
            raise self._fail(partial, status, False)

    def _connection_error(self, cause: Any, timeout: float) -> OtlpSendError:
        import ssl

        if isinstance(cause, TimeoutError):
            return self._fail(f"timed out after {timeout:.3g}s", retryable=True)
        if isinstance(cause, ssl.SSLCertVerificationError):
            detail = cause.verify_message or cause.reason or str(cause)
            return self._fail(
                f"TLS certificate verification failed: {detail}"
                " (set OTEL_EXPORTER_OTLP_CERTIFICATE to the CA bundle that signed the server certificate)"
            )
        if isinstance(cause, ssl.SSLError):
            transient = isinstance(cause, (ssl.SSLEOFError, ssl.SSLZeroReturnError))
            return self._fail(f"TLS error: {cause}", retryable=transient)
        if isinstance(cause, OSError):
            return self._fail(f"connection failed: {cause}", retryable=True)
        if isinstance(cause, str):
            return self._fail(f"connection failed: {cause}", retryable=True)
        # http.client errors (RemoteDisconnected is an OSError; BadStatusLine etc. are not)
        return self._fail(f"{type(cause).__name__}: {cause}", retryable=True)

    # -- gRPC ------------------------------------------------------------------

    def _grpc_call(self) -> Any:
        with self._lock:
            if self._call is not None:
                return self._call
            if self._closed:
                raise self._fail("the sender is closed")
            import grpc  # lazily: only needed for this protocol

            t = self.target
            target, tls = _grpc_target(t.endpoint, t.insecure)
            compression = {
                None: grpc.Compression.NoCompression,
                "gzip": grpc.Compression.Gzip,
                "deflate": grpc.Compression.Deflate,
            }[t.compression]
            options = [
                ("grpc.primary_user_agent", USER_AGENT),
                ("grpc.initial_reconnect_backoff_ms", int(BACKOFF_INITIAL * 1000)),
                ("grpc.max_reconnect_backoff_ms", int(BACKOFF_MAX * 1000)),
            ]
            if tls:
                try:
                    # grpcio only logs unusable PEM material and then fails every call as
                    # UNAVAILABLE; the ssl module says what is wrong, once, up front.
                    import ssl

                    check = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
                    if t.certificate:
                        check.load_verify_locations(cafile=t.certificate)
                    if t.client_certificate and t.client_key:
                        check.load_cert_chain(t.client_certificate, t.client_key)
                    credentials = grpc.ssl_channel_credentials(
                        root_certificates=_read(t.certificate) if t.certificate else None,
                        private_key=_read(t.client_key) if t.client_key else None,
                        certificate_chain=_read(t.client_certificate) if t.client_certificate else None,
                    )
                except (OSError, ValueError) as exc:  # ssl.SSLError is an OSError
                    raise self._fail(f"cannot set up TLS: {exc}") from None
                channel = grpc.secure_channel(target, credentials, options=options, compression=compression)
            else:
                channel = grpc.insecure_channel(target, options=options, compression=compression)
            self._grpc = grpc
            self._channel = channel
            self._call = channel.unary_unary(
                _GRPC_METHODS[t.kind],
                request_serializer=lambda data: data,  # the bytes are already serialized
                response_deserializer=_response_type(t.kind).FromString,
            )
            return self._call

    def _send_grpc(self, body: bytes, timeout: float) -> None:
        call = self._grpc_call()
        grpc = self._grpc
        try:
            response = call(body, timeout=timeout, metadata=self._metadata or None)
        except grpc.RpcError as exc:
            code = exc.code() if callable(getattr(exc, "code", None)) else None
            details = exc.details() if callable(getattr(exc, "details", None)) else None
            name = code.name if code is not None else "UNKNOWN"
            reason = f"gRPC {name}"
            retryable = name in RETRYABLE_GRPC
            retry_after = _grpc_retry_delay(exc)
            if name == "RESOURCE_EXHAUSTED" and retry_after is not None:
                retryable = True  # the spec: retryable only when the server sent RetryInfo
            text = str(details or "")
            if "CERTIFICATE_VERIFY_FAILED" in text.upper() or "certificate verify failed" in text.lower():
                reason += (
                    ": TLS certificate verification failed"
                    " (set OTEL_EXPORTER_OTLP_CERTIFICATE to the CA bundle that signed the server certificate)"
                )
                retryable = False
            elif name == "DEADLINE_EXCEEDED":
                reason += f" (timeout {timeout:.3g}s)"
            if text:
                reason += f": {text[:300]}"
            raise self._fail(reason, name, retryable, retry_after) from None
        except ValueError as exc:  # e.g. the channel was closed meanwhile
            raise self._fail(f"gRPC call failed: {exc}", retryable=False) from None
        partial = partial_success_reason(self.target.kind, response)
        if partial:
            raise self._fail(partial, "OK", False)
