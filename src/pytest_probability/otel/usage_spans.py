"""The span processor that reads GenAI usage off every span ended in this process (``otel/usage.py``).

Per span ended it costs a few attribute lookups when the span carries no usage (docs/performance.md,
"Usage from spans"); it never raises. A span whose descendant carried usage repeats its descendants' usage
(an agent's or a chain's total) and is not charged again: when a span with usage ends its parent's id is
kept, and a kept span ending is skipped and its own parent kept in turn. The plugin's own spans (the run
span carries the run's usage) are never read.
"""

from __future__ import annotations

from typing import Any

from opentelemetry.sdk.trace import SpanProcessor, TracerProvider

from ..run.context import charge_span, note_operation
from ..run.recording import INPUT_MESSAGES, OUTPUT_MESSAGES, span_transcript
from ..run.spanusage import OPERATION, RESPONSE_ID, usage_of
from .spans import SCOPE


class UsageProcessor(SpanProcessor):
    def __init__(self) -> None:
        #: Span ids whose descendants carried usage.
        self._covered: set[int] = set()

    def on_end(self, span: Any) -> None:
        try:
            covered = self._covered
            scope = span.instrumentation_scope
            if scope is not None and scope.name == SCOPE:
                # The plugin's own spans (a run span carries its run's usage already): never read, so
                # their attributes are not copied either; a run span whose child had usage is let go of.
                if covered:
                    covered.discard(span.context.span_id)
                return
            attributes, own = span.attributes, span.context
            if attributes and OPERATION in attributes and own is not None and own.trace_flags.sampled:
                note_operation(own.trace_id, own.span_id, str(attributes.get(RESPONSE_ID) or ""))
            if covered:
                if own is not None and own.span_id in covered:
                    covered.discard(own.span_id)
                    parent = span.parent
                    if parent is not None:
                        covered.add(parent.span_id)
                    return
            # One copy into a plain dict (the SDK's BoundedAttributes.copy) makes every lookup a C one:
            # a lookup through the SDK's mapping is a Python call (docs/performance.md, "Usage from spans").
            plain = attributes.copy() if attributes else None
            if plain and (INPUT_MESSAGES in plain or OUTPUT_MESSAGES in plain):
                span_transcript(plain)  # captured content: the run's transcript without record_io
            usage = usage_of(plain)
            if usage is None:
                return
            if charge_span(usage):
                parent = span.parent
                if parent is not None:
                    covered.add(parent.span_id)
        except Exception:  # pragma: no cover - a processor must never raise into the code that ended the span
            pass


def sdk_provider() -> TracerProvider:
    """An SDK tracer provider for an instrumentor that has none (:class:`~.usage.UsageFromSpans` makes it global)."""
    return TracerProvider()
