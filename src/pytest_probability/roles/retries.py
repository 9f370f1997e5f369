"""``--prob-retry``: a run's call repeated on a provider fault, a part of the core the composition root turns on.

:class:`Retries` registers :class:`~pytest_probability.run.retries.RetryHooks` (a ``pytest_runtest_call``
wrapper) in every process that executes runs, so that a session without retries has no wrapper per run and
imports neither the policy nor the hooks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..run.retries import RetryHooks
from .wiring import Feature, Wiring

if TYPE_CHECKING:
    import pytest

    from ..config.retry import RetryPolicy
    from ..config.settings import Settings


def feature(config: pytest.Config, settings: Settings) -> Retries:
    """With ``--prob-retry`` (the composition root's decision)."""
    assert settings.retry is not None
    return Retries(settings.retry)


class Retries(Feature):
    def __init__(self, policy: RetryPolicy) -> None:
        self.policy = policy

    def every(self, wiring: Wiring) -> None:
        wiring.register(RetryHooks(self.policy), "probability-retry-hooks")
