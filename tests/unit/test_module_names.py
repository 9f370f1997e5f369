"""Module names say what they hold without their folder: only the parallel ones are shared.

docs/developer-guide.md, "The tree": each feature's ``feature.py`` and ``facet.py`` and the two
``__main__.py`` do one job in parallel places; any other name found twice is a name that needs its
folder to be understood (``file.py``, ``settings.py``, ``history.py`` were).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest_probability

PACKAGE = Path(pytest_probability.__file__).parent

#: The names that do one job in parallel places.
PARALLEL = {"__init__.py", "__main__.py", "feature.py", "facet.py"}


def test_no_two_modules_share_a_name_but_the_parallel_ones() -> None:
    names = Counter(path.name for path in PACKAGE.rglob("*.py"))
    assert {name for name, n in names.items() if n > 1} - PARALLEL == set()
    assert {"feature.py", "facet.py", "__main__.py"} <= {name for name, n in names.items() if n > 1}  # the control
