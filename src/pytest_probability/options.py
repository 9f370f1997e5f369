"""Command-line options, ini keys and the ``probability`` marker.

Options are declared here and resolved once, at configure time, into a
frozen :class:`Settings`. Bad values are usage errors that name the value,
raised before any run spends money.
"""

from __future__ import annotations

import argparse
import importlib
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

import pytest

if TYPE_CHECKING:
    from .analysis import StatsConfig
    from .compare import CompareConfig
    from .retry import RetryPolicy

# The modules behind the options (analysis, stats, compare, budget, retry, ...)
# are imported where a value of theirs is parsed, not here: declaring the
# options (pytest_addoption, at every start-up) needs none of them. Their
# constants used here are literals, checked against the modules by
# tests/unit/test_lazy_import_literals.py.

DEFAULT_PATTERN = "bench_*.py"
#: Most runs (cases × runs) one session may collect, unless ini ``prob_max_runs`` says otherwise.
#: Each run is a pytest item (about 1-2 KiB): a million is already a large session.
DEFAULT_MAX_RUNS = 1_000_000
#: ``twostats.ADJUSTMENTS``: the choices of --prob-adjust.
ADJUSTMENTS = ("holm", "bonferroni", "bh", "none")
MARKER_LINE = (
    "probability(runs=N, min_rate=R, min_passes=K, confidence=C, method=M, prior=(a, b), "
    "latency_quantile=Q, max_latency=S, stop=MODE, margin=M, equivalence=B, compare=ARG, baseline=VALUE): "
    "runs, gates and comparisons of this benchmark or pytest.param; "
    "see pytest-probability's reference"
)


# -- value parsers shared by the command line, ini keys and markers ----------


def parse_runs(value: Any, *, source: str = "--prob-runs") -> int:
    """A positive whole number of runs."""
    if isinstance(value, bool):
        raise ValueError(f"{source} must be a positive whole number, got {value!r}")
    if isinstance(value, int):
        number = value
    else:
        text = str(value).strip()
        try:
            number = int(text)
        except ValueError:
            raise ValueError(f"{source} must be a positive whole number, got {text!r}") from None
    if number < 1:
        raise ValueError(f"{source} must be at least 1, got {number}")
    return number


def parse_delay(value: Any, *, source: str = "--prob-delay") -> float:
    """A non-negative, finite number of seconds."""
    try:
        number = float(str(value).strip())
    except ValueError:
        raise ValueError(f"{source} must be a number of seconds, got {value!r}") from None
    if not math.isfinite(number) or number < 0:
        raise ValueError(f"{source} must be zero or more seconds, got {value!r}")
    return number


def _argparse_type(parse: Callable[..., Any]) -> Callable[[str], Any]:
    def convert(text: str) -> Any:
        try:
            return parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    convert.__name__ = parse.__name__.replace("parse_", "")
    return convert


def _ini_bool(value: Any, source: str = "") -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("", "0", "false", "no", "off"):
        return False
    raise ValueError(f"{source or 'value'} must be true or false, got {value!r}")


# -- declaration --------------------------------------------------------------


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("probability", "pytest-probability: pass fractions of nondeterministic code")
    group.addoption(
        "--prob-runs",
        type=_argparse_type(parse_runs),
        default=None,
        metavar="N",
        help="Run every case of every benchmark N times (wins over markers and the prob_runs ini key).",
    )
    group.addoption(
        "--prob-transpose",
        action="store_true",
        default=None,
        help="Run run-major across the session: run 1 of every case, then run 2, ...",
    )
    group.addoption(
        "--prob-delay",
        type=_argparse_type(parse_delay),
        default=None,
        metavar="SECONDS",
        help="Sleep SECONDS between runs (never before the first), e.g. to respect rate limits.",
    )
    group.addoption(
        "--prob-json",
        default=None,
        metavar="PATH",
        help="Write rows and per-run records as JSON to PATH (atomically, at session end).",
    )
    group.addoption(
        "--prob-html",
        default=None,
        metavar="PATH",
        help="Write a self-contained HTML report to PATH at session end (charts, failed runs, transcripts).",
    )
    stats_group = parser.getgroup("probability-stats", "pytest-probability: intervals, gates, latency, pass^k")
    stats_group.addoption("--prob-method", default=None, metavar="METHOD", help="Interval method: exact (Clopper-Pearson, default), wilson or bayes.")
    stats_group.addoption("--prob-confidence", default=None, metavar="LEVEL", help="Two-sided confidence level of intervals, e.g. 0.95 (default).")
    stats_group.addoption("--prob-no-intervals", action="store_true", default=None, help="Do not show intervals in the table.")
    stats_group.addoption("--prob-min-rate", default=None, metavar="RATE", help="Gate every case on this pass rate bar, in (0, 1].")
    stats_group.addoption("--prob-undecided", choices=("fail", "pass"), default=None, help="What an UNDECIDED gate counts as (default fail).")
    stats_group.addoption("--prob-latency", action="store_true", default=None, help="Show each case's latency quantile with its interval.")
    stats_group.addoption("--prob-metric", action="append", default=None, metavar="METRICS", help="pass^k / pass@k estimators, comma-separated, repeatable: 'pass^3,pass@5'.")
    stats_group.addoption("--prob-no-gate-items", action="store_true", default=None, help="Do not add a gate item after each gated case.")
    compare_group = parser.getgroup("probability-compare", "pytest-probability: baselines and A/B comparisons")
    compare_group.addoption(
        "--prob-baseline",
        action="append",
        default=None,
        metavar="PATH",
        help="Compare every case with this --prob-json report (this version's or 0.3.0's); repeatable, globs pool several nights.",
    )
    compare_group.addoption(
        "--prob-history",
        default=None,
        metavar="DIR",
        help="Use the last prob_history_depth reports in DIR as the baseline, and add this session's report to DIR.",
    )
    compare_group.addoption("--prob-margin", default=None, metavar="M", help="Drop (fraction, e.g. 0.05) a comparison tolerates; default 0.")
    compare_group.addoption(
        "--prob-adjust",
        choices=ADJUSTMENTS,
        default=None,
        help="Multiplicity adjustment over each family of comparisons: holm (default), bonferroni, bh or none.",
    )
    compare_group.addoption("--prob-compare", default=None, metavar="ARGNAME", help="A/B: compare the values of this parametrize argument, first value as the baseline.")
    compare_group.addoption("--prob-plan", action="store_true", default=None, help="Run nothing; print the runs each gated, compared or baselined case needs.")
    compare_group.addoption("--prob-plan-drop", default=None, metavar="D", help="--prob-plan: the drop to detect when no margin is set (default 0.2).")
    compare_group.addoption("--prob-plan-power", default=None, metavar="P", help="--prob-plan: the power wanted (default 0.8).")
    parser.addini("prob_history_depth", "Reports of --prob-history used as the baseline (default 7).", default="7")
    parser.addini("prob_margin", "Drop a comparison tolerates (default 0).", default="")
    parser.addini("prob_adjust", "Multiplicity adjustment: holm, bonferroni, bh or none (default holm).", default="holm")
    parser.addini("prob_method", "Interval method: exact, wilson or bayes (default exact).", default="exact")
    parser.addini("prob_confidence", "Confidence level of intervals (default 0.95).", default="0.95")
    parser.addini("prob_prior", "Beta prior a,b of the bayes method (default 1,1).", default="1,1")
    parser.addini("prob_intervals", "Show intervals (default true).", default="true")
    parser.addini("prob_min_rate", "Pass rate bar for every case (default none).", default="")
    parser.addini("prob_undecided", "fail or pass: what an UNDECIDED gate counts as (default fail).", default="fail")
    parser.addini("prob_errors", "count or exclude: errored runs in gates (default count).", default="count")
    parser.addini("prob_latency", "Show latency quantiles (default false).", default="false")
    parser.addini("prob_latency_quantile", "Latency quantile (default 0.95).", default="0.95")
    parser.addini("prob_metric", "pass^k / pass@k estimators, comma-separated.", default="")
    parser.addini("prob_gate_items", "Add a gate item after each gated case (default true).", default="true")
    parser.addini("prob_pattern", "Glob for benchmark files (default bench_*.py).", default=DEFAULT_PATTERN)
    parser.addini("prob_runs", "Runs per case when neither --prob-runs nor a marker says (default 1).", default="1")
    parser.addini("prob_transpose", "Run run-major across the session (default false).", default="false")
    parser.addini("prob_delay", "Seconds to sleep between runs (default 0).", default="0")
    parser.addini("prob_json", "Path of the JSON report (--prob-json wins).", default="")
    parser.addini("prob_html", "Path of the HTML report (--prob-html wins).", default="")
    parser.addini("prob_trace_url", "URL template of a run's trace in the HTML report, with {trace_id} (and {span_id}).", default="")
    spend = parser.getgroup("probability-spend", "pytest-probability: early stopping, budgets, retries")
    spend.addoption("--prob-stop", default=None, metavar="MODE",
                    help="Stop running a gated case once decided: curtail (the verdict cannot change any more) "
                         "or sequential (an anytime-valid test decided); off to disable.")
    spend.addoption("--prob-max-cost", default=None, metavar="USD",
                    help="Start no new run once the session's recorded spend reaches USD.")
    spend.addoption("--prob-max-tokens", default=None, metavar="N",
                    help="Start no new run once the session's recorded tokens (input + output) reach N.")
    spend.addoption("--prob-max-time", default=None, metavar="SECONDS",
                    help="Start no new run once the session has run for SECONDS (wall time).")
    spend.addoption("--prob-retry", default=None, metavar="N",
                    help="Retry a run's call up to N times when it raises one of --prob-retry-on.")
    spend.addoption("--prob-retry-on", default=None, metavar="CLASSES",
                    help="Exception classes that mean 'retry', space or comma separated: bare names "
                         "(RateLimitError) or dotted paths (httpx.HTTPStatusError), matched on the MRO.")
    parser.addini("prob_stop", "Early stopping of gated cases: curtail, sequential or off (default off).", default="")
    parser.addini("prob_max_cost", "Session cost budget in USD (default none).", default="")
    parser.addini("prob_max_tokens", "Session token budget (default none).", default="")
    parser.addini("prob_max_time", "Session wall-time budget in seconds (default none).", default="")
    parser.addini("prob_retry", "Retries of a run's call on a --prob-retry-on exception (default 0).", default="0")
    parser.addini("prob_retry_on", "Exception classes that mean 'retry this run' (default none).", default="")
    parser.addini("prob_retry_backoff", "First backoff of a retry without Retry-After, in seconds (default 1).", default="1")
    parser.addini("prob_retry_max_wait", "Longest wait before a retry, Retry-After included, in seconds (default 60).", default="60")
    parser.addini(
        "prob_max_runs",
        f"Most runs (cases x runs) a session may collect (default {DEFAULT_MAX_RUNS:,}).",
        default=str(DEFAULT_MAX_RUNS),
    )
    parser.addini(
        "prob_gate_timeout",
        "Seconds an xdist worker's gate item waits for its runs on other workers (default 3600).",
        default="3600",
    )


# -- resolution ---------------------------------------------------------------


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

    @property
    def budgeted(self) -> bool:
        return any(limit is not None for limit in (self.max_cost, self.max_tokens, self.max_time))

    @property
    def default_runs(self) -> int:
        return self.cli_runs if self.cli_runs is not None else self.ini_runs

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
        }


def resolve(config: pytest.Config) -> Settings:
    """Read and validate every option; raise ``pytest.UsageError`` naming bad values."""
    try:
        ini_runs = parse_runs(config.getini("prob_runs"), source="ini prob_runs")
        transpose = config.getoption("prob_transpose")
        if transpose is None:
            transpose = _ini_bool(config.getini("prob_transpose"), "ini prob_transpose")
        delay = config.getoption("prob_delay")
        if delay is None:
            delay = parse_delay(config.getini("prob_delay"), source="ini prob_delay")
        gate_timeout = parse_delay(config.getini("prob_gate_timeout"), source="ini prob_gate_timeout")
        max_runs = parse_runs(config.getini("prob_max_runs"), source="ini prob_max_runs")
        limits = {}
        for name, whole in (("max_cost", False), ("max_tokens", True), ("max_time", False)):
            value, source = _pick(config, "prob_" + name)
            limits[name] = _parse_limit(value, source, whole)
        retry_policy = _retry_policy(config)
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None
    cli_runs = config.getoption("prob_runs")
    for runs, source in ((cli_runs, f"--prob-runs={cli_runs}"), (ini_runs, f"ini prob_runs = {ini_runs}")):
        if runs is not None and runs > max_runs:
            raise pytest.UsageError(too_many_runs(runs, max_runs, f"{source} asks for at least {runs:,} runs"))
    json_path = _report_path(config, "prob_json", "--prob-json")
    html_path = _report_path(config, "prob_html", "--prob-html")
    trace_url = str(config.getini("prob_trace_url")).strip() or None
    if trace_url is not None:
        from .report_html import check_trace_url

        try:
            trace_url = check_trace_url(trace_url)
        except ValueError as exc:
            raise pytest.UsageError(str(exc)) from None
    pattern = str(config.getini("prob_pattern")).strip() or DEFAULT_PATTERN
    return Settings(
        cli_runs=cli_runs,
        ini_runs=ini_runs,
        transpose=bool(transpose),
        delay=delay,
        json_path=json_path,
        html_path=html_path,
        trace_url=trace_url,
        pattern=pattern,
        gate_timeout=gate_timeout,
        max_runs=max_runs,
        retry=retry_policy,
        **limits,
    )


def too_many_runs(total: int, limit: int, what: str) -> str:
    """The error for a session that would collect more than ``prob_max_runs`` runs."""
    return (
        f"{what} (cases × runs), more than the limit of {limit:,} runs per session; "
        "lower the runs, select fewer cases, or raise the ini key prob_max_runs"
    )
def _report_path(config: pytest.Config, name: str, option: str) -> Path | None:
    """A report's path: the option's, relative to the invocation folder, else the ini key's, relative to the ini file."""
    value = config.getoption(name)
    base = Path(config.invocation_params.dir)
    if not value and config.getini(name):
        # An ini path is relative to the ini file, like pytest's own paths.
        value = config.getini(name)
        base = config.inipath.parent if config.inipath else config.rootpath
    if not value:
        return None
    text = os.path.expanduser(str(value))
    if text.endswith(("/", os.sep)):
        raise pytest.UsageError(f"{option}: {text} is a directory; give a file path")
    return Path(text) if os.path.isabs(text) else base / text


def _pick(config: pytest.Config, name: str) -> tuple[Any, str]:
    """The command line's value, else the ini key's, with where it came from."""
    value = config.getoption(name)
    if value is not None:
        return value, "--" + name.replace("_", "-")
    return config.getini(name), f"ini {name}"


def _parse_limit(value: Any, source: str, whole: bool) -> float | int | None:
    """A budget limit; without one (empty), budget.py is not imported."""
    if value is None or not str(value).strip():
        return None
    from .budget import parse_limit

    return parse_limit(value, source=source, whole=whole)


def _retry_policy(config: pytest.Config) -> RetryPolicy | None:
    value, source = _pick(config, "prob_retry")
    text = str(value).strip() or "0"
    try:
        retries = int(text)
    except ValueError:
        raise ValueError(f"{source} must be a whole number of retries, got {text!r}") from None
    if retries < 0:
        raise ValueError(f"{source} must be zero or more, got {text!r}")
    if retries == 0:
        return None
    from . import retry

    classes, classes_source = _pick(config, "prob_retry_on")
    names = retry.split_names(classes)
    if not names:
        raise ValueError(f"{source}={retries} needs the exception classes to retry on: --prob-retry-on or ini prob_retry_on")
    backoff = parse_delay(config.getini("prob_retry_backoff"), source="ini prob_retry_backoff")
    max_wait = parse_delay(config.getini("prob_retry_max_wait"), source="ini prob_retry_max_wait")
    try:
        return retry.RetryPolicy.build(retries, names, backoff=backoff, max_wait=max_wait)
    except ValueError as exc:
        raise ValueError(f"{classes_source}: {exc}") from None


def resolve_stats(config: pytest.Config) -> StatsConfig:
    """The statistics settings; UsageError naming any bad value."""
    from .maths import stats, stopping
    from .analysis import StatsConfig

    def pick(option: str, ini: str) -> tuple[Any, str]:
        value = config.getoption(option)
        if value is not None:
            return value, "--" + option.replace("_", "-")
        return config.getini(ini), f"ini {ini}"

    try:
        value, source = pick("prob_method", "prob_method")
        method = _sourced(stats.parse_method, value, source)
        value, source = pick("prob_confidence", "prob_confidence")
        confidence = _sourced(stats.parse_confidence, value, source)
        prior = _sourced(stats.parse_prior, config.getini("prob_prior"), "ini prob_prior")
        intervals = not config.getoption("prob_no_intervals") and _ini_bool(config.getini("prob_intervals"), "ini prob_intervals")
        value, source = pick("prob_min_rate", "prob_min_rate")
        min_rate = None
        if str(value).strip():
            min_rate = _sourced(_parse_rate, value, source)
        value, source = pick("prob_undecided", "prob_undecided")
        undecided = _choice(value, ("fail", "pass"), source)
        errors = _choice(config.getini("prob_errors"), ("count", "exclude"), "ini prob_errors")
        latency = bool(config.getoption("prob_latency")) or _ini_bool(config.getini("prob_latency"), "ini prob_latency")
        quantile = _sourced(_parse_quantile, config.getini("prob_latency_quantile"), "ini prob_latency_quantile")
        metric_values, source = config.getoption("prob_metric"), "--prob-metric"
        if not metric_values:
            metric_values, source = [config.getini("prob_metric")], "ini prob_metric"
        metrics = tuple(_sourced(stats.parse_metrics, [v for v in metric_values if str(v).strip()], source))
        gate_items = not config.getoption("prob_no_gate_items") and _ini_bool(config.getini("prob_gate_items"), "ini prob_gate_items")
        value, source = pick("prob_stop", "prob_stop")
        stop = _sourced(stopping.parse_mode, value, source)
    except ValueError as exc:
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
    )


def resolve_compare(config: pytest.Config) -> CompareConfig:
    """Baseline and A/B settings; UsageError naming any bad value."""
    from . import compare
    from .maths import twostats
    from .compare import CompareConfig
    try:
        depth = parse_runs(config.getini("prob_history_depth"), source="ini prob_history_depth")
        margin_value, source = config.getoption("prob_margin"), "--prob-margin"
        if margin_value is None:
            margin_value, source = config.getini("prob_margin"), "ini prob_margin"
        margin_given = bool(str(margin_value or "").strip())
        margin = _sourced(compare.parse_margin, margin_value, source) if margin_given else 0.0
        adjust_value, source = config.getoption("prob_adjust"), "--prob-adjust"
        if adjust_value is None:
            adjust_value, source = config.getini("prob_adjust"), "ini prob_adjust"
        adjust = _sourced(twostats.parse_adjustment, adjust_value, source)
        drop = config.getoption("prob_plan_drop")
        plan_drop = _sourced(_parse_rate, drop, "--prob-plan-drop") if drop is not None else 0.2
        power = config.getoption("prob_plan_power")
        plan_power = _sourced(_parse_quantile, power, "--prob-plan-power") if power is not None else 0.8
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None
    axis = config.getoption("prob_compare")
    if axis is not None and not str(axis).strip():
        raise pytest.UsageError("--prob-compare needs the name of a parametrize argument")
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
        plan=bool(config.getoption("prob_plan")),
        plan_drop=plan_drop,
        plan_power=plan_power,
    )


def _sourced(parse: Callable[[Any], Any], value: Any, source: str) -> Any:
    try:
        return parse(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{source}: {exc}") from None


def _choice(value: Any, choices: tuple[str, ...], source: str) -> str:
    text = str(value).strip().lower()
    if text not in choices:
        raise ValueError(f"{source} must be one of {', '.join(choices)}, got {value!r}")
    return text


def _parse_rate(value: Any) -> float:
    try:
        number = float(str(value).strip())
    except ValueError:
        raise ValueError(f"the bar must be a rate in (0, 1], got {value!r}") from None
    if not 0 < number <= 1:
        hint = f" (did you mean {number / 100:g}?)" if 1 < number <= 100 else ""
        raise ValueError(f"the bar must be a rate in (0, 1], got {value!r}{hint}")
    return number


def _parse_quantile(value: Any) -> float:
    try:
        number = float(str(value).strip())
    except ValueError:
        raise ValueError(f"must be between 0 and 1 (e.g. 0.95), got {value!r}") from None
    if not 0 < number < 1:
        raise ValueError(f"must be between 0 and 1 (e.g. 0.95), got {value!r}")
    return number


# -- the probability marker ---------------------------------------------------


class MarkerError(ValueError):
    """A ``@pytest.mark.probability(...)`` with bad arguments."""


#: Marker keyword -> the module whose ``MARKER_KEYWORDS`` parses it. A module is
#: imported when a mark first uses one of its keywords (a benchmark with
#: ``runs=`` only needs no comparison code). Other concerns add their keywords here.
KEYWORD_MODULES: dict[str, str] = {
    "runs": "options",
    **dict.fromkeys(("min_rate", "min_passes", "confidence", "method", "prior", "latency_quantile", "max_latency", "stop"), "analysis"),
    **dict.fromkeys(("margin", "equivalence", "compare", "baseline"), "compare"),
}
MARKER_KEYWORDS: dict[str, Callable[[Any], Any]] = {
    "runs": lambda value: parse_runs(value, source="probability(runs=...)"),
}


def _keyword_parser(key: str) -> Callable[[Any], Any] | None:
    """The parser of a marker keyword (``None`` for an unknown one), importing its module on first use."""
    parse = MARKER_KEYWORDS.get(key)
    if parse is None and key in KEYWORD_MODULES:
        module = importlib.import_module(f".{KEYWORD_MODULES[key]}", __package__)
        MARKER_KEYWORDS.update(module.MARKER_KEYWORDS)
        parse = MARKER_KEYWORDS[key]
    return parse


#: Keywords that are one choice: the closest mark giving any of them decides, and a farther
#: mark's alternative is overridden (min_passes on the function, min_rate on a pytest.param).
EXCLUSIVE_KEYWORDS: tuple[frozenset[str], ...] = (frozenset({"min_rate", "min_passes"}),)


def marker_kwargs(marks: Any) -> dict[str, Any]:
    """Merge ``probability`` marks, closest first (the first mark setting a keyword wins).

    For keywords of one :data:`EXCLUSIVE_KEYWORDS` group the first mark setting
    any of them wins; one mark setting two of them keeps both, so that
    ``analysis.case_spec`` reports the contradiction.
    """
    merged: dict[str, Any] = {}
    for mark in marks:
        if mark.name != "probability":
            continue
        if mark.args:
            raise MarkerError(
                f"@pytest.mark.probability takes keyword arguments only, got positional {mark.args!r}"
            )
        taken = set(merged)
        for key, value in mark.kwargs.items():
            parse = _keyword_parser(key)
            if parse is None:
                known = ", ".join(sorted(KEYWORD_MODULES))
                raise MarkerError(
                    f"@pytest.mark.probability got an unknown keyword {key!r} (known: {known})"
                )
            if key in taken or any(key in group and group & taken for group in EXCLUSIVE_KEYWORDS):
                continue
            try:
                merged[key] = parse(value)
            except (TypeError, ValueError) as exc:
                raise MarkerError(str(exc)) from None
    return merged


def runs_for_case(settings: Settings, kwargs: Mapping[str, Any]) -> int:
    """The command line wins over the marker, the marker over the ini key."""
    if settings.cli_runs is not None:
        return settings.cli_runs
    return kwargs.get("runs", settings.ini_runs)
