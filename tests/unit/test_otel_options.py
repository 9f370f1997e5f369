"""Unit: OpenTelemetry settings resolved from options, ini keys and OTEL_* variables.

Configs come from ``pytester.parseconfig``; the environment is passed to
``resolve`` explicitly, so the real one never leaks in.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_probability.otel import options
from pytest_probability.otel.options import check_traceparent, check_url, parse_headers, redact_url, resolve

ENDPOINT = "http://collector.example:4318"
TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
SECRET = "s3cr3t-api-key"


@pytest.fixture
def config(pytester: pytest.Pytester):
    """Build a config from command-line arguments (and an optional ini)."""
    pytester.makeini("[pytest]\n")

    def make(*args: str, ini: str = ""):
        if ini:
            pytester.makeini("[pytest]\n" + ini)
        return pytester.parseconfig(*args)

    return make


# -- on or off ---------------------------------------------------------------------


def test_auto_without_endpoint_or_file_is_off(config) -> None:
    assert resolve(config(), {}) is None
    assert resolve(config("--prob-otel=auto"), {"OTEL_SERVICE_NAME": "x", "OTEL_EXPORTER_OTLP_HEADERS": "a=b"}) is None


@pytest.mark.parametrize(
    "variable",
    ["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"],
)
def test_auto_turns_on_with_any_endpoint_variable(config, variable: str) -> None:
    settings = resolve(config(), {variable: ENDPOINT + "/v1/traces"})
    assert settings is not None and settings.network
    assert settings.protocol == "http/protobuf"
    # The SDK exporters read the variables themselves (and append /v1/<signal> to the base one).
    assert settings.traces_endpoint is None and settings.metrics_endpoint is None


def test_display_endpoint_prefers_the_traces_variable(config) -> None:
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://base:4318", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://traces:4318/v1/traces"}
    assert resolve(config(), env).display_endpoint == "http://traces:4318/v1/traces"
    assert resolve(config(), {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://base:4318"}).display_endpoint == "http://base:4318"


def test_auto_turns_on_with_the_endpoint_option(config) -> None:
    settings = resolve(config(f"--prob-otel-endpoint={ENDPOINT}"), {})
    assert settings is not None and settings.network


def test_auto_with_only_a_file_writes_the_file_and_no_network(config, pytester: pytest.Pytester) -> None:
    settings = resolve(config("--prob-otel-file=out/otel.jsonl"), {})
    assert settings is not None
    assert settings.network is False
    assert settings.file == pytester.path / "out" / "otel.jsonl"
    assert settings.display_endpoint == ""


def test_file_from_ini(config, pytester: pytest.Pytester) -> None:
    settings = resolve(config(ini="prob_otel_file = ini.jsonl\n"), {})
    assert settings is not None and settings.file == pytester.path / "ini.jsonl"


@pytest.mark.parametrize("protocol", ["http/protobuf", "grpc"])
def test_on_without_endpoint_uses_the_local_default(config, protocol: str) -> None:
    settings = resolve(config("--prob-otel=on", f"--prob-otel-protocol={protocol}"), {})
    assert settings is not None and settings.network
    if protocol == "grpc":
        assert settings.display_endpoint == "http://localhost:4317"
        assert settings.traces_endpoint == settings.metrics_endpoint == "http://localhost:4317"
    else:
        assert settings.display_endpoint == "http://localhost:4318"


@pytest.mark.parametrize(
    ("args", "ini", "env"),
    [
        (["--prob-otel=off"], "", {"OTEL_EXPORTER_OTLP_ENDPOINT": ENDPOINT}),
        (["--prob-otel=off", f"--prob-otel-endpoint={ENDPOINT}", "--prob-otel-file=x.jsonl"], "", {}),
        ([], "prob_otel = off\n", {"OTEL_EXPORTER_OTLP_ENDPOINT": ENDPOINT}),
        (["--prob-otel=on"], "", {"OTEL_SDK_DISABLED": "true"}),
        ([], "", {"OTEL_SDK_DISABLED": "True", "OTEL_EXPORTER_OTLP_ENDPOINT": ENDPOINT}),
        (["--prob-otel-file=x.jsonl"], "", {"OTEL_SDK_DISABLED": " TRUE "}),
    ],
    ids=["option-off", "off-wins-over-endpoint-and-file", "ini-off", "sdk-disabled-over-on", "sdk-disabled-auto", "sdk-disabled-file"],
)
def test_off(config, args: list[str], ini: str, env: dict[str, str]) -> None:
    assert resolve(config(*args, ini=ini), env) is None


def test_sdk_disabled_false_does_not_disable(config) -> None:
    assert resolve(config(), {"OTEL_SDK_DISABLED": "false", "OTEL_EXPORTER_OTLP_ENDPOINT": ENDPOINT}) is not None


def test_option_wins_over_ini(config) -> None:
    assert resolve(config("--prob-otel=on", ini="prob_otel = off\n"), {}) is not None


def test_bad_ini_mode_is_a_usage_error(config) -> None:
    with pytest.raises(pytest.UsageError, match="ini prob_otel must be auto, on or off, got 'sometimes'"):
        resolve(config(ini="prob_otel = sometimes\n"), {})


def test_off_needs_no_valid_otel_settings(config) -> None:
    # Export off: nothing else is read, so nothing else can fail.
    env = {"OTEL_EXPORTER_OTLP_PROTOCOL": "carrier-pigeon", "OTEL_EXPORTER_OTLP_HEADERS": "garbage"}
    assert resolve(config("--prob-otel=off"), env) is None


# -- endpoint and protocol precedence ----------------------------------------------------------


@pytest.mark.parametrize(
    ("option", "traces", "metrics"),
    [
        ("http://h:4318", "http://h:4318/v1/traces", "http://h:4318/v1/metrics"),
        ("http://h:4318/", "http://h:4318/v1/traces", "http://h:4318/v1/metrics"),
        ("https://h/otlp", "https://h/otlp/v1/traces", "https://h/otlp/v1/metrics"),
        ("http://h:4318/v1/traces", "http://h:4318/v1/traces", "http://h:4318/v1/metrics"),
        ("http://h:4318/v1/metrics/", "http://h:4318/v1/traces", "http://h:4318/v1/metrics"),
    ],
)
def test_http_signal_paths_are_appended_to_the_option(config, option: str, traces: str, metrics: str) -> None:
    settings = resolve(config(f"--prob-otel-endpoint={option}"), {})
    assert (settings.traces_endpoint, settings.metrics_endpoint) == (traces, metrics)


def test_grpc_takes_the_endpoint_option_as_is(config) -> None:
    settings = resolve(config("--prob-otel-endpoint=http://h:4317", "--prob-otel-protocol=grpc"), {})
    assert settings.protocol == "grpc"
    assert settings.traces_endpoint == settings.metrics_endpoint == "http://h:4317"


def test_endpoint_option_wins_over_the_variables(config) -> None:
    env = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://env:4318",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://env-traces:4318/v1/traces",
        "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://env-metrics:4318/v1/metrics",
    }
    settings = resolve(config("--prob-otel-endpoint=http://cli:4318"), env)
    assert settings.traces_endpoint == "http://cli:4318/v1/traces"
    assert settings.metrics_endpoint == "http://cli:4318/v1/metrics"
    assert settings.display_endpoint == "http://cli:4318"


def test_grpc_variable_endpoint_is_left_to_the_sdk(config) -> None:
    settings = resolve(config(), {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://env:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"})
    assert settings.protocol == "grpc"
    assert settings.traces_endpoint is None and settings.display_endpoint == "http://env:4317"


@pytest.mark.parametrize(
    ("args", "env", "expected"),
    [
        ([], {}, "http/protobuf"),
        ([], {"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, "grpc"),
        ([], {"OTEL_EXPORTER_OTLP_PROTOCOL": " GRPC "}, "grpc"),
        ([], {"OTEL_EXPORTER_OTLP_PROTOCOL": "http"}, "http/protobuf"),
        ([], {"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc"}, "grpc"),
        (["--prob-otel-protocol=http/protobuf"], {"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, "http/protobuf"),
        (["--prob-otel-protocol=grpc"], {"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"}, "grpc"),
    ],
)
def test_protocol_precedence(config, args: list[str], env: dict[str, str], expected: str) -> None:
    settings = resolve(config("--prob-otel=on", *args), env)
    assert settings.protocol == expected


def test_unknown_protocol_names_its_source(config) -> None:
    with pytest.raises(pytest.UsageError, match=r"^--prob-otel-protocol: unknown protocol 'udp'; use one of http/protobuf, grpc$"):
        resolve(config("--prob-otel=on", "--prob-otel-protocol=udp"), {})
    with pytest.raises(pytest.UsageError, match=r"OTEL_EXPORTER_OTLP_PROTOCOL: unknown protocol 'http/json'.*use http/protobuf"):
        resolve(config("--prob-otel=on"), {"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"})


# -- URLs ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (f"http://alice:{SECRET}@h:4318/v1/traces", "http://h:4318/v1/traces"),
        (f"https://h:4318/otlp?api_key={SECRET}#frag", "https://h:4318/otlp"),
        (f"http://{SECRET}@h", "http://h"),
        ("http://[::1]:4318", "http://[::1]:4318"),
        (f"http://alice:{SECRET}@h:99999", "http://h:99999"),  # a bad port is still shown, the password never
        ("http://[::1", "<malformed URL>"),
    ],
)
def test_redact_url(url: str, shown: str) -> None:
    assert redact_url(url) == shown
    assert SECRET not in redact_url(url)


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("localhost:4318", "expected http(s)://host"),
        ("ftp://h:4318", "expected http(s)://host"),
        ("http://", "expected http(s)://host"),
        (f"http://alice:{SECRET}@h:99999", "Port out of range"),
        (f"http://alice:{SECRET}@h:port", "Port could not be cast"),
        ("http://[::1", "Invalid IPv6 URL"),
    ],
)
def test_malformed_urls_are_usage_errors_without_credentials(config, url: str, reason: str) -> None:
    with pytest.raises(pytest.UsageError) as raised:
        check_url(url, "SOURCE")
    assert str(raised.value).startswith("SOURCE: malformed endpoint URL")
    assert reason in str(raised.value)
    assert SECRET not in str(raised.value)
    with pytest.raises(pytest.UsageError, match="^--prob-otel-endpoint: malformed endpoint URL") as raised:
        resolve(config(f"--prob-otel-endpoint={url}"), {})
    assert SECRET not in str(raised.value)


@pytest.mark.parametrize(
    "variable", ["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"]
)
def test_malformed_endpoint_variables_name_the_variable(config, variable: str) -> None:
    with pytest.raises(pytest.UsageError, match=f"^{variable}: malformed endpoint URL 'http://h:70000'") as raised:
        resolve(config(), {variable: f"http://u:{SECRET}@h:70000"})
    assert SECRET not in str(raised.value)


def test_check_url_strips_and_returns_the_url() -> None:
    assert check_url("  http://h:4318  ", "x") == "http://h:4318"


# -- headers ------------------------------------------------------------------------------------


def test_parse_headers() -> None:
    parsed = parse_headers("Authorization=Bearer%20tok%2Cen , x-Team = evals,, api%2Dkey=a=b", "H")
    assert parsed == {"authorization": "Bearer tok,en", "x-team": "evals", "api-key": "a=b"}
    assert parse_headers("", "H") == {}


@pytest.mark.parametrize(
    ("text", "index"),
    [
        (f"Authorization: Bearer {SECRET}", 1),  # the usual mistake: a colon, not "="
        (f"ok=1,{SECRET}", 2),  # a bare value
        (f"ok=1,={SECRET}", 2),  # no name
        (f"bad name={SECRET}", 1),  # not a token
        (f"{SECRET}:x={SECRET}", 1),
    ],
)
def test_parse_headers_errors_never_echo_values(text: str, index: int) -> None:
    with pytest.raises(pytest.UsageError) as raised:
        parse_headers(text, "OTEL_EXPORTER_OTLP_HEADERS")
    message = str(raised.value)
    assert message.startswith(f"OTEL_EXPORTER_OTLP_HEADERS: malformed header #{index} ")
    assert SECRET not in message and "Bearer" not in message


@pytest.mark.parametrize(
    "variable", ["OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_METRICS_HEADERS"]
)
def test_resolve_checks_every_headers_variable(config, variable: str) -> None:
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": ENDPOINT, variable: f"Authorization: {SECRET}"}
    with pytest.raises(pytest.UsageError, match=f"^{variable}: malformed header #1") as raised:
        resolve(config(), env)
    assert SECRET not in str(raised.value)
    assert resolve(config(), {**env, variable: f"authorization={SECRET}"}) is not None


def test_unknown_compression_is_a_usage_error(config) -> None:
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": ENDPOINT, "OTEL_EXPORTER_OTLP_COMPRESSION": "zstd"}
    with pytest.raises(pytest.UsageError, match="OTEL_EXPORTER_OTLP_COMPRESSION: unknown compression 'zstd'"):
        resolve(config(), env)
    assert resolve(config(), {**env, "OTEL_EXPORTER_OTLP_COMPRESSION": "gzip"}) is not None


# -- timeout, files, capture, suite ----------------------------------------------------------------


def test_timeout(config) -> None:
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": ENDPOINT}
    assert resolve(config(), env).timeout == options.DEFAULT_TIMEOUT == 10.0
    assert resolve(config("--prob-otel-timeout=2.5"), env).timeout == 2.5
    assert resolve(config(ini="prob_otel_timeout = 4\n"), env).timeout == 4.0
    assert resolve(config("--prob-otel-timeout=3", ini="prob_otel_timeout = 4\n"), env).timeout == 3.0
    for bad in ("0", "-1", "nan", "inf", "soon"):
        with pytest.raises(pytest.UsageError, match="^--prob-otel-timeout must be"):
            resolve(config(f"--prob-otel-timeout={bad}"), env)
    with pytest.raises(pytest.UsageError, match="^ini prob_otel_timeout must be"):
        resolve(config(ini="prob_otel_timeout = later\n"), env)


def test_file_that_is_a_directory_is_a_usage_error(config, pytester: pytest.Pytester) -> None:
    (pytester.path / "folder").mkdir()
    with pytest.raises(pytest.UsageError, match="^--prob-otel-file: .*folder is a directory; give a file path$"):
        resolve(config("--prob-otel-file=folder"), {})
    with pytest.raises(pytest.UsageError, match="^--prob-otel-spill: .*folder is a directory"):
        resolve(config("--prob-otel-spill=folder"), {"OTEL_EXPORTER_OTLP_ENDPOINT": ENDPOINT})


def test_file_under_a_plain_file_is_a_usage_error(config, pytester: pytest.Pytester) -> None:
    # Unwritable even for root: the folder cannot be created.
    (pytester.path / "plain").write_text("")
    with pytest.raises(pytest.UsageError, match="^--prob-otel-file: cannot create the folder .*plain"):
        resolve(config("--prob-otel-file=plain/otel.jsonl"), {})


def test_file_folder_is_created(config, pytester: pytest.Pytester) -> None:
    settings = resolve(config("--prob-otel-file=deep/er/otel.jsonl"), {})
    assert (pytester.path / "deep" / "er").is_dir()
    assert settings.file == pytester.path / "deep" / "er" / "otel.jsonl"
    assert not settings.file.exists()  # created at session start by the exporter, not here


def test_spill_default_and_option(config, pytester: pytest.Pytester) -> None:
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": ENDPOINT}
    assert resolve(config(), env).spill is None  # the exporter picks .pytest-probability/otel-spill-<time>.jsonl
    assert resolve(config("--prob-otel-spill=s.jsonl"), env).spill == pytester.path / "s.jsonl"
    assert resolve(config(ini="prob_otel_spill = i.jsonl\n"), env).spill == pytester.path / "i.jsonl"


def test_capture(config) -> None:
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": ENDPOINT}
    assert resolve(config(), env).capture == "all"
    assert resolve(config(), env).capture_values is True
    ids = resolve(config("--prob-otel-capture=ids"), env)
    assert ids.capture == "ids" and ids.capture_values is False
    assert resolve(config(ini="prob_otel_capture = ids\n"), env).capture == "ids"
    assert resolve(config("--prob-otel-capture=all", ini="prob_otel_capture = ids\n"), env).capture == "all"
    with pytest.raises(pytest.UsageError, match="ini prob_otel_capture must be all or ids, got 'some'"):
        resolve(config(ini="prob_otel_capture = some\n"), env)


def test_suite(config, pytester: pytest.Pytester) -> None:
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": ENDPOINT}
    assert resolve(config(), env).suite == pytester.path.name
    assert resolve(config(ini="prob_suite = nightly\n"), env).suite == "nightly"
    assert resolve(config("--prob-suite=adhoc", ini="prob_suite = nightly\n"), env).suite == "adhoc"


# -- traceparent ----------------------------------------------------------------------------------


def test_traceparent_from_variable_and_option(config) -> None:
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": ENDPOINT}
    assert resolve(config(), env).traceparent is None
    assert resolve(config(), {**env, "TRACEPARENT": TRACEPARENT.upper()}).traceparent == TRACEPARENT
    other = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"
    settings = resolve(config(f"--prob-otel-traceparent={other}"), {**env, "TRACEPARENT": TRACEPARENT})
    assert settings.traceparent == other


@pytest.mark.parametrize(
    "value",
    [
        "garbage",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",  # no flags
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",  # zero trace id
        "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",  # zero span id
        "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",  # forbidden version
        "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",  # short trace id
    ],
)
def test_malformed_traceparent(config, value: str) -> None:
    with pytest.raises(pytest.UsageError, match="^SRC: malformed traceparent"):
        check_traceparent(value, "SRC")
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": ENDPOINT}
    with pytest.raises(pytest.UsageError, match="^--prob-otel-traceparent: malformed traceparent"):
        resolve(config(f"--prob-otel-traceparent={value}"), env)
    # From the variable it is ignored, with a note: a CI system's bad carrier must not stop the session.
    settings = resolve(config(), {**env, "TRACEPARENT": value})
    assert settings.traceparent is None
    assert len(settings.notes) == 1 and settings.notes[0].startswith("ignored TRACEPARENT: malformed traceparent")


def test_resolve_reads_os_environ_by_default(config, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OTEL_SDK_DISABLED", raising=False)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://from-environ:4318")
    assert resolve(config()).display_endpoint == "http://from-environ:4318"
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    assert resolve(config()) is None


def test_home_is_expanded_in_paths(config) -> None:
    settings = resolve(config("--prob-otel-file=~/x-otel-unit.jsonl"), {})
    assert settings.file == Path("~/x-otel-unit.jsonl").expanduser()


def test_default_endpoints_agree_with_the_transport() -> None:
    """options keeps its own copies so that a plain session never imports transport."""
    from pytest_probability.otel import transport

    assert (options.DEFAULT_HTTP_ENDPOINT, options.DEFAULT_GRPC_ENDPOINT) == (
        transport.DEFAULT_HTTP_ENDPOINT,
        transport.DEFAULT_GRPC_ENDPOINT,
    )
