"""Static checks of deploy/: every file parses, the compose file publishes on
127.0.0.1 only with pinned images and no literal secrets, the pieces point at
each other (ports, paths, data source uids), Alertmanager's config is valid."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from deploy_tools import run
from promql_names import DEPLOY, REPO

COMPOSE = DEPLOY / "compose.yaml"
COLLECTOR = DEPLOY / "otel-collector" / "config.yaml"
ALERTMANAGER = DEPLOY / "alertmanager" / "alertmanager.yml"
DATASOURCES = sorted((DEPLOY / "grafana" / "provisioning" / "datasources").glob("*.yml"))
DASHBOARD_PROVIDERS = sorted((DEPLOY / "grafana" / "provisioning" / "dashboards").glob("*.yml"))
DASHBOARDS = sorted((DEPLOY / "grafana" / "dashboards").glob("*.json"))
WORKFLOW = DEPLOY / "ci" / "nightly.yml"

YAML_FILES = sorted(p for p in DEPLOY.rglob("*") if p.suffix in (".yml", ".yaml"))
JSON_FILES = sorted(DEPLOY.rglob("*.json"))


def load(path: Path):
    return json.loads(path.read_text()) if path.suffix == ".json" else yaml.safe_load(path.read_text())


@pytest.mark.parametrize("path", YAML_FILES + JSON_FILES, ids=lambda p: str(p.relative_to(DEPLOY)))
def test_file_parses(path):
    assert load(path) is not None


# ---------------------------------------------------------------------------
# compose.yaml
# ---------------------------------------------------------------------------
_INTERPOLATION = re.compile(r"\$\{(\w+)(?:(:?[-?])([^}]*))?\}")


def resolve_defaults(value: str) -> str:
    """What compose makes of ${VAR:-default} when VAR is not set."""

    def sub(m):
        op = m.group(2) or ""
        return m.group(3) if op.endswith("-") else ""

    return _INTERPOLATION.sub(sub, value)


@pytest.fixture(scope="module")
def compose():
    return load(COMPOSE)


def test_compose_services(compose):
    assert set(compose["services"]) == {"otel-collector", "jaeger", "prometheus", "alertmanager", "grafana"}


def test_compose_ports_bind_loopback_by_default(compose):
    for name, svc in compose["services"].items():
        for port in svc.get("ports", []):
            assert isinstance(port, str), f"{name}: use the 'HOST_IP:HOST:CONTAINER' string form"
            host_ip = resolve_defaults(port).rsplit(":", 2)[0]
            assert host_ip == "127.0.0.1", f"{name}: {port} is published on {host_ip or 'all interfaces'}"


def test_compose_images_pinned(compose):
    for name, svc in compose["services"].items():
        image = svc["image"]
        assert "@sha256:" in image or re.search(r":[^/:]+$", image), f"{name}: {image} has no tag"
        tag = image.rsplit(":", 1)[-1]
        assert tag not in ("latest", "main", "master", "nightly", "edge"), f"{name}: {image}"
        assert re.search(r"\d+\.\d+\.\d+", tag), f"{name}: {image} is not pinned to a release"


def test_compose_required_versions(compose):
    images = {n: s["image"] for n, s in compose["services"].items()}
    assert re.match(r"prom/prometheus:v3\.", images["prometheus"]), "the OTLP config needs Prometheus 3"
    assert images["jaeger"].startswith("jaegertracing/jaeger:2."), "Jaeger v2 receives OTLP natively"
    assert images["otel-collector"].startswith("otel/opentelemetry-collector-contrib:")


SECRET_KEY = re.compile(r"PASSWORD|SECRET|TOKEN|API_KEY|APIKEY|CREDENTIAL", re.I)


def test_compose_no_literal_secrets(compose):
    for name, svc in compose["services"].items():
        env = svc.get("environment", {})
        if isinstance(env, list):
            env = dict(e.split("=", 1) if "=" in e else (e, None) for e in env)
        for key, value in env.items():
            if SECRET_KEY.search(key) and value is not None:
                assert re.fullmatch(r"\$\{\w+(:?\?[^}]*)?\}", str(value)), (
                    f"{name}: {key} must come from the environment, as ${{VAR:?message}}"
                )
    grafana_env = compose["services"]["grafana"]["environment"]
    assert grafana_env["GF_SECURITY_ADMIN_PASSWORD"].startswith("${GRAFANA_ADMIN_PASSWORD:?")


def test_no_literal_secrets_anywhere_in_deploy():
    """No password, token or webhook URL written into any file of deploy/."""
    suspicious = re.compile(
        r"""(?ix)
        (password|passwd|secret|token|api_key|apikey)\s*[:=]\s*["']?(?!\$\{|\$\$\{|<|\s|$|["']\s*$)[^\s"'#]{4,}
      | hooks\.slack\.com/services/[A-Za-z0-9/]+
      | (ghp|github_pat|glpat|xox[bap])[-_][A-Za-z0-9_]{10,}
        """
    )
    for path in sorted(DEPLOY.rglob("*")):
        if path.is_file():
            for i, line in enumerate(path.read_text().splitlines(), 1):
                if "_file:" in line or "secrets." in line:  # references, not values
                    continue
                bare = re.sub(r"\$\$?\{[^}]*\}", "", line)  # ${VAR...} interpolations are fine
                assert not suspicious.search(bare), f"{path.relative_to(REPO)}:{i}: {line.strip()}"


def test_compose_mounted_files_exist(compose):
    for name, svc in compose["services"].items():
        for vol in svc.get("volumes", []):
            source = vol.split(":", 1)[0]
            if source.startswith("."):
                assert (COMPOSE.parent / source).exists(), f"{name}: {source} does not exist"
            else:
                assert source in compose.get("volumes", {}), f"{name}: named volume {source} is not declared"


def _mounts(svc) -> dict[str, str]:
    out = {}
    for vol in svc.get("volumes", []):
        parts = vol.split(":")
        out[parts[1]] = parts[0]
    return out


def test_compose_prometheus_flags(compose):
    cmd = compose["services"]["prometheus"]["command"]
    assert "--web.enable-otlp-receiver" in cmd
    assert "--enable-feature=exemplar-storage" in cmd
    assert not any("created-timestamp-zero-ingestion" in c for c in cmd), "it adds a 0 sample per session"
    assert "--config.file=/etc/prometheus/prometheus.yml" in cmd
    mounts = _mounts(compose["services"]["prometheus"])
    assert mounts["/etc/prometheus/prometheus.yml"] == "./prometheus/prometheus.yml"
    assert mounts["/etc/prometheus/rules"] == "./prometheus/rules"


# ---------------------------------------------------------------------------
# OpenTelemetry Collector
# ---------------------------------------------------------------------------
def test_collector_pipelines(compose):
    cfg = load(COLLECTOR)
    pipelines = cfg["service"]["pipelines"]
    assert set(pipelines) == {"traces", "metrics", "logs"}
    # The plugin's log records (instrumentation's events) are accepted, not refused and spilled.
    assert [e.split("/")[0] for e in pipelines["logs"]["exporters"]] == ["debug"]
    for name, p in pipelines.items():
        for kind in ("receivers", "processors", "exporters"):
            for comp in p.get(kind, []):
                assert comp in cfg.get(kind, {}), f"{name}: {kind[:-1]} {comp} is not configured"
    endpoints = {n: e.get("endpoint") or e.get("metrics_endpoint") for n, e in cfg["exporters"].items()}
    traces = [endpoints[e] for e in pipelines["traces"]["exporters"]]
    metrics = [endpoints[e] for e in pipelines["metrics"]["exporters"]]
    assert traces == ["jaeger:4317"]
    assert metrics == ["http://prometheus:9090/api/v1/otlp/v1/metrics"]
    assert all(e.split("/")[0].startswith(("otlp_grpc", "otlp")) for e in pipelines["traces"]["exporters"])
    assert all(e.split("/")[0] in ("otlp_http", "otlphttp") for e in pipelines["metrics"]["exporters"])
    # The receiver listens on the ports compose publishes.
    protocols = cfg["receivers"]["otlp"]["protocols"]
    ports = {p.rsplit(":", 1)[1] for p in compose["services"]["otel-collector"]["ports"]}
    assert (
        {protocols["grpc"]["endpoint"].rsplit(":", 1)[1], protocols["http"]["endpoint"].rsplit(":", 1)[1]}
        == ports
        == {"4317", "4318"}
    )
    # Prometheus scrapes the collector's own metrics on the port it exposes them.
    reader = cfg["service"]["telemetry"]["metrics"]["readers"][0]["pull"]["exporter"]["prometheus"]
    prom = load(DEPLOY / "prometheus" / "prometheus.yml")
    targets = [
        t
        for sc in prom["scrape_configs"]
        if sc["job_name"] == "otel-collector"
        for c in sc["static_configs"]
        for t in c["targets"]
    ]
    assert targets == [f"otel-collector:{reader['port']}"]
    mounts = _mounts(compose["services"]["otel-collector"])
    assert mounts["/etc/otelcol-contrib/config.yaml"] == "./otel-collector/config.yaml"


# ---------------------------------------------------------------------------
# Grafana
# ---------------------------------------------------------------------------
def provisioned_datasources() -> dict[str, dict]:
    out = {}
    for path in DATASOURCES:
        for ds in load(path)["datasources"]:
            assert ds["uid"] not in out, f"duplicate uid {ds['uid']}"
            out[ds["uid"]] = ds
    return out


def test_grafana_datasources():
    ds = provisioned_datasources()
    assert ds["prometheus"]["type"] == "prometheus"
    assert ds["prometheus"]["url"] == "http://prometheus:9090"
    assert ds["jaeger"]["type"] == "jaeger"
    assert ds["jaeger"]["url"] == "http://jaeger:16686"
    dests = ds["prometheus"]["jsonData"]["exemplarTraceIdDestinations"]
    assert {"name": "trace_id", "datasourceUid": "jaeger"} in dests
    # Every uid one data source points to is provisioned.
    for d in ds.values():
        for ref in re.findall(r'"datasourceUid": "([^"]+)"', json.dumps(d)):
            assert ref in ds, f"{d['name']} refers to data source uid {ref!r}, not provisioned"


def test_grafana_dashboard_provider_matches_compose(compose):
    mounts = _mounts(compose["services"]["grafana"])
    assert mounts["/etc/grafana/provisioning"] == "./grafana/provisioning"
    for path in DASHBOARD_PROVIDERS:
        for provider in load(path)["providers"]:
            container_path = provider["options"]["path"]
            assert mounts.get(container_path) == "./grafana/dashboards", container_path
    home = compose["services"]["grafana"]["environment"]["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"]
    assert (DEPLOY / "grafana" / "dashboards" / Path(home).name).exists()


def _datasource_refs(obj, where="dashboard"):
    if isinstance(obj, dict):
        for key, value in obj.items():
            if key == "datasource" and isinstance(value, dict) and "uid" in value:
                yield value["uid"], where
            elif key == "datasourceUid":
                yield value, where
            yield from _datasource_refs(value, obj.get("title", where) if isinstance(obj.get("title"), str) else where)
    elif isinstance(obj, list):
        for v in obj:
            yield from _datasource_refs(v, where)


GRAFANA_BUILTIN_UIDS = {"-- Grafana --", "grafana", "-- Dashboard --", "-- Mixed --"}


@pytest.mark.parametrize("path", DASHBOARDS, ids=lambda p: p.name)
def test_dashboard_datasource_uids_are_provisioned(path):
    provisioned = set(provisioned_datasources())
    refs = list(_datasource_refs(load(path)))
    assert refs
    for uid, where in refs:
        assert uid in provisioned | GRAFANA_BUILTIN_UIDS, f"{path.name}: {where} uses data source uid {uid!r}"
        assert "$" not in uid, f"{where}: reference data sources by fixed uid"


@pytest.mark.parametrize("path", DASHBOARDS, ids=lambda p: p.name)
def test_dashboard_structure(path):
    dash = load(path)
    assert dash["uid"] and len(dash["uid"]) <= 40
    ids = [p["id"] for p in dash["panels"]]
    assert len(ids) == len(set(ids)), "panel ids must be unique"
    cells = set()
    for p in dash["panels"]:
        g = p["gridPos"]
        assert 0 <= g["x"] and g["x"] + g["w"] <= 24, p["title"]
        for x in range(g["x"], g["x"] + g["w"]):
            for y in range(g["y"], g["y"] + g["h"]):
                assert (x, y) not in cells, f"{p['title']} overlaps another panel"
                cells.add((x, y))
    variables = {v["name"]: v for v in dash["templating"]["list"]}
    assert "test_suite_name" in json.dumps(variables["suite"]["query"])
    assert "probability_benchmark" in json.dumps(variables["benchmark"]["query"])


def _panel(dash, title):
    return next(p for p in dash["panels"] if p["title"] == title)


def test_probability_dashboard_content():
    dash = load(DEPLOY / "grafana" / "dashboards" / "probability.json")
    titles = {p["title"] for p in dash["panels"]}
    for required in (
        "Pass fraction per case",
        "Cases not passing in the latest session",
        "Session pass fraction (latest)",
        "Session pass fraction per night",
        "Spend per night",
        "Spend per night by model",
        "Tokens per night by model and type",
        "Errored runs per night",
        "Run duration p95 per benchmark",
    ):
        assert required in titles, required
    errored = _panel(dash, "Errored runs per night")
    assert 'probability_outcome="error"' in errored["targets"][0]["expr"]
    links = errored["fieldConfig"]["defaults"]["links"]
    ui = [link for link in links if "/search?" in link.get("url", "")]
    explore = [link for link in links if link.get("internal", {}).get("datasourceUid") == "jaeger"]
    assert ui and "probability.outcome%22%3A%22error" in ui[0]["url"]
    assert "probability_benchmark" in ui[0]["url"]
    assert explore and "probability.outcome=error" in explore[0]["internal"]["query"]["tags"]
    p95 = _panel(dash, "Run duration p95 per benchmark")["targets"][0]["expr"]
    assert p95.startswith("histogram_quantile(0.95") and "_bucket" in p95 and "rate(" not in p95
    latest = _panel(dash, "Cases not passing in the latest session")["targets"][0]
    assert latest["instant"] and 'probability_status!="pass"' in latest["expr"]


# ---------------------------------------------------------------------------
# Alertmanager
# ---------------------------------------------------------------------------
def test_alertmanager_config(amtool):
    out = run([amtool, "check-config", ALERTMANAGER])
    assert out.returncode == 0, out.stdout + out.stderr


def test_alertmanager_default_receiver_is_a_no_op(amtool):
    cfg = load(ALERTMANAGER)
    assert cfg["route"]["receiver"] == "null"
    null = next(r for r in cfg["receivers"] if r["name"] == "null")
    assert set(null) == {"name"}, "the default receiver must notify nobody"
    out = run(
        [
            amtool,
            "config",
            "routes",
            "test",
            f"--config.file={ALERTMANAGER}",
            "alertname=ProbabilityNoSession",
            "severity=critical",
        ]
    )
    assert out.returncode == 0 and out.stdout.strip() == "null", out.stdout + out.stderr


def test_alertmanager_example_receivers_are_valid(amtool, tmp_path):
    """The commented example (lines starting '#| ') is valid once uncommented."""
    text = ALERTMANAGER.read_text()
    assert "#| " in text
    uncommented = re.sub(r"(?m)^(\s*)#\| ", r"\1", text)
    path = tmp_path / "alertmanager.yml"
    path.write_text(uncommented)
    out = run([amtool, "check-config", path])
    assert out.returncode == 0, out.stdout + out.stderr
    names = {r["name"] for r in yaml.safe_load(uncommented)["receivers"]}
    assert {"slack-benchmarks", "email-benchmarks"} <= names
    out = run([amtool, "config", "routes", "test", f"--config.file={path}", "severity=critical"])
    assert out.stdout.strip() == "slack-benchmarks", out.stdout + out.stderr


# ---------------------------------------------------------------------------
# CI example
# ---------------------------------------------------------------------------
def test_nightly_workflow():
    wf = load(WORKFLOW)
    on = wf.get("on", wf.get(True))  # YAML 1.1 reads a bare `on` as true
    assert "schedule" in on and on["schedule"][0]["cron"]
    steps = [s for job in wf["jobs"].values() for s in job["steps"]]
    text = WORKFLOW.read_text()
    assert "secrets.OTEL_EXPORTER_OTLP_ENDPOINT" in text
    assert "TRACEPARENT" in text
    assert "--prob-json" in text and "--prob-otel-file" in text and "--prob-otel-spill" in text
    assert "--prob-suite" in text
    uploads = [s for s in steps if str(s.get("uses", "")).startswith("actions/upload-artifact@")]
    assert uploads and all(s.get("if") == "always()" for s in uploads)
    for s in steps:
        if "uses" in s:
            assert "@" in s["uses"] and not s["uses"].endswith(("@main", "@master")), s["uses"]


# ---------------------------------------------------------------------------
# docs/nightly.md
# ---------------------------------------------------------------------------
def test_nightly_doc_has_a_runbook_per_alert():
    text = (REPO / "docs" / "nightly.md").read_text()
    alerts = {
        r["alert"]
        for f in sorted((DEPLOY / "prometheus" / "rules").glob("*.yml"))
        for g in yaml.safe_load(f.read_text())["groups"]
        for r in g["rules"]
        if "alert" in r
    }
    headings = set(re.findall(r"^### (\w+) \((?:critical|warning|info)\)$", text, re.M))
    assert headings == alerts
    assert "deploy/ci/nightly.yml" in text
    assert "python -m pytest_probability.otel replay" in text
    for block in re.findall(r"```yaml\n(.*?)```", text, re.S):
        assert isinstance(yaml.safe_load(block), dict), block
    for word in (
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_HEADERS",
        "OTEL_EXPORTER_OTLP_PROTOCOL",
        "TRACEPARENT",
        "--prob-suite",
        "--prob-json",
        "--prob-otel-file",
        "--prob-otel-spill",
    ):
        assert word in text, word
