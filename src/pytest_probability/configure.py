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

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

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

    __slots__ = ("aggregating", "load", "name", "on", "reported", "wakes", "wakes_workers")

    def __init__(
        self,
        name: str,
        load: Callable[[], Make],
        on: Callable[[pytest.Config, Settings, StatsConfig], bool],
        *,
        wakes: frozenset[str] = frozenset(),
        reported: bool = False,
        aggregating: bool = False,
        wakes_workers: bool = True,
    ) -> None:
        self.name = name
        #: Imports the feature's registration module (``features/NAME/feature.py``) and returns its entry
        #: point: the one place its package is imported from.
        self.load = load
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


def _prices() -> Make:
    from .roles import prices_feature

    return prices_feature.feature


def _reports() -> Make:
    from .roles import reports

    return reports.feature


def _retries() -> Make:
    from .roles import retry_feature

    return retry_feature.feature


def _spend() -> Make:
    from .features.spend import feature

    return feature.feature


def _compare() -> Make:
    from .features.compare import feature

    return feature.feature


def _states() -> Make:
    from .features.states import feature

    return feature.feature


def _quarantine() -> Make:
    from .features.quarantine import feature

    return feature.feature


def _ci_outputs() -> Make:
    from .features.ci_outputs import feature

    return feature.feature


def _shards() -> Make:
    from .features.shards import feature

    return feature.feature


def _journal() -> Make:
    from .features.journal import feature

    return feature.feature


def _export() -> Make:
    from .otel import feature

    return feature.feature


def _usage() -> Make:
    from .otel import usage

    return usage.feature


#: Each feature's entry, in the order its parts are wired: the core's optional parts first (the warning of
#: the models ``--prob-prices`` did not price, the JSON and HTML reports), early stopping and budgets,
#: comparisons, each case's state across nights, quarantine, the CI outputs, shards and the journal
#: (after every feature with a sink: it feeds them the records it resumes), the export and usage from spans
#: (after the export's tracer provider is made), and retries.
FEATURES: tuple[Entry, ...] = (
    Entry("prices", _prices, lambda config, settings, stats: settings.prices is not None, aggregating=True),
    Entry(
        "reports",
        _reports,
        lambda config, settings, stats: settings.json_path is not None or settings.html_path is not None,
        aggregating=True,
    ),
    Entry(
        "spend",
        _spend,
        lambda config, settings, stats: settings.budgeted or stats.stop is not None,
        wakes=frozenset({"stop"}),  # early stopping decides where records come in: nothing of it in a worker
        reported=True,
        wakes_workers=False,
    ),
    Entry(
        "compare",
        _compare,
        lambda config, settings, stats: comparisons_requested(config),
        # the compare= mark (collection, a case's first record), or a worker's [compare:ARM] item (xdist)
        wakes=frozenset({"compare", COMPARE_KIND}),
        reported=True,
    ),
    Entry(
        "states",
        _states,
        lambda config, settings, stats: bool(config.getoption("prob_history")) and settings.shard is None,
        aggregating=True,
    ),
    Entry("quarantine", _quarantine, lambda config, settings, stats: settings.quarantine is not None),
    Entry(
        "ci_outputs",
        _ci_outputs,
        lambda config, settings, stats: (
            settings.summary is not None or settings.annotations or junitxml.enabled(config)
        ),
        aggregating=True,
    ),
    Entry("shards", _shards, lambda config, settings, stats: settings.shard is not None),
    Entry("journal", _journal, lambda config, settings, stats: settings.journal is not None),
    Entry("export", _export, lambda config, settings, stats: otel_options.resolve(config) is not None),
    Entry("usage", _usage, lambda config, settings, stats: settings.span_usage != SPAN_OFF),
    Entry("retries", _retries, lambda config, settings, stats: settings.retry is not None),
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
        from .roles.worker import Worker  # a worker's only

        return Worker
    if xdist.distributes(config):
        from .roles.controller import Controller  # the controller's only

        return Controller
    from .roles.serial import Serial  # a serial session's only

    return Serial


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
