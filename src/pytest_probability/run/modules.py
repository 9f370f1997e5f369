"""Module-level ``setup()`` and ``teardown()`` of benchmark files, once per file per process.

A benchmark file may define ``setup()`` (run before its first run, belonging
to no run) and ``teardown()`` (run at the session's end, in reverse order; an
error there is a note, never a failure: the runs are done).
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

from ..value_classes import Record


class ModuleHooks(Record):
    """Module-level ``setup()`` / ``teardown()`` of benchmark files, once per file per process."""

    done: dict[str, BaseException | None]
    teardowns: list[tuple[str, Callable[[], Any]]]

    FIELDS = ("done", "teardowns")

    def __init__(
        self,
        done: dict[str, BaseException | None] | None = None,
        teardowns: list[tuple[str, Callable[[], Any]]] | None = None,
    ) -> None:
        self.done = {} if done is None else done
        self.teardowns = [] if teardowns is None else teardowns

    def ready(self, module: types.ModuleType) -> bool:
        """Whether the module's ``setup()`` already ran, and passed (the usual case: nothing to do)."""
        return self.done.get(module.__name__, False) is None

    def setup(self, module: types.ModuleType) -> None:
        name = module.__name__
        if name in self.done:
            error = self.done[name]
            if error is not None:
                raise RuntimeError(f"setup() of benchmark file {module.__file__} failed: {error!r}") from error
            return
        setup = getattr(module, "setup", None)
        try:
            if callable(setup):
                setup()
        except BaseException as exc:
            self.done[name] = exc
            raise
        self.done[name] = None
        teardown = getattr(module, "teardown", None)
        if callable(teardown):
            self.teardowns.append((str(module.__file__), teardown))

    def teardown_all(self) -> list[str]:
        """Run every pending teardown() in reverse order; return error messages."""
        errors = []
        while self.teardowns:
            path, teardown = self.teardowns.pop()
            try:
                teardown()
            except Exception as exc:  # reported, never raised: the runs are done
                errors.append(f"teardown() of {path} failed: {type(exc).__name__}: {exc}")
        return errors
