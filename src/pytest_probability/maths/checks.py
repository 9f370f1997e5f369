"""The argument checks the planners share: every public function of :mod:`run_budget` and :mod:`ab_planning`
validates its arguments with these and raises :class:`ValueError` (or :class:`TypeError` for a wrong type)
with a message naming the value. Pure and standard-library only."""

from __future__ import annotations

from . import stats

#: A real number (not a bool), else TypeError naming it.
real = stats.as_real


def whole(value: object, name: str, least: int) -> int:
    """A whole number at least ``least``."""
    number = stats.as_int(value, name)
    if number < least:
        raise ValueError(f"{name} must be at least {least}, got {value!r}")
    return number


def unit(value: object, name: str) -> float:
    """A probability in [0, 1]."""
    number = real(value, name)
    if not 0.0 <= number <= 1.0:
        raise ValueError(f"{name} must be between 0 and 1, got {value!r}")
    return number


def open_unit(value: object, name: str) -> float:
    """A probability strictly between 0 and 1."""
    number = real(value, name)
    if not 0.0 < number < 1.0:
        raise ValueError(f"{name} must be strictly between 0 and 1, got {value!r}")
    return number


def nonnegative(value: object, name: str) -> float:
    """A real number >= 0."""
    number = real(value, name)
    if number < 0.0:
        raise ValueError(f"{name} must not be negative, got {value!r}")
    return number
