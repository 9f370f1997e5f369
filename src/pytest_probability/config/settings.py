"""The session's settings, read once at configure and validated: :class:`Settings` and :class:`StatsConfig`.

Pure and pytest-free: ``config.from_pytest`` reads them from pytest's options and ini keys.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ..value_classes import Value
from ..vocabulary import FAILED, SPAN_FILL
from .options import DEFAULT_MAX_RUNS

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


class Settings(Value):
    """The session's options, validated."""

    #: Runs from the command line; wins over markers.
    cli_runs: Final[int | None]
    #: Runs from the ini file; markers win over it.
    ini_runs: Final[int]
    transpose: Final[bool]
    delay: Final[float]
    json_path: Final[Path | None]
    pattern: Final[str]
    gate_timeout: Final[float]
    #: Most runs (cases × runs) the session may collect.
    max_runs: Final[int]
    max_cost: Final[float | None]
    max_tokens: Final[int | None]
    max_time: Final[float | None]
    #: The --prob-retry policy; None without retries.
    retry: Final[RetryPolicy | None]
    html_path: Final[Path | None]
    #: ini prob_trace_url: a run's trace link in the HTML report ({trace_id}, {span_id}).
    trace_url: Final[str | None]
    #: ini prob_span_usage: fill, add or off (how usage read off GenAI spans joins record_usage()'s).
    span_usage: Final[str]
    #: --prob-prices: dollars per million tokens per model; None without the option.
    prices: Final[Prices | None]
    #: ``--prob-shard=K/N``: (K, N) when this session is one shard of N, else None.
    shard: Final[tuple[int, int] | None]
    #: ``--prob-journal``: the run journal (``features.journal.journal_file``); None without one. Not in :meth:`to_dict`:
    #: the journal's path is no setting of the runs (each shard has its own journal, and the merge
    #: compares the shards' settings).
    journal: Final[Path | None]
    #: The suite's name (``--prob-suite``, else the repository's: ``config.suite``): what shards and journals are
    #: checked against.
    #: Not in :meth:`to_dict` (the JSON report's ``settings``): the shard's and the journal's own fields hold it.
    suite: Final[str]
    #: The CI summary's path (``--prob-summary``, else ``$GITHUB_STEP_SUMMARY``); None: no summary.
    summary: Final[Path | None]
    #: Whether the summary is appended to its file (``$GITHUB_STEP_SUMMARY``: every step's summary is one file
    #: that steps append to) rather than written whole (``--prob-summary``).
    summary_appends: Final[bool]
    #: GitHub workflow commands (``--prob-annotations``; auto: ``GITHUB_ACTIONS=true``).
    annotations: Final[bool]
    #: ``--prob-quarantine``: the quarantine file; None without one.
    quarantine: Final[Path | None]
    #: Each case's state across nights (ini ``prob_history_window``, ``prob_flaky_bar``, ``prob_broken_runs``,
    #: ``prob_fixed_nights``: ``maths.states.Rule``).
    history_window: Final[int]
    flaky_bar: Final[float]
    broken_runs: Final[int]
    fixed_nights: Final[int]
    #: Runs in flight at once in each process: ``--prob-concurrency`` (wins over markers), ini
    #: ``prob_concurrency`` (markers win over it). Not in :meth:`to_dict`: how many runs were in flight
    #: changes no result, so a journal resumes, and shards merge, whatever each used (the report's
    #: ``concurrency`` object says what each did).
    cli_concurrency: Final[int | None]
    ini_concurrency: Final[int]

    __slots__ = FIELDS = (
        "cli_runs",
        "ini_runs",
        "transpose",
        "delay",
        "json_path",
        "pattern",
        "gate_timeout",
        "max_runs",
        "max_cost",
        "max_tokens",
        "max_time",
        "retry",
        "html_path",
        "trace_url",
        "span_usage",
        "prices",
        "shard",
        "journal",
        "suite",
        "summary",
        "summary_appends",
        "annotations",
        "quarantine",
        "history_window",
        "flaky_bar",
        "broken_runs",
        "fixed_nights",
        "cli_concurrency",
        "ini_concurrency",
    )

    def __init__(
        self,
        cli_runs: int | None,
        ini_runs: int,
        transpose: bool,
        delay: float,
        json_path: Path | None,
        pattern: str,
        gate_timeout: float = 3600.0,
        max_runs: int = DEFAULT_MAX_RUNS,
        max_cost: float | None = None,
        max_tokens: int | None = None,
        max_time: float | None = None,
        retry: RetryPolicy | None = None,
        html_path: Path | None = None,
        trace_url: str | None = None,
        span_usage: str = SPAN_FILL,
        prices: Prices | None = None,
        shard: tuple[int, int] | None = None,
        journal: Path | None = None,
        suite: str = "",
        summary: Path | None = None,
        summary_appends: bool = False,
        annotations: bool = False,
        quarantine: Path | None = None,
        history_window: int = 14,
        flaky_bar: float = 0.95,
        broken_runs: int = 10,
        fixed_nights: int = 3,
        cli_concurrency: int | None = None,
        ini_concurrency: int = 1,
    ) -> None:
        self.cli_runs = cli_runs
        self.ini_runs = ini_runs
        self.transpose = transpose
        self.delay = delay
        self.json_path = json_path
        self.pattern = pattern
        self.gate_timeout = gate_timeout
        self.max_runs = max_runs
        self.max_cost = max_cost
        self.max_tokens = max_tokens
        self.max_time = max_time
        self.retry = retry
        self.html_path = html_path
        self.trace_url = trace_url
        self.span_usage = span_usage
        self.prices = prices
        self.shard = shard
        self.journal = journal
        self.suite = suite
        self.summary = summary
        self.summary_appends = summary_appends
        self.annotations = annotations
        self.quarantine = quarantine
        self.history_window = history_window
        self.flaky_bar = flaky_bar
        self.broken_runs = broken_runs
        self.fixed_nights = fixed_nights
        self.cli_concurrency = cli_concurrency
        self.ini_concurrency = ini_concurrency

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


class StatsConfig(Value):
    """Session-wide statistics settings (command line and ini)."""

    method: Final[str]
    confidence: Final[float]
    prior: Final[tuple[float, float]]
    intervals: Final[bool]
    min_rate: Final[float | None]
    undecided: Final[str]  # what an UNDECIDED gate counts as: fail or pass
    errors: Final[str]  # count: errored runs are non-passes in gates; exclude: left out
    latency: Final[bool]
    latency_quantile: Final[float]
    metrics: Final[tuple[tuple[str, int], ...]]
    gate_items: Final[bool]
    #: Early stopping of gated cases: "curtail", "sequential" or None.
    stop: Final[str | None]
    #: The plain-language reading (``--prob-explain``).
    explain: Final[bool]
    #: Bootstrap resamples (``--prob-bootstrap``), and the seed of every resampling (``--prob-seed``).
    resamples: Final[int]
    seed: Final[int]
    #: Fewest inputs a function-level interval needs, and paired inputs a comparison's verdict (ini ``prob_min_inputs``).
    min_inputs: Final[int]
    #: The function-level interval over inputs (ini ``prob_inputs_interval``), as ``maths.inputs`` names it.
    inputs_interval: Final[str]
    #: What ``record_score()`` values may be (ini ``prob_score_range``), unless a case's mark says otherwise.
    score_range: Final[tuple[float, float]]
    #: Score gates of every case (``--prob-min-score NAME=V``, ini ``prob_min_score``): (name, bar), by name.
    min_scores: Final[tuple[tuple[str, float], ...]]

    __slots__ = FIELDS = (
        "method",
        "confidence",
        "prior",
        "intervals",
        "min_rate",
        "undecided",
        "errors",
        "latency",
        "latency_quantile",
        "metrics",
        "gate_items",
        "stop",
        "explain",
        "resamples",
        "seed",
        "min_inputs",
        "inputs_interval",
        "score_range",
        "min_scores",
    )

    def __init__(
        self,
        method: str = "exact",
        confidence: float = 0.95,
        prior: tuple[float, float] = (1.0, 1.0),
        intervals: bool = True,
        min_rate: float | None = None,
        undecided: str = FAILED,
        errors: str = "count",
        latency: bool = False,
        latency_quantile: float = 0.95,
        metrics: tuple[tuple[str, int], ...] = (),
        gate_items: bool = True,
        stop: str | None = None,
        explain: bool = False,
        resamples: int = 5000,
        seed: int = 0,
        min_inputs: int = 10,
        inputs_interval: str = "wilson",
        score_range: tuple[float, float] = (0.0, 1.0),
        min_scores: tuple[tuple[str, float], ...] = (),
    ) -> None:
        self.method = method
        self.confidence = confidence
        self.prior = prior
        self.intervals = intervals
        self.min_rate = min_rate
        self.undecided = undecided
        self.errors = errors
        self.latency = latency
        self.latency_quantile = latency_quantile
        self.metrics = metrics
        self.gate_items = gate_items
        self.stop = stop
        self.explain = explain
        self.resamples = resamples
        self.seed = seed
        self.min_inputs = min_inputs
        self.inputs_interval = inputs_interval
        self.score_range = score_range
        self.min_scores = min_scores

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
