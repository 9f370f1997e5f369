"""What pytest does not publish, in one place: each name with the public interface it lacks.

pytest's documented interface for a plugin is its hooks, ``pytest.Function``/``pytest.Item`` with their
public attributes, and ``register_assert_rewrite``. A benchmark builds its runs from pytest's own
parametrization, gives them node ids that ``--lf`` matches, and reports a failure as pytest does; for
these there is no public name:

* :func:`case_templates`, :func:`fixtureinfo`, :func:`metafunc_calls`: the cases of a function as pytest
  makes them (``Module._genfunctions``, which runs ``pytest_generate_tests``, applies ``parametrize`` and
  computes ids; the template's ``_fixtureinfo``; the ``Metafunc``'s ``_calls``). pytest has no public way
  to generate the items of a function (pytest-dev/pytest#166, closed as too abstract);
* :func:`structured_id`, :func:`set_structured_id`, :func:`set_string_id`, :func:`lastfailed_key`: the
  node id of an item that ``--lf``, ``--nf`` and ``--sw`` compare (``_id``, a ``NodeId`` from
  ``_pytest.nodeid`` since pytest 9.1, pytest-dev/pytest#14758; ``_nodeid`` before). A custom item has no
  public way to set it (pytest-dev/pytest#15045 is the bracketed-name bug this works around);
* :class:`OwnedFunction`: a ``Function`` whose function is looked up on its collector's parent
  (``_getobj``, ``_getinstance``, ``_instance``), since a run's collector is the benchmark, not the module;
* :func:`rewriting_hook`: the assertion rewriting hook, to give it the benchmark files' patterns
  (``assertstate_key``; ``register_assert_rewrite`` takes module names, not file patterns:
  pytest-dev/pytest#6377);
* :func:`is_direct_parameter`: whether a fixture definition is pytest's stand-in for a directly
  parametrized argument (``_pytest.python.get_direct_param_fixture_func``: its value is the callspec's,
  made by no code), so that a run whose only function-scoped "fixtures" are its parameters may execute
  ahead of its item (``--prob-concurrency``). pytest has no public name for it (a ``DirectParamFixtureDef``
  class since 9.0, still in a private module);
* :func:`short_report`: pytest's own short report of a failure (``Item._repr_failure_py``), so that a
  run span's stack trace is what pytest prints, made cheaply (:func:`from_caller`: ``Function._obj``,
  ``_pytest.compat.get_real_func``, ``_pytest._code.Code``, to cut the traceback as pytest does).

Each is checked against the installed pytest by ``tests/unit/test_compat.py``, which fails naming the
missing name; ``make test-pytest8`` and ``make test`` run it at both ends of the supported range.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest


def case_templates(collector: Any, name: str, obj: Any) -> Iterator[Any]:
    """The template ``Function`` of each case of ``obj``, as pytest's module or class collector makes them."""
    return iter(collector._genfunctions(name, obj))


def fixtureinfo(function: Any) -> Any:
    """A template ``Function``'s fixture closure (pytest's ``FuncFixtureInfo``)."""
    return function._fixtureinfo


def is_direct_parameter(fixturedef: Any) -> bool:
    """Whether ``fixturedef`` stands for a directly parametrized argument, whose value is the callspec's."""
    from _pytest.python import get_direct_param_fixture_func

    return getattr(fixturedef, "func", None) is get_direct_param_fixture_func


def metafunc_calls(metafunc: Any) -> list[Any] | None:
    """The callspecs a ``Metafunc`` made, one per case, in pytest's order; None when it has none."""
    return getattr(metafunc, "_calls", None)


def structured_id(node: Any) -> Any | None:
    """A node's structured id (pytest >= 9.1: ``path``, ``names``, ``params``); None on older pytest."""
    return getattr(node, "_id", None)


def set_structured_id(node: Any, value: Any) -> None:
    node._id = value


def set_string_id(node: Any, nodeid: str) -> None:
    """The node id of an item on pytest < 9.1, which keeps it as a string."""
    node._nodeid = nodeid


def lastfailed_key() -> Callable[[str], Any]:
    """What ``--lf``'s cache is keyed by: the structured id parsed from a node id string (pytest >= 9.1),
    or the string itself."""
    try:
        from _pytest.nodeid import NodeId
    except ImportError:
        return str
    return NodeId.parse


class OwnedFunction(pytest.Function):
    """A ``Function`` whose Python function is an attribute of its collector's parent (the module, or a
    fresh instance of the class), as a benchmark's runs are: their collector is the benchmark."""

    @property
    def instance(self) -> Any:
        try:
            return self._instance
        except AttributeError:
            owner = self._owner()
            if isinstance(owner, pytest.Class):
                self._instance = owner.newinstance() if hasattr(owner, "newinstance") else owner.obj()
            else:
                self._instance = None
            return self._instance

    def _getobj(self) -> Any:
        instance = self.instance
        owner = instance if instance is not None else getattr(self._owner(), "obj", None)
        return getattr(owner, self.originalname)

    def _owner(self) -> object:
        """The benchmark's parent: its module, or its class."""
        return self.parent.parent if self.parent is not None else None


def rewriting_hook(config: pytest.Config) -> Any | None:
    """pytest's assertion rewriting import hook (its ``fnpats`` are the file patterns it rewrites), or None
    under ``--assert=plain``."""
    from _pytest.assertion.rewrite import assertstate_key

    return getattr(config.stash.get(assertstate_key, None), "hook", None)


def short_report(item: Any, excinfo: Any) -> str:
    """pytest's short report of a failure of ``item``: its traceback pruning and assertion introspection,
    made on the traceback from the benchmark's caller down (:func:`from_caller`)."""
    return str(item._repr_failure_py(from_caller(item, excinfo), style="short"))


def from_caller(item: Any, excinfo: Any) -> Any:
    """``excinfo`` with its traceback starting at the caller of the benchmark's frame, for pytest's
    short report: the same report, at a fraction of the cost.

    pytest's pruning (``Function._traceback_filter``) cuts the traceback at the first entry whose
    path and first line are the benchmark function's; it computes (and ``stat``s) the path of every
    entry before it, the twenty-odd frames of pytest and pluggy above a run, which was most of
    a failed run's cost with export on. Here the same test is made on the first line number first,
    the path only for a frame that has it. The traceback keeps one frame above the benchmark's, so
    that pytest's own cut still finds the benchmark's frame after the first entry and takes the
    same branch as on the whole traceback. Anything else (``--fulltrace``, a setup error, a
    benchmark frame not found): ``excinfo`` as it is."""
    if not hasattr(item, "_obj") or item.config.getoption("fulltrace", False):
        return excinfo
    from _pytest.compat import get_real_func

    wanted = getattr(get_real_func(item.obj), "__code__", None)
    if wanted is None:
        return excinfo
    path, firstlineno = _code_path(wanted), wanted.co_firstlineno
    previous, tb = None, excinfo.tb
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_firstlineno == firstlineno and (code is wanted or _code_path(code) == path):
            break
        previous, tb = tb, tb.tb_next
    if tb is None or previous is None or previous is excinfo.tb:
        return excinfo
    return type(excinfo).from_exc_info((excinfo.type, excinfo.value, previous))


#: pytest's path of a code object (``Code.path``: made absolute, ``stat``-ed), once per code object.
_PATHS: dict[Any, str] = {}


def _code_path(code: Any) -> str:
    path = _PATHS.get(code)
    if path is None:
        from _pytest._code import Code

        path = _PATHS[code] = str(Code(code).path)
    return path
