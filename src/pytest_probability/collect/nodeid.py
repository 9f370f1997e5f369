"""Node ids of runs and verdict items that ``--lf``, ``--nf`` and ``--sw`` can match.

pytest >= 9.1 keeps a structured node id (``compat.pytest.structured_id``: ``path``, ``names``,
``params``) that those options compare with ids parsed from the cache. A
run's name is ``identify_pii[run3]``; built as a child of its benchmark its id
would be ``names=(…, "bench_classify", "identify_pii[run3]"), params=None``,
while parsing the string gives ``names=(…, "identify_pii"), params="run3"``:
not equal, so ``--lf`` would drop every run. The ids are set to what parsing
the string gives (docs/developer-guide.md, "The structured node id fix").
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest

from ..compat.pytest import lastfailed_key, set_string_id, set_structured_id, structured_id


def set_nodeid(node: pytest.Item, nodeid: str) -> None:
    """Give an item of a benchmark the node id ``nodeid`` (``<benchmark>::<case>[runN]``).

    pytest >= 9.1: the structured id parsed from the string; older pytest keeps
    the string.
    """
    structured = structured_id(node)
    if structured is not None:
        set_structured_id(node, type(structured).parse(nodeid))
    else:
        set_string_id(node, nodeid)


def id_parts(parent: pytest.Collector) -> tuple[Any, str, tuple[str, ...]] | None:
    """(NodeId class, path, names) of a benchmark whose runs' structured ids can be built from
    its own; None where parsing a run's string could split it another way (a ``::`` in the
    path or a name, a ``[`` in a name, a bracket on the benchmark's id)."""
    parent_id = structured_id(parent)
    if parent_id is None or parent_id.params is not None or "::" in parent_id.path:
        return None
    if any("::" in name or "[" in name for name in parent_id.names):
        return None
    return type(parent_id), parent_id.path, parent_id.names


def set_lastfailed(config: pytest.Config, failed: Iterable[str] = (), passed: Iterable[str] = ()) -> None:
    """Leave ``--lf``'s cache as a session that just ran these runs would: the ``failed`` ones are
    rerun by the next ``--lf``, the ``passed`` ones (passed, skipped or xfailed) are not. Nothing without
    pytest's cache plugin (``-p no:cacheprovider``)."""
    plugin = config.pluginmanager.get_plugin("lfplugin")
    lastfailed = getattr(plugin, "lastfailed", None)
    if lastfailed is None:
        return
    key = lastfailed_key()  # pytest >= 9.1 keys lastfailed by structured node ids
    for nodeid in passed:
        lastfailed.pop(key(nodeid), None)
    for nodeid in failed:
        lastfailed[key(nodeid)] = True
