"""The two verdict rules every comparison shares, of fractions and of scores (docs: "Comparing and catching drops").

:func:`case_verdict`, a case's (or an A/B input's) verdict from its adjusted
test and interval; :func:`margin_verdict`, a benchmark's from its pooled
interval and margin (0.3.0's rule).
"""

from __future__ import annotations

from ...vocabulary import FAILED, PASSED, UNDECIDED


def case_verdict(
    difference: float | None,
    low: float,
    high: float,
    rejected: bool,
    drop_side: bool,
    margin: float,
    equivalence: bool,
) -> tuple[str, float]:
    """(verdict, displayed upper bound)."""
    fail = rejected and drop_side and high < -margin
    if not fail and high < -margin:
        high = -margin  # the exact test did not confirm: the interval must reach the margin
    if fail:
        return FAILED, high
    if equivalence:
        if low > margin:
            return FAILED, high
        if low > -margin and high < margin:
            return PASSED, high
        return UNDECIDED, high
    if low > -margin:
        return PASSED, high
    return UNDECIDED, high


def margin_verdict(low: float, high: float, margin: float, equivalence: bool) -> str:
    """A benchmark's verdict: the interval against the margin, bounds compared unrounded (a bound exactly on
    the margin is not past it)."""
    if equivalence:
        if high < -margin or low > margin:
            return FAILED
        return PASSED if -margin < low and high < margin else UNDECIDED
    if high < -margin:
        return FAILED
    return PASSED if low > -margin else UNDECIDED
