"""The package's sizes (issue 33): ``otel/`` at most 2,420 lines, and no module outside ``maths/`` over 460.

A module that grows past its size is split along a real seam (docs/developer-guide.md, "Module map");
the export grows by leaning on the SDK's own objects, not beside them. The limits were 2,200 and 400
lines in the hand-wrapped style; ruff's formatter (one argument per line once a call does not fit)
made the same code 7 % (otel/) and at most 13 % (one module) longer, so they were raised by as much,
and the code did not grow. mypy checking the whole package (issue 45) took 16 lines of declarations in
otel/ (its ``TYPE_CHECKING`` imports and annotated locals, no code): 2,400 -> 2,420.
"""

from __future__ import annotations

from pathlib import Path

import pytest_probability

PACKAGE = Path(pytest_probability.__file__).resolve().parent
OTEL_LIMIT = 2420
MODULE_LIMIT = 460


def lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_the_export_stays_within_its_size() -> None:
    total = sum(lines(path) for path in (PACKAGE / "otel").rglob("*.py"))
    assert total <= OTEL_LIMIT, f"otel/ has {total} lines, more than {OTEL_LIMIT}"


def test_no_module_outside_the_maths_is_over_its_size() -> None:
    over = {
        str(path.relative_to(PACKAGE)): lines(path)
        for path in PACKAGE.rglob("*.py")
        if "maths" not in path.relative_to(PACKAGE).parts and lines(path) > MODULE_LIMIT
    }
    assert over == {}, f"modules over {MODULE_LIMIT} lines: {over}"
