"""The run span as an OpenTelemetry API span, so that it can be made current.

Imported only once the process has imported ``opentelemetry.trace`` (see
:mod:`pytest_probability.otel.runspan`). The recording is :class:`SpanCore`'s;
this class adds what the API promises: a ``SpanContext``, statuses with the
SDK's rules, exceptions as events, links.
"""

from __future__ import annotations

import traceback
from collections.abc import Mapping
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import SpanContext, Status, StatusCode, TraceFlags

from .runspan import OK, SpanCore

_SAMPLED = TraceFlags(TraceFlags.SAMPLED)


class RecordingSpan(SpanCore, trace.Span):
    """A :class:`SpanCore` behind the API's :class:`opentelemetry.trace.Span`."""

    __slots__ = ("_context",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._context = SpanContext(self.trace_id, self.span_id, is_remote=False, trace_flags=_SAMPLED)

    def get_span_context(self) -> SpanContext:
        return self._context

    def set_status(self, status: Status | StatusCode, description: str | None = None) -> None:
        """As the SDK: UNSET is ignored, OK is final, a description is kept for ERROR only."""
        if self.end_time is not None or self.status[0] == OK:
            return
        if isinstance(status, Status):
            code, description = status.status_code, status.description
        else:
            code = status
        if code is StatusCode.UNSET:
            return
        self.status = (code.value, (description or "") if code is StatusCode.ERROR else "")

    def record_exception(
        self,
        exception: BaseException,
        attributes: Mapping[str, Any] | None = None,
        timestamp: int | None = None,
        escaped: bool = False,
    ) -> None:
        module = type(exception).__module__
        qualname = type(exception).__qualname__
        recorded: dict[str, Any] = {
            "exception.type": f"{module}.{qualname}" if module and module != "builtins" else qualname,
            "exception.message": str(exception),
            "exception.stacktrace": "".join(traceback.format_exception(type(exception), exception, exception.__traceback__)),
            "exception.escaped": str(escaped),
        }
        if attributes:
            recorded.update(attributes)
        self.add_event("exception", recorded, timestamp)

    def add_link(self, context: SpanContext, attributes: Mapping[str, Any] | None = None) -> None:
        if self.end_time is not None or context is None or not context.is_valid:
            return
        limits = self.limits
        if limits.link_count is not None and len(self.links) >= limits.link_count:
            self.dropped_links += 1
            return
        cleaned = self._clean_attributes(attributes, limits.link_attribute_count, limits.attribute_length)
        self.links.append((context.trace_id, context.span_id, int(context.trace_flags), cleaned))
