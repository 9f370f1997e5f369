"""What pytest's ``--junitxml`` plugin does not publish, in one place, each with its reason.

``record_testsuite_property`` is a session fixture; the session's totals are
known only at its end, where no fixture can be asked, so the function it
hands out (``LogXML.add_global_property``) is reached as the fixture itself
reaches it: through ``config.stash[xml_key]``. It writes ``<properties>`` on
the ``<testsuite>``, which both junit families allow (xunit2 included).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest


def suite_property(config: pytest.Config) -> Callable[[str, object], None] | None:
    """``record_testsuite_property``'s function (None without ``--junitxml``)."""
    try:
        from _pytest.junitxml import xml_key
    except ImportError:  # pragma: no cover - a pytest that moved it: no suite properties, nothing breaks
        return None
    xml = config.stash.get(xml_key, None)
    return None if xml is None else xml.add_global_property


def enabled(config: pytest.Config) -> bool:
    """Whether this session writes a JUnit XML report (``--junitxml``, ``--junit-xml``)."""
    return bool(getattr(config.option, "xmlpath", None))
