"""Collection's scratch: what collecting one benchmark after another keeps between them, owned by collection.

One :class:`Scratch` per pytest config, made on first use (:func:`of`): the
``Metafunc`` of the benchmark being collected (kept by ``pytest_generate_tests``
for ``Benchmark._cases``), the cases' order, and the runs collected so far,
held to ``prob_max_runs``. Nothing outside ``collect/`` reads or writes it.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from ..config.values import too_many_runs


class Scratch:
    def __init__(self) -> None:
        self._metafunc: Any = None
        self._order = itertools.count()
        #: Runs collected so far (cases × runs).
        self.runs = 0

    def keep(self, metafunc: pytest.Metafunc) -> None:
        """The Metafunc of the benchmark whose ``pytest_generate_tests`` is running."""
        self._metafunc = metafunc

    def take_metafunc(self) -> Any:
        """The Metafunc kept since the last take, if any, and forget it."""
        metafunc, self._metafunc = self._metafunc, None
        return metafunc

    def next_order(self) -> int:
        """The next case's place in collection order."""
        return next(self._order)

    def take_runs(self, count: int, case: str, limit: int) -> str | None:
        """Count a case's runs before its items exist; an error message past ``limit`` (``prob_max_runs``)."""
        total = self.runs + count
        if total > limit:
            return too_many_runs(total, limit, f"{count:,} runs of {case} bring the session to {total:,} runs")
        self.runs = total
        return None


_KEY = pytest.StashKey[Scratch]()


def of(config: pytest.Config) -> Scratch:
    return config.stash.setdefault(_KEY, Scratch())
