"""GitHub workflow commands for the night: ``::error`` for failed gates and drops, ``::warning`` for undecided gates,
of every measure (a score's gate and drop as the pass fraction's).

Pure. GitHub shows at most 10 annotations of each type per step, so at most
10 of each are printed, in the order of :mod:`.attention` (worst first); the
summary counts the rest. Escaping follows the runner's rules (actions/toolkit
``command.ts``): in the message ``%``, ``\\r`` and ``\\n``; in a property
value also ``:`` and ``,``.
"""

# No `from __future__ import annotations`: its name would be this module's function's (every annotation
# here is valid at run time on Python 3.10).
from collections.abc import Sequence

from .attention import DROPPED, FAILED_GATE, FAILED_VERDICT, UNDECIDED_GATE, UNDECIDED_VERDICT, Attention

#: Annotations of one type GitHub shows per step.
PER_TYPE = 10
KINDS = {
    FAILED_GATE: "error",
    FAILED_VERDICT: "error",
    DROPPED: "error",
    UNDECIDED_GATE: "warning",
    UNDECIDED_VERDICT: "warning",
}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(kind: str, message: str, **properties: str) -> str:
    shown = ",".join(f"{name}={escape_property(value)}" for name, value in properties.items())
    return f"::{kind} {shown}::{escape_data(message)}" if shown else f"::{kind}::{escape_data(message)}"


def title(item: Attention) -> str:
    return f"{item.kind}: {item.label}"


def message(item: Attention) -> str:
    counted = f"{item.passes}/{item.total} passed" if item.passes is not None and item.total is not None else ""
    parts = [part for part in (counted, item.interval, item.detail) if part]
    text = ", ".join(parts)
    return text + (f"\ntrace: {item.trace_url}" if item.trace_url else "")


def annotations(items: Sequence[Attention]) -> tuple[list[str], dict[str, int]]:
    """(the commands to print, how many of each type were left out)."""
    lines: list[str] = []
    shown = {"error": 0, "warning": 0}
    left = {"error": 0, "warning": 0}
    for item in items:
        kind = KINDS.get(item.kind)
        if kind is None:
            continue
        if shown[kind] >= PER_TYPE:
            left[kind] += 1
            continue
        shown[kind] += 1
        lines.append(command(kind, message(item), file=item.path, line=str(item.line), title=title(item)))
    return lines, left
