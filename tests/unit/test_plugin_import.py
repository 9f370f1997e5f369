"""What the plugin's import loads, the public names, and the words two modules must agree on."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

import pytest_probability
from pytest_probability import errors
from pytest_probability.collect.items import Run
from pytest_probability.config import marker, options
from pytest_probability.features.compare.facet import _MARKUP
from pytest_probability.maths import twostats
from pytest_probability.run import recording
from pytest_probability.vocabulary import ADJUSTMENTS, FAILED, GATE_KIND, PASSED, UNDECIDED, VERDICT_VALUES

#: What ``import pytest_probability.plugin`` may load: the hook surface, the option declarations,
#: the session's key (with its registry's class) and the run stage's, and the collection hooks' light
#: modules (docs/developer-guide.md, "Lazy imports").
PLUGIN_IMPORT = {
    "pytest_probability",
    "pytest_probability.plugin",
    "pytest_probability.session",
    "pytest_probability.protocols",
    "pytest_probability.run",
    "pytest_probability.run.key",
    "pytest_probability.collect.scratch",
    "pytest_probability.compat",
    "pytest_probability.compat.pytest",
    "pytest_probability.config",
    "pytest_probability.config.options",
    "pytest_probability.config.values",
    "pytest_probability.config.otel",
    "pytest_probability.collect",
    "pytest_probability.collect.benchfiles",
    "pytest_probability.collect.order",
    "pytest_probability.collect.items",
    "pytest_probability.collect.nodeid",
    "pytest_probability.errors",
    "pytest_probability.model",
    "pytest_probability.model.case",
    "pytest_probability.text",
    "pytest_probability.vocabulary",
}


def test_importing_the_plugin_loads_only_the_hooks_and_the_options() -> None:
    code = (
        "import sys, pytest\n"
        "before = set(sys.modules)\n"
        "import pytest_probability.plugin\n"
        "print('\\n'.join(sorted(set(sys.modules) - before)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, timeout=60)
    new = set(out.stdout.split())
    assert {m for m in new if m.startswith("pytest_probability")} == PLUGIN_IMPORT
    assert not [m for m in new if m.startswith(("opentelemetry", "grpc", "google.protobuf"))]


def test_public_names_resolve_to_their_modules_objects() -> None:
    assert pytest_probability.record_usage is recording.record_usage
    assert pytest_probability.record_cost is recording.record_cost
    assert pytest_probability.record_output is recording.record_output
    assert pytest_probability.record_io is recording.record_io
    assert pytest_probability.ProbabilityUsageWarning is errors.ProbabilityUsageWarning
    assert pytest_probability.ProbabilityGateWarning is errors.ProbabilityGateWarning
    assert set(pytest_probability.__all__) <= set(dir(pytest_probability))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        pytest_probability.nope  # noqa: B018


def test_every_declared_adjustment_is_implemented() -> None:
    for method in ADJUSTMENTS:
        assert len(twostats.adjust([0.01, 0.2], method, 0.05)) == 2
    with pytest.raises(ValueError, match="adjustment must be one of holm, bonferroni, bh, none"):
        twostats.parse_adjustment("sidak")


def test_the_registered_marker_names_exactly_the_keywords_it_parses() -> None:
    named = set(re.findall(r"(\w+)=", marker.MARKER_LINE.split(":")[0]))
    assert named == set(marker.KEYWORDS)


def test_the_verdict_markup_covers_the_comparison_verdicts() -> None:
    assert set(_MARKUP) == {PASSED, FAILED, UNDECIDED} == set(VERDICT_VALUES)


def test_a_run_is_judged_by_its_gate_by_default() -> None:
    # A class default (gated runs set their own).
    assert Run.prob_judged_by == GATE_KIND
    assert Run.prob_gated is False


def test_the_comparison_options_are_the_declared_ones(pytester: pytest.Pytester) -> None:
    """options.comparisons_requested (the composition root's decision) checks every option and ini key of the
    comparisons group."""
    config = pytester.parseconfig()
    group = next(g for g in config._parser._groups if g.name == "probability-compare")
    assert {o.dest for o in group.options} == set(options.COMPARE_OPTIONS)
    for name, default in options.COMPARE_INI_DEFAULTS.items():
        assert str(config.getini(name)).strip() == default
    assert not options.comparisons_requested(config)
