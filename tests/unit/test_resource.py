"""The session resource: the SDK's Resource.create with what the plugin detects, and the user's variables win."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_probability.otel import resource

SDK_KEYS = {"telemetry.sdk.language", "telemetry.sdk.name", "telemetry.sdk.version"}


@pytest.fixture(autouse=True)
def clean(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "OTEL_SERVICE_NAME",
        "OTEL_RESOURCE_ATTRIBUTES",
        "OTEL_EXPERIMENTAL_RESOURCE_DETECTORS",
        "GITHUB_RUN_ID",
    ):
        monkeypatch.delenv(name, raising=False)


def build(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, **env: str) -> dict:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return dict(resource.build("suite", tmp_path, env).attributes)


def test_defaults(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    built = build(monkeypatch, tmp_path)
    assert SDK_KEYS <= set(built)
    assert built["service.name"] == "pytest-probability"
    assert built["test.suite.name"] == "suite"
    assert "service.instance.id" not in built  # a new id each night would split every series


def test_the_users_variables_win_over_what_the_plugin_detects(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    built = build(
        monkeypatch, tmp_path,
        OTEL_RESOURCE_ATTRIBUTES="deployment.environment.name=ci%20nightly,test.suite.name=theirs,cicd.pipeline.name=mine",
        GITHUB_RUN_ID="42", GITHUB_WORKFLOW="nightly", GITHUB_REPOSITORY="o/r",
    )  # fmt: skip
    assert built["deployment.environment.name"] == "ci nightly"
    assert built["test.suite.name"] == "theirs"
    assert built["cicd.pipeline.name"] == "mine"
    assert built["cicd.pipeline.run.id"] == "42"


def test_service_name_variable_wins(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert build(monkeypatch, tmp_path, OTEL_SERVICE_NAME="evals")["service.name"] == "evals"
    both = build(monkeypatch, tmp_path, OTEL_RESOURCE_ATTRIBUTES="service.name=attrs", OTEL_SERVICE_NAME="wins")
    assert both["service.name"] == "wins"


def test_instance_id_only_when_asked_for(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    built = build(monkeypatch, tmp_path, OTEL_RESOURCE_ATTRIBUTES="service.instance.id=kept")
    assert built["service.instance.id"] == "kept"


def test_other_detectors_go_through_the_sdk(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    built = build(monkeypatch, tmp_path, OTEL_EXPERIMENTAL_RESOURCE_DETECTORS="otel,process")
    assert "process.pid" in built
    assert built["test.suite.name"] == "suite"
    assert built["service.name"] == resource.DEFAULT_SERVICE_NAME


def test_git_revision_is_added_in_a_repository(tmp_path: Path) -> None:
    repository = Path(__file__).resolve().parents[2]
    revision = resource.git_revision(repository)
    if revision is None:
        pytest.skip("not in a git checkout")
    assert resource.build("s", repository, {}).attributes["vcs.ref.head.revision"] == revision
    assert "vcs.ref.head.revision" not in resource.build("s", tmp_path, {}).attributes
