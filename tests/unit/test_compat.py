"""What the package uses of other distributions that they do not publish (issue 33).

* Outside ``compat/`` the package uses none of their private names: the check of
  ``tests/foreign_privates.py`` lists none, and finds each kind of use put into a copy of the package.
* Each name ``compat/`` does use is there in the installed version: a release that moves one fails here,
  naming the name, the distribution and its version, and the compat function that needs it.
  ``make test`` runs this at the newest versions, ``make test-pytest8``, ``make test-otel-lowest`` and
  ``make test-xdist-lowest`` at the lowest that ``pyproject.toml`` allows.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from foreign_privates import class_attributes, uses

import pytest_probability

PACKAGE = Path(pytest_probability.__file__).resolve().parent


def test_no_private_name_of_another_distribution_outside_compat() -> None:
    found = uses(PACKAGE)
    assert found == [], "private names of other distributions outside compat/:\n" + "\n".join(map(str, found))


PLANTED = {
    "otel/spans.py": (
        "\n\ndef _planted(exporter, node):\n"
        "    from opentelemetry import context\n"
        "    from _pytest.nodeid import NodeId\n"
        "    from opentelemetry.exporter.otlp.proto.grpc.exporter import _load_credentials\n"
        "    exporter._client.export(b'')\n"
        "    node._id = NodeId\n"
        "    return getattr(node, '_calls'), context._SUPPRESS_INSTRUMENTATION_KEY, _load_credentials\n"
    ),
    "report/terminal.py": (  # the package has a _credentials of its own elsewhere, the gRPC exporter one too
        "\n\ndef _planted_credentials(exporter):\n    return exporter._credentials\n"
    ),
    "collect/items.py": (
        "\n\nclass _Planted(pytest.Function):\n    def _getobj(self):\n        return self._fixtureinfo\n"
    ),
}


def test_the_check_finds_every_kind_of_use_put_into_a_copy(tmp_path: Path) -> None:
    copy = tmp_path / "pytest_probability"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    for module, text in PLANTED.items():
        with (copy / module).open("a", encoding="utf-8") as handle:
            handle.write(text)
    found = "\n".join(str(use) for use in uses(copy))
    for expected in (
        "otel/spans.py",
        "private attribute _client",
        "import from the private module _pytest.nodeid",
        "private attribute _id",
        "private attribute _calls",
        "private attribute _SUPPRESS_INSTRUMENTATION_KEY of opentelemetry.context",
        "import of the private name opentelemetry.exporter.otlp.proto.grpc.exporter._load_credentials",
        "override of its foreign base's private method _getobj",
        "private attribute _fixtureinfo of self",
        "report/terminal.py",
        "private attribute _credentials, a name other distributions define",
    ):
        assert expected in found, f"{expected!r} not found in:\n{found}"
    assert "compat/" not in found  # compat/ is where they belong
    assert "_values" not in found  # model/case.py's own _values, used where it is defined


def _version(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover
        return "(not installed)"


def _object(path: str) -> Any:
    module, _, name = path.partition(":")
    found: Any = importlib.import_module(module)
    for part in filter(None, name.split(".")):
        found = getattr(found, part)
    return found


def _http_exporter() -> Any:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    return OTLPSpanExporter(endpoint="http://127.0.0.1:9/v1/traces")


def _grpc_exporter() -> Any:
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

    return OTLPSpanExporter(endpoint="http://127.0.0.1:9", insecure=True)


#: (distribution, the compat function, where, the names it needs). ``where``: a ``module:attribute`` path
#: (its attributes, or those its methods set on ``self``, by their source), or a function making an object.
NEEDED: list[tuple[str, str, str | Callable[[], Any], tuple[str, ...]]] = [
    ("pytest", "compat.pytest.case_templates", "_pytest.python:Module", ("_genfunctions",)),
    ("pytest", "compat.pytest.case_templates", "_pytest.python:Class", ("_genfunctions",)),
    (
        "pytest",
        "compat.pytest.fixtureinfo, OwnedFunction",
        "_pytest.python:Function",
        ("_fixtureinfo", "_getobj", "_instance", "_repr_failure_py", "_obj"),
    ),
    ("pytest", "compat.pytest.metafunc_calls", "_pytest.python:Metafunc", ("_calls",)),
    ("pytest", "compat.pytest.rewriting_hook", "_pytest.assertion.rewrite:", ("assertstate_key",)),
    ("pytest", "compat.pytest.from_caller", "_pytest.compat:", ("get_real_func",)),
    ("pytest", "compat.pytest.is_direct_parameter", "_pytest.python:", ("get_direct_param_fixture_func",)),
    ("pytest", "compat.pytest.from_caller", "_pytest._code:", ("Code",)),
    ("pytest", "compat.junitxml.suite_property", "_pytest.junitxml:", ("xml_key", "LogXML")),
    ("pytest", "compat.junitxml.suite_property", "_pytest.junitxml:LogXML", ("add_global_property",)),
    ("pytest-xdist", "compat.xdist.event_queue, pending_after_crash", "xdist.dsession:DSession", ("queue", "sched")),
    (
        "pytest-xdist",
        "compat.xdist.pending_after_crash",
        "xdist.scheduler.load:LoadScheduling",
        ("node2pending", "collection"),
    ),
    (
        "pytest-xdist",
        "compat.xdist.ahead_scheduling",
        "xdist.scheduler.load:LoadScheduling",
        ("check_schedule", "_send_tests", "pending", "node2pending"),
    ),
    (
        "opentelemetry-exporter-otlp-proto-http",
        "compat.otel.exporter, send, endpoint, timeout",
        _http_exporter,
        ("_client",),
    ),
    (
        "opentelemetry-exporter-otlp-proto-http",
        "compat.otel.exporter, send, endpoint, timeout",
        lambda: _http_exporter()._client,
        ("export", "_transport", "_timeout", "_endpoint"),
    ),
    (
        "opentelemetry-exporter-otlp-proto-grpc",
        "compat.otel.exporter, send, endpoint, insecure, timeout",
        _grpc_exporter,
        (
            "_export",
            "_translate_data",
            "_count_data",
            "_initialize_channel_and_stub",
            "_client",
            "_timeout",
            "_endpoint",
            "_insecure",
        ),
    ),
    (
        "opentelemetry-exporter-otlp-proto-common",
        "compat.otel.metric_preferences",
        "opentelemetry.exporter.otlp.proto.common._internal.metrics_encoder:OTLPMetricExporterMixin",
        ("_get_temporality", "_get_aggregation"),
    ),
    (
        "opentelemetry-exporter-otlp-proto-common",
        "compat.otel.encode_logs",
        "opentelemetry.exporter.otlp.proto.common._log_encoder:",
        ("encode_logs",),
    ),
    ("opentelemetry-api", "compat.otel.suppressed", "opentelemetry.context:", ("_SUPPRESS_INSTRUMENTATION_KEY",)),
    (
        "opentelemetry-instrumentation",
        "compat.otel.instrumented",
        "opentelemetry.instrumentation.instrumentor:BaseInstrumentor",
        ("_instance", "is_instrumented_by_opentelemetry"),
    ),
]


@pytest.mark.parametrize(
    ("distribution", "user", "where", "names"), NEEDED, ids=[f"{d}-{'-'.join(n)}"[:60] for d, _, _, n in NEEDED]
)
def test_every_name_compat_uses_is_in_the_installed_version(
    distribution: str, user: str, where: str | Callable[[], Any], names: tuple[str, ...]
) -> None:
    version = _version(distribution)
    try:
        owner = where() if callable(where) else _object(where)
    except (ImportError, AttributeError) as exc:
        pytest.fail(f"{distribution} {version} has no {where}: {user} needs it ({exc})")
    known = class_attributes(owner) if isinstance(owner, type) else set()
    missing = [name for name in names if not hasattr(owner, name) and name not in known]
    assert not missing, (
        f"{distribution} {version} lacks {', '.join(missing)} of {where if isinstance(where, str) else owner!r}: "
        f"{user} needs it (compat/ says why); the supported range in pyproject.toml is wrong"
    )


def test_pytest_keeps_a_node_id_compat_can_set() -> None:
    """pytest >= 9.1 keeps the structured ``_id`` (and ``_pytest.nodeid.NodeId``), older releases the string
    ``_nodeid``: ``compat.pytest.set_structured_id`` / ``set_string_id`` set whichever there is."""
    from _pytest.nodes import Node

    known = class_attributes(Node)
    version = _version("pytest")
    assert "_id" in known or "_nodeid" in known, f"pytest {version} keeps neither _id nor _nodeid on its nodes"
    if "_id" in known:
        assert hasattr(_object("_pytest.nodeid:"), "NodeId"), f"pytest {version} has _id but no _pytest.nodeid.NodeId"


def test_a_worker_sees_its_queue_from_pytest_xdist_3_5_and_says_why_not_before() -> None:
    """``compat.xdist.worker_queue`` reads ``WorkerInteractor.nextitem_index`` and ``.torun`` (a ``queue.Queue``
    in 3.5 and 3.6, a ``TestQueue`` with ``lock()`` since 3.7); before 3.5 the queue was a local variable, and
    concurrent runs execute one at a time in each worker, with a warning that names the version."""
    from packaging.version import Version

    version = Version(_version("pytest-xdist"))
    owner = _object("xdist.remote:WorkerInteractor")
    known = class_attributes(owner)
    if version >= Version("3.5"):
        assert {"torun", "nextitem_index"} <= known, f"pytest-xdist {version} lacks the worker's queue"
    else:
        assert "torun" not in known


def test_worker_queue_reads_every_kind_of_queue() -> None:
    """What ``compat.xdist.worker_queue`` gives for a worker whose next item and queue are known, for the
    queues of each version, and None in a process that is no worker."""
    import queue as queues
    import threading
    import types
    from contextlib import contextmanager

    from pytest_probability.compat import xdist

    class WorkerInteractor:
        def __init__(self, torun: Any) -> None:
            self.nextitem_index, self.torun = 3, torun

    class TestQueue:
        def __init__(self, items: list[Any]) -> None:
            self._items = items
            self._lock = threading.RLock()

        @contextmanager
        def lock(self) -> Any:
            with self._lock:
                yield self._items

    def config_of(*plugins: Any) -> Any:
        return types.SimpleNamespace(pluginmanager=types.SimpleNamespace(get_plugins=lambda: set(plugins)))

    plain: queues.Queue[Any] = queues.Queue()
    for index in (4, 5, object()):  # 3.5's SHUTDOWN_MARK is an object, not a position
        plain.put(index)
    for torun in (plain, TestQueue([4, 5, "shutdown"])):
        queued = xdist.worker_queue(config_of(object(), WorkerInteractor(torun)))
        assert queued is not None and queued() == [3, 4, 5]
    assert xdist.worker_queue(config_of(object())) is None


def test_the_ahead_scheduling_keeps_enough_runs_queued_on_each_worker(pytester: pytest.Pytester) -> None:
    """Under ``-n 2`` with concurrent runs, each worker is kept ``ahead`` items queued (never more than its share
    of what is left), also after items that took 0.1 s or more, where xdist's own load scheduling waits while
    two are queued; the items still go out in collection order."""
    import types

    from xdist.scheduler import LoadScheduling

    from pytest_probability.compat import xdist

    class Node:
        def __init__(self, name: str) -> None:
            self.name, self.sent, self.shutting_down = name, [], False
            self.gateway = types.SimpleNamespace(id=name)

        def send_runtest_some(self, indices: list[int]) -> None:
            self.sent.extend(indices)

        def shutdown(self) -> None:
            self.shutting_down = True

    def drive(scheduler: Any) -> list[Node]:
        nodes = [Node("gw0"), Node("gw1")]
        collection = [f"bench_x.py::bench_y::c[run{n}]" for n in range(1, 65)]
        for node in nodes:
            scheduler.add_node(node)
        for node in nodes:
            scheduler.add_node_collection(node, collection)
        scheduler.schedule()
        for node in nodes:  # each finishes its first item; it took 0.5 s (a run awaited its call)
            scheduler.mark_test_complete(node, node.sent[0], duration=0.5)
        return nodes

    config = pytester.parseconfigure("--tx", "2*popen", "--dist", "load")
    ours = drive(xdist.ahead_scheduling(config, None, ahead=16))
    assert [len(node.sent) for node in ours] == [17, 17]  # 16 queued after the one that finished
    sent = [index for node in ours for index in node.sent]
    assert sorted(sent) == list(range(34))  # what went out is the collection's first 34, in order
    theirs = drive(LoadScheduling(config, None))
    assert all(len(node.sent) < 17 for node in theirs)  # xdist's own keeps them short
