"""``-p own_time``: the time spent inside pytest-probability's own hook implementations, per hook.

A pytest plugin, not a script: each hook implementation of pytest-probability (its ``plugin``
module and the role objects ``configure`` registers) is wrapped once, at the end of
``pytest_configure``, with a ``perf_counter_ns`` timer. A wrapper hook's time before and after its
``yield`` is counted, not the inner hooks' time. At exit it writes ``hook calls nanoseconds`` lines,
the costliest first, to ``$OWN_TIME_OUT`` (default ``own_time.txt``). The timer itself costs 0.4–0.7 µs
a call (measured with ``timeit``), and a passing run makes 10 such calls: subtract about 5 µs a run. cProfile multiplies Python's call overhead (docs/performance.md); this does not, so
its figures are the plugin's own per-run time in a real session. Usage::

    cd SESSION_FOLDER
    PYTHONPATH=/path/to/benchmarks PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 OWN_TIME_OUT=own.txt \
        python -m pytest -q -p pytest_probability.plugin -p own_time --prob-runs=10000 bench_x.py

What runs inside a ``Run`` item's own methods (its ``__init__`` at collection, ``_getobj``) is no
hook and is not counted: ``overhead.py --floors`` compares the whole session with pytest's own
``Function`` items.
"""

import atexit
import collections
import os
import time

import pytest

TOTAL = collections.Counter()
CALLS = collections.Counter()
clock = time.perf_counter_ns


def _wrap(name, function, wrapper):
    if wrapper:

        def timed(*args):
            start = clock()
            gen = function(*args)
            value = next(gen)
            TOTAL[name] += clock() - start
            CALLS[name] += 1
            result = yield value
            start = clock()
            try:
                gen.send(result)
            except StopIteration as stop:
                TOTAL[name] += clock() - start
                return stop.value
            raise RuntimeError("a wrapper yielded twice")
    else:

        def timed(*args):
            start = clock()
            try:
                return function(*args)
            finally:
                TOTAL[name] += clock() - start
                CALLS[name] += 1

    return timed


@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    pm = config.pluginmanager
    for hookname in dir(pm.hook):
        caller = getattr(pm.hook, hookname)
        if not hasattr(caller, "get_hookimpls"):
            continue
        for impl in caller.get_hookimpls():
            module = getattr(impl.plugin, "__module__", None) or getattr(impl.plugin, "__name__", "")
            if not str(getattr(impl.plugin, "__name__", module)).startswith("pytest_probability") and not str(
                module
            ).startswith("pytest_probability"):
                continue
            if hookname.startswith(("pytest_configure", "pytest_unconfigure", "pytest_addoption")):
                continue
            impl.function = _wrap(f"{hookname}", impl.function, impl.hookwrapper or impl.wrapper)

    def report():
        with open(os.environ.get("OWN_TIME_OUT", "own_time.txt"), "w") as handle:
            for name, ns in TOTAL.most_common():
                handle.write(f"{name} {CALLS[name]} {ns}\n")

    atexit.register(report)
