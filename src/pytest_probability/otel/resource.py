"""The resource every span and metric of a session carries.

``service.name`` defaults to ``pytest-probability`` unless OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES
name one; the git revision and the CI run come from the environment, and OTEL_RESOURCE_ATTRIBUTES wins over
all of them. No random ``service.instance.id`` (the SDK's default would make every nightly session a new set
of series): a session has none; a shard (``--prob-shard``) has a stable one, ``shard-K-of-N``, and an xdist worker's
instrumentation metrics that with the worker's id (``gw0``), so each part's counters are series of their own,
the same every night; OTEL_RESOURCE_ATTRIBUTES may set one.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from opentelemetry.sdk.resources import OTELResourceDetector, Resource

DEFAULT_SERVICE_NAME = "pytest-probability"


def git_revision(root: Path) -> str | None:
    try:
        result = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=5, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    revision = result.stdout.strip()
    return revision if result.returncode == 0 and len(revision) in (40, 64) else None


def ci_attributes(env: Mapping[str, str]) -> dict[str, str]:
    """cicd.pipeline.* from the common CI systems' variables."""
    get = env.get
    values: tuple[str | None, str | None, str | None]
    if get("GITHUB_RUN_ID"):
        server = get("GITHUB_SERVER_URL", "https://github.com")
        url = f"{server}/{get('GITHUB_REPOSITORY', '')}/actions/runs/{get('GITHUB_RUN_ID')}"
        values = (get("GITHUB_WORKFLOW"), get("GITHUB_RUN_ID"), url)
    elif get("GITLAB_CI"):
        values = (get("CI_PIPELINE_NAME") or get("CI_PROJECT_PATH"), get("CI_PIPELINE_ID"), get("CI_PIPELINE_URL"))
    elif get("BUILDKITE"):
        values = (get("BUILDKITE_PIPELINE_SLUG"), get("BUILDKITE_BUILD_ID"), get("BUILDKITE_BUILD_URL"))
    elif get("CIRCLECI"):
        values = (get("CIRCLE_PROJECT_REPONAME"), get("CIRCLE_WORKFLOW_ID"), get("CIRCLE_BUILD_URL"))
    elif get("JENKINS_URL"):
        values = (get("JOB_NAME"), get("BUILD_ID") or get("BUILD_NUMBER"), get("BUILD_URL"))
    elif get("TF_BUILD"):
        url = None
        if get("SYSTEM_COLLECTIONURI") and get("BUILD_BUILDID"):
            url = f"{get('SYSTEM_COLLECTIONURI')}{get('SYSTEM_TEAMPROJECT', '')}/_build/results?buildId={get('BUILD_BUILDID')}"
        values = (get("BUILD_DEFINITIONNAME"), get("BUILD_BUILDID"), url)
    else:
        return {}
    names = ("cicd.pipeline.name", "cicd.pipeline.run.id", "cicd.pipeline.run.url.full")
    return {name: value for name, value in zip(names, values, strict=False) if value}


def build(suite: str, root: Path, env: Mapping[str, str] | None = None, instance: str | None = None) -> Any:
    """The session's SDK ``Resource``.

    What the plugin detects (service name ``pytest-probability``, the suite, the
    git revision, the CI run) goes through the SDK's ``Resource.create``, with
    its detectors (``OTEL_EXPERIMENTAL_RESOURCE_DETECTORS``); then
    ``OTEL_RESOURCE_ATTRIBUTES`` and ``OTEL_SERVICE_NAME`` (the SDK's
    ``OTELResourceDetector``) are merged over it, so what the user set wins.
    """
    env = os.environ if env is None else env
    attributes: dict[str, Any] = {"service.name": DEFAULT_SERVICE_NAME, "test.suite.name": suite}
    revision = git_revision(root)
    if revision:
        attributes["vcs.ref.head.revision"] = revision
    attributes.update(ci_attributes(env))
    resource = Resource.create(attributes).merge(OTELResourceDetector().detect())
    merged = dict(resource.attributes)
    if "service.instance.id=" not in env.get("OTEL_RESOURCE_ATTRIBUTES", ""):
        # A random instance id would make every nightly session a new set of series in Prometheus.
        merged.pop("service.instance.id", None)
        if instance is not None:
            # Each part's counters (a shard's) are series of their own (Prometheus's `instance`), the same every night.
            merged["service.instance.id"] = instance
    return Resource(merged, resource.schema_url)
