"""Unit: the OTLP transport (Target resolution from OTEL_* variables, Sender over HTTP and gRPC).

Every send goes to a real in-process ``OtlpReceiver`` on 127.0.0.1 (or to a
closed port there); TLS tests use a throwaway CA made with the ``openssl``
CLI. Environments are passed explicitly, so the real one never leaks in.
"""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import pytest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from otlp_receiver import PARTIAL_MESSAGE, OtlpReceiver, flatten_metrics, flatten_spans, wait_for

from pytest_probability import __version__
from pytest_probability.otel import otlp_json, transport
from pytest_probability.otel.transport import OtlpSendError, Sender, Target, target_from_env

SECRET = "tok-9d41e7-very-secret"
PASSWORD = "pw-Qz81-hunter2"
HTTP_AND_GRPC = pytest.mark.parametrize("protocol", ["http/protobuf", "grpc"])


@pytest.fixture(autouse=True)
def no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    """urllib and grpcio both honour proxy variables: 127.0.0.1 must be reached directly."""
    for name in ("http_proxy", "https_proxy", "all_proxy", "grpc_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)


def receiver_kind(protocol: str) -> str:
    return "grpc" if protocol == "grpc" else "http"


def closed_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# --------------------------------------------------------------------------
# request bytes
# --------------------------------------------------------------------------


def trace_request() -> ExportTraceServiceRequest:
    req = ExportTraceServiceRequest()
    rs = req.resource_spans.add()
    attr = rs.resource.attributes.add()
    attr.key, attr.value.string_value = "service.name", "transport-test"
    ss = rs.scope_spans.add()
    ss.scope.name, ss.scope.version = "prob.transport", "1.0"
    for i in range(3):
        span = ss.spans.add()
        span.trace_id = bytes.fromhex("4bf92f3577b34da6a3ce929d0e0e4736")
        span.span_id = bytes([i + 1] * 8)
        span.name = f"run {i}"
        span.kind = 1
        span.start_time_unix_nano = 1_700_000_000_000_000_000 + i
        span.end_time_unix_nano = 1_700_000_000_500_000_000 + i
        a = span.attributes.add()
        a.key, a.value.int_value = "run", i
    return req


def metrics_request() -> ExportMetricsServiceRequest:
    req = ExportMetricsServiceRequest()
    rm = req.resource_metrics.add()
    attr = rm.resource.attributes.add()
    attr.key, attr.value.string_value = "service.name", "transport-test"
    sm = rm.scope_metrics.add()
    sm.scope.name = "prob.transport"
    metric = sm.metrics.add()
    metric.name, metric.unit = "prob.runs", "{run}"
    metric.sum.is_monotonic = True
    metric.sum.aggregation_temporality = 2
    for case, value in (("a", 3), ("b", 2)):
        point = metric.sum.data_points.add()
        point.as_int = value
        point.time_unix_nano = 1_700_000_001_000_000_000
        a = point.attributes.add()
        a.key, a.value.string_value = "case", case
    return req


REQUESTS = {"traces": trace_request, "metrics": metrics_request}


def make_target(kind: str, protocol: str, base: str, **kwargs) -> Target:
    endpoint = otlp_json.signal_url(base, kind) if protocol == "http/protobuf" else base
    kwargs.setdefault("timeout", 5.0)
    return Target(kind=kind, protocol=protocol, endpoint=endpoint, **kwargs)


def assert_no_secret(err: BaseException, *secrets: str) -> None:
    texts = [str(err), repr(err), getattr(err, "reason", ""), getattr(err, "endpoint", "")]
    for text in texts:
        for secret in (SECRET, PASSWORD, *secrets):
            assert secret not in text, text


# --------------------------------------------------------------------------
# target_from_env: endpoints
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("protocol", "kind", "expected"),
    [
        ("http/protobuf", "traces", "http://localhost:4318/v1/traces"),
        ("http/protobuf", "metrics", "http://localhost:4318/v1/metrics"),
        ("http", "traces", "http://localhost:4318/v1/traces"),
        ("grpc", "traces", "http://localhost:4317"),
        ("GRPC", "metrics", "http://localhost:4317"),
    ],
)
def test_defaults(protocol: str, kind: str, expected: str) -> None:
    target = target_from_env(kind, protocol, {})
    assert target.endpoint == expected
    assert target.protocol == ("grpc" if protocol.lower() == "grpc" else "http/protobuf")
    assert (target.kind, target.timeout, target.compression, dict(target.headers)) == (kind, 10.0, None, {})
    assert (target.certificate, target.client_key, target.client_certificate, target.insecure) == (None,) * 4


@pytest.mark.parametrize(
    ("base", "traces", "metrics"),
    [
        ("http://h:4318", "http://h:4318/v1/traces", "http://h:4318/v1/metrics"),
        ("http://h:4318/", "http://h:4318/v1/traces", "http://h:4318/v1/metrics"),
        ("https://h/otlp/", "https://h/otlp/v1/traces", "https://h/otlp/v1/metrics"),
        # The spec: the signal path is appended to the generic variable whatever its path.
        ("http://h/v1/traces", "http://h/v1/traces/v1/traces", "http://h/v1/traces/v1/metrics"),
        (" http://h:4318 ", "http://h:4318/v1/traces", "http://h:4318/v1/metrics"),
    ],
)
def test_http_generic_endpoint_gets_the_signal_path(base: str, traces: str, metrics: str) -> None:
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": base}
    assert target_from_env("traces", "http/protobuf", env).endpoint == traces
    assert target_from_env("metrics", "http/protobuf", env).endpoint == metrics


def test_http_signal_endpoint_is_used_as_is_and_wins() -> None:
    env = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://generic:4318",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://traces.example/custom/path",
    }
    assert target_from_env("traces", "http/protobuf", env).endpoint == "https://traces.example/custom/path"
    assert target_from_env("metrics", "http/protobuf", env).endpoint == "http://generic:4318/v1/metrics"
    env["OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"] = "http://metrics:9999/"
    assert target_from_env("metrics", "http/protobuf", env).endpoint == "http://metrics:9999/"
    # An empty per-signal variable counts as unset.
    env["OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"] = " "
    assert target_from_env("metrics", "http/protobuf", env).endpoint == "http://generic:4318/v1/metrics"


@pytest.mark.parametrize(
    ("option", "traces", "metrics"),
    [
        ("http://cli:4318", "http://cli:4318/v1/traces", "http://cli:4318/v1/metrics"),
        ("http://cli:4318/", "http://cli:4318/v1/traces", "http://cli:4318/v1/metrics"),
        ("https://cli/otlp", "https://cli/otlp/v1/traces", "https://cli/otlp/v1/metrics"),
        ("http://cli:4318/v1/traces", "http://cli:4318/v1/traces", "http://cli:4318/v1/metrics"),
        ("http://cli:4318/v1/metrics/", "http://cli:4318/v1/traces", "http://cli:4318/v1/metrics"),
    ],
)
def test_http_endpoint_argument_overrides_the_variables(option: str, traces: str, metrics: str) -> None:
    env = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://env:4318",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://env-traces:4318/v1/traces",
        "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://env-metrics:4318/v1/metrics",
    }
    assert target_from_env("traces", "http/protobuf", env, endpoint=option).endpoint == traces
    assert target_from_env("metrics", "http/protobuf", env, endpoint=option).endpoint == metrics


def test_grpc_endpoints_are_used_as_is() -> None:
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://generic:4317"}
    assert target_from_env("traces", "grpc", env).endpoint == "http://generic:4317"
    env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] = "collector:4317"
    assert target_from_env("traces", "grpc", env).endpoint == "collector:4317"
    assert target_from_env("metrics", "grpc", env).endpoint == "http://generic:4317"
    assert target_from_env("metrics", "grpc", env, endpoint="https://cli:4317/ignored").endpoint == "https://cli:4317/ignored"


# --------------------------------------------------------------------------
# target_from_env: headers, timeout, compression, TLS files, insecure
# --------------------------------------------------------------------------


def test_headers_signal_variable_replaces_the_generic_one() -> None:
    env = {"OTEL_EXPORTER_OTLP_HEADERS": f"Authorization=Bearer%20{SECRET},X-Team=core"}
    assert dict(target_from_env("metrics", "http/protobuf", env).headers) == {
        "authorization": f"Bearer {SECRET}",
        "x-team": "core",
    }
    env["OTEL_EXPORTER_OTLP_TRACES_HEADERS"] = "x-only=traces"
    assert dict(target_from_env("traces", "grpc", env).headers) == {"x-only": "traces"}
    assert "x-team" in target_from_env("metrics", "grpc", env).headers


@pytest.mark.parametrize(
    ("env", "default", "expected"),
    [
        ({}, 10.0, 10.0),
        ({}, 2.5, 2.5),
        ({"OTEL_EXPORTER_OTLP_TIMEOUT": "2000"}, 10.0, 2.0),
        ({"OTEL_EXPORTER_OTLP_TIMEOUT": "2000"}, 1.5, 1.5),  # never more than the default
        ({"OTEL_EXPORTER_OTLP_TIMEOUT": "2000", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": "500"}, 10.0, 0.5),
        ({"OTEL_EXPORTER_OTLP_TIMEOUT": "500", "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT": "3000"}, 10.0, 0.5),
        ({"OTEL_EXPORTER_OTLP_TIMEOUT": "250.5"}, 10.0, 0.2505),
        ({"OTEL_EXPORTER_OTLP_TIMEOUT": "soon"}, 10.0, 10.0),
        ({"OTEL_EXPORTER_OTLP_TIMEOUT": "0"}, 4.0, 4.0),
        ({"OTEL_EXPORTER_OTLP_TIMEOUT": "-5"}, 4.0, 4.0),
        ({"OTEL_EXPORTER_OTLP_TIMEOUT": "nan"}, 4.0, 4.0),
    ],
)
def test_timeout_is_milliseconds_capped_by_the_default(env: dict[str, str], default: float, expected: float) -> None:
    assert target_from_env("traces", "http/protobuf", env, default_timeout=default).timeout == pytest.approx(expected)


def test_bad_default_timeout() -> None:
    for bad in (0, -1, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="default_timeout"):
            target_from_env("traces", "grpc", {}, default_timeout=bad)


@pytest.mark.parametrize(
    ("env", "traces", "metrics"),
    [
        ({}, None, None),
        ({"OTEL_EXPORTER_OTLP_COMPRESSION": "gzip"}, "gzip", "gzip"),
        ({"OTEL_EXPORTER_OTLP_COMPRESSION": " GZIP "}, "gzip", "gzip"),
        ({"OTEL_EXPORTER_OTLP_COMPRESSION": "gzip", "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION": "none"}, None, "gzip"),
        ({"OTEL_EXPORTER_OTLP_METRICS_COMPRESSION": "deflate"}, None, "deflate"),
    ],
)
def test_compression_precedence(env: dict[str, str], traces: str | None, metrics: str | None) -> None:
    assert target_from_env("traces", "http/protobuf", env).compression == traces
    assert target_from_env("metrics", "grpc", env).compression == metrics


def test_tls_files_precedence(tmp_path: Path) -> None:
    files = {}
    for name in ("ca", "ca-traces", "key", "cert", "key-metrics", "cert-metrics"):
        files[name] = tmp_path / f"{name}.pem"
        files[name].write_text("not checked here\n")
    env = {
        "OTEL_EXPORTER_OTLP_CERTIFICATE": str(files["ca"]),
        "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE": str(files["ca-traces"]),
        "OTEL_EXPORTER_OTLP_CLIENT_KEY": str(files["key"]),
        "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": str(files["cert"]),
        "OTEL_EXPORTER_OTLP_METRICS_CLIENT_KEY": str(files["key-metrics"]),
        "OTEL_EXPORTER_OTLP_METRICS_CLIENT_CERTIFICATE": str(files["cert-metrics"]),
    }
    traces = target_from_env("traces", "http/protobuf", env)
    metrics = target_from_env("metrics", "grpc", env)
    assert (traces.certificate, traces.client_key, traces.client_certificate) == (
        str(files["ca-traces"]),
        str(files["key"]),
        str(files["cert"]),
    )
    assert (metrics.certificate, metrics.client_key, metrics.client_certificate) == (
        str(files["ca"]),
        str(files["key-metrics"]),
        str(files["cert-metrics"]),
    )


def test_missing_tls_files_are_value_errors(tmp_path: Path) -> None:
    missing = str(tmp_path / "nope.pem")
    env = {"OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE": missing, "OTEL_EXPORTER_OTLP_ENDPOINT": "https://h:4318"}
    with pytest.raises(ValueError, match=r"^OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE: no such file .*nope\.pem"):
        target_from_env("traces", "http/protobuf", env)
    with pytest.raises(ValueError, match=r"^OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE: no such file"):
        target_from_env("traces", "grpc", {**env, "OTEL_EXPORTER_OTLP_ENDPOINT": "h:4317"})
    # Not checked when the connection is plaintext (the setting is unused then).
    assert target_from_env("traces", "http/protobuf", {**env, "OTEL_EXPORTER_OTLP_ENDPOINT": "http://h"}).certificate == missing
    plain = {**env, "OTEL_EXPORTER_OTLP_ENDPOINT": "h:4317", "OTEL_EXPORTER_OTLP_INSECURE": "true"}
    assert target_from_env("traces", "grpc", plain).certificate == missing
    key = tmp_path / "key.pem"
    key.write_text("x")
    with pytest.raises(ValueError, match="CLIENT_CERTIFICATE is not set"):
        target_from_env("traces", "grpc", {"OTEL_EXPORTER_OTLP_CLIENT_KEY": str(key)})
    with pytest.raises(ValueError, match="CLIENT_KEY is not set"):
        target_from_env("metrics", "grpc", {"OTEL_EXPORTER_OTLP_METRICS_CLIENT_CERTIFICATE": str(key)})


@pytest.mark.parametrize(
    ("endpoint", "env", "insecure", "tls"),
    [
        ("http://h:4317", {}, None, False),
        ("https://h:4317", {}, None, True),
        ("h:4317", {}, None, True),  # no scheme: TLS unless insecure
        ("h:4317", {"OTEL_EXPORTER_OTLP_INSECURE": "true"}, True, False),
        ("h:4317", {"OTEL_EXPORTER_OTLP_INSECURE": "TRUE"}, True, False),
        ("h:4317", {"OTEL_EXPORTER_OTLP_INSECURE": "false"}, False, True),
        ("h:4317", {"OTEL_EXPORTER_OTLP_INSECURE": "true", "OTEL_EXPORTER_OTLP_TRACES_INSECURE": "false"}, False, True),
        ("h:4317", {"OTEL_EXPORTER_OTLP_INSECURE": "false", "OTEL_EXPORTER_OTLP_TRACES_INSECURE": "true"}, True, False),
        # The scheme takes precedence over the insecure setting.
        ("https://h:4317", {"OTEL_EXPORTER_OTLP_INSECURE": "true"}, True, True),
        ("http://h:4317", {"OTEL_EXPORTER_OTLP_INSECURE": "false"}, False, False),
    ],
)
def test_grpc_insecure_rules(endpoint: str, env: dict[str, str], insecure: bool | None, tls: bool) -> None:
    target = target_from_env("traces", "grpc", {**env, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": endpoint})
    assert target.insecure is insecure
    assert target.uses_tls is tls


def test_insecure_is_grpc_only_and_must_be_a_boolean() -> None:
    env = {"OTEL_EXPORTER_OTLP_INSECURE": "yes"}
    assert target_from_env("traces", "http/protobuf", env).insecure is None  # not read for http
    with pytest.raises(ValueError, match=r"^OTEL_EXPORTER_OTLP_INSECURE: expected true or false, got 'yes'$"):
        target_from_env("traces", "grpc", env)


# --------------------------------------------------------------------------
# target_from_env / Target: bad values
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("protocol", "env", "endpoint", "pattern"),
    [
        ("http/protobuf", {"OTEL_EXPORTER_OTLP_ENDPOINT": "localhost:4318"}, None, r"^OTEL_EXPORTER_OTLP_ENDPOINT: malformed endpoint URL"),
        ("http/protobuf", {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "ftp://h/x"}, None, r"^OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: malformed"),
        ("http/protobuf", {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://h:99999"}, None, r"^OTEL_EXPORTER_OTLP_ENDPOINT: malformed .*(?i:port)"),
        ("http/protobuf", {}, "h:4318", r"^--prob-otel-endpoint: malformed endpoint URL"),
        ("grpc", {"OTEL_EXPORTER_OTLP_ENDPOINT": "ftp://h:4317"}, None, r"^OTEL_EXPORTER_OTLP_ENDPOINT: invalid OTLP/gRPC endpoint"),
        ("grpc", {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "h:4317/path"}, None, r"^OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: invalid"),
        ("grpc", {}, "http://:4317", r"^--prob-otel-endpoint: invalid OTLP/gRPC endpoint"),
    ],
)
def test_bad_endpoints_name_their_source(protocol: str, env: dict[str, str], endpoint: str | None, pattern: str) -> None:
    with pytest.raises(ValueError, match=pattern):
        target_from_env("traces", protocol, env, endpoint=endpoint, endpoint_source="--prob-otel-endpoint")


def test_bad_endpoint_messages_redact_credentials() -> None:
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": f"ftp://user:{PASSWORD}@h/x?key={SECRET}"}
    with pytest.raises(ValueError) as raised:
        target_from_env("traces", "http/protobuf", env)
    assert_no_secret(raised.value)
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": f"ftp://user:{PASSWORD}@h:4317?key={SECRET}"}
    with pytest.raises(ValueError) as raised:
        target_from_env("traces", "grpc", env)
    assert_no_secret(raised.value)


@pytest.mark.parametrize(
    ("variable", "value", "pattern"),
    [
        ("OTEL_EXPORTER_OTLP_HEADERS", f"Authorization: Bearer {SECRET}", r"^OTEL_EXPORTER_OTLP_HEADERS: malformed header #1"),
        ("OTEL_EXPORTER_OTLP_METRICS_HEADERS", f"ok=1,{SECRET}", r"^OTEL_EXPORTER_OTLP_METRICS_HEADERS: malformed header #2"),
        ("OTEL_EXPORTER_OTLP_HEADERS", f"authorization={SECRET}%0Ainjected", r"^OTEL_EXPORTER_OTLP_HEADERS: .*'authorization'.*line break"),
    ],
)
def test_bad_headers_never_echo_values(variable: str, value: str, pattern: str) -> None:
    with pytest.raises(ValueError, match=pattern) as raised:
        target_from_env("metrics", "http/protobuf", {variable: value})
    assert_no_secret(raised.value, "Bearer", "injected")


def test_grpc_metadata_must_be_printable_ascii() -> None:
    env = {"OTEL_EXPORTER_OTLP_HEADERS": f"x-key={SECRET}%C3%A9"}
    assert target_from_env("traces", "http/protobuf", env).headers["x-key"] == SECRET + "é"  # Latin-1 is fine for HTTP
    with pytest.raises(ValueError, match="printable ASCII") as raised:
        target_from_env("traces", "grpc", env)
    assert_no_secret(raised.value)


def test_bad_compression_kind_and_protocol() -> None:
    with pytest.raises(ValueError, match=r"^OTEL_EXPORTER_OTLP_TRACES_COMPRESSION: unknown compression 'zstd'"):
        target_from_env("traces", "grpc", {"OTEL_EXPORTER_OTLP_TRACES_COMPRESSION": "zstd"})
    with pytest.raises(ValueError, match="signal kind"):
        target_from_env("logs", "grpc", {})
    with pytest.raises(ValueError, match="protocol"):
        target_from_env("traces", "http/json", {})


def test_target_validates_direct_construction() -> None:
    with pytest.raises(ValueError, match="signal kind"):
        Target(kind="logs", protocol="grpc", endpoint="h:4317")
    with pytest.raises(ValueError, match="protocol"):
        Target(kind="traces", protocol="http", endpoint="http://h/v1/traces")
    with pytest.raises(ValueError, match="timeout"):
        Target(kind="traces", protocol="grpc", endpoint="h:4317", timeout=0)
    with pytest.raises(ValueError, match="compression"):
        Target(kind="traces", protocol="grpc", endpoint="h:4317", compression="brotli")
    with pytest.raises(ValueError, match="malformed endpoint URL"):
        Target(kind="traces", protocol="http/protobuf", endpoint="h:4318")
    with pytest.raises(ValueError, match="both a client key and a client certificate"):
        Target(kind="traces", protocol="grpc", endpoint="h:4317", client_key="/k.pem")
    with pytest.raises(ValueError, match=r"header name #1 \(not shown") as raised:
        Target(kind="traces", protocol="grpc", endpoint="h:4317", headers={f"Bearer {SECRET}": "x"})
    assert_no_secret(raised.value)
    with pytest.raises(ValueError, match="'authorization'.*line break") as raised:
        Target(kind="traces", protocol="grpc", endpoint="h:4317", headers={"authorization": SECRET + "\r\n"})
    assert_no_secret(raised.value)
    target = Target(kind="traces", protocol="grpc", endpoint="h:4317", compression="GZIP", timeout=3)
    assert (target.compression, target.timeout) == ("gzip", 3.0)


def test_display_and_repr_hide_credentials() -> None:
    target = Target(
        kind="traces",
        protocol="http/protobuf",
        endpoint=f"https://user:{PASSWORD}@h:4318/v1/traces?key={SECRET}",
        headers={"authorization": SECRET},
    )
    assert target.display == "https://h:4318/v1/traces"
    assert SECRET not in repr(target) and PASSWORD not in repr(target) and "authorization" in repr(target)
    assert Target(kind="metrics", protocol="grpc", endpoint="collector:4317").display == "collector:4317"


# --------------------------------------------------------------------------
# Sender: delivery
# --------------------------------------------------------------------------


@HTTP_AND_GRPC
@pytest.mark.parametrize("compression", [None, "gzip", "deflate"])
def test_send_delivers_spans_and_metrics(protocol: str, compression: str | None) -> None:
    headers = {"authorization": f"Bearer {SECRET}", "x-team": "core"}
    with OtlpReceiver(receiver_kind(protocol)) as rx:
        for kind in ("traces", "metrics"):
            target = make_target(kind, protocol, rx.endpoint, headers=headers, compression=compression)
            with Sender(target) as sender:
                sender.send(REQUESTS[kind]().SerializeToString())
        assert rx.counts == {"traces": 1, "metrics": 1, "logs": 0}
        assert rx.trace_requests == [trace_request()]
        assert rx.metrics_requests == [metrics_request()]
        for received in rx.received:
            assert received.headers["authorization"] == f"Bearer {SECRET}"
            assert received.headers["x-team"] == "core"
            if protocol == "grpc":
                assert "pytest-probability/" in received.headers["user-agent"]
            else:
                assert received.content_encoding == (compression or "")
                assert received.headers["content-type"] == "application/x-protobuf"
                assert received.headers["user-agent"] == f"pytest-probability/{__version__}"
    assert [s.name for s in flatten_spans(rx.trace_requests)] == ["run 0", "run 1", "run 2"]
    assert sorted((p.attributes["case"], p.value) for p in flatten_metrics(rx.metrics_requests)) == [("a", 3), ("b", 2)]


@HTTP_AND_GRPC
def test_target_from_env_end_to_end(protocol: str) -> None:
    with OtlpReceiver(receiver_kind(protocol)) as rx:
        env = {
            "OTEL_EXPORTER_OTLP_ENDPOINT": rx.endpoint,
            "OTEL_EXPORTER_OTLP_HEADERS": f"api-key={SECRET}",
            "OTEL_EXPORTER_OTLP_COMPRESSION": "gzip",
            "OTEL_EXPORTER_OTLP_TIMEOUT": "5000",
        }
        for kind in ("traces", "metrics"):
            sender = Sender(target_from_env(kind, protocol, env))
            try:
                sender.send_with_retry(REQUESTS[kind]().SerializeToString(), time.monotonic() + 10)
            finally:
                sender.close()
        assert rx.counts == {"traces": 1, "metrics": 1, "logs": 0}
        assert all(h["api-key"] == SECRET for h in rx.headers)
        if protocol != "grpc":
            assert [r.content_encoding for r in rx.received] == ["gzip", "gzip"]


def test_grpc_sender_reuses_one_channel() -> None:
    with OtlpReceiver("grpc") as rx:
        sender = Sender(make_target("traces", "grpc", rx.endpoint))
        assert sender._channel is None  # nothing is built before the first send
        body = trace_request().SerializeToString()
        sender.send(body)
        channel = sender._channel
        sender.send(body)
        assert sender._channel is channel and channel is not None
        sender.close()
        sender.close()  # idempotent
        assert rx.count("traces") == 2
        with pytest.raises(OtlpSendError, match="closed") as raised:
            sender.send(body)
        assert raised.value.retryable is False


def test_send_checks_its_arguments() -> None:
    sender = Sender(make_target("traces", "http/protobuf", f"http://127.0.0.1:{closed_port()}"))
    with pytest.raises(TypeError):
        sender.send("not bytes")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Sender("http://h")  # type: ignore[arg-type]


# --------------------------------------------------------------------------
# Sender: failures and retries
# --------------------------------------------------------------------------


@HTTP_AND_GRPC
def test_refusing_receiver_is_a_retryable_error(protocol: str) -> None:
    with OtlpReceiver(receiver_kind(protocol), mode="refuse") as rx:
        sender = Sender(make_target("traces", protocol, rx.endpoint, headers={"authorization": SECRET}))
        with pytest.raises(OtlpSendError) as raised:
            sender.send(trace_request().SerializeToString())
        sender.close()
    err = raised.value
    assert err.retryable is True
    if protocol == "grpc":
        assert err.status == "UNAVAILABLE" and "gRPC UNAVAILABLE" in err.reason
    else:
        assert err.status == 503 and "HTTP 503" in err.reason
        assert err.retry_after == 1.0  # the receiver's Retry-After
    assert "127.0.0.1" in str(err)
    assert_no_secret(err)


@HTTP_AND_GRPC
def test_send_with_retry_gives_up_by_the_deadline(protocol: str) -> None:
    budget = 1.5
    with OtlpReceiver(receiver_kind(protocol), mode="refuse") as rx:
        sender = Sender(make_target("metrics", protocol, rx.endpoint, headers={"authorization": SECRET}, timeout=10))
        started = time.monotonic()
        with pytest.raises(OtlpSendError) as raised:
            sender.send_with_retry(metrics_request().SerializeToString(), started + budget)
        elapsed = time.monotonic() - started
        sender.close()
        attempts = rx.count("metrics")
    assert elapsed < budget + 2.0, f"took {elapsed:.2f}s"
    assert attempts >= 2  # it did retry (HTTP waits the receiver's Retry-After of 1 s)
    assert raised.value.retryable is True
    assert raised.value.status == ("UNAVAILABLE" if protocol == "grpc" else 503)
    assert_no_secret(raised.value)


@HTTP_AND_GRPC
def test_send_with_retry_succeeds_once_the_receiver_recovers(protocol: str) -> None:
    with OtlpReceiver(receiver_kind(protocol), mode="refuse") as rx:

        def recover() -> None:
            try:
                wait_for(lambda: rx.count("traces") >= 1, timeout=10)
            finally:
                rx.mode = "ok"

        thread = threading.Thread(target=recover, daemon=True)
        thread.start()
        sender = Sender(make_target("traces", protocol, rx.endpoint))
        started = time.monotonic()
        sender.send_with_retry(trace_request().SerializeToString(), started + 15)
        elapsed = time.monotonic() - started
        sender.close()
        thread.join(timeout=10)
        assert rx.count("traces") >= 2
        assert rx.trace_requests == [trace_request()]
    assert elapsed < 10, f"took {elapsed:.2f}s"


@HTTP_AND_GRPC
def test_closed_port(protocol: str) -> None:
    endpoint = f"http://127.0.0.1:{closed_port()}"
    sender = Sender(make_target("traces", protocol, endpoint, headers={"authorization": SECRET}, timeout=3))
    started = time.monotonic()
    with pytest.raises(OtlpSendError) as raised:
        sender.send(trace_request().SerializeToString())
    assert raised.value.retryable is True
    assert ("UNAVAILABLE" if protocol == "grpc" else "connection failed") in raised.value.reason
    assert_no_secret(raised.value)
    with pytest.raises(OtlpSendError) as raised:
        sender.send_with_retry(trace_request().SerializeToString(), time.monotonic() + 1.0)
    sender.close()
    assert time.monotonic() - started < 3 + 1.0 + 3.0
    assert raised.value.retryable is True


@HTTP_AND_GRPC
def test_attempts_never_outlast_the_deadline(protocol: str) -> None:
    """A receiver that answers too late: each attempt's timeout is cut to the time left."""
    with OtlpReceiver(receiver_kind(protocol), mode="slow", slow_delay=20) as rx:
        sender = Sender(make_target("traces", protocol, rx.endpoint, timeout=30))
        started = time.monotonic()
        with pytest.raises(OtlpSendError) as raised:
            sender.send_with_retry(trace_request().SerializeToString(), started + 1.0)
        elapsed = time.monotonic() - started
        sender.close()
    assert elapsed < 1.0 + 3.0, f"took {elapsed:.2f}s"
    assert raised.value.retryable is True
    assert ("DEADLINE_EXCEEDED" if protocol == "grpc" else "timed out") in raised.value.reason


def test_deadline_in_the_past_sends_nothing() -> None:
    with OtlpReceiver("http") as rx:
        sender = Sender(make_target("traces", "http/protobuf", rx.endpoint))
        with pytest.raises(OtlpSendError, match="no time left"):
            sender.send_with_retry(trace_request().SerializeToString(), time.monotonic() - 1)
        assert rx.count("traces") == 0


@HTTP_AND_GRPC
def test_partial_success_is_not_retried(protocol: str) -> None:
    with OtlpReceiver(receiver_kind(protocol), mode="partial") as rx:
        for kind, what in (("traces", "1 spans rejected"), ("metrics", "1 data points rejected")):
            sender = Sender(make_target(kind, protocol, rx.endpoint, headers={"authorization": SECRET}))
            with pytest.raises(OtlpSendError) as raised:
                sender.send_with_retry(REQUESTS[kind]().SerializeToString(), time.monotonic() + 10)
            sender.close()
            err = raised.value
            assert err.retryable is False
            assert what in err.reason and PARTIAL_MESSAGE in err.reason
            assert_no_secret(err)
        assert rx.counts == {"traces": 1, "metrics": 1, "logs": 0}  # no retries


def test_http_client_error_is_not_retried() -> None:
    with OtlpReceiver("http") as rx:
        target = Target(kind="traces", protocol="http/protobuf", endpoint=rx.endpoint + "/v1/nowhere", timeout=5)
        sender = Sender(target)
        started = time.monotonic()
        with pytest.raises(OtlpSendError) as raised:
            sender.send_with_retry(b"", started + 10)
        assert time.monotonic() - started < 5
    assert raised.value.status == 404 and raised.value.retryable is False
    assert "HTTP 404" in raised.value.reason and "unknown path" in raised.value.reason


def test_secrets_in_the_url_never_appear_in_errors() -> None:
    endpoint = f"http://user:{PASSWORD}@127.0.0.1:{closed_port()}/v1/traces?token={SECRET}"
    sender = Sender(Target(kind="traces", protocol="http/protobuf", endpoint=endpoint, timeout=2))
    with pytest.raises(OtlpSendError) as raised:
        sender.send(b"")
    assert_no_secret(raised.value)
    assert raised.value.endpoint.startswith("http://127.0.0.1:")


def test_user_info_in_an_http_url_becomes_basic_auth() -> None:
    import base64

    with OtlpReceiver("http") as rx:
        url = rx.endpoint.replace("http://", f"http://alice:{PASSWORD}@") + "/v1/traces"
        with Sender(Target(kind="traces", protocol="http/protobuf", endpoint=url)) as sender:
            sender.send(trace_request().SerializeToString())
        with Sender(Target(kind="traces", protocol="http/protobuf", endpoint=url, headers={"authorization": "mine"})) as sender:
            sender.send(trace_request().SerializeToString())
        expected = "Basic " + base64.b64encode(f"alice:{PASSWORD}".encode()).decode()
        assert [h["authorization"] for h in rx.headers] == [expected, "mine"]  # a configured header wins


def test_otlp_json_send_still_reexports_the_error() -> None:
    assert otlp_json.OtlpSendError is transport.OtlpSendError
    assert otlp_json.signal_url is transport.signal_url


# --------------------------------------------------------------------------
# TLS
# --------------------------------------------------------------------------


def tls_receiver(protocol: str, certs: dict[str, str], **kwargs) -> OtlpReceiver:
    return OtlpReceiver(receiver_kind(protocol), tls=(certs["server.pem"], certs["server.key"]), **kwargs)


@HTTP_AND_GRPC
def test_tls_with_the_ca_from_the_environment(protocol: str, certs: dict[str, str]) -> None:
    with tls_receiver(protocol, certs) as rx:
        assert rx.endpoint.startswith("https://127.0.0.1:")
        env = {
            "OTEL_EXPORTER_OTLP_ENDPOINT": rx.endpoint,
            "OTEL_EXPORTER_OTLP_CERTIFICATE": certs["ca.pem"],
            "OTEL_EXPORTER_OTLP_HEADERS": f"authorization={SECRET}",
        }
        for kind in ("traces", "metrics"):
            target = target_from_env(kind, protocol, env)
            assert target.uses_tls
            with Sender(target) as sender:
                sender.send(REQUESTS[kind]().SerializeToString())
                sender.send(REQUESTS[kind]().SerializeToString())  # the SSL context / channel is reused
        assert rx.counts == {"traces": 2, "metrics": 2, "logs": 0}
        assert rx.metrics_requests == [metrics_request()] * 2
        assert all(h["authorization"] == SECRET for h in rx.headers)


def test_grpc_tls_without_scheme(certs: dict[str, str]) -> None:
    with tls_receiver("grpc", certs) as rx:
        env = {
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": f"127.0.0.1:{rx.port}",
            "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE": certs["ca.pem"],
        }
        target = target_from_env("traces", "grpc", env)
        assert target.uses_tls
        with Sender(target) as sender:
            sender.send(trace_request().SerializeToString())
        assert rx.trace_requests == [trace_request()]


@HTTP_AND_GRPC
@pytest.mark.parametrize("ca", [None, "other-ca.pem"], ids=["system-trust", "wrong-ca"])
def test_tls_without_the_right_ca_is_a_clear_certificate_error(protocol: str, ca: str | None, certs: dict[str, str]) -> None:
    with tls_receiver(protocol, certs) as rx:
        env = {"OTEL_EXPORTER_OTLP_ENDPOINT": rx.endpoint, "OTEL_EXPORTER_OTLP_HEADERS": f"authorization={SECRET}"}
        if ca:
            env["OTEL_EXPORTER_OTLP_CERTIFICATE"] = certs[ca]
        sender = Sender(target_from_env("traces", protocol, env, default_timeout=5))
        started = time.monotonic()
        with pytest.raises(OtlpSendError) as raised:
            sender.send_with_retry(trace_request().SerializeToString(), started + 5)
        elapsed = time.monotonic() - started
        sender.close()
        assert rx.count("traces") == 0
    err = raised.value
    assert "certificate verification failed" in err.reason
    assert "OTEL_EXPORTER_OTLP_CERTIFICATE" in err.reason
    assert err.retryable is False  # retrying cannot fix the trust configuration
    assert elapsed < 5, f"took {elapsed:.2f}s: a certificate error must not be retried until the deadline"
    assert_no_secret(err)


@HTTP_AND_GRPC
def test_mutual_tls_with_a_client_certificate(protocol: str, certs: dict[str, str]) -> None:
    with tls_receiver(protocol, certs, tls_client_ca=certs["ca.pem"]) as rx:
        env = {"OTEL_EXPORTER_OTLP_ENDPOINT": rx.endpoint, "OTEL_EXPORTER_OTLP_CERTIFICATE": certs["ca.pem"]}
        with Sender(target_from_env("metrics", protocol, env, default_timeout=5)) as sender:
            with pytest.raises(OtlpSendError):
                sender.send(metrics_request().SerializeToString())
        env["OTEL_EXPORTER_OTLP_CLIENT_KEY"] = certs["client.key"]
        env["OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE"] = certs["client.pem"]
        with Sender(target_from_env("metrics", protocol, env, default_timeout=5)) as sender:
            sender.send(metrics_request().SerializeToString())
        assert rx.metrics_requests == [metrics_request()]


@HTTP_AND_GRPC
def test_unreadable_tls_material_is_a_send_error(protocol: str, certs: dict[str, str], tmp_path: Path) -> None:
    bogus = tmp_path / "bogus.pem"
    bogus.write_text("-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n")
    target = Target(
        kind="traces",
        protocol=protocol,
        endpoint="https://127.0.0.1:9/v1/traces" if protocol == "http/protobuf" else "https://127.0.0.1:9",
        certificate=str(bogus),
        timeout=2,
    )
    with Sender(target) as sender:
        with pytest.raises(OtlpSendError) as raised:
            sender.send(b"")
    assert raised.value.retryable is False


@pytest.mark.parametrize("protocol", ["http/protobuf", "grpc"])
def test_prepare_sends_nothing_and_the_sender_still_works(protocol: str) -> None:
    with OtlpReceiver(receiver_kind(protocol)) as rx:
        sender = Sender(make_target("traces", protocol, rx.endpoint))
        sender.prepare()
        time.sleep(0.2)
        assert rx.counts["traces"] == 0
        sender.send(trace_request().SerializeToString())
        wait_for(lambda: rx.count("traces") == 1)
        sender.close()


def test_prepare_leaves_tls_problems_to_the_first_send(tmp_path: Path) -> None:
    bad = tmp_path / "not-a-certificate.pem"
    bad.write_text("nonsense")
    sender = Sender(make_target("traces", "http/protobuf", f"https://127.0.0.1:{closed_port()}", certificate=str(bad)))
    sender.prepare()
    with pytest.raises(OtlpSendError, match="TLS"):
        sender.send(b"")
