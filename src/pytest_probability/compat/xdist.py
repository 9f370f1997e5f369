"""What pytest-xdist does not publish, in one place: its controller's event queue and the load scheduler's queues.

pytest-xdist's documented interface for a plugin is its hooks
(``pytest_configure_node``, ``pytest_testnodedown``, ``pytest_handlecrashitem``,
``pytest_xdist_node_collection_finished``) and the ``workerinput`` /
``workeroutput`` dicts. Two things the plugin needs have no hook:

* after Ctrl-C or SIGTERM the controller reads no more of its workers'
  events, yet the teardown reports of runs it has shown are in its queue
  (:func:`event_queue`: ``DSession.queue``);
* which items a crashed worker had still queued, which the load scheduler
  hands to the others (:func:`pending_after_crash`: ``LoadScheduling.node2pending``
  and ``.collection``).

* which items a worker has been sent and will execute after the one it executes now, so that it can
  start runs ahead of their items (``--prob-concurrency``; :func:`worker_queue`:
  ``WorkerInteractor.nextitem_index`` and ``.torun``, a ``queue.Queue`` in 3.5 and 3.6, a ``TestQueue``
  with a public ``lock()`` since 3.7; before 3.5 the queue was a local variable of its loop).

* a load scheduling that keeps enough runs queued on each worker for its concurrent runs' window
  (:func:`ahead_scheduling`). ``pytest_xdist_make_scheduler`` is xdist's public hook for a scheduler, and
  ``LoadScheduling`` its public class; its ``check_schedule`` (public) decides when a worker gets more
  items, and sends them with ``_send_tests`` and the ``pending``/``node2pending`` queues. Its heuristic
  (no new items while the last one took 0.1 s or more and two are queued) keeps a worker whose runs are in
  flight together two items ahead, which starves its window: measured, 640 runs of 0.25 s at K=32 under
  ``-n 2`` took 2.2 x the ideal.

Each answers None when the name is gone (another scheduler, another
version): the plugin then does what it did without it. pytest-xdist has no
issue asking for either; ``tests/unit/test_compat.py`` checks both against
the installed version.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, cast

import pytest


def workerinput(config: pytest.Config) -> Mapping[str, Any] | None:
    """An xdist worker's ``workerinput`` (what its controller gave it); None in any other process."""
    value = getattr(config, "workerinput", None)
    return value if isinstance(value, dict) else None


def workeroutput(config: pytest.Config) -> dict[str, Any]:
    """An xdist worker's ``workeroutput``, which its controller reads when the worker goes down."""
    output = getattr(config, "workeroutput", None)  # set by xdist on a worker's config
    assert isinstance(output, dict), "not an xdist worker"
    return output


def event_queue(config: pytest.Config) -> Callable[[float], tuple[str, dict[str, Any]]] | None:
    """The ``get`` of the controller's event queue (``DSession.queue``), or None."""
    queue = getattr(config.pluginmanager.getplugin("dsession"), "queue", None)
    get = getattr(queue, "get", None)
    if get is None:
        return None
    return lambda timeout: cast("tuple[str, dict[str, Any]]", get(timeout=timeout))  # xdist's events: (name, kwargs)


def pending_after_crash(config: pytest.Config, node: Any) -> list[str] | None:
    """The node ids still queued on ``node`` after the item it crashed on (which xdist reschedules on the
    other workers), or None when the scheduler is not the load scheduler."""
    sched = getattr(config.pluginmanager.getplugin("dsession"), "sched", None)
    queues = getattr(sched, "node2pending", None)
    collection = getattr(sched, "collection", None)
    if not isinstance(queues, dict) or collection is None:
        return None
    return [collection[index] for index in (queues.get(node) or [])[1:]]  # [0] is the item that crashed


def worker_queue(config: pytest.Config) -> Callable[[], list[int]] | None:
    """On an xdist worker, a function giving the positions (in ``session.items``) of the items it has been sent
    and not started yet, in the order it will execute them; None where xdist does not keep them where they can
    be read (before 3.5), or in any other process."""
    interactor = next(
        (
            plugin
            for plugin in config.pluginmanager.get_plugins()
            # xdist runs its remote module through execnet: the class's module is ``__channelexec__``
            if type(plugin).__name__ == "WorkerInteractor"
        ),
        None,
    )
    if interactor is None or not hasattr(interactor, "torun") or not hasattr(interactor, "nextitem_index"):
        return None

    def queued() -> list[int]:
        positions: list[int] = []
        following = interactor.nextitem_index
        if isinstance(following, int):
            positions.append(following)
        torun = interactor.torun
        lock = getattr(torun, "lock", None)
        if callable(lock):  # 3.7 and later: TestQueue.lock() yields its deque
            with lock() as items:
                positions.extend(index for index in items if isinstance(index, int))
        else:  # 3.5 and 3.6: a queue.Queue
            mutex, items = getattr(torun, "mutex", None), getattr(torun, "queue", None)
            if mutex is not None and items is not None:
                with mutex:
                    positions.extend(index for index in items if isinstance(index, int))
        return positions

    return queued


def ahead_scheduling(config: pytest.Config, log: Any, ahead: int) -> Any:
    """xdist's load scheduling (items in collection order, to whichever worker asks), keeping ``ahead`` items
    queued on each worker while there are enough (never more than its share of what is left), so that a
    worker's concurrent runs find K runs to start."""
    from xdist.scheduler import LoadScheduling

    class AheadScheduling(LoadScheduling):
        def check_schedule(self, node: Any, duration: float = 0) -> None:
            if node.shutting_down:
                return
            if not self.pending:
                node.shutdown()
                return
            queued = len(self.node2pending[node])
            share = -(-len(self.pending) // max(1, len(self.node2pending)))
            count = min(ahead - queued, share)
            if count > 0:
                self._send_tests(node, count)

    return AheadScheduling(config, log)


def version() -> str:
    """The installed pytest-xdist's version."""
    from importlib.metadata import version as installed

    return installed("pytest-xdist")


def distributes(config: pytest.Config) -> bool:
    """Whether this process is the one in which xdist will start workers (xdist's own rule: ``--dist`` other
    than ``no``, and not ``--collect-only``). xdist publishes no function for it."""
    return getattr(config.option, "dist", "no") != "no" and not config.option.collectonly
