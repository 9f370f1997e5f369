"""Unit: OpenTelemetry settings resolved from options, ini keys and OTEL_* variables.

Configs come from ``pytester.parseconfig``; the environment is passed to
``resolve`` explicitly, so the real one never leaks in.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_probability.config import otel as options
from pytest_probability.config.otel import check_traceparent, check_url, resolve, secrets_from_env, signal_url
from pytest_probability.text import redact_url, scrub

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
    settings = resolve(config(), {variable: ENDPOINT + "/v1/traces", "OTEL_EXPORTER_OTLP_ENDPOINT": ENDPOINT})
    assert settings is not None and settings.network
    assert settings.protocols == {"traces": "http/protobuf", "metrics": "http/protobuf", "logs": "http/protobuf"}
    # The SDK exporters read the variables themselves (and append /v1/<signal> to the base one).
    assert settings.endpoints == {"traces": "", "metrics": "", "logs": ""}


def test_only_one_signal_endpoint_sends_only_that_signal(config) -> None:
    """A traces endpoint alone must not send the metrics to localhost for the whole budget."""
    settings = resolve(config(), {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": ENDPOINT + "/v1/traces"})
    assert settings.endpoints == {"traces": ""}
    assert any("metrics are not sent" in note for note in settings.notes)
    assert settings.metrics_on is False
    with_file = resolve(config("--prob-otel-file=x.jsonl"), {"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": ENDPOINT})
    assert with_file.endpoints == {"metrics": ""} and with_file.metrics_on


@pytest.mark.parametrize(
    ("env", "endpoints"),
    [
        ({"OTEL_TRACES_EXPORTER": "none"}, {"metrics": "", "logs": ""}),
        ({"OTEL_METRICS_EXPORTER": "none"}, {"traces": "", "logs": ""}),
        ({"OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": " NONE "}, {"logs": ""}),
        ({"OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none", "OTEL_LOGS_EXPORTER": "none"}, {}),
        ({"OTEL_TRACES_EXPORTER": "otlp,console"}, {"traces": "", "metrics": "", "logs": ""}),
    ],
)
def test_exporter_none_turns_that_signal_off(config, env: dict[str, str], endpoints: dict[str, str]) -> None:
    settings = resolve(config("--prob-otel-file=x.jsonl"), {"OTEL_EXPORTER_OTLP_ENDPOINT": ENDPOINT, **env})
    assert settings.endpoints == endpoints
    assert settings.metrics_on  # the file still gets the metrics


def test_auto_turns_on_with_the_endpoint_option(config) -> None:
    settings = resolve(config(f"--prob-otel-endpoint={ENDPOINT}"), {})
    assert settings is not None and settings.network


def test_auto_with_only_a_file_writes_the_file_and_no_network(config, pytester: pytest.Pytester) -> None:
    settings = resolve(config("--prob-otel-file=out/otel.jsonl"), {})
    assert settings is not None
    assert settings.network is False and settings.endpoints == {}
    assert settings.file == pytester.path / "out" / "otel.jsonl"


def test_file_from_ini(config, pytester: pytest.Pytester) -> None:
    settings = resolve(config(ini="prob_otel_file = ini.jsonl\n"), {})
    assert settings is not None and settings.file == pytester.path / "ini.jsonl"


@pytest.mark.parametrize("protocol", ["http/protobuf", "grpc"])
def test_on_without_endpoint_leaves_the_default_to_the_sdk(config, protocol: str) -> None:
    settings = resolve(config("--prob-otel=on", f"--prob-otel-protocol={protocol}"), {})
    assert settings.endpoints == {"traces": "", "metrics": "", "logs": ""}
    assert settings.protocols == {"traces": protocol, "metrics": protocol, "logs": protocol}


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
    ids=[
        "option-off",
        "off-wins-over-endpoint-and-file",
        "ini-off",
        "sdk-disabled-over-on",
        "sdk-disabled-auto",
        "sdk-disabled-file",
    ],
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
    # Export off: the SDK's variables are not read, so none of them can fail.
    env = {"OTEL_EXPORTER_OTLP_PROTOCOL": "carrier-pigeon", "OTEL_EXPORTER_OTLP_HEADERS": "garbage"}
    assert resolve(config("--prob-otel=off"), env) is None


@pytest.mark.parametrize(
    "off", [["--prob-otel=off"], [], ["--prob-otel=on"]], ids=["off", "auto-without-endpoint", "sdk-disabled"]
)
@pytest.mark.parametrize(
    ("args", "ini", "message"),
    [
        (["--prob-otel-timeout=-1"], "", "^--prob-otel-timeout must be more than zero seconds, got '-1'"),
        ([], "prob_otel_timeout = soon\n", "^ini prob_otel_timeout must be a number of seconds, got 'soon'"),
        ([], "prob_otel_capture = some\n", "^ini prob_otel_capture must be all or ids, got 'some'"),
        (["--prob-otel-protocol=udp"], "", "^--prob-otel-protocol: unknown protocol 'udp'"),
        (["--prob-otel-traceparent=abc"], "", "^--prob-otel-traceparent: malformed traceparent 'abc'"),
    ],
    ids=["timeout", "ini-timeout", "ini-capture", "protocol", "traceparent"],
)
def test_the_plugins_own_values_are_checked_with_export_off(pytester, config, off, args, ini, message) -> None:
    # A typo in a shared ini file fails the job that has it, also on the days export is off; the SDK's
    # variables stay unread (OTEL_SDK_DISABLED turns even --prob-otel=on off).
    env = {"OTEL_SDK_DISABLED": "true"} if off == ["--prob-otel=on"] else {}
    with pytest.raises(pytest.UsageError, match=message):
        resolve(config(*off, *args, ini=ini), env)
    pytester.makeini("[pytest]\n")
    assert resolve(config(*off), env) is None  # the same session without the bad value: export off


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
    assert settings.endpoints == {
        "traces": traces,
        "metrics": metrics,
        "logs": traces.replace("/v1/traces", "/v1/logs"),
    }
    assert signal_url(option, "traces") == traces


def test_grpc_takes_the_endpoint_option_as_is(config) -> None:
    settings = resolve(config("--prob-otel-endpoint=http://h:4317", "--prob-otel-protocol=grpc"), {})
    assert settings.endpoints == {"traces": "http://h:4317", "metrics": "http://h:4317", "logs": "http://h:4317"}
    bare = resolve(config("--prob-otel-endpoint=h:4317", "--prob-otel-protocol=grpc"), {})
    assert bare.endpoints["traces"] == "h:4317"  # scheme-less, as the SDK takes it (INSECURE applies)


def test_endpoint_option_wins_over_the_variables(config) -> None:
    env = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://env:4318",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://env-traces:4318/v1/traces",
    }
    settings = resolve(config("--prob-otel-endpoint=http://cli:4318"), env)
    assert settings.endpoints == {
        "traces": "http://cli:4318/v1/traces",
        "metrics": "http://cli:4318/v1/metrics",
        "logs": "http://cli:4318/v1/logs",
    }


@pytest.mark.parametrize(
    ("args", "env", "expected"),
    [
        ([], {}, "http/protobuf"),
        ([], {"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, "grpc"),
        ([], {"OTEL_EXPORTER_OTLP_PROTOCOL": " GRPC "}, "grpc"),
        ([], {"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc"}, "grpc"),
        (["--prob-otel-protocol=http/protobuf"], {"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, "http/protobuf"),
        (["--prob-otel-protocol=grpc"], {"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"}, "grpc"),
    ],
)
def test_protocol_precedence(config, args: list[str], env: dict[str, str], expected: str) -> None:
    settings = resolve(config("--prob-otel=on", *args), env)
    assert settings.protocols["traces"] == expected


def test_unknown_protocol_option_is_a_usage_error_and_variable_a_note(config) -> None:
    with pytest.raises(
        pytest.UsageError, match=r"^--prob-otel-protocol: unknown protocol 'udp'; use one of http/protobuf, grpc$"
    ):
        resolve(config("--prob-otel=on", "--prob-otel-protocol=udp"), {})
    settings = resolve(config("--prob-otel=on"), {"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"})
    assert settings.protocols == {"traces": "http/protobuf", "metrics": "http/protobuf", "logs": "http/protobuf"}
    assert [n for n in settings.notes if "OTEL_EXPORTER_OTLP_PROTOCOL='http/json'" in n]


def test_malformed_limit_variables_are_noted_for_removal(config) -> None:
    settings = resolve(
        config("--prob-otel=on"), {"OTEL_SPAN_EVENT_COUNT_LIMIT": "lots", "OTEL_ATTRIBUTE_COUNT_LIMIT": "64"}
    )
    assert settings.bad_limits == ("OTEL_SPAN_EVENT_COUNT_LIMIT",)


# -- URLs and secrets ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (f"http://alice:{SECRET}@h:4318/v1/traces", "http://h:4318/v1/traces"),
        (f"https://h:4318/otlp?api_key={SECRET}#frag", "https://h:4318/otlp"),
        (f"http://{SECRET}@h", "http://h"),
        ("http://[::1]:4318", "http://[::1]:4318"),
    ],
)
def test_redact_url(url: str, shown: str) -> None:
    assert redact_url(url) == shown
    assert SECRET not in redact_url(url)


@pytest.mark.parametrize("url", ["localhost:4318", "ftp://h:4318", "http://", "http://[::1"])
def test_malformed_url_options_are_usage_errors_without_credentials(config, url: str) -> None:
    with pytest.raises(
        pytest.UsageError, match="^--prob-otel-endpoint: .* is not an http:// or https:// URL"
    ) as raised:
        resolve(config(f"--prob-otel-endpoint={url}"), {})
    assert SECRET not in str(raised.value)


@pytest.mark.parametrize(
    ("url", "protocol", "message"),
    [
        (
            f"http://alice:{SECRET}@h:99999",
            "http/protobuf",
            "'http://h:99999': port 99999 is out of range (1 to 65535)",
        ),
        (
            "http://localhost:99999/otlp",
            "grpc",
            "'http://localhost:99999/otlp': port 99999 is out of range (1 to 65535)",
        ),
        ("https://[::1]:70000", "http/protobuf", "port 70000 is out of range (1 to 65535)"),
        ("http://h:0", "http/protobuf", "port 0 is out of range (1 to 65535)"),
        ("http://h:43x8", "http/protobuf", "port '43x8' is not a number"),
        ("collector:99999", "grpc", "'collector:99999': port 99999 is out of range (1 to 65535)"),
    ],
)
def test_an_out_of_range_port_is_named(config, url: str, protocol: str, message: str) -> None:
    """Issue 23, item 11: ``http://localhost:99999`` got "is not an http:// or https:// URL with a host"."""
    with pytest.raises(pytest.UsageError) as raised:
        resolve(config(f"--prob-otel-endpoint={url}", f"--prob-otel-protocol={protocol}"), {})
    assert str(raised.value).startswith("--prob-otel-endpoint: ") and message in str(raised.value)
    assert "is not an http" not in str(raised.value) and SECRET not in str(raised.value)


def test_check_url_strips_and_returns_the_url() -> None:
    assert check_url("  http://h:4318  ", "x") == "http://h:4318"


def test_scrub_redacts_secrets_before_cutting_and_pieces_of_them() -> None:
    """Issue 12, item 16: the body was cut to 200 characters first, so a cut token could show."""
    token = "SECRET123SECRET456"
    env = {
        "OTEL_EXPORTER_OTLP_HEADERS": f"authorization=Bearer%20{token}",
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://al:pw-9x7@h",
    }
    secrets = secrets_from_env(env)
    body = "x" * 190 + f"Bearer {token} and again {token[:10]}, basic YWw6cHctOXg3 end"
    shown = scrub(body, secrets)
    assert len(shown) <= 200
    assert "SECRET" not in shown and "123SE" not in shown
    echoed = scrub(f"invalid token Bearer {token[:12]}… (user al:pw-9x7)", secrets)
    assert token[:12] not in echoed and "pw-9x7" not in echoed and "[redacted]" in echoed
    assert "YWw6cHctOXg3" not in scrub("auth YWw6cHctOXg3", secrets)  # base64 of the URL's user info
    assert scrub("plain text\x00\x1b[31m", secrets) == "plain text [31m"  # no control characters


def test_a_malformed_header_item_counts_as_secret() -> None:
    secrets = secrets_from_env({"OTEL_EXPORTER_OTLP_HEADERS": "Authorization: Bearer tok-abcdef"})
    assert "tok-abcdef" not in scrub("Header format invalid: Authorization: Bearer tok-abcdef", secrets)


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
    assert len(settings.notes) == 1 and settings.notes[0].startswith(
        "OpenTelemetry: ignored TRACEPARENT: malformed traceparent"
    )


def test_resolve_reads_os_environ_by_default(config, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OTEL_SDK_DISABLED", raising=False)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://from-environ:4318")
    assert resolve(config()).endpoints == {"traces": "", "metrics": "", "logs": ""}
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    assert resolve(config()) is None


def test_home_is_expanded_in_paths(config) -> None:
    settings = resolve(config("--prob-otel-file=~/x-otel-unit.jsonl"), {})
    assert settings.file == Path("~/x-otel-unit.jsonl").expanduser()


@pytest.mark.parametrize(
    ("protocol", "env", "warning", "ca_only"),
    [
        (
            "http/protobuf",
            {"OTEL_EXPORTER_OTLP_CLIENT_KEY": "k", "OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE": "c"},
            "",
            None,
        ),
        ("http/protobuf", {"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": "c"}, "", None),  # a PEM with its key
        (
            "http/protobuf",
            {"OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY": "k"},
            "OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY is set without",
            None,
        ),
        (
            "grpc",
            {
                "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE": "ca",
                "OTEL_EXPORTER_OTLP_CLIENT_KEY": "k",
                "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": "c",
            },
            "OTEL_EXPORTER_OTLP_CLIENT_KEY and OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE not read: over gRPC, with "
            "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE set, the exporter reads OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY",
            None,
        ),
        (
            "grpc",
            {"OTEL_EXPORTER_OTLP_CERTIFICATE": "ca", "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": "c"},
            "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE is set without OTEL_EXPORTER_OTLP_CLIENT_KEY",
            "ca",
        ),
        (
            "grpc",
            {
                "OTEL_EXPORTER_OTLP_CERTIFICATE": "ca",
                "OTEL_EXPORTER_OTLP_CLIENT_KEY": "k",
                "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": "c",
            },
            "",
            None,
        ),
    ],
)
def test_client_certificate_variables_the_exporter_would_not_use(protocol, env, warning, ca_only) -> None:
    from pytest_probability.config.otel import client_certificate_check

    warnings, ca = client_certificate_check("traces", protocol, env)
    assert (warnings[0] if warnings else "").startswith(warning) and len(warnings) <= 1 and ca == ca_only


def test_logs_go_where_the_other_signals_go_and_never_turn_export_on(config) -> None:
    """The instrumentation's log records: the endpoint option, OTEL_EXPORTER_OTLP_LOGS_ENDPOINT or the generic
    variable; a logs endpoint alone does not turn export on."""
    assert resolve(config(), {"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": ENDPOINT + "/v1/logs"}) is None
    only_traces = resolve(config(), {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": ENDPOINT + "/v1/traces"})
    assert "logs" not in only_traces.endpoints and only_traces.logs_on is False
    both = {
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": ENDPOINT + "/v1/traces",
        "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": ENDPOINT + "/v1/logs",
    }
    assert resolve(config(), both).endpoints == {"traces": "", "logs": ""}
    grpc = resolve(config(), {"OTEL_EXPORTER_OTLP_ENDPOINT": ENDPOINT, "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL": "grpc"})
    assert grpc.protocols["logs"] == "grpc" and grpc.protocols["traces"] == "http/protobuf"
    off = resolve(
        config("--prob-otel-file=x.jsonl"), {"OTEL_EXPORTER_OTLP_ENDPOINT": ENDPOINT, "OTEL_LOGS_EXPORTER": "none"}
    )
    assert "logs" not in off.endpoints and off.logs_on  # the file still gets them
