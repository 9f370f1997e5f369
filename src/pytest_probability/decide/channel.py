"""The decisions channel: how every decision of the aggregating process reaches xdist workers.

One folder (``pytest-probability-gates-*``), passed to each worker in its
``workerinput``; each decision is a small file in it, written atomically
(:func:`pytest_probability.files.write_atomic`), and a decision once seen is
kept by the reader:

=====================  ===========================  ==========================
decision               file                         read by
=====================  ===========================  ==========================
a case's gate verdict  ``<sha256(key)[:32]>.json``  the case's gate item
a verdict of a kind    ``<sha256(key[kind])>.json`` the case's ``[kind]`` item
a case decided early   ``<sha256(key)[:32]>.stop``  the case's remaining runs
a feature's flag       ``flag-<name>``              the feature's guard on workers
                       (a budget reached)           (every run not yet started)
the session stopping   ``STOP``                     waiting verdict items
=====================  ===========================  ==========================

:class:`Channel` is the publishing side (the aggregating process's
:class:`~.book.DecisionBook` owns one); :class:`ChannelReader` is a worker's
:class:`~pytest_probability.protocols.Decisions`. In a serial session the
book answers directly and no folder exists.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from .. import files
from ..config.spec import Specs
from ..model.case import CaseRef
from ..vocabulary import DECIDED

if TYPE_CHECKING:
    from ..model.outputs import Verdict

#: How often a waiting verdict item looks for its verdict file.
POLL_INTERVAL = 0.02
STOP_SUFFIX = ".stop"
FLAG_PREFIX = "flag-"
STOP_FILE = "STOP"


def digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]


def verdict_path(folder: Path, key: str) -> Path:
    return folder / (digest(key) + ".json")


class Channel:
    """The publishing side: the folder, created on first use (the first xdist worker)."""

    def __init__(self) -> None:
        self.folder: Path | None = None

    def open(self) -> Path:
        """The folder, created on first use."""
        if self.folder is None:
            self.folder = Path(tempfile.mkdtemp(prefix="pytest-probability-gates-"))
        return self.folder

    def _write(self, name: str, text: str) -> None:
        assert self.folder is not None
        files.write_atomic(self.folder / name, text, durable=False)

    def verdict(self, key: str, verdict: Verdict) -> None:
        self._write(digest(key) + ".json", json.dumps(verdict.to_dict()))

    def stopped(self, key: str, reason: str) -> None:
        self._write(digest(key) + STOP_SUFFIX, reason)

    def flag(self, name: str, text: str) -> None:
        """A feature's flag (``budget``: its reason), which workers read with :meth:`ChannelReader.flag`."""
        self._write(FLAG_PREFIX + name, text)

    def stop(self) -> None:
        """Tell waiting verdict items that no more verdicts will come."""
        if self.folder is not None and self.folder.exists():
            (self.folder / STOP_FILE).write_text("stopped", encoding="utf-8")

    def cleanup(self) -> None:
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)


class ChannelReader:
    """An xdist worker's decisions: may a run start, a verdict item's verdict, and a feature's flag.

    One ``stat`` per check, only when stopping applies to the run (a feature asks for its flag only when
    it applies); a decision seen once is kept.
    """

    def __init__(self, folder: Path, specs: Specs, timeout: float) -> None:
        self.folder = folder
        self.specs = specs
        self.timeout = timeout
        self.stopped: dict[str, str] = {}
        self._paths: dict[str, str] = {}
        self._flags: dict[str, str] = {}

    def run_decision(self, case: CaseRef) -> tuple[str, str] | None:
        if not self.specs.of(case).stoppable:
            return None
        key = case.key
        reason = self.stopped.get(key)
        if reason is None:
            path = self._paths.get(key)
            if path is None:
                path = self._paths[key] = str(self.folder / (digest(key) + STOP_SUFFIX))
            if os.path.exists(path):
                reason = self.stopped[key] = _read(path)
        if reason is not None:
            return DECIDED, reason
        return None

    def flag(self, name: str) -> str | None:
        """What the controller published under ``name``, once it has (then kept): one ``stat`` till then."""
        text = self._flags.get(name)
        if text is None:
            path = self.folder / (FLAG_PREFIX + name)
            if os.path.exists(path):
                text = self._flags[name] = _read(str(path))
        return text

    def verdict(self, key: str) -> Verdict:
        """Wait (bounded by ini ``prob_gate_timeout``) for the controller's verdict of ``key``."""
        # Only a verdict item asks: a worker of a session without one never imports the outputs' model.
        from ..model.outputs import Verdict

        path = verdict_path(self.folder, key)
        stop = self.folder / STOP_FILE
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            if path.exists():
                return Verdict.from_dict(json.loads(path.read_text(encoding="utf-8")))
            if stop.exists():
                return Verdict(False, "UNDECIDED: the session stopped before every run of this case finished")
            time.sleep(POLL_INTERVAL)
        return Verdict(
            False, f"UNDECIDED: no verdict within {self.timeout:g} s (did a run of this case crash its worker?)"
        )


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except OSError:
        return "decided"
