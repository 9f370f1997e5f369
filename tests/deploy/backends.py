"""The stack's real programs for tests/deploy: the Collector, Jaeger v2,
Prometheus 3 and Alertmanager that ``make backends`` (deploy/build-backends.sh)
builds from their Go modules into a cache folder.

``require_backends()`` returns that folder when every program is there and up
to date (its stamp, written beside it, matches the SHA-256 of its module folder
deploy/backends/<name>/, computed here as the script does). Otherwise the test
is skipped with the command that builds them, or, when ``CI`` is set (CI builds
them in .ci/run), fails: a missing backend there is a broken CI, not a pass.

The stack itself (starting the programs with deploy/'s files, addresses
rewritten to free loopback ports) is deploy/stack.py's ``Stack``; the helpers
below read what the programs hold: Jaeger's and Prometheus's HTTP APIs and the
Collector's own metrics.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from deploy_tools import in_ci
from promql_names import DEPLOY

sys.path.insert(0, str(DEPLOY))

import stack as deploy_stack  # noqa: E402  (deploy/stack.py)

BUILD_SCRIPT = DEPLOY / "build-backends.sh"
MODULES = DEPLOY / "backends"
#: program -> its module folder under deploy/backends/
PROGRAMS = {
    "otelcol-probability": "otelcol",
    "jaeger": "jaeger",
    "prometheus": "prometheus",
    "alertmanager": "alertmanager",
}


def stamp(program: str) -> str:
    """deploy/build-backends.sh's stamp: SHA-256 over the module folder's files in name order."""
    folder = MODULES / PROGRAMS[program]
    digest = hashlib.sha256()
    for name in sorted(os.listdir(folder)):
        path = folder / name
        if path.is_file():
            digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def backend_problems(folder: Path) -> list[str]:
    problems = []
    for program in PROGRAMS:
        binary, stamp_file = folder / program, folder / f"{program}.stamp"
        if not os.access(binary, os.X_OK):
            problems.append(f"{program} is missing")
        elif not stamp_file.is_file() or stamp_file.read_text().strip() != stamp(program):
            problems.append(f"{program} is out of date (deploy/backends/{PROGRAMS[program]}/ changed)")
    return problems


def require_backends() -> Path:
    folder = deploy_stack.default_backends_dir()
    problems = backend_problems(folder)
    if problems:
        msg = (
            f"the stack's programs are not built in {folder} ({'; '.join(problems)}): run `make backends` "
            "(deploy/build-backends.sh: Go 1.26 and the Go module proxy; PROB_BACKENDS_DIR sets the folder)"
        )
        if in_ci():
            pytest.fail(f"{msg}; CI is set, so this is an error, not a skip", pytrace=False)
        pytest.skip(msg)
    return folder


# ---------------------------------------------------------------------------
# Reading the programs
# ---------------------------------------------------------------------------
def http_json(url: str, timeout: float = 10.0) -> Any:
    with urllib.request.urlopen(url, timeout=timeout) as resp:  # noqa: S310 - loopback only
        return json.loads(resp.read())


def http_status(url: str, timeout: float = 10.0) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:  # noqa: S310 - loopback only
            return resp.status, resp.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def post(url: str, timeout: float = 10.0) -> int:
    req = urllib.request.Request(url, method="POST", data=b"")
    with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 - loopback only
        return resp.status


def wait_for(check: Callable[[], Any], timeout: float, what: str, interval: float = 0.25) -> Any:
    """Poll ``check()`` until it returns something truthy (returned), at most ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"{what}: not within {timeout:.0f} s (last: {last!r})")


def collector_metric(stack: deploy_stack.Stack, name: str, **labels: str) -> float:
    """The sum of the Collector's own metric ``name`` (its :8888 Prometheus endpoint) over the matching series.
    ``name`` without a ``_total`` suffix (collector v0.160 writes counters without one); a
    ``_total`` form is counted as well."""
    with urllib.request.urlopen(
        f"http://127.0.0.1:{stack.ports['collector_metrics']}/metrics",  # noqa: S310
        timeout=5,
    ) as resp:
        text = resp.read().decode()
    total = 0.0
    for line in text.splitlines():
        if not line.startswith(name) or line.startswith("#"):
            continue
        head, _, value = line.rpartition(" ")
        metric, _, rest = head.partition("{")
        if metric not in (name, f"{name}_total"):
            continue
        found = dict(part.split("=", 1) for part in rest.rstrip("}").split(",") if "=" in part)
        if all(found.get(k, "").strip('"') == v for k, v in labels.items()):
            total += float(value)
    return total


def prom_query(prom: str, expr: str, at: float | None = None) -> list[dict]:
    params = {"query": expr}
    if at is not None:
        params["time"] = f"{at:.3f}"
    body = http_json(f"{prom}/api/v1/query?" + urllib.parse.urlencode(params), timeout=30)
    assert body["status"] == "success", body
    return body["data"]["result"]


def stored_series(prom: str, job: str = "pytest-probability", at: float | None = None, extra: str = "") -> list[dict]:
    """Every raw series of ``job`` (recording rules' outputs and ALERTS excluded) with its latest value:
    [{"name", "labels" (without __name__), "value"}]."""
    result = prom_query(prom, f'{{job="{job}",__name__!~".*:.*|ALERTS.*"{extra}}}', at)
    out = []
    for r in result:
        labels = dict(r["metric"])
        out.append({"name": labels.pop("__name__"), "labels": labels, "value": float(r["value"][1])})
    return out


def jaeger_traces(
    jaeger: str, service: str, tags: dict[str, str] | None = None, operation: str | None = None, limit: int = 50
) -> list[dict]:
    """Jaeger's query API as its UI searches: /api/traces?service=...&tags={...}."""
    params = {"service": service, "limit": str(limit), "lookback": "2d"}
    if tags:
        params["tags"] = json.dumps(tags)
    if operation:
        params["operation"] = operation
    return http_json(f"{jaeger}/api/traces?" + urllib.parse.urlencode(params), timeout=30)["data"] or []


def tags_of(item: dict) -> dict[str, Any]:
    """A Jaeger span's (or process's, or log's) tags/fields as {key: value}."""
    return {t["key"]: t["value"] for t in item.get("tags", item.get("fields", []))}
