"""The session's settings read from pytest's options and ini keys: :func:`resolve` and :func:`resolve_stats`.

Bad values are usage errors that name the value and where it came from,
raised before any run spends money. Every option that has an ini key is read
with :func:`~.values.pick` (the command line wins, then the ini key). What they
resolve to (``config.settings``) is pytest-free.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ..maths import stats, stopping
from ..vocabulary import SPAN_USAGE_MODES
from .options import DEFAULT_PATTERN
from .suite import default_suite
from .values import (
    check_trace_url,
    parse_bool,
    parse_choice,
    parse_concurrency,
    parse_delay,
    parse_fraction,
    parse_limit,
    parse_min_scores,
    parse_rate,
    parse_runs,
    parse_score_range,
    parse_shard,
    parse_whole,
    pick,
    sourced,
    too_many_runs,
)

if TYPE_CHECKING:
    from .retry import RetryPolicy

from .settings import INPUTS_INTERVALS, Settings, StatsConfig


def resolve(config: pytest.Config) -> Settings:
    """Read and validate every core option; raise ``pytest.UsageError`` naming bad values."""
    try:
        ini_runs = parse_runs(config.getini("prob_runs"), source="ini prob_runs")
        value, source = pick(config, "prob_transpose")
        transpose = parse_bool(value, source)
        value, source = pick(config, "prob_delay")
        delay = parse_delay(value, source=source)
        ini_concurrency = parse_concurrency(config.getini("prob_concurrency"), source="ini prob_concurrency")
        gate_timeout = parse_delay(config.getini("prob_gate_timeout"), source="ini prob_gate_timeout")
        max_runs = parse_runs(config.getini("prob_max_runs"), source="ini prob_max_runs")
        value, source = pick(config, "prob_max_cost")
        max_cost = parse_limit(value, source=source)
        value, source = pick(config, "prob_max_tokens")
        max_tokens = parse_limit(value, source=source, whole=True)
        value, source = pick(config, "prob_max_time")
        max_time = parse_limit(value, source=source)
        retry_policy = _retry_policy(config)
        value, source = pick(config, "prob_shard")
        shard = parse_shard(value, source=source)
        trace_url = str(config.getini("prob_trace_url")).strip() or None
        if trace_url is not None:
            trace_url = check_trace_url(trace_url)
        span_usage = parse_choice(config.getini("prob_span_usage"), SPAN_USAGE_MODES, "ini prob_span_usage")
        summary, summary_appends = _summary(config)
        value, source = pick(config, "prob_annotations")
        annotations = parse_choice(value, ("auto", "on", "off"), source)
        history_window = parse_whole(config.getini("prob_history_window"), source="ini prob_history_window", least=1)
        broken_runs = parse_whole(config.getini("prob_broken_runs"), source="ini prob_broken_runs", least=1)
        fixed_nights = parse_whole(config.getini("prob_fixed_nights"), source="ini prob_fixed_nights", least=1)
        flaky_bar = sourced(parse_rate, config.getini("prob_flaky_bar"), "ini prob_flaky_bar")
        if not flaky_bar > 0.5:
            raise ValueError(f"ini prob_flaky_bar must be above 0.5 (the failing bar), got {flaky_bar:g}")
        prices_path = _report_path(config, "prob_prices")
        prices = None
        if prices_path is not None:
            from .price_file import read  # only with --prob-prices

            prices = read(prices_path)
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None
    cli_runs = config.getoption("prob_runs")
    cli_concurrency = config.getoption("prob_concurrency")
    for runs, source in ((cli_runs, f"--prob-runs={cli_runs}"), (ini_runs, f"ini prob_runs = {ini_runs}")):
        if runs is not None and runs > max_runs:
            raise pytest.UsageError(too_many_runs(runs, max_runs, f"{source} asks for at least {runs:,} runs"))
    pattern = str(config.getini("prob_pattern")).strip() or DEFAULT_PATTERN
    return Settings(
        cli_runs=cli_runs,
        ini_runs=ini_runs,
        transpose=transpose,
        delay=delay,
        json_path=_report_path(config, "prob_json"),
        html_path=_report_path(config, "prob_html"),
        trace_url=trace_url,
        pattern=pattern,
        gate_timeout=gate_timeout,
        max_runs=max_runs,
        retry=retry_policy,
        span_usage=span_usage,
        prices=prices,
        shard=shard,
        journal=_report_path(config, "prob_journal"),
        summary=summary,
        summary_appends=summary_appends,
        annotations=annotations == "on" or (annotations == "auto" and os.environ.get("GITHUB_ACTIONS") == "true"),
        quarantine=_report_path(config, "prob_quarantine"),
        history_window=history_window,
        flaky_bar=flaky_bar,
        broken_runs=broken_runs,
        fixed_nights=fixed_nights,
        cli_concurrency=cli_concurrency,
        ini_concurrency=ini_concurrency,
        suite=str(config.getoption("prob_suite") or config.getini("prob_suite") or "").strip()
        or default_suite(config.rootpath),
        max_cost=max_cost,
        max_tokens=max_tokens,
        max_time=max_time,
    )


def _summary(config: pytest.Config) -> tuple[Path | None, bool]:
    """(path, appended) of the CI summary: ``--prob-summary`` (or ini ``prob_summary``) written whole;
    else ``$GITHUB_STEP_SUMMARY`` appended to; ``off`` (or nothing in a job without it): none."""
    value, _ = pick(config, "prob_summary")
    if str(value or "").strip().lower() == "off":
        return None, False
    path = _report_path(config, "prob_summary")
    if path is not None:
        return path, False
    step = os.environ.get("GITHUB_STEP_SUMMARY", "").strip()
    return (Path(step), True) if step else (None, False)


def _report_path(config: pytest.Config, name: str) -> Path | None:
    """A report's path: the option's, relative to the invocation folder, else the ini key's, relative
    to the ini file (like pytest's own paths). An empty value writes no report."""
    value, source = pick(config, name)
    if not value:
        return None
    base = Path(config.invocation_params.dir)
    if source.startswith("ini "):
        base = config.inipath.parent if config.inipath else config.rootpath
    text = os.path.expanduser(str(value))
    if text.endswith(("/", os.sep)):
        raise pytest.UsageError(f"--{name.replace('_', '-')}: {text} is a directory; give a file path")
    return Path(text) if os.path.isabs(text) else base / text


def _retry_policy(config: pytest.Config) -> RetryPolicy | None:
    value, source = pick(config, "prob_retry")
    text = str(value).strip() or "0"
    try:
        retries = int(text)
    except ValueError:
        raise ValueError(f"{source} must be a whole number of retries, got {text!r}") from None
    if retries < 0:
        raise ValueError(f"{source} must be zero or more, got {text!r}")
    if retries == 0:
        return None
    from .retry import RetryPolicy, split_names  # only with --prob-retry

    classes, classes_source = pick(config, "prob_retry_on")
    names = split_names(classes)
    if not names:
        raise ValueError(
            f"{source}={retries} needs the exception classes to retry on: --prob-retry-on or ini prob_retry_on"
        )
    backoff = parse_delay(config.getini("prob_retry_backoff"), source="ini prob_retry_backoff")
    max_wait = parse_delay(config.getini("prob_retry_max_wait"), source="ini prob_retry_max_wait")
    try:
        return RetryPolicy.build(retries, names, backoff=backoff, max_wait=max_wait)
    except ValueError as exc:
        raise ValueError(f"{classes_source}: {exc}") from None


def resolve_stats(config: pytest.Config) -> StatsConfig:
    """The statistics settings; UsageError naming any bad value."""
    try:
        value, source = pick(config, "prob_method")
        method = sourced(stats.parse_method, value, source)
        value, source = pick(config, "prob_confidence")
        confidence = sourced(stats.parse_confidence, value, source)
        prior = sourced(stats.parse_prior, config.getini("prob_prior"), "ini prob_prior")
        intervals = not config.getoption("prob_no_intervals") and parse_bool(
            config.getini("prob_intervals"), "ini prob_intervals"
        )
        value, source = pick(config, "prob_min_rate")
        min_rate = sourced(parse_rate, value, source) if str(value).strip() else None
        value, source = pick(config, "prob_undecided")
        undecided = parse_choice(value, ("fail", "pass"), source)
        errors = parse_choice(config.getini("prob_errors"), ("count", "exclude"), "ini prob_errors")
        value, source = pick(config, "prob_latency")
        latency = parse_bool(value, source)
        quantile = sourced(parse_fraction, config.getini("prob_latency_quantile"), "ini prob_latency_quantile")
        value, source = pick(config, "prob_metric")
        values = value if isinstance(value, list) else [value]
        metrics = tuple(sourced(stats.parse_metrics, [v for v in values if str(v).strip()], source))
        gate_items = not config.getoption("prob_no_gate_items") and parse_bool(
            config.getini("prob_gate_items"), "ini prob_gate_items"
        )
        value, source = pick(config, "prob_stop")
        stop = sourced(stopping.parse_mode, value, source)
        explain = bool(config.getoption("prob_explain")) or parse_bool(
            config.getini("prob_explain"), "ini prob_explain"
        )
        value, source = pick(config, "prob_bootstrap")
        resamples = parse_whole(value, source=source, least=1)
        value, source = pick(config, "prob_seed")
        seed = parse_whole(value, source=source)
        min_inputs = parse_whole(config.getini("prob_min_inputs"), source="prob_min_inputs", least=2)
        shown = parse_choice(config.getini("prob_inputs_interval"), tuple(INPUTS_INTERVALS), "ini prob_inputs_interval")
        score_range = sourced(parse_score_range, config.getini("prob_score_range"), "ini prob_score_range")
        value, source = pick(config, "prob_min_score")
        min_scores = parse_min_scores(
            [v for v in (value if isinstance(value, list) else [value]) if str(v).strip()], source
        )
        for name, bar in min_scores:
            if not score_range[0] <= bar <= score_range[1]:
                raise ValueError(
                    f"{source}: the bar of {name!r}, {bar:g}, is outside the score range "
                    f"[{score_range[0]:g}, {score_range[1]:g}] (ini prob_score_range)"
                )
    except (TypeError, ValueError) as exc:
        raise pytest.UsageError(str(exc)) from None
    return StatsConfig(
        method=method,
        confidence=confidence,
        prior=prior,
        intervals=intervals,
        min_rate=min_rate,
        undecided=undecided,
        errors=errors,
        latency=latency,
        latency_quantile=quantile,
        metrics=metrics,
        gate_items=gate_items,
        stop=stop,
        explain=explain,
        resamples=resamples,
        seed=seed,
        min_inputs=min_inputs,
        inputs_interval=INPUTS_INTERVALS[shown],
        score_range=score_range,
        min_scores=min_scores,
    )
