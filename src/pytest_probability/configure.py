"""The composition root: the settings, the features, and the role of this process, picked once.

Called from ``pytest_configure`` (:func:`configure`). It reads the settings,
picks the role (:func:`role_of`: serial, xdist controller or worker), decides
for each feature of :data:`FEATURES` (in the order their parts are wired,
which is the order of their outputs) whether it is on in this process, and
registers the role object, which wires itself and each feature's parts for
that role (:mod:`pytest_probability.roles`). It branches on nothing else.

A feature's package is imported here, when it is on, and only then: each
:class:`Entry` decides from the settings alone (nothing of the feature is
imported to decide), and its ``load`` is the one import of the package. A
feature that the session's marks or records may need although the settings
do not say (``compare=``, ``stop=``) is
wired asleep instead (:class:`~pytest_probability.roles.wiring.Sleeper`: its
tiny always-loaded part), and imported the first time the core sees one of
its triggers. A session that uses no feature imports none
(docs/developer-guide.md, "Lazy imports").
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from . import files
from .compat import junitxml, xdist
from .config import otel as otel_options
from .config.from_pytest import resolve, resolve_stats
from .config.marker import MARKER_LINE
from .config.options import comparisons_requested
from .config.settings import Settings, StatsConfig
from .config.spec import Specs
from .roles.wiring import Feature, Sleeper
from .session import Session
from .vocabulary import COMPARE_KIND, SPAN_OFF

if TYPE_CHECKING:
    from .roles.role import Role

#: A feature's entry point: ``feature(config, settings)``, the feature on.
Make = Callable[[pytest.Config, Settings], Feature]


class Entry:
    """A feature as the composition root knows it before importing any of it. (A plain class: a dataclass's
    generated methods would be compiled at every start-up, about 1 ms.)"""

    __slots__ = ("aggregating", "name", "on", "reported", "target", "wakes", "wakes_workers")

    def __init__(
        self,
        name: str,
        target: str,
        on: Callable[[pytest.Config, Settings, StatsConfig], bool],
        *,
        wakes: frozenset[str] = frozenset(),
        reported: bool = False,
        aggregating: bool = False,
        wakes_workers: bool = True,
    ) -> None:
        self.name = name
        #: The feature's entry point, ``MODULE:NAME``: its registration module (``features/NAME/feature.py``),
        #: whose top imports every part of the feature, and its ``feature`` function.
        self.target = target
        #: Whether the settings turn it on (read without importing the feature).
        self.on = on
        #: What wakes it when the settings leave it off: marker keywords (``compare=``, ``stop=``), or a
        #: worker's comparison item. Empty: off is off.
        self.wakes = wakes
        #: Whether it has fields in the reports that show every feature's (the JSON, HTML and history
        #: reports, the job summary and annotations, a shard's report): on in the process that writes one.
        self.reported = reported
        #: Whether all its parts are the aggregating process's (an xdist worker has none of them).
        self.aggregating = aggregating
        #: Whether what wakes it asks for parts where runs execute (an xdist worker sleeps on it too).
        self.wakes_workers = wakes_workers

    def load(self) -> Make:
        """The entry point, its package imported: the one place it is imported from."""
        return import_target(self.target)


def import_target(target: str) -> Any:
    """``"MODULE:NAME"`` (``MODULE`` relative to this package): the module imported, its attribute. The one
    import of each feature's package and of each role's module, so that each is imported in one place and
    only when its process or its option needs it."""
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(f"{__package__}.{module}"), name)


#: Each feature's entry, in the order its parts are wired: the core's optional parts first (the warning of
#: the models ``--prob-prices`` did not price, the JSON and HTML reports), early stopping and budgets,
#: comparisons, each case's state across nights, quarantine, the CI outputs, shards and the journal
#: (after every feature with a sink: it feeds them the records it resumes), the export and usage from spans
#: (after the export's tracer provider is made), and retries.
FEATURES: tuple[Entry, ...] = (
    Entry(
        "prices",
        "roles.prices_feature:feature",
        lambda config, settings, stats: settings.prices is not None,
        aggregating=True,
    ),
    Entry(
        "reports",
        "roles.reports:feature",
        lambda config, settings, stats: settings.json_path is not None or settings.html_path is not None,
        aggregating=True,
    ),
    Entry(
        "spend",
        "features.spend.feature:feature",
        lambda config, settings, stats: settings.budgeted or stats.stop is not None,
        wakes=frozenset({"stop"}),  # early stopping decides where records come in: nothing of it in a worker
        reported=True,
        wakes_workers=False,
    ),
    Entry(
        "compare",
        "features.compare.feature:feature",
        lambda config, settings, stats: comparisons_requested(config),
        # the compare= mark (collection, a case's first record), or a worker's [compare:ARM] item (xdist)
        wakes=frozenset({"compare", COMPARE_KIND}),
        reported=True,
    ),
    Entry(
        "states",
        "features.states.feature:feature",
        lambda config, settings, stats: bool(config.getoption("prob_history")) and settings.shard is None,
        aggregating=True,
    ),
    Entry(
        "quarantine",
        "features.quarantine.feature:feature",
        lambda config, settings, stats: settings.quarantine is not None,
    ),
    Entry(
        "ci_outputs",
        "features.ci_outputs.feature:feature",
        lambda config, settings, stats: (
            settings.summary is not None or settings.annotations or junitxml.enabled(config)
        ),
        aggregating=True,
    ),
    Entry("shards", "features.shards.feature:feature", lambda config, settings, stats: settings.shard is not None),
    Entry("journal", "features.journal.feature:feature", lambda config, settings, stats: settings.journal is not None),
    Entry("export", "otel.feature:feature", lambda config, settings, stats: otel_options.resolve(config) is not None),
    Entry("usage", "otel.usage:feature", lambda config, settings, stats: settings.span_usage != SPAN_OFF),
    Entry("retries", "roles.retry_feature:feature", lambda config, settings, stats: settings.retry is not None),
)


def reports_every_field(config: pytest.Config, settings: Settings) -> bool:
    """Whether this session writes a report that shows every feature's fields (``rows[].stopped``,
    ``comparisons``, ``rows[].scores`` even when empty): the JSON, HTML and history reports, the job summary
    and annotations (they read the same report), a shard's report (the merge reads its handovers)."""
    return bool(
        settings.json_path
        or settings.html_path
        or config.getoption("prob_history")
        or settings.summary
        or settings.annotations
        or settings.shard
    )


def role_of(config: pytest.Config) -> type[Role]:
    """This process's role: an xdist worker has ``workerinput``; the controller is the process in which xdist
    will start workers (``compat.xdist.distributes``); otherwise the session is serial."""
    # Each role's module only in its own process: a worker's start-up pays for no aggregating module.
    if xdist.workerinput(config) is not None:
        return import_target("roles.worker:Worker")  # a worker's only
    if xdist.distributes(config):
        return import_target("roles.controller:Controller")  # the controller's only
    return import_target("roles.serial:Serial")  # a serial session's only


def features_of(config: pytest.Config, settings: Settings, stats: StatsConfig, aggregates: bool) -> list[Feature]:
    """The features of this process, in :data:`FEATURES`' order: each one on, or asleep on its triggers.
    ``aggregates``: the process aggregates (serial, the controller), so the reports it writes count."""
    reports = aggregates and reports_every_field(config, settings)
    features: list[Feature] = []
    for entry in FEATURES:
        if entry.aggregating and not aggregates:
            continue
        if entry.on(config, settings, stats) or (entry.reported and reports):
            features.append(entry.load()(config, settings))
        elif entry.wakes and (aggregates or entry.wakes_workers):
            features.append(Sleeper(entry.name, entry.wakes, _waker(entry, config, settings)))
    return features


def _waker(entry: Entry, config: pytest.Config, settings: Settings) -> Callable[[], Feature]:
    return lambda: entry.load()(config, settings)


def configure(config: pytest.Config) -> Session:
    config.addinivalue_line("markers", MARKER_LINE)
    settings = resolve(config)
    stats = resolve_stats(config)
    # Every process but an xdist worker aggregates (serial, the controller): its role is picked after each
    # feature's prepare(), which may keep xdist from starting workers.
    features = features_of(config, settings, stats, aggregates=xdist.workerinput(config) is None)
    junit = config.getoption("xmlpath", None)  # pytest's own report, which the plugin adds properties to
    junit_path = Path(os.path.abspath(os.path.expanduser(os.path.expandvars(junit)))) if junit else None  # as pytest
    files.check_outputs(
        [
            *settings.outputs(),
            *([("--junitxml", junit_path)] if junit_path else []),
            *(output for feature in features for output in feature.output_files()),
        ]
    )
    specs = Specs(stats)
    for feature in features:
        feature.prepare(config)
    role = role_of(config)(config, settings, specs, features)
    config.pluginmanager.register(role, role.name)
    return role.session
