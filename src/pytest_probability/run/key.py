"""The run stage's key in ``config.stash``: the process's ``RunPhases``, made at configure by its role.

Apart from :mod:`.phases` so that the hook surface (``plugin.py``, imported at every pytest start-up)
reaches the run stage without importing it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from .phases import RunPhases

RUNS: pytest.StashKey[RunPhases] = pytest.StashKey()
