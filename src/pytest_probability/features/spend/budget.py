"""Session budgets: cost, tokens and wall time (``--prob-max-cost/-tokens/-time``).

Pure and pytest-free. The aggregating process (serial session or xdist
controller) adds every run's record to one :class:`Budget`; once a limit is
reached no new run starts (the decision reaches xdist workers through the
decisions channel, :mod:`.channel`). Runs already executing finish, so the
overshoot is bounded by the runs in flight.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

COST, TOKENS, TIME = "cost", "tokens", "time"
BUDGETS = (COST, TOKENS, TIME)


def record_tokens(record: Any) -> int:
    """Tokens a run used, the judge's included: input plus output (cached input is part of input)."""
    return sum(u.input_tokens + u.output_tokens for u in record.usage)


@dataclass
class Budget:
    """Limits and what has been spent; ``reached`` names the first limit reached."""

    max_cost: float | None = None
    max_tokens: int | None = None
    max_time: float | None = None
    #: Wall-clock start of the session (``time.time()``), shared with workers.
    start: float = field(default_factory=time.time)
    cost: float = 0.0
    tokens: int = 0
    reached: str | None = None
    #: Seconds since start when ``reached`` was set.
    reached_at: float | None = None
    #: Runs that executed (and were charged) after ``reached`` was set: they were in flight then, on other
    #: workers or in the same process (``--prob-concurrency``); and what they spent.
    runs_after: int = 0
    spent_after: float = 0.0

    @property
    def active(self) -> bool:
        return any(limit is not None for limit in (self.max_cost, self.max_tokens, self.max_time))

    @property
    def deadline(self) -> float | None:
        return None if self.max_time is None else self.start + self.max_time

    def add(self, record: Any, now: float | None = None) -> bool:
        """Count a run's spend (retried attempts and the judge's included); True when a limit is newly reached."""
        if self.reached is not None and not getattr(record, "stopped", ""):
            self.runs_after += 1
            self.spent_after += record.spend
        return self.add_spend(record.spend, record_tokens(record), now)

    def add_spend(self, cost: float, tokens: int, now: float | None = None) -> bool:
        """Count spend (a record's, or late usage charged to a run already counted)."""
        self.cost += cost
        self.tokens += tokens
        return self.check(now)

    def check(self, now: float | None = None) -> bool:
        """True when a limit is newly reached (cost, tokens, then time)."""
        if self.reached is not None:
            return False
        now = time.time() if now is None else now
        if self.max_cost is not None and self.cost >= self.max_cost:
            self.reached = COST
        elif self.max_tokens is not None and self.tokens >= self.max_tokens:
            self.reached = TOKENS
        elif self.max_time is not None and now - self.start >= self.max_time:
            self.reached = TIME
        else:
            return False
        self.reached_at = now - self.start
        return True

    def elapsed(self, now: float | None = None) -> float:
        return (time.time() if now is None else now) - self.start

    def reason(self) -> str:
        """Why runs are not executed, for the skip message: ``cost budget $1.00 reached ($1.02 spent)``."""
        if self.reached == COST:
            return f"cost budget ${self.max_cost:,.4g} reached (${self.cost:,.4f} spent)"
        if self.reached == TOKENS:
            return f"token budget {self.max_tokens:,} reached ({self.tokens:,} tokens used)"
        if self.reached == TIME:
            return f"time budget {self.max_time:g}s reached"
        return ""

    def limits(self) -> dict[str, Any]:
        return {COST: self.max_cost, TOKENS: self.max_tokens, TIME: self.max_time}

    def spent(self, now: float | None = None) -> dict[str, Any]:
        return {COST: self.cost, TOKENS: self.tokens, TIME: self.elapsed(now)}

    def to_dict(self, not_executed: int, now: float | None = None) -> dict[str, Any]:
        return {
            "limits": self.limits(),
            "spent": self.spent(now),
            "reached": self.reached,
            "reason": self.reason() or None,
            "runs_not_executed": not_executed,
            "runs_after_reached": self.runs_after,
            "spent_after_reached": self.spent_after,
        }
