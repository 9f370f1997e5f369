"""Exception groups: what a raised group means when it holds exactly one exception.

A leaf: pure and standard-library only. pytest-trio raises a benchmark's
exception inside an exception group (its nursery's), where anyio and
pytest-asyncio raise it bare; :func:`leaf` gives the one exception, so that an
``AssertionError`` in a group is a failed run and a listed provider fault in
a group is retried (``run.outcome``, ``config.retry``).
"""

from __future__ import annotations


def leaf(error: BaseException) -> BaseException:
    """The one exception inside ``error`` when it is an exception group holding exactly one (nested
    groups of one included), else ``error``."""
    current = error
    while _is_group(current) and len(current.exceptions) == 1:  # type: ignore[attr-defined]
        current = current.exceptions[0]  # type: ignore[attr-defined]
    return error if _is_group(current) else current


def _is_group(error: BaseException) -> bool:
    # Built in from Python 3.11; on 3.10 trio raises the exceptiongroup backport's class of the same name.
    return isinstance(getattr(error, "exceptions", None), tuple) and any(
        klass.__name__ == "BaseExceptionGroup" for klass in type(error).__mro__)
