"""The session's settings, read once at configure and validated: :class:`Settings` and :class:`StatsConfig`.

Bad values are usage errors that name the value and where it came from,
raised before any run spends money. Every option that has an ini key is read
with :func:`~.values.pick` (the command line wins, then the ini key).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..maths import stats, stopping
from ..vocabulary import FAILED, SPAN_FILL, SPAN_USAGE_MODES
from .options import DEFAULT_MAX_RUNS, DEFAULT_PATTERN
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
    from ..model.prices import Prices
    from .retry import RetryPolicy

# The retry policy (config.retry) is imported only with --prob-retry, and the comparisons'
# settings (features.compare.compare_config) only when comparisons are on: the session's lazy-import rule
# (docs/developer-guide.md, "Lazy imports").


#: The fields of :meth:`Settings.to_dict` that say where a file was, not what it held (the prices file's
#: absolute path): shards run in other checkout folders, and a journal moved with its checkout, differ in
#: them and nothing else. The merge and the journal compare every other field, among them the digest of
#: that file's content (``prices_digest``).
PATH_FIELDS = frozenset({"prices"})


@dataclass(frozen=True)
class Settings:
    """The session's options, validated."""

    #: Runs from the command line; wins over markers.
    cli_runs: int | None
    #: Runs from the ini file; markers win over it.
    ini_runs: int
    transpose: bool
    delay: float
    json_path: Path | None
    pattern: str
    gate_timeout: float = 3600.0
    #: Most runs (cases × runs) the session may collect.
    max_runs: int = DEFAULT_MAX_RUNS
    max_cost: float | None = None
    max_tokens: int | None = None
    max_time: float | None = None
    #: The --prob-retry policy; None without retries.
    retry: RetryPolicy | None = None
    html_path: Path | None = None
    #: ini prob_trace_url: a run's trace link in the HTML report ({trace_id}, {span_id}).
    trace_url: str | None = None
    #: ini prob_span_usage: fill, add or off (how usage read off GenAI spans joins record_usage()'s).
    span_usage: str = SPAN_FILL
    #: --prob-prices: dollars per million tokens per model; None without the option.
    prices: Prices | None = None
    #: ``--prob-shard=K/N``: (K, N) when this session is one shard of N, else None.
    shard: tuple[int, int] | None = None
    #: ``--prob-journal``: the run journal (``features.journal.journal_file``); None without one. Not in :meth:`to_dict`:
    #: the journal's path is no setting of the runs (each shard has its own journal, and the merge
    #: compares the shards' settings).
    journal: Path | None = None
    #: The suite's name (``--prob-suite``, else the repository's: ``config.suite``): what shards and journals are
    #: checked against.
    #: Not in :meth:`to_dict` (the JSON report's ``settings``): the shard's and the journal's own fields hold it.
    suite: str = ""
    #: The CI summary's path (``--prob-summary``, else ``$GITHUB_STEP_SUMMARY``); None: no summary.
    summary: Path | None = None
    #: Whether the summary is appended to its file (``$GITHUB_STEP_SUMMARY``: every step's summary is one file
    #: that steps append to) rather than written whole (``--prob-summary``).
    summary_appends: bool = False
    #: GitHub workflow commands (``--prob-annotations``; auto: ``GITHUB_ACTIONS=true``).
    annotations: bool = False
    #: ``--prob-quarantine``: the quarantine file; None without one.
    quarantine: Path | None = None
    #: Each case's state across nights (ini ``prob_history_window``, ``prob_flaky_bar``, ``prob_broken_runs``,
    #: ``prob_fixed_nights``: ``maths.states.Rule``).
    history_window: int = 14
    flaky_bar: float = 0.95
    broken_runs: int = 10
    fixed_nights: int = 3
    #: Runs in flight at once in each process: ``--prob-concurrency`` (wins over markers), ini
    #: ``prob_concurrency`` (markers win over it). Not in :meth:`to_dict`: how many runs were in flight
    #: changes no result, so a journal resumes, and shards merge, whatever each used (the report's
    #: ``concurrency`` object says what each did).
    cli_concurrency: int | None = None
    ini_concurrency: int = 1

    @property
    def budgeted(self) -> bool:
        return any(limit is not None for limit in (self.max_cost, self.max_tokens, self.max_time))

    @property
    def default_runs(self) -> int:
        return self.cli_runs if self.cli_runs is not None else self.ini_runs

    def outputs(self) -> list[tuple[str, Path]]:
        """The core's output files with their options (the features' own: ``Feature.output_files``)."""
        named = (("--prob-json", self.json_path), ("--prob-html", self.html_path), ("--prob-summary", self.summary))
        return [(option, path) for option, path in named if path is not None]

    def to_dict(self) -> dict[str, Any]:
        return {
            "runs": self.default_runs,
            "runs_from_command_line": self.cli_runs is not None,
            "transpose": self.transpose,
            "delay": self.delay,
            "pattern": self.pattern,
            "max_cost": self.max_cost,
            "max_tokens": self.max_tokens,
            "max_time": self.max_time,
            "retry": self.retry.to_dict() if self.retry is not None else None,
            "span_usage": self.span_usage,
            "prices": self.prices.source if self.prices is not None else None,
            "prices_digest": self.prices.digest if self.prices is not None else None,
            "shard": f"{self.shard[0]}/{self.shard[1]}" if self.shard is not None else None,
        }


@dataclass(frozen=True)
class StatsConfig:
    """Session-wide statistics settings (command line and ini)."""

    method: str = "exact"
    confidence: float = 0.95
    prior: tuple[float, float] = (1.0, 1.0)
    intervals: bool = True
    min_rate: float | None = None
    undecided: str = FAILED  # what an UNDECIDED gate counts as: fail or pass
    errors: str = "count"  # count: errored runs are non-passes in gates; exclude: left out
    latency: bool = False
    latency_quantile: float = 0.95
    metrics: tuple[tuple[str, int], ...] = ()
    gate_items: bool = True
    #: Early stopping of gated cases: "curtail", "sequential" or None.
    stop: str | None = None
    #: The plain-language reading (``--prob-explain``).
    explain: bool = False
    #: Bootstrap resamples (``--prob-bootstrap``), and the seed of every resampling (``--prob-seed``).
    resamples: int = 5000
    seed: int = 0
    #: Fewest inputs a function-level interval needs, and paired inputs a comparison's verdict (ini ``prob_min_inputs``).
    min_inputs: int = 10
    #: The function-level interval over inputs (ini ``prob_inputs_interval``), as ``maths.inputs`` names it.
    inputs_interval: str = "wilson"
    #: What ``record_score()`` values may be (ini ``prob_score_range``), unless a case's mark says otherwise.
    score_range: tuple[float, float] = (0.0, 1.0)
    #: Score gates of every case (``--prob-min-score NAME=V``, ini ``prob_min_score``): (name, bar), by name.
    min_scores: tuple[tuple[str, float], ...] = ()

    def range_of(self, marks: Mapping[str, Any]) -> tuple[float, float]:
        """A case's score range: its mark's ``score_range``, else the session's (ini ``prob_score_range``)."""
        low, high = marks.get("score_range") or self.score_range
        return float(low), float(high)

    def to_dict(self) -> dict[str, Any]:
        """The JSON report's ``stats_config``: its six base keys (``method`` to ``min_inputs``) first, in this
        order, then the rest."""
        return {
            "method": self.method,
            "level": self.confidence,
            "prior": list(self.prior),
            "resamples": self.resamples,
            "seed": self.seed,
            "min_inputs": self.min_inputs,
            "inputs_interval": INPUTS_INTERVALS_SHOWN[self.inputs_interval],
            "intervals": self.intervals,
            "min_rate": self.min_rate,
            "undecided": self.undecided,
            "errors": self.errors,
            "latency": self.latency,
            "latency_quantile": self.latency_quantile,
            "metrics": [f"{kind}{k}" for kind, k in self.metrics],
            "gate_items": self.gate_items,
            "stop": self.stop,
            "explain": self.explain,
            # Graded results' settings only when set: a session without scores writes the report it wrote
            # before, and resumes a journal written before them.
            **({"score_range": list(self.score_range)} if self.score_range != (0.0, 1.0) else {}),
            **({"min_score": dict(self.min_scores)} if self.min_scores else {}),
        }


INPUTS_INTERVALS = {"wilson": "wilson", "bootstrap": "percentile", "t": "t"}
INPUTS_INTERVALS_SHOWN = {method: name for name, method in INPUTS_INTERVALS.items()}


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
