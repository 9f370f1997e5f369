"""The options and ini keys of pytest-probability (OpenTelemetry's are in ``config/otel.py``).

Declared here, at every start-up (``pytest_addoption``), and read once at
configure by :mod:`.settings`. Declaring them needs nothing heavier than this
module and :mod:`.values`: no statistics, no comparisons.
"""

from __future__ import annotations

import pytest

from ..vocabulary import ADJUSTMENTS
from .values import argparse_type, parse_concurrency, parse_delay, parse_runs

DEFAULT_PATTERN = "bench_*.py"
#: Most runs (cases × runs) one session may collect, unless ini ``prob_max_runs`` says otherwise.
#: Each run is a pytest item (about 1-2 KiB): a million is already a large session.
DEFAULT_MAX_RUNS = 1_000_000

#: Command-line options and ini keys (with their defaults) of comparisons: any of them set, and the session
#: compares from its start (every value validated at configure); otherwise the comparisons sleep until a
#: case marked ``compare=`` wakes them (the composition root's decision: ``configure.FEATURES``).
COMPARE_OPTIONS = (
    "prob_baseline",
    "prob_history",
    "prob_margin",
    "prob_adjust",
    "prob_compare",
    "prob_plan",
    "prob_plan_drop",
    "prob_plan_power",
    "prob_plan_assume",
    "prob_plan_flake",
    "prob_plan_report",
)
COMPARE_INI_DEFAULTS = {"prob_history_depth": "7", "prob_margin": "", "prob_adjust": "holm", "prob_compare": ""}


def comparisons_requested(config: pytest.Config) -> bool:
    """Whether an option or ini key of comparisons is set (a baseline, --prob-compare, --prob-plan, ...)."""
    if any(config.getoption(name) not in (None, False, []) for name in COMPARE_OPTIONS):
        return True
    return any(str(config.getini(name)).strip() != default for name, default in COMPARE_INI_DEFAULTS.items())


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("probability", "pytest-probability: pass fractions of nondeterministic code")
    group.addoption(
        "--prob-runs",
        type=argparse_type(parse_runs),
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
        type=argparse_type(parse_delay),
        default=None,
        metavar="SECONDS",
        help="Sleep SECONDS between runs (never before the first), e.g. to respect rate limits.",
    )
    group.addoption(
        "--prob-concurrency",
        type=argparse_type(parse_concurrency),
        default=None,
        metavar="K",
        help="Keep up to K runs in flight at once in each process (async benchmarks as tasks on their event "
        "loop, sync ones in threads); each still reports as its own test. Wins over markers and the "
        "prob_concurrency ini key (default 1: one run at a time).",
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
    group.addoption(
        "--prob-shard",
        default=None,
        metavar="K/N",
        help="Run only shard K of N: each case's runs are spread over N shards, which a "
        "'python -m pytest_probability merge' of their --prob-json reports judges together.",
    )
    group.addoption(
        "--prob-journal",
        default=None,
        metavar="PATH",
        help="Append each finished run's record to PATH as it ends (fsynced within 50 ms); a session started "
        "again with the same journal runs only the runs it lacks, and reports all of them.",
    )
    group.addoption(
        "--prob-summary",
        default=None,
        metavar="PATH",
        help="Write the session's CI summary (Markdown) to PATH; default: appended to $GITHUB_STEP_SUMMARY when "
        "it is set; off: none.",
    )
    group.addoption(
        "--prob-annotations",
        choices=("auto", "on", "off"),
        default=None,
        help="Print GitHub workflow commands (::error, ::warning) for failed, dropped and undecided cases: auto "
        "(default: when GITHUB_ACTIONS=true), on or off.",
    )
    group.addoption(
        "--prob-quarantine",
        default=None,
        metavar="FILE",
        help="A TOML list of quarantined cases (pattern, owner, reason, until): they run and are reported, "
        "but never gate or fail the session until their date.",
    )
    stats_group = parser.getgroup("probability-stats", "pytest-probability: intervals, gates, latency, pass^k")
    stats_group.addoption(
        "--prob-method",
        default=None,
        metavar="METHOD",
        help="Interval method: exact (Clopper-Pearson, default), wilson or bayes.",
    )
    stats_group.addoption(
        "--prob-confidence",
        default=None,
        metavar="LEVEL",
        help="Two-sided confidence level of intervals, e.g. 0.95 (default).",
    )
    stats_group.addoption(
        "--prob-no-intervals", action="store_true", default=None, help="Do not show intervals in the table."
    )
    stats_group.addoption(
        "--prob-min-rate", default=None, metavar="RATE", help="Gate every case on this pass rate bar, in (0, 1]."
    )
    stats_group.addoption(
        "--prob-min-score",
        action="append",
        default=None,
        metavar="NAME=BAR",
        help="Gate every case on the mean of its score NAME (record_score), repeatable; a bare BAR "
        "gates the score named 'score'.",
    )
    stats_group.addoption(
        "--prob-undecided",
        choices=("fail", "pass"),
        default=None,
        help="What an UNDECIDED gate counts as (default fail).",
    )
    stats_group.addoption(
        "--prob-latency", action="store_true", default=None, help="Show each case's latency quantile with its interval."
    )
    stats_group.addoption(
        "--prob-metric",
        action="append",
        default=None,
        metavar="METRICS",
        help="pass^k / pass@k estimators, comma-separated, repeatable: 'pass^3,pass@5'.",
    )
    stats_group.addoption(
        "--prob-no-gate-items", action="store_true", default=None, help="Do not add a gate item after each gated case."
    )
    stats_group.addoption(
        "--prob-explain",
        action="store_true",
        default=None,
        help="Add a plain-language reading of the results after the summary, and an 'explanation' "
        "string to the JSON report's rows, gates, aggregates, metrics and comparisons.",
    )
    stats_group.addoption(
        "--prob-bootstrap",
        type=int,
        default=None,
        metavar="N",
        help="Resamples of the bootstrap behind function-level intervals (default 5000).",
    )
    stats_group.addoption(
        "--prob-seed",
        type=int,
        default=None,
        metavar="SEED",
        help="Seed of every resampling procedure, so the same results print the same intervals (default 0).",
    )
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
    compare_group.addoption(
        "--prob-margin", default=None, metavar="M", help="Drop (fraction, e.g. 0.05) a comparison tolerates; default 0."
    )
    compare_group.addoption(
        "--prob-adjust",
        choices=ADJUSTMENTS,
        default=None,
        help="Multiplicity adjustment over each family of comparisons: holm (default), bonferroni, bh or none.",
    )
    compare_group.addoption(
        "--prob-compare",
        default=None,
        metavar="ARGNAME",
        help="A/B: compare the values of this parametrize argument, first value as the baseline.",
    )
    compare_group.addoption(
        "--prob-plan",
        action="store_true",
        default=None,
        help="Run nothing; print the runs each gated, compared or baselined case needs.",
    )
    compare_group.addoption(
        "--prob-plan-drop",
        default=None,
        metavar="D",
        help="--prob-plan: the drop to detect when no margin is set (default 0.2).",
    )
    compare_group.addoption(
        "--prob-plan-power", default=None, metavar="P", help="--prob-plan: the power wanted (default 0.8)."
    )
    compare_group.addoption(
        "--prob-plan-assume",
        default=None,
        metavar="RATE",
        help="--prob-plan: the true pass rate to plan for, strictly between 0 and 1 (default 0.97).",
    )
    compare_group.addoption(
        "--prob-plan-flake",
        default=None,
        metavar="RATES",
        help="--prob-plan: failure rates to catch, comma-separated, one 'catch' column each (default 0.1,0.01).",
    )
    compare_group.addoption(
        "--prob-plan-report",
        default=None,
        metavar="PATH",
        help="--prob-plan: an earlier --prob-json report, whose cost per run projects a cost column.",
    )
    parser.addini("prob_history_depth", "Reports of --prob-history used as the baseline (default 7).", default="7")
    parser.addini(
        "prob_history_window",
        "Nights of --prob-history each case's state and flake rate are decided over (default 14).",
        default="14",
    )
    parser.addini(
        "prob_flaky_bar",
        "Pass rate below which a case is flaky across nights, shown by its interval (default 0.95).",
        default="0.95",
    )
    parser.addini(
        "prob_broken_runs",
        "Counted runs without a pass, over the latest nights, that make a case broken (default 10).",
        default="10",
    )
    parser.addini(
        "prob_fixed_nights",
        "Nights in a row of passing every run that make a flaky, failing or broken case fixed (default 3).",
        default="3",
    )
    parser.addini("prob_margin", "Drop a comparison tolerates (default 0).", default="")
    parser.addini(
        "prob_adjust", "Multiplicity adjustment: holm, bonferroni, bh or none (default holm).", default="holm"
    )
    parser.addini("prob_method", "Interval method: exact, wilson or bayes (default exact).", default="exact")
    parser.addini("prob_confidence", "Confidence level of intervals (default 0.95).", default="0.95")
    parser.addini("prob_prior", "Beta prior a,b of the bayes method (default 1,1).", default="1,1")
    parser.addini("prob_intervals", "Show intervals (default true).", default="true")
    parser.addini("prob_min_rate", "Pass rate bar for every case (default none).", default="")
    parser.addini("prob_min_score", "Score bars for every case: NAME=BAR, comma-separated (default none).", default="")
    parser.addini("prob_score_range", "LOW,HIGH: what record_score() values may be (default 0,1).", default="0,1")
    parser.addini("prob_undecided", "fail or pass: what an UNDECIDED gate counts as (default fail).", default="fail")
    parser.addini("prob_errors", "count or exclude: errored runs in gates (default count).", default="count")
    parser.addini("prob_latency", "Show latency quantiles (default false).", default="false")
    parser.addini("prob_latency_quantile", "Latency quantile (default 0.95).", default="0.95")
    parser.addini("prob_metric", "pass^k / pass@k estimators, comma-separated.", default="")
    parser.addini("prob_gate_items", "Add a gate item after each gated case (default true).", default="true")
    parser.addini(
        "prob_explain",
        "Add the plain-language reading (--prob-explain) to every session (default false).",
        default="false",
    )
    parser.addini(
        "prob_bootstrap", "Resamples of the bootstrap behind function-level intervals (default 5000).", default="5000"
    )
    parser.addini("prob_seed", "Seed of every resampling procedure (default 0).", default="0")
    parser.addini(
        "prob_min_inputs",
        "Fewest inputs (cases) a function-level interval, and paired inputs a comparison's "
        "verdict, need (default 10, at least 2).",
        default="10",
    )
    parser.addini(
        "prob_inputs_interval",
        "Function-level interval over inputs: wilson (default), bootstrap (0.3.0's) or t.",
        default="wilson",
    )
    parser.addini(
        "prob_compare", "Default of --prob-compare: a parametrize argument to A/B (default none).", default=""
    )
    parser.addini("prob_pattern", "Glob for benchmark files (default bench_*.py).", default=DEFAULT_PATTERN)
    parser.addini("prob_runs", "Runs per case when neither --prob-runs nor a marker says (default 1).", default="1")
    parser.addini("prob_transpose", "Run run-major across the session (default false).", default="false")
    parser.addini("prob_delay", "Seconds to sleep between runs (default 0).", default="0")
    parser.addini(
        "prob_concurrency", "Runs in flight at once in each process (--prob-concurrency wins; default 1).", default="1"
    )
    parser.addini("prob_shard", "K/N: run only shard K of N (--prob-shard wins; default: not sharded).", default="")
    parser.addini("prob_json", "Path of the JSON report (--prob-json wins).", default="")
    parser.addini(
        "prob_journal", "Path of the run journal, for resuming a killed session (--prob-journal wins).", default=""
    )
    parser.addini("prob_html", "Path of the HTML report (--prob-html wins).", default="")
    parser.addini(
        "prob_summary",
        "Path of the CI summary (--prob-summary wins; off: none; default $GITHUB_STEP_SUMMARY when set).",
        default="",
    )
    parser.addini("prob_annotations", "GitHub workflow commands: auto, on or off (default auto).", default="auto")
    parser.addini(
        "prob_quarantine", "Path of the quarantine file (--prob-quarantine wins), relative to the ini file.", default=""
    )
    parser.addini(
        "prob_trace_url",
        "URL template of a run's trace in the HTML report, with {trace_id} (and {span_id}).",
        default="",
    )
    spend = parser.getgroup("probability-spend", "pytest-probability: early stopping, budgets, retries")
    spend.addoption(
        "--prob-stop",
        default=None,
        metavar="MODE",
        help="Stop running a gated case once decided: curtail (the verdict cannot change any more) "
        "or sequential (an anytime-valid test decided); off to disable.",
    )
    spend.addoption(
        "--prob-max-cost",
        default=None,
        metavar="USD",
        help="Start no new run once the session's recorded spend reaches USD.",
    )
    spend.addoption(
        "--prob-max-tokens",
        default=None,
        metavar="N",
        help="Start no new run once the session's recorded tokens (input + output) reach N.",
    )
    spend.addoption(
        "--prob-max-time",
        default=None,
        metavar="SECONDS",
        help="Start no new run once the session has run for SECONDS (wall time).",
    )
    spend.addoption(
        "--prob-prices",
        default=None,
        metavar="PATH",
        help="TOML or JSON table of dollars per million tokens per model: a run's tokens "
        "without a recorded cost are priced with it.",
    )
    spend.addoption(
        "--prob-retry",
        default=None,
        metavar="N",
        help="Retry a run's call up to N times when it raises one of --prob-retry-on.",
    )
    spend.addoption(
        "--prob-retry-on",
        default=None,
        metavar="CLASSES",
        help="Exception classes that mean 'retry', space or comma separated: bare names "
        "(RateLimitError) or dotted paths (httpx.HTTPStatusError), matched on the MRO.",
    )
    parser.addini("prob_stop", "Early stopping of gated cases: curtail, sequential or off (default off).", default="")
    parser.addini("prob_max_cost", "Session cost budget in USD (default none).", default="")
    parser.addini("prob_max_tokens", "Session token budget (default none).", default="")
    parser.addini("prob_max_time", "Session wall-time budget in seconds (default none).", default="")
    parser.addini("prob_prices", "Path of the price table (--prob-prices wins), relative to the ini file.", default="")
    parser.addini(
        "prob_span_usage",
        "Usage read off GenAI spans ended in a run: fill (the models the run did not "
        "record with record_usage), add (always) or off (default fill).",
        default="fill",
    )
    parser.addini("prob_retry", "Retries of a run's call on a --prob-retry-on exception (default 0).", default="0")
    parser.addini("prob_retry_on", "Exception classes that mean 'retry this run' (default none).", default="")
    parser.addini(
        "prob_retry_backoff", "First backoff of a retry without Retry-After, in seconds (default 1).", default="1"
    )
    parser.addini(
        "prob_retry_max_wait",
        "Longest wait before a retry, Retry-After included, in seconds (default 60).",
        default="60",
    )
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
