"""The lazy imports: the plugin's import loads few modules, and the literals that stand
for constants of modules not imported yet equal those constants."""

from __future__ import annotations

import subprocess
import sys

import pytest

import pytest_probability
from pytest_probability import analysis, compare, gating, options, recording, report_compare
from pytest_probability.maths import twostats

#: What ``import pytest_probability.plugin`` may load: the hooks and what declaring the
#: options and configuring a session without benchmarks need (docs/developer-guide.md).
PLUGIN_IMPORT = {
    "pytest_probability", "pytest_probability.plugin", "pytest_probability.lifecycle",
    "pytest_probability.collect", "pytest_probability.options", "pytest_probability.state",
    "pytest_probability.otel", "pytest_probability.otel.options",
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
    assert pytest_probability.ProbabilityUsageWarning is recording.ProbabilityUsageWarning
    assert pytest_probability.ProbabilityGateWarning is gating.ProbabilityGateWarning
    assert set(pytest_probability.__all__) <= set(dir(pytest_probability))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        pytest_probability.nope  # noqa: B018


def test_the_adjustment_choices_are_twostats() -> None:
    assert options.ADJUSTMENTS == twostats.ADJUSTMENTS


def test_every_marker_keyword_is_owned_by_the_module_named_for_it() -> None:
    owners = {"analysis": analysis.MARKER_KEYWORDS, "compare": compare.MARKER_KEYWORDS, "options": {"runs": None}}
    expected = {key: name for name, keywords in owners.items() for key in keywords}
    assert options.KEYWORD_MODULES == expected


def test_the_verdict_markup_covers_the_comparison_verdicts() -> None:
    assert set(report_compare._MARKUP) == {compare.PASSED, compare.FAILED, compare.UNDECIDED}
    assert set(report_compare._MARKUP) == set(compare.VERDICT_VALUES)


def test_a_run_is_judged_by_its_gate_by_default() -> None:
    from pytest_probability import collect

    # A class default (gated runs set their own), a literal because gating is imported lazily.
    assert collect.Run.prob_judged_by == gating.GATE_NAME
    assert collect.Run.prob_gated is False


def test_the_comparison_options_are_the_declared_ones(pytester: pytest.Pytester) -> None:
    """report_compare.requested checks every option and ini key of the comparisons group."""
    config = pytester.parseconfig()
    group = next(g for g in config._parser._groups if g.name == "probability-compare")
    assert {o.dest for o in group.options} == set(report_compare._OPTIONS)
    for name, default in report_compare._INI_DEFAULTS.items():
        assert str(config.getini(name)).strip() == default
    assert not report_compare.requested(config)
