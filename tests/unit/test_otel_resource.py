"""The session resource is what the SDK's Resource.create gives, without importing the SDK."""

from __future__ import annotations

from pathlib import Path

import pytest
from opentelemetry.sdk.resources import Resource

from pytest_probability.otel import resource

ENVIRONMENTS = [
    pytest.param({}, id="nothing-set"),
    pytest.param({"OTEL_SERVICE_NAME": "evals"}, id="service-name"),
    pytest.param(
        {"OTEL_RESOURCE_ATTRIBUTES": "deployment.environment=ci%20nightly, team = llm ,broken,service.name=from-attrs"},
        id="resource-attributes",
    ),
    pytest.param(
        {"OTEL_RESOURCE_ATTRIBUTES": "service.name=from-attrs,test.suite.name=theirs", "OTEL_SERVICE_NAME": "wins"},
        id="service-name-wins-and-suite-is-ours",
    ),
    pytest.param({"OTEL_RESOURCE_ATTRIBUTES": "service.instance.id=kept-when-asked"}, id="instance-id-asked-for"),
    pytest.param({"GITHUB_RUN_ID": "42", "GITHUB_WORKFLOW": "nightly", "GITHUB_REPOSITORY": "o/r"}, id="ci"),
]


@pytest.mark.parametrize("env", ENVIRONMENTS)
def test_resource_matches_the_sdk(env: dict[str, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES", "OTEL_EXPERIMENTAL_RESOURCE_DETECTORS"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    built = resource.build("suite", tmp_path, env)
    ours = {"test.suite.name": "suite", **resource.ci_attributes(env)}
    if not resource.env_attributes(env).get("service.name"):
        ours["service.name"] = resource.DEFAULT_SERVICE_NAME
    expected = dict(Resource.create(ours).attributes)
    if "service.instance.id=" not in env.get("OTEL_RESOURCE_ATTRIBUTES", ""):
        expected.pop("service.instance.id", None)
    assert built.attributes == expected


def test_other_detectors_go_through_the_sdk(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    env = {"OTEL_EXPERIMENTAL_RESOURCE_DETECTORS": "otel,process"}
    monkeypatch.setenv("OTEL_EXPERIMENTAL_RESOURCE_DETECTORS", "otel,process")
    built = resource.build("suite", tmp_path, env)
    assert "process.pid" in built.attributes
    assert built.attributes["test.suite.name"] == "suite"
    assert built.attributes["service.name"] == resource.DEFAULT_SERVICE_NAME


def test_git_revision_is_added_in_a_repository(tmp_path: Path) -> None:
    repository = Path(__file__).resolve().parents[2]
    revision = resource.git_revision(repository)
    if revision is None:
        pytest.skip("not in a git checkout")
    assert resource.build("s", repository, {}).attributes["vcs.ref.head.revision"] == revision
    assert "vcs.ref.head.revision" not in resource.build("s", tmp_path, {}).attributes
