"""Whether a benchmark's runs may execute ahead of their items (``--prob-concurrency``): :func:`blocker`, and
the warning for one asked for concurrent runs whose runs cannot (:func:`one_at_a_time`).

Apart from :mod:`.ahead` (which groups the runs that may) so that the benchmark collector, which warns for a
benchmark whose runs cannot, imports neither the async plugins' module nor the grouping in every session.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..compat.pytest import fixtureinfo, is_direct_parameter
from ..config.marker import concurrency_of
from ..errors import ProbabilityConcurrencyWarning
from ..text import printable

if TYPE_CHECKING:
    import pytest

    from ..session import Session


def blocker(item: pytest.Item, function: Any = None) -> str | None:
    """What keeps ``item``'s runs from executing ahead of their items: the first function-scoped fixture
    they use (its name), ``request``, or ``@given``; None when they may. ``function``: the benchmark's
    function, when the item's own should not be looked up yet (at collection)."""
    function = function if function is not None else getattr(item, "obj", None)
    if getattr(function, "hypothesis", None) is not None:
        return "hypothesis's @given"
    info = fixtureinfo(item)
    for name in info.names_closure:
        if name == "request":  # the benchmark's own request is per run; a wider fixture's is its own
            if name in info.argnames:
                return name
            continue
        definitions = info.name2fixturedefs.get(name)
        if not definitions:
            continue  # pytest's setup reports the missing fixture in the run's own item
        definition = definitions[-1]
        if is_direct_parameter(definition):
            continue
        if definition.scope == "function":
            return name
    return None


def one_at_a_time(
    nodeid: str, session: Session, marks: Any, first: pytest.Item, function: Any
) -> ProbabilityConcurrencyWarning | None:
    """The warning for benchmark ``nodeid`` (once) when its case's runs were asked to be in flight together but
    execute one at a time: the fixture that keeps them from running ahead of their items; None when they may."""
    k = concurrency_of(session.settings, marks)
    why = blocker(first, function) if k > 1 else None
    if why is None:
        return None
    what = f"the function-scoped fixture {why!r}" if why != "hypothesis's @given" else why
    return ProbabilityConcurrencyWarning(
        printable(
            f"{nodeid}: its runs execute one at a time, not {k} in flight: it uses {what}, which each run sets up "
            "in its own item. Only fixtures wider than a function (class, module, package, session) and "
            "parametrized arguments let runs execute together."
        )
    )
