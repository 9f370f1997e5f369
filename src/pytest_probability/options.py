"""Command-line options, ini keys and the ``probability`` marker.

Options are declared here and resolved once, at configure time, into a
frozen :class:`Settings`. Bad values are usage errors that name the value,
raised before any run spends money.
"""

from __future__ import annotations

import argparse
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

import pytest

DEFAULT_PATTERN = "bench_*.py"
MARKER_LINE = (
    "probability(runs=N): run each case of this benchmark (or this pytest.param) N times; "
    "see pytest-probability's reference for every keyword"
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


def _ini_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("", "0", "false", "no", "off"):
        return False
    raise ValueError(f"expected true or false, got {value!r}")


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
    parser.addini("prob_pattern", "Glob for benchmark files (default bench_*.py).", default=DEFAULT_PATTERN)
    parser.addini("prob_runs", "Runs per case when neither --prob-runs nor a marker says (default 1).", default="1")
    parser.addini("prob_transpose", "Run run-major across the session (default false).", default="false")
    parser.addini("prob_delay", "Seconds to sleep between runs (default 0).", default="0")
    parser.addini("prob_json", "Path of the JSON report (--prob-json wins).", default="")


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
        }


def resolve(config: pytest.Config) -> Settings:
    """Read and validate every option; raise ``pytest.UsageError`` naming bad values."""
    try:
        ini_runs = parse_runs(config.getini("prob_runs"), source="ini prob_runs")
        transpose = config.getoption("prob_transpose")
        if transpose is None:
            transpose = _ini_bool(config.getini("prob_transpose"))
        delay = config.getoption("prob_delay")
        if delay is None:
            delay = parse_delay(config.getini("prob_delay"), source="ini prob_delay")
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None
    json_option = config.getoption("prob_json") or config.getini("prob_json") or None
    json_path = None
    if json_option:
        json_path = Path(os.path.expanduser(str(json_option)))
        if not json_path.is_absolute():
            json_path = Path(config.invocation_params.dir) / json_path
    pattern = str(config.getini("prob_pattern")).strip() or DEFAULT_PATTERN
    return Settings(
        cli_runs=config.getoption("prob_runs"),
        ini_runs=ini_runs,
        transpose=bool(transpose),
        delay=delay,
        json_path=json_path,
        pattern=pattern,
    )


# -- the probability marker ---------------------------------------------------


class MarkerError(ValueError):
    """A ``@pytest.mark.probability(...)`` with bad arguments."""


#: Marker keyword -> parser. Other concerns add their keywords here.
MARKER_KEYWORDS: dict[str, Callable[[Any], Any]] = {
    "runs": lambda value: parse_runs(value, source="probability(runs=...)"),
}


def marker_kwargs(marks: Any) -> dict[str, Any]:
    """Merge ``probability`` marks, closest first (the first mark setting a keyword wins)."""
    merged: dict[str, Any] = {}
    for mark in marks:
        if mark.name != "probability":
            continue
        if mark.args:
            raise MarkerError(
                f"@pytest.mark.probability takes keyword arguments only, got positional {mark.args!r}"
            )
        for key, value in mark.kwargs.items():
            parse = MARKER_KEYWORDS.get(key)
            if parse is None:
                known = ", ".join(sorted(MARKER_KEYWORDS))
                raise MarkerError(
                    f"@pytest.mark.probability got an unknown keyword {key!r} (known: {known})"
                )
            if key not in merged:
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
