"""deploy/stack.py and deploy/build-backends.sh without the programs: the
rewritten files differ from deploy/'s only in addresses, the servers get
compose.yaml's flags, the build script's stamp is the one the tests check,
and a missing program is a skip locally and a failure under CI. No Go needed.
"""

from __future__ import annotations

import os
import re
import subprocess

import backends
import pytest
import yaml
from backends import BUILD_SCRIPT, PROGRAMS, deploy_stack, require_backends, stamp
from promql_names import DEPLOY

COMPOSE = DEPLOY / "compose.yaml"
ADDRESS = re.compile(
    r"^(https?://)?(0\.0\.0\.0|127\.0\.0\.1|localhost|jaeger|prometheus|alertmanager|otel-collector)"
    r":\d+(/.*)?$"
)


def _differences(a, b, path=()):
    """Leaves that differ between two YAML trees: [(path, a, b)]."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in a.keys() | b.keys():
            out += _differences(a.get(k), b.get(k), path + (k,))
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b, strict=False)) for d in _differences(x, y, path + (i,))]
    return [] if a == b else [(path, a, b)]


@pytest.mark.parametrize(
    "rewrite, source",
    [
        (deploy_stack.collector_config, deploy_stack.COLLECTOR_CONFIG),
        (deploy_stack.jaeger_config, deploy_stack.JAEGER_CONFIG),
        (deploy_stack.prometheus_config, deploy_stack.PROMETHEUS_CONFIG),
    ],
    ids=["collector", "jaeger", "prometheus"],
)
def test_the_stack_rewrites_only_addresses_and_ports(rewrite, source):
    ports = deploy_stack.free_ports()
    shipped, rewritten = yaml.safe_load(source.read_text()), yaml.safe_load(rewrite(ports))
    differences = _differences(shipped, rewritten)
    assert differences
    for path, old, new in differences:
        if path[-1] == "host":  # the telemetry reader's host: 0.0.0.0 -> 127.0.0.1
            assert (old, new) == ("0.0.0.0", "127.0.0.1"), path
        elif path[-1] == "port":
            assert isinstance(old, int) and new in ports.values(), path
        else:
            assert ADDRESS.match(str(old)) and ADDRESS.match(str(new)), (path, old, new)
            assert str(new).removeprefix("http://").startswith("127.0.0.1:"), (path, new)
            assert str(old).rsplit("/", 1)[-1] == str(new).rsplit("/", 1)[-1] or "/" not in str(old), (path, old, new)


def test_every_listening_address_becomes_loopback():
    ports = deploy_stack.free_ports()
    for text in (
        deploy_stack.collector_config(ports),
        deploy_stack.jaeger_config(ports),
        deploy_stack.prometheus_config(ports),
    ):
        for line in text.splitlines():
            if not line.lstrip().startswith("#"):
                assert "0.0.0.0" not in line and not re.search(
                    r"\b(jaeger|prometheus|alertmanager|otel-collector):\d", line
                ), line


def test_a_changed_file_is_refused_rather_than_half_rewritten():
    text = deploy_stack.COLLECTOR_CONFIG.read_text().replace("endpoint: jaeger:4317", "endpoint: tempo:4317")
    with pytest.raises(ValueError, match="jaeger:4317"):
        deploy_stack.collector_config(deploy_stack.DEFAULT_PORTS, text)


def test_the_stack_ports_are_composes_where_compose_publishes():
    compose = yaml.safe_load(COMPOSE.read_text())
    published = {int(p.rsplit(":", 2)[1]) for s in compose["services"].values() for p in s.get("ports", [])}
    ports = deploy_stack.DEFAULT_PORTS
    assert {
        ports["otlp_grpc"],
        ports["otlp_http"],
        ports["jaeger_ui"],
        ports["prometheus"],
        ports["alertmanager"],
    } == published - {3000}  # all but Grafana's
    assert len(set(ports.values())) == len(ports)


def _flags(service: str) -> list[str]:
    return yaml.safe_load(COMPOSE.read_text())["services"][service]["command"]


def test_the_servers_get_composes_flags():
    """compose.yaml's flags, less those naming container paths and addresses (the stack sets its own)."""
    own = ("--config.file=", "--storage.tsdb.path=", "--storage.path=", "--web.external-url=")
    for service, flags in (
        ("prometheus", deploy_stack.PROMETHEUS_FLAGS),
        ("alertmanager", deploy_stack.ALERTMANAGER_FLAGS),
    ):
        assert [f for f in _flags(service) if not f.startswith(own)] == flags, service
    assert _flags("jaeger") == ["--config=/etc/jaeger/config.yaml"]
    assert _flags("otel-collector") == ["--config=/etc/otelcol-contrib/config.yaml"]


def test_compose_mounts_the_jaeger_config():
    jaeger = yaml.safe_load(COMPOSE.read_text())["services"]["jaeger"]
    assert "./jaeger/config.yaml:/etc/jaeger/config.yaml:ro" in jaeger["volumes"]


def test_jaeger_config_receives_what_the_collector_sends():
    collector = yaml.safe_load(deploy_stack.COLLECTOR_CONFIG.read_text())
    jaeger = yaml.safe_load(deploy_stack.JAEGER_CONFIG.read_text())
    assert collector["exporters"]["otlp_grpc/jaeger"]["endpoint"] == "jaeger:4317"
    assert jaeger["receivers"]["otlp"]["protocols"]["grpc"]["endpoint"].endswith(":4317")
    assert jaeger["service"]["pipelines"]["traces"]["receivers"] == ["otlp"]
    storage = jaeger["extensions"]["jaeger_storage"]["backends"]
    assert list(storage.values()) == [{"memory": {"max_traces": 100000}}]
    assert jaeger["extensions"]["jaeger_query"]["storage"]["traces"] in storage
    assert jaeger["extensions"]["jaeger_query"]["http"]["endpoint"].endswith(":16686")
    assert jaeger["extensions"]["jaeger_query"]["enable_tracing"] is False


# ---------------------------------------------------------------------------
# deploy/build-backends.sh
# ---------------------------------------------------------------------------
def _fake_build(folder):
    for program in PROGRAMS:
        path = folder / program
        path.write_text("#!/bin/sh\n")
        path.chmod(0o755)
        (folder / f"{program}.stamp").write_text(stamp(program) + "\n")
        (folder / f"{program}.version").write_text("v0\n")


def _check(folder) -> subprocess.CompletedProcess:
    env = {**os.environ, "PROB_BACKENDS_DIR": str(folder), "PATH": "/usr/bin:/bin"}  # no Go on this PATH
    return subprocess.run(["bash", str(BUILD_SCRIPT), "--check"], capture_output=True, text=True, env=env, timeout=60)


def test_the_build_scripts_stamp_is_the_tests(tmp_path):
    """With every program present and stamped as the tests compute it, --check says up to date (no Go needed);
    a program whose module folder changed since (another stamp) is out of date, for both."""
    _fake_build(tmp_path)
    out = _check(tmp_path)
    assert out.returncode == 0, out.stderr
    assert backends.backend_problems(tmp_path) == []
    (tmp_path / "jaeger.stamp").write_text("0" * 64 + "\n")
    out = _check(tmp_path)
    assert out.returncode == 1 and "jaeger: missing or out of date" in out.stderr
    assert backends.backend_problems(tmp_path) == ["jaeger is out of date (deploy/backends/jaeger/ changed)"]
    (tmp_path / "prometheus").unlink()
    assert "prometheus is missing" in backends.backend_problems(tmp_path)


def test_the_build_script_without_go_says_so(tmp_path):
    env = {**os.environ, "PROB_BACKENDS_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"}
    out = subprocess.run(["bash", str(BUILD_SCRIPT), "jaeger"], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 1
    assert "go is not on the PATH" in out.stderr


def test_every_program_has_a_pinned_module():
    for program, folder in PROGRAMS.items():
        env = (backends.MODULES / folder / "build.env").read_text()
        assert re.search(r"^VERSION=v\d+\.\d+\.\d+$", env, re.M), program
        mod = (backends.MODULES / folder / "go.mod").read_text()
        assert (backends.MODULES / folder / "go.sum").is_file(), program
        assert "latest" not in mod and "=> ../" not in mod and "=> /" not in mod, program


def test_missing_backends_skip_locally_and_fail_under_ci(tmp_path, monkeypatch):
    monkeypatch.setenv("PROB_BACKENDS_DIR", str(tmp_path))
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"run `make backends`"):
        require_backends()
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI is set"):
        require_backends()
    _fake_build(tmp_path)
    assert require_backends() == tmp_path
