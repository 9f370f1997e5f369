"""The composition root: the settings, the features, and the role of this process, picked once.

Called from ``pytest_configure`` (:func:`configure`). It reads the settings,
asks each feature whether it is on (:data:`FEATURES`, in the order their
parts are wired, which is the order of their outputs), picks the role
(:func:`role_of`: serial, xdist controller or worker) and registers the role
object, which wires itself and each feature's parts for that role
(:mod:`pytest_probability.roles`). It branches on nothing else: a feature
decides from the settings whether it is on, and registers for the roles it
has parts in.

Lazy imports: a feature's modules are imported by the feature once it is
on, and the aggregating process's modules by its role only
(docs/developer-guide.md, "Lazy imports").
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from . import files
from .compat import xdist
from .config.marker import MARKER_LINE
from .config.settings import Settings, resolve, resolve_stats
from .config.spec import Specs
from .features.ci_outputs import feature as nightly
from .features.compare import feature as compare
from .features.journal import feature as journal
from .features.quarantine import feature as quarantine
from .features.shards import feature as shards
from .features.spend import feature as spend
from .features.states import feature as states
from .otel import feature as export
from .otel import usage as span_usage
from .roles.role import Role
from .roles.wiring import Feature
from .session import Session

#: Each feature's entry, in the order its parts are wired: early stopping and budgets, comparisons,
#: each case's state across nights, quarantine, the CI outputs, shards and the journal (after every feature
#: with a sink: it feeds them the records it resumes), then the export and usage from spans (after the
#: export's tracer provider is made).
FEATURES: tuple[Callable[[pytest.Config, Settings], Feature | None], ...] = (
    spend.feature,
    compare.feature,
    states.feature,
    quarantine.feature,
    nightly.feature,
    shards.feature,
    journal.feature,
    export.feature,
    span_usage.feature,
)


def role_of(config: pytest.Config) -> type[Role]:
    """This process's role: an xdist worker has ``workerinput``; the controller is the process in which xdist
    will start workers (``compat.xdist.distributes``); otherwise the session is serial."""
    # Each role's module only in its own process: a worker's start-up pays for no aggregating module.
    if xdist.workerinput(config) is not None:
        from .roles.worker import Worker  # a worker's only

        return Worker
    if xdist.distributes(config):
        from .roles.controller import Controller  # the controller's only

        return Controller
    from .roles.serial import Serial  # a serial session's only

    return Serial


def configure(config: pytest.Config) -> Session:
    config.addinivalue_line("markers", MARKER_LINE)
    settings = resolve(config)
    features = [feature for entry in FEATURES if (feature := entry(config, settings)) is not None]
    junit = config.getoption("xmlpath", None)  # pytest's own report, which the plugin adds properties to
    junit_path = Path(os.path.abspath(os.path.expanduser(os.path.expandvars(junit)))) if junit else None  # as pytest
    files.check_outputs(
        [
            *settings.outputs(),
            *([("--junitxml", junit_path)] if junit_path else []),
            *(output for feature in features for output in feature.output_files()),
        ]
    )
    specs = Specs(resolve_stats(config))
    for feature in features:
        feature.prepare(config)
    role = role_of(config)(config, settings, specs, features)
    config.pluginmanager.register(role, role.name)
    return role.session
