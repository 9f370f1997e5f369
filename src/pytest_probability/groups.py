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
    while (members := _members(current)) is not None and len(members) == 1:
        current = members[0]
    return error if _members(current) is not None else current


def _members(error: BaseException) -> tuple[BaseException, ...] | None:
    """The exceptions of an exception group; None for any other exception."""
    # Built in from Python 3.11; on 3.10 trio raises the exceptiongroup backport's class of the same name.
    members = getattr(error, "exceptions", None)
    if isinstance(members, tuple) and any(klass.__name__ == "BaseExceptionGroup" for klass in type(error).__mro__):
        return members
    return None
