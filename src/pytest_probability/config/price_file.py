"""Reading ``--prob-prices`` (ini ``prob_prices``): a TOML or JSON table of dollars per million tokens per model.

Imported only with the option. Every problem is a ``ValueError`` that names
the file and what is wrong in it (the settings turn it into a usage error,
exit status 4). TOML is read with the standard library's ``tomllib`` (Python
3.11+), else with ``tomli``, the same parser, which pytest itself requires on
Python 3.10 (so it is always installed there).
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10: pytest's own dependency
    import tomli as tomllib

from ..model.prices import Price, Prices

#: A model's keys: the two required rates and the optional ones (None: the whole's rate).
REQUIRED = ("input", "output")
OPTIONAL = ("cached_input", "cache_creation_input", "reasoning")
#: The largest rate accepted, in dollars per million tokens.
MAX_RATE = 1e9

EXAMPLE = '["gpt-4o"]\ninput = 2.5\noutput = 10\ncached_input = 1.25'


def _loads_toml(text: str) -> dict[str, Any]:
    return tomllib.loads(text)


def read(path: Path) -> Prices:
    """The price table in ``path``: JSON when it ends in ``.json``, else TOML."""
    where = f"prices file {path}"
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{where}: cannot be read ({exc})") from None
    toml = path.suffix.lower() != ".json"
    try:
        data = _loads_toml(text) if toml else json.loads(text)
    except ValueError as exc:  # json.JSONDecodeError and tomllib.TOMLDecodeError are ValueErrors
        raise ValueError(f"{where}: not valid {'TOML' if toml else 'JSON'}: {exc}") from None
    return Prices(parse(data, where, toml=toml), source=str(path))


def parse(data: Any, where: str, *, toml: bool = False) -> dict[str, Price]:
    """Validate a decoded table: ``{model: {input, output[, cached_input, cache_creation_input, reasoning]}}``.

    ``toml``: the table was TOML, where an unquoted ``[gpt-4.1]`` is a table ``1`` inside a model
    ``gpt-4``; a model holding a table is refused as that, with the quoted name to write."""
    if not isinstance(data, dict):
        raise ValueError(f"{where}: must be a table of models, got {type(data).__name__}; e.g.\n{EXAMPLE}")
    if not data:
        raise ValueError(f"{where}: has no model; e.g.\n{EXAMPLE}")
    table: dict[str, Price] = {}
    for model, rates in data.items():
        if not model:
            raise ValueError(f"{where}: a model name is empty")
        if not isinstance(rates, dict):
            raise ValueError(
                f"{where}: model {model!r} must be a table with input and output "
                f"(dollars per million tokens), got {rates!r}"
            )
        if toml:
            _dotted(where, model, rates)
        unknown = sorted(set(rates) - set(REQUIRED) - set(OPTIONAL))
        if unknown:
            raise ValueError(
                f"{where}: model {model!r} has unknown key(s) {', '.join(unknown)}; "
                f"the keys are {', '.join(REQUIRED + OPTIONAL)}"
            )
        missing = [name for name in REQUIRED if name not in rates]
        if missing:
            raise ValueError(f"{where}: model {model!r} has no {' and no '.join(missing)} price")
        values = {name: _rate(where, model, name, rates[name]) for name in REQUIRED + OPTIONAL if name in rates}
        table[model] = Price(**values)
    return table


def _dotted(where: str, model: str, rates: dict[str, Any]) -> None:
    """Refuse a TOML model that holds a table: an unquoted dotted name (``[gpt-4.1]``) made it."""
    inner = next((name for name, value in rates.items() if isinstance(value, dict)), None)
    if inner is None:
        return
    parts, table = [model, inner], rates[inner]
    while True:  # [a.b.c]: follow the tables down to the one holding the rates
        deeper = next((name for name, value in table.items() if isinstance(value, dict)), None)
        if deeper is None:
            break
        parts.append(deeper)
        table = table[deeper]
    name = ".".join(parts)
    raise ValueError(
        f"{where}: model {model!r} has a table {inner} in it: a dot in a TOML table name makes nested "
        f"tables, so [{name}] is model {model} with a table {inner}; quote a name with a dot: "
        f"[{json.dumps(name)}]"
    )


def _rate(where: str, model: str, name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(
            f"{where}: model {model!r}: {name} must be a number of dollars per million tokens, got {value!r}"
        )
    try:
        number, shown = float(value), repr(value)
    except OverflowError:  # an integer literal beyond a float's range: JSON and TOML integers have no bound
        number, shown = math.inf, f"an integer of {len(str(abs(value)))} digits"
    if not math.isfinite(number) or number < 0 or number > MAX_RATE:
        raise ValueError(
            f"{where}: model {model!r}: {name} must be finite, at least 0 and at most {MAX_RATE:g}, got {shown}"
        )
    return number
