"""The comparisons' settings (baselines, A/B, ``--prob-plan``): :class:`CompareConfig`, read when comparisons are on.

An option or ini key of comparisons set, or a case marked ``compare=``,
starts the comparisons (``features.compare.comparing``), which read these settings
then; a session without them never imports this module.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, SupportsFloat, SupportsIndex

import pytest

from ...config.values import parse_fraction, parse_margin, parse_rate, parse_runs, pick, sourced
from ...maths import run_budget, twostats


@dataclass(frozen=True)
class CompareConfig:
    """Session settings of comparisons (:func:`resolve_compare`)."""

    baselines: tuple[str, ...] = ()
    history: str | None = None
    history_depth: int = 7
    margin: float = 0.0
    margin_given: bool = False
    adjust: str = "holm"
    compare_axis: str | None = None
    #: The axis came from ``--prob-compare`` (an axis no selected benchmark has is then a usage error); from
    #: ini ``prob_compare``, shared by a repository's jobs, it compares the benchmarks that have it, as in 0.3.0.
    axis_given: bool = False
    plan: bool = False
    plan_drop: float = 0.2
    plan_power: float = 0.8
    #: --prob-plan's run budget: the true pass rate it plans for, the failure rates to catch,
    #: and the report its costs per run come from (an absolute path).
    plan_assume: float = run_budget.PLAN_ASSUME
    plan_flakes: tuple[float, ...] = run_budget.PLAN_FLAKES
    plan_report: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "baselines": list(self.baselines),
            "history": self.history,
            "history_depth": self.history_depth,
            "margin": self.margin,
            "adjust": self.adjust,
            "compare": self.compare_axis,
        }


def resolve_compare(config: pytest.Config) -> CompareConfig:
    """Baseline and A/B settings; UsageError naming any bad value."""
    try:
        depth = parse_runs(config.getini("prob_history_depth"), source="ini prob_history_depth")
        value, source = pick(config, "prob_margin")
        margin_given = bool(str(value or "").strip())
        margin = sourced(parse_margin, value, source) if margin_given else 0.0
        value, source = pick(config, "prob_adjust")
        adjust = sourced(twostats.parse_adjustment, value, source)
        drop = config.getoption("prob_plan_drop")
        plan_drop = sourced(parse_rate, drop, "--prob-plan-drop") if drop is not None else 0.2
        power = config.getoption("prob_plan_power")
        plan_power = sourced(parse_fraction, power, "--prob-plan-power") if power is not None else 0.8
        assume = config.getoption("prob_plan_assume")
        plan_assume = parse_plan_rate(assume, "--prob-plan-assume") if assume is not None else run_budget.PLAN_ASSUME
        flakes = config.getoption("prob_plan_flake")
        plan_flakes = parse_plan_rates(flakes, "--prob-plan-flake") if flakes is not None else run_budget.PLAN_FLAKES
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None
    if config.getoption("prob_margin") is not None and not (
        config.getoption("prob_baseline") or config.getoption("prob_history")
    ):
        raise pytest.UsageError("--prob-margin needs --prob-baseline (or --prob-history)")
    axis = config.getoption("prob_compare")
    if axis is not None and not str(axis).strip():
        raise pytest.UsageError("--prob-compare needs the name of a parametrize argument")
    if axis is None:
        axis = str(config.getini("prob_compare")).strip() or None  # the ini key: the suite's default axis
    plan_report = config.getoption("prob_plan_report")
    if plan_report is not None:
        text = os.path.expanduser(str(plan_report))
        plan_report = text if os.path.isabs(text) else str(Path(config.invocation_params.dir) / text)
    history = config.getoption("prob_history")
    if history is not None:
        text = os.path.expanduser(str(history))
        history = text if os.path.isabs(text) else str(Path(config.invocation_params.dir) / text)
        if Path(history).exists() and not Path(history).is_dir():
            raise pytest.UsageError(f"--prob-history: {history} is not a directory")
    return CompareConfig(
        baselines=tuple(config.getoption("prob_baseline") or ()),
        history=history,
        history_depth=depth,
        margin=margin,
        margin_given=margin_given,
        adjust=adjust,
        compare_axis=str(axis).strip() if axis is not None else None,
        axis_given=config.getoption("prob_compare") is not None,
        plan=bool(config.getoption("prob_plan")),
        plan_drop=plan_drop,
        plan_power=plan_power,
        plan_assume=plan_assume,
        plan_flakes=plan_flakes,
        plan_report=plan_report,
    )


def parse_plan_rate(value: object, source: str = "--prob-plan-assume") -> float:
    """A rate strictly between 0 and 1, from text or a number; ``95`` or ``"95%"`` is refused with a hint
    (it was meant as a percentage). ``source`` names the option in the message."""
    text = value.strip() if isinstance(value, str) else value
    percent = isinstance(text, str) and text.endswith("%")
    if isinstance(text, str) and percent:
        text = text[:-1].strip()
    try:
        # What float() takes: text, or an object with __float__ or __index__ (anything else is not a number).
        number = float(text) if isinstance(text, (str, SupportsFloat, SupportsIndex)) else math.nan
    except (TypeError, ValueError):
        number = math.nan
    if isinstance(value, bool) or not math.isfinite(number):
        raise ValueError(f"{source} must be a number strictly between 0 and 1, got {value!r}")
    if 0.0 < number < 1.0 and not percent:
        return number
    if 0.0 < number < 100.0 and (percent or number > 1.0):
        raise ValueError(
            f"{source} must be a fraction strictly between 0 and 1, not a percentage, "
            f"got {value!r}; did you mean {number / 100:g}?"
        )
    raise ValueError(f"{source} must be strictly between 0 and 1, got {value!r}")


def parse_plan_rates(value: object, source: str = "--prob-plan-flake") -> tuple[float, ...]:
    """Comma-separated rates (``"0.1,0.01"``), each as :func:`parse_plan_rate`; duplicates dropped keeping the first,
    an empty item refused."""
    if not isinstance(value, str):
        raise TypeError(f"{source} must be text such as '0.1,0.01', got {value!r}")
    parts = [part.strip() for part in value.split(",")]
    if not all(parts):
        raise ValueError(
            f"{source} must be comma-separated rates strictly between 0 and 1 (e.g. 0.1,0.01), got {value!r}"
        )
    return tuple(dict.fromkeys(parse_plan_rate(part, source) for part in parts))
