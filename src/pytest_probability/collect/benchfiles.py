"""Benchmark files and what pytest collects in them: benchmarks and ``Bench*`` classes.

A benchmark file (``bench_*.py``, ini ``prob_pattern``) becomes a
:class:`BenchModule`; every ``bench_*`` function defined in it (and every
``bench_*`` method of a ``Bench*`` class) becomes a
:class:`~.benchmark.Benchmark` collector. Its ``test_*`` functions are
collected as usual.
"""

from __future__ import annotations

import fnmatch
import inspect
from pathlib import Path
from typing import Any

import pytest

from ..compat.pytest import rewriting_hook
from . import scratch

# The benchmark collector (and with it the marker, the specs and the statistics) is imported
# when the first benchmark is found: importing the plugin, and a session without benchmark
# files, need none of it (docs/developer-guide.md, "Lazy imports").


def matches_pattern(path: Path, pattern: str) -> bool:
    return any(fnmatch.fnmatch(path.name, glob) for glob in pattern.split())


def rewrite_asserts(config: pytest.Config, pattern: str) -> None:
    """Have pytest's assertion rewriting treat benchmark files as it treats test files.

    pytest rewrites a module whose file name matches one of its import hook's
    patterns (``python_files``), or that was named on the command line. A
    benchmark file collected from a folder is neither, so without this its
    failed asserts would show a bare ``AssertionError``. The patterns are
    added to the hook only: ``python_files`` itself is left as the user set it.
    Nothing to do with ``--assert=plain`` (no hook).
    """
    hook = rewriting_hook(config)
    if hook is None:
        return
    hook.fnpats = [*hook.fnpats, *(glob for glob in pattern.split() if glob not in hook.fnpats)]


class BenchModule(pytest.Module):
    """A benchmark file. Its ``test_*`` functions, if any, are collected as usual."""


class BenchClass(pytest.Class):
    """A ``Bench*`` class in a benchmark file; its ``bench_*`` methods are benchmarks."""


def make_module(module_path: Path, parent: pytest.Collector, pattern: str) -> BenchModule | None:
    if module_path.suffix == ".py" and matches_pattern(module_path, pattern):
        return BenchModule.from_parent(parent, path=module_path)
    return None


def collect_file(file_path: Path, parent: pytest.Collector, pattern: str) -> BenchModule | None:
    """Collect a benchmark file that pytest's python plugin would not collect itself.

    When the file is an initial path or matches ``python_files`` pytest's own
    ``pytest_collect_file`` asks ``pytest_pycollect_makemodule``, which returns a
    :class:`BenchModule` (see :func:`make_module`); collecting it here too
    would duplicate it.
    """
    if file_path.suffix != ".py" or not matches_pattern(file_path, pattern):
        return None
    session = parent.session
    if session.isinitpath(file_path):
        return None
    python_files = parent.config.getini("python_files")
    if any(fnmatch.fnmatch(file_path.name, glob) for glob in python_files):
        return None
    module: BenchModule = session.gethookproxy(file_path).pytest_pycollect_makemodule(
        module_path=file_path, parent=parent
    )
    return module


def _defined_here(obj: object, module: object) -> bool:
    return getattr(obj, "__module__", None) == getattr(module, "__name__", None)


def make_item(collector: pytest.Collector, name: str, obj: object) -> pytest.Collector | list[Any] | None:
    """``pytest_pycollect_makeitem`` for benchmark files; ``None`` leaves it to pytest. A benchmark with
    verdicts of its own comes with their items, after it (``Benchmark.with_verdicts``)."""
    if not isinstance(collector, (BenchModule, BenchClass)):
        return None
    if getattr(obj, "__test__", True) is False:
        return None
    in_module = isinstance(collector, BenchModule)
    if name.startswith("bench_"):
        function = obj.__func__ if isinstance(obj, staticmethod) else obj
        if not inspect.isfunction(function):
            return None
        if in_module and not _defined_here(function, collector.obj):
            return None
        from .benchmark import Benchmark, async_plugins  # when the first benchmark is found

        inner = getattr(getattr(function, "hypothesis", None), "inner_test", function)
        if inspect.iscoroutinefunction(inner):
            async_plugins().use_anyio_backend(collector, function)  # before the Benchmark computes its fixtures
        benchmark = Benchmark.from_parent(collector, name=name, obj=function)
        made = benchmark.with_verdicts()
        return made if len(made) > 1 else benchmark
    # Nested Bench* classes are collected too, as pytest does for Test* classes.
    if name.startswith("Bench") and inspect.isclass(obj) and (not in_module or _defined_here(obj, collector.obj)):
        return BenchClass.from_parent(collector, name=name, obj=obj)
    return None


def before_generate(metafunc: pytest.Metafunc) -> None:
    """``pytest_generate_tests`` of a benchmark: keep pytest-repeat from multiplying it
    (``--prob-runs`` owns repetition), and its Metafunc for its cases (``Benchmark._cases``)."""
    definition = metafunc.definition
    if not isinstance(definition.parent, (BenchModule, BenchClass)):
        return
    scratch.of(metafunc.config).keep(metafunc)
    if metafunc.config.pluginmanager.hasplugin("repeat"):
        definition.add_marker(pytest.mark.repeat(1), append=False)
