"""What OpenTelemetry's SDK and OTLP exporters do not publish, in one place: each name with the public
interface it lacks.

The SDK's processors (``BatchSpanProcessor``, ``BatchLogRecordProcessor``, the metric readers) batch, and
its OTLP exporters send, through public interfaces. What they do not publish:

* **A request that is already encoded, and its answer** (:func:`exporter`, :func:`send`). ``export()``
  takes SDK objects only and returns a bare SUCCESS or FAILURE: it drops the response, so a partial
  success's rejected count and message are lost (open-telemetry/opentelemetry-python#4803), and an
  encoded request (an xdist worker's batch, a line of a spill file) cannot be sent at all. So the exporter
  is used one level below: HTTP ``_client.export(body)`` (the SDK's retrying client, which takes bytes),
  its ``_client._transport`` wrapped to keep the response (of the send under way only: a failed one's error
  holds, through its traceback, the frames of the whole export and the batch in them); gRPC ``_export(request)`` (the SDK's retry loop)
  with ``_translate_data`` passing the ready request through, ``_count_data``, and the stub wrapped in
  ``_initialize_channel_and_stub`` to keep the response or the ``RpcError`` (no way to give the exporter a
  channel interceptor: open-telemetry/opentelemetry-python#4802). The timeout is set per request
  (``_timeout``, ``_client._timeout``): the session's end gives a request only what is left of its
  deadline, and ``export()`` takes none (its processors' ``force_flush`` timeout is unused:
  open-telemetry/opentelemetry-python#4568).
* **Where an exporter sends** (:func:`endpoint`): the URL or host it resolved from its arguments and the
  ``OTEL_EXPORTER_OTLP_*`` variables (``_client._endpoint``, ``_endpoint``, ``_insecure``), for the notes.
* **The OTLP metric exporters' temporality and aggregation preferences** (:func:`metric_preferences`),
  which ``OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE`` and
  ``…_DEFAULT_HISTOGRAM_AGGREGATION`` set: only ``OTLPMetricExporterMixin._get_temporality`` /
  ``_get_aggregation`` read them (in ``…common._internal``), and a ``MetricExporter`` keeps them in private
  attributes (open-telemetry/opentelemetry-python#2843 moved them there; no issue asks for a getter).
* **The log records' encoder** (:func:`encode_logs`: ``…proto.common._log_encoder``; the trace and metrics
  encoders are public modules, the logs one keeps the underscore of the logs signal's other modules).
* **Whether an instrumentor was instrumented** (:func:`instrumented`): opentelemetry-instrumentation's
  ``BaseInstrumentor`` subclasses are singletons kept in ``_instance``; calling a class makes one, which
  its ``__init__`` may do work for (a made one's public ``is_instrumented_by_opentelemetry`` says whether
  ``instrument()`` was called). No registry of instrumentors is public.
* **Suppressing instrumentation** around a send that is not the SDK's own (:func:`suppressed`:
  ``opentelemetry.context._SUPPRESS_INSTRUMENTATION_KEY``, which the SDK's processors set for their sends;
  the public helper is in opentelemetry-instrumentation, not a dependency).

Each is checked against the installed packages by ``tests/unit/test_compat.py``, which fails naming what
is missing; ``make test-otel-lowest`` runs the export's tests at the lowest versions ``pyproject.toml``
allows. This module is the one outside ``otel/`` that imports OpenTelemetry, and only ``otel/`` imports it
(the forbidden contract's one exception).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple, TypedDict


class Sent(NamedTuple):
    """What one request got: ``ok``; the answer's body (a serialized ``Export*ServiceResponse``) when there
    was one; a failure's ``reason`` (HTTP status and body, or gRPC status and details) and ``error`` (the
    exception an HTTP request ended with)."""

    ok: bool
    answer: bytes | None = None
    reason: str = ""
    error: BaseException | None = None


class _Capture:
    def __init__(self) -> None:
        self.response: Any = None
        self.error = ""


class _HttpTransport:
    """The SDK's HTTP transport, keeping each response."""

    def __init__(self, inner: Any, capture: _Capture) -> None:
        self._inner, self._capture = inner, capture

    def request(self, *args: Any, **kwargs: Any) -> Any:
        self._capture.response = result = self._inner.request(*args, **kwargs)
        return result

    def is_connection_error(self, exception: Any) -> bool:
        return bool(self._inner.is_connection_error(exception))

    def close(self) -> None:
        self._inner.close()


class _GrpcStub:
    """The SDK's gRPC stub, keeping each response or error."""

    def __init__(self, inner: Any, capture: _Capture) -> None:
        self._inner, self._capture = inner, capture

    def Export(self, request: Any, metadata: Any = None, timeout: Any = None) -> Any:  # noqa: N802 - gRPC's name
        try:
            response = self._inner.Export(request=request, metadata=metadata, timeout=timeout)
        except Exception as exc:
            code, details = getattr(exc, "code", None), getattr(exc, "details", None)
            self._capture.error = (
                f"gRPC {code().name}: {details()}" if callable(code) and callable(details) else repr(exc)
            )
            raise
        self._capture.response = response
        return response


def exporter(signal: str, protocol: str, base: type, **kwargs: Any) -> Any:
    """The SDK's OTLP exporter class ``base`` of ``signal``, built with ``kwargs`` and made to keep each answer."""
    capture = _Capture()
    if protocol == "grpc":

        class Exporter(base):
            _client: Any  # the SDK's gRPC stub (grpc publishes no types), then ours around it

            def _initialize_channel_and_stub(self) -> None:
                super()._initialize_channel_and_stub()
                self._client = _GrpcStub(self._client, capture)

            def _translate_data(self, data: Any, *args: Any) -> Any:
                return data  # already an Export*ServiceRequest

            def _count_data(self, data: Any) -> int:
                return 0

        made = Exporter(**kwargs)
    else:
        made = base(**kwargs)
        made._client._transport = _HttpTransport(made._client._transport, capture)
    made.prob_capture = capture
    return made


def send(made: Any, protocol: str, request: Any, body: bytes, timeout: float) -> Sent:
    """Send one encoded request (``request``, the protobuf message, for gRPC; ``body``, its bytes, for HTTP)
    with the exporter's own retries, within ``timeout`` seconds."""
    capture = made.prob_capture
    capture.response, capture.error = None, ""
    if protocol == "grpc":
        made._timeout = timeout
        try:
            ok = made._export(request).name == "SUCCESS"
            response = capture.response
        finally:
            capture.response = None
        return Sent(
            ok,
            response.SerializeToString() if ok and response is not None else None,
            "" if ok else capture.error or "no answer",
        )
    made._client._timeout = timeout
    try:
        result = made._client.export(body)
        http = capture.response
    finally:
        # This send's alone. Kept until the next send (for ever after the last), a failed request's answer held
        # its error, whose traceback holds every frame of the send up to the span processor's, and their locals:
        # the batch of spans, its encoding.
        capture.response = None
    content = b""
    try:
        content = http.content() if http is not None else b""
    except Exception:  # an answer without a body
        pass
    if result.success:
        return Sent(True, content or None)
    if result.status_code is not None:
        return Sent(
            False, None, f"HTTP {result.status_code} {result.reason or ''} {content.decode('utf-8', 'replace')}"
        )
    error = result.error or (http.error if http is not None else None)
    return Sent(False, None, f"{type(error).__name__}: {error}" if error else "no answer", error)


def endpoint(made: Any, protocol: str) -> str:
    """Where the exporter sends: an HTTP URL, or a gRPC ``scheme://host:port``."""
    if protocol == "grpc":
        return f"{'http' if made._insecure else 'https'}://{made._endpoint}"
    return str(made._client._endpoint)


def insecure(made: Any) -> bool:
    """Whether a gRPC exporter sends in plaintext (it then reads no TLS variable)."""
    return bool(made._insecure)


def timeout(made: Any, protocol: str) -> float:
    """The exporter's own timeout, from its argument or ``OTEL_EXPORTER_OTLP_*TIMEOUT``, in seconds."""
    return float(made._timeout if protocol == "grpc" else made._client._timeout)


def metric_preferences() -> tuple[dict[type, Any], dict[type, Any]]:
    """(temporality, aggregation) per instrument class, as the SDK's OTLP metric exporters read them from
    ``OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE`` and ``…_DEFAULT_HISTOGRAM_AGGREGATION``."""
    from opentelemetry.exporter.otlp.proto.common._internal.metrics_encoder import OTLPMetricExporterMixin

    mixin: Any = OTLPMetricExporterMixin
    return mixin._get_temporality(None, {}), mixin._get_aggregation(None, {})


class ViewLimit(TypedDict, total=False):
    """``View``'s keyword argument for a cardinality limit, where the SDK has one (:func:`view_limit`)."""

    aggregation_cardinality_limit: int


def view_limit(view: type, limit: int) -> ViewLimit:
    """A ``View``'s cardinality limit, where the SDK has one: ``aggregation_cardinality_limit`` came with
    opentelemetry-sdk 1.45.1, with its default cap of 2,000 attribute sets per series; 1.45.0 has neither."""
    from inspect import signature

    return (
        {"aggregation_cardinality_limit": limit}
        if "aggregation_cardinality_limit" in signature(view).parameters
        else {}
    )


def encode_logs(records: Any) -> Any:
    """The SDK's OTLP encoding of log records: an ``ExportLogsServiceRequest``."""
    from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs as sdk_encode_logs

    return sdk_encode_logs(records)


def instrumented() -> bool:
    """Whether an OpenTelemetry instrumentor (a ``BaseInstrumentor`` subclass) has been instrumented; none is
    made here (an instrumentor's instance is looked up, never made)."""
    import sys

    base = getattr(sys.modules.get("opentelemetry.instrumentation.instrumentor"), "BaseInstrumentor", None)
    stack = list(base.__subclasses__()) if base is not None else []
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        instance = cls.__dict__.get("_instance")
        if instance is not None and instance.is_instrumented_by_opentelemetry:
            return True
    return False


@contextmanager
def suppressed() -> Iterator[None]:
    """Instrumentation suppressed, as the SDK's processors do around their sends: an instrumented
    ``requests`` or ``grpc`` makes no spans of the export itself."""
    from opentelemetry import context

    token = context.attach(context.set_value(context._SUPPRESS_INSTRUMENTATION_KEY, True))
    try:
        yield
    finally:
        context.detach(token)
