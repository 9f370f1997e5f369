"""Prices per model (``--prob-prices``): which price a usage entry takes, and what its tokens cost.

Pure and pytest-free. A :class:`Price` is dollars per million tokens; a
usage entry's model is matched by its exact (response) model, then its
request model, then the longest price name that is a prefix of either (so
``gpt-4o`` prices ``gpt-4o-2024-08-06``). Cached and cache-creation tokens
are parts of the input tokens, reasoning tokens part of the output tokens:
each part is priced at its own rate and the rest at the plain rate, never
counted twice.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .run import Usage

PER = 1_000_000


@dataclass(frozen=True, slots=True)
class Price:
    """Dollars per million tokens; a part's rate left None is its whole's (input or output)."""

    input: float
    output: float
    cached_input: float | None = None
    cache_creation_input: float | None = None
    reasoning: float | None = None

    def cost(self, usage: Usage) -> float:
        cached = min(usage.cached_input_tokens, usage.input_tokens)
        creation = min(usage.cache_creation_input_tokens, usage.input_tokens - cached)
        reasoning = min(usage.reasoning_tokens, usage.output_tokens)
        plain_in = usage.input_tokens - cached - creation
        plain_out = usage.output_tokens - reasoning
        total = (
            plain_in * self.input
            + cached * (self.input if self.cached_input is None else self.cached_input)
            + creation * (self.input if self.cache_creation_input is None else self.cache_creation_input)
            + plain_out * self.output
            + reasoning * (self.output if self.reasoning is None else self.reasoning)
        )
        return total / PER


@dataclass(frozen=True)
class Prices:
    """The price table of one session, and where it was read from."""

    table: Mapping[str, Price]
    source: str = ""

    @property
    def digest(self) -> str:
        """``sha256:`` and the hex digest of the table as read (each model's rates, by name): what the prices
        are, not where their file was. The same prices in another folder, or reformatted (comments, order,
        TOML or JSON), have the same digest."""
        table = {model: dataclasses.asdict(price) for model, price in self.table.items()}
        text = json.dumps(table, sort_keys=True, separators=(",", ":"), allow_nan=False)
        return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()

    def match(self, model: str, request_model: str = "") -> Price | None:
        """Exact model, exact request model, then the longest name that prefixes either."""
        table = self.table
        price = table.get(model)
        if price is None and request_model:
            price = table.get(request_model)
        if price is not None:
            return price
        best = ""
        for name in table:
            if len(name) > len(best) and (model.startswith(name) or (request_model and request_model.startswith(name))):
                best = name
        return table[best] if best else None

    def apply(self, usage: Usage) -> Usage:
        """``usage`` with its tokens priced when it has no cost and its model a price; else as it is."""
        if usage.cost or not (usage.input_tokens or usage.output_tokens):
            return usage
        price = self.match(usage.model, usage.request_model)
        if price is None:
            return usage
        return usage.replace(cost=price.cost(usage), priced=True)


def unpriced_models(usages: Iterable[Usage]) -> list[str]:
    """Models of entries with tokens and no cost (after pricing), sorted: those the table lacks."""
    models = {u.model for u in usages if not u.cost and (u.input_tokens or u.output_tokens)}
    return sorted(models)
