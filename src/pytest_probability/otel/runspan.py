"""A small recording span, without the SDK (and without the API until someone needs it).

Every run gets one span, so its cost is paid 10,000 times in a large
session. The SDK's span (locks, ``BoundedAttributes``, a span processor
chain, then its pure-Python OTLP encoder) cost about 60 µs per run here;
:class:`SpanCore` costs a few. It imports nothing from OpenTelemetry.
:mod:`pytest_probability.otel.apispan` adds the API's
:class:`opentelemetry.trace.Span` on top, so that a run's span can be made
current: spans of the user's own instrumentation (their own SDK, any tracer
provider) take its context as their parent, and
``trace.get_current_span().set_attribute(...)`` in a benchmark lands on the
run's span. That is only needed, and only done, once something has imported
``opentelemetry.trace``: nothing can create or read a current span without it.
Merely importing the API makes every later pytest item slower (its loggers
lengthen the logger walk pytest does six times per item), so a session
whose code never uses OpenTelemetry should not pay for it.

What it keeps is the *span wire form*, a plain dict of builtins (see
:meth:`SpanCore.to_dict` and :mod:`pytest_probability.otel.encode`),
which travels on xdist reports unchanged and is encoded to OTLP by the
aggregating process.

The SDK's span limits are honoured from the same environment variables
(``OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT``, ``OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT``,
``OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT``, ``OTEL_SPAN_EVENT_COUNT_LIMIT``, ...),
with the SDK's defaults: attribute values are cut to the length limit, the
oldest events are dropped past the event limit, and the dropped numbers are
exported. One rule differs on purpose: past the attribute count limit, *new*
attributes are dropped (the SDK evicts the oldest), so the plugin's own
attributes, set first, survive a benchmark that sets many; the run's outcome
attributes are always set.

Ids come from a private :class:`random.Random` seeded by the OS, so a
benchmark that seeds the global ``random`` module cannot make two runs share
a span id.
"""

from __future__ import annotations

import logging
import os
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

_ids = random.Random(int.from_bytes(os.urandom(16), "big"))
UNSET, OK, ERROR = 0, 1, 2


def new_trace_id() -> int:
    while True:
        value = _ids.getrandbits(128)
        if value:
            return value


def new_span_id() -> int:
    while True:
        value = _ids.getrandbits(64)
        if value:
            return value


def traceparent(trace_id: int, span_id: int) -> str:
    """The W3C ``traceparent`` of a sampled span."""
    return f"00-{trace_id:032x}-{span_id:016x}-01"


def parse_traceparent(value: str | None) -> tuple[int, int] | None:
    """``(trace_id, span_id)`` of a traceparent already checked by ``options.check_traceparent``."""
    if not value:
        return None
    _, trace_hex, span_hex, _ = value.split("-")
    return int(trace_hex, 16), int(span_hex, 16)


def _warn(message: str, *args: Any) -> None:
    # The logger is made on first use: every logger lengthens pytest's per-item logger walk.
    logging.getLogger("pytest_probability.otel").warning(message, *args)


def _env_int(env: Mapping[str, str], *names: str, default: int | None) -> int | None:
    for name in names:
        text = env.get(name, "").strip()
        if not text:
            continue
        try:
            number = int(text)
        except ValueError:
            _warn("%s=%r is not an integer; using the default", name, text)
            continue
        if number >= 0:
            return number
        _warn("%s=%r is negative; using the default", name, text)
    return default


@dataclass(frozen=True)
class Limits:
    """The SDK's span limits (``opentelemetry.sdk.trace.SpanLimits``), read from the same variables."""

    attribute_count: int | None = 128
    attribute_length: int | None = None
    event_count: int | None = 128
    event_attribute_count: int | None = 128
    event_attribute_length: int | None = None
    link_count: int | None = 128
    link_attribute_count: int | None = 128

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Limits:
        env = os.environ if env is None else env
        return cls(
            attribute_count=_env_int(env, "OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT", "OTEL_ATTRIBUTE_COUNT_LIMIT", default=128),
            attribute_length=_env_int(
                env, "OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT", "OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT", default=None
            ),
            event_count=_env_int(env, "OTEL_SPAN_EVENT_COUNT_LIMIT", default=128),
            event_attribute_count=_env_int(env, "OTEL_EVENT_ATTRIBUTE_COUNT_LIMIT", "OTEL_ATTRIBUTE_COUNT_LIMIT", default=128),
            event_attribute_length=_env_int(env, "OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT", default=None),
            link_count=_env_int(env, "OTEL_SPAN_LINK_COUNT_LIMIT", default=128),
            link_attribute_count=_env_int(env, "OTEL_LINK_ATTRIBUTE_COUNT_LIMIT", "OTEL_ATTRIBUTE_COUNT_LIMIT", default=128),
        )


DEFAULT_LIMITS = Limits()


def clean_value(key: str, value: Any, length: int | None) -> Any:
    """The value as exported, following the API's ``_clean_attribute_value``.

    Strings are cut to ``length``; ``None``, booleans, numbers and bytes are
    kept; sequences become lists and mappings dicts, cleaned recursively;
    anything else becomes its ``str()`` (``None`` if that fails). A ``str``
    subclass (a ``StrEnum`` member) is exported as its string value.
    """
    kind = type(value)
    if kind is str:
        return value if length is None or len(value) <= length else value[:length]
    if value is None or kind is bool or kind is int or kind is float or kind is bytes:
        return value
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, str):
        return clean_value(key, str.__str__(value), length)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, bytes):
        return bytes(value)
    if isinstance(value, Sequence):
        return [clean_value(key, element, length) for element in value]
    if isinstance(value, Mapping):
        cleaned: dict[str, Any] = {}
        for name, element in value.items():
            if not name:
                continue
            cleaned[name if isinstance(name, str) else str(name)] = clean_value(key, element, length)
        return cleaned
    _warn("attribute %r: a %s is exported as its str()", key, kind.__name__)
    try:
        return clean_value(key, str(value), length)
    except Exception:  # noqa: BLE001 - a broken __str__
        return None


class SpanCore:
    """A span that records into plain builtins; see the module docstring."""

    __slots__ = (
        "name",
        "trace_id",
        "span_id",
        "parent_span_id",
        "parent_remote",
        "kind",
        "start_time",
        "end_time",
        "attributes",
        "case_attributes",
        "events",
        "links",
        "status",
        "dropped_attributes",
        "dropped_events",
        "dropped_links",
        "limits",
    )

    def __init__(
        self,
        name: str,
        trace_id: int,
        parent_span_id: int = 0,
        parent_remote: bool = False,
        attributes: dict[str, Any] | None = None,
        limits: Limits = DEFAULT_LIMITS,
        kind: int = 0,
        start_time: int | None = None,
        case_attributes: dict[str, Any] | None = None,
    ) -> None:
        """``attributes`` are taken as they are (the caller's own, already valid, values).
        ``case_attributes``: valid attributes shared, unchanged, by many spans (see
        :mod:`pytest_probability.otel.encode`); never modified here.
        ``kind`` is an ``opentelemetry.trace.SpanKind`` value (0: INTERNAL)."""
        self.name = name
        self.trace_id = trace_id
        self.span_id = new_span_id()
        self.parent_span_id = parent_span_id
        self.parent_remote = parent_remote
        self.kind = kind
        self.start_time = time.time_ns() if start_time is None else start_time
        self.end_time: int | None = None
        self.attributes: dict[str, Any] = attributes if attributes is not None else {}
        self.case_attributes = case_attributes
        self.events: list[tuple[str, int, dict[str, Any]]] = []
        self.links: list[tuple[int, int, int, dict[str, Any]]] = []
        self.status: tuple[int, str] = (UNSET, "")
        self.dropped_attributes = 0
        self.dropped_events = 0
        self.dropped_links = 0
        self.limits = limits

    def is_recording(self) -> bool:
        return self.end_time is None

    def set_attribute(self, key: str, value: Any) -> None:
        if self.end_time is not None:
            return
        if not isinstance(key, str) or not key:
            _warn("invalid attribute key %r; dropped", key)
            return
        value = clean_value(key, value, self.limits.attribute_length)
        shared = self.case_attributes
        if shared and key in shared:  # overriding a shared value: stop sharing
            self.attributes = {**shared, **self.attributes}
            self.case_attributes = shared = None
        count = self.limits.attribute_count
        used = len(self.attributes) + (len(shared) if shared else 0)
        if count is not None and key not in self.attributes and used >= count:
            self.dropped_attributes += 1
            return
        self.attributes[key] = value

    def set_attributes(self, attributes: Mapping[str, Any]) -> None:
        for key, value in attributes.items():
            self.set_attribute(key, value)

    def _clean_attributes(self, attributes: Mapping[str, Any] | None, count: int | None, length: int | None) -> dict[str, Any]:
        cleaned: dict[str, Any] = {}
        for key, value in (attributes or {}).items():
            if count is not None and len(cleaned) >= count:
                break
            if isinstance(key, str) and key:
                cleaned[key] = clean_value(key, value, length)
        return cleaned

    def add_event(self, name: str, attributes: Mapping[str, Any] | None = None, timestamp: int | None = None) -> None:
        if self.end_time is not None:
            return
        limits = self.limits
        cleaned = self._clean_attributes(attributes, limits.event_attribute_count, limits.event_attribute_length)
        self.events.append((name, time.time_ns() if timestamp is None else timestamp, cleaned))
        if limits.event_count is not None and len(self.events) > limits.event_count:
            del self.events[0]  # the SDK keeps the newest
            self.dropped_events += 1

    def update_name(self, name: str) -> None:
        if self.end_time is None:
            self.name = name

    def end(self, end_time: int | None = None) -> None:
        if self.end_time is None:
            self.end_time = time.time_ns() if end_time is None else end_time

    def force_status(self, code: int, description: str = "") -> None:
        """The run's outcome decides the status, whatever the benchmark set."""
        self.status = (code, description if code == ERROR else "")

    def to_dict(self) -> dict[str, Any]:
        """The span wire form (plain builtins; see :mod:`pytest_probability.otel.encode`)."""
        return {
            "name": self.name,
            "trace_id": self.trace_id,
            "span_id": self.span_id,
            "parent_span_id": self.parent_span_id,
            "parent_remote": self.parent_remote,
            "flags": 1,
            "kind": self.kind,
            "start": self.start_time,
            "end": self.end_time if self.end_time is not None else time.time_ns(),
            "attributes": self.attributes,
            "case_attributes": self.case_attributes,
            "events": self.events,
            "links": self.links,
            "status": self.status,
            "dropped_attributes": self.dropped_attributes,
            "dropped_events": self.dropped_events,
            "dropped_links": self.dropped_links,
        }

    @property
    def traceparent(self) -> str:
        return traceparent(self.trace_id, self.span_id)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, span_id={self.span_id:016x})"


def api_span_class() -> type[SpanCore]:
    """:class:`~pytest_probability.otel.apispan.RecordingSpan` (imports the OpenTelemetry API)."""
    from .apispan import RecordingSpan

    return RecordingSpan
