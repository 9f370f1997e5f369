"""Text made safe to keep and to show: well-formed, cut to a length, control characters escaped, long labels
shortened, secrets redacted.

A leaf: pure and standard-library only. Every text a user hands the plugin (a
score's name and explanation, a transcript value, a model's name, a failure's
message, a parameter, a span's attribute read for usage) is made
:func:`well_formed` where the plugin takes it, so that everything after (each
output, the journal, xdist's channel, the OpenTelemetry encoders) holds text
that UTF-8 can encode. Every value the plugin keeps is cut by :func:`clip`;
everything it prints goes through :func:`printable`, and each whole line of
output that carries such text through :func:`printable_line` (no CI runner
reads a command in it); what an exporter or an endpoint said goes through
:func:`scrub`, and an endpoint is shown by :func:`redact_url`.
"""

from __future__ import annotations

import re
import urllib.parse

#: Longest label (and model name) the table shows; longer ones keep their start and end
#: around an ellipsis. The JSON report and the spans keep them whole.
LABEL_WIDTH = 80

#: The longest reason a note shows.
REASON_LIMIT = 200
#: A piece of a secret this long (or the whole secret, if shorter) counts as the secret.
SECRET_PIECE = 6
_SCAN_LIMIT = 65536

#: C0 and C1 control characters, DEL, and the Unicode line and paragraph separators.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


#: A surrogate code point: half of a UTF-16 pair, which UTF-8 cannot encode on its own.
_SURROGATE = re.compile("[\ud800-\udfff]")


def well_formed(text: str) -> str:
    """``text`` as well-formed Unicode, which UTF-8 encodes: every surrogate code point that is half of a
    pair joined to the character the pair encodes, every lone one (a model's answer cut inside an escaped
    emoji, ``json.loads('"fine \\ud83d"')``; a file name's undecodable byte) replaced by U+FFFD, as a UTF-8
    decoder replaces what it cannot read. Text without surrogates is returned as it is (the usual case:
    one scan, no copy)."""
    if text.isascii() or _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def well_formed_data(value: object) -> object:
    """Plain builtins (dicts, lists, tuples, strings, numbers: a report as xdist sends it) with every string, key
    or value, :func:`well_formed`; the very object when none needed it (one walk, no copy)."""
    if isinstance(value, str):
        return well_formed(value)
    if isinstance(value, dict):
        items = [(well_formed_data(k), well_formed_data(v)) for k, v in value.items()]
        if all(new_k is k and new_v is v for (new_k, new_v), (k, v) in zip(items, value.items(), strict=True)):
            return value
        return dict(items)
    if isinstance(value, (list, tuple)):
        fixed = [well_formed_data(item) for item in value]
        if all(new is old for new, old in zip(fixed, value, strict=True)):
            return value
        return type(value)(fixed)
    return value


def clip(text: str, limit: int) -> str:
    """``text`` if it has at most ``limit`` characters, else its first ``limit - 1`` and ``…``."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def printable(text: str) -> str:
    """``text`` with control characters escaped (``\\x00``, ``\\x1b``, ``\\n``): nothing printed
    can move the cursor, change colours, ring the bell or break a line of the table; and ``##[`` as
    ``##\\x5b``, which GitHub's runner reads as a command anywhere in a line (:func:`inert`)."""
    if _CONTROL.search(text) is not None:
        text = _CONTROL.sub(lambda match: repr(match.group())[1:-1], text)
    return text.replace("##[", "##\\x5b") if "##[" in text else text


def inert(line: str) -> str:
    """``line`` as no CI runner reads a command in it. GitHub Actions' runner reads a workflow command
    (``::warning::…``, ``::add-mask::…``) from any line of output whose first non-blank characters are ``::``
    (actions/runner, ``ActionCommand.TryParseV2``), and its older form from ``##[`` anywhere in a line
    (``ActionCommand.TryParse``): the first colon of such a line is shown as ``\\x3a``, and each ``##[`` as
    ``##\\x5b``, the way :func:`printable` shows a control character."""
    stripped = line.lstrip()
    if stripped.startswith("::"):
        start = len(line) - len(stripped)
        line = line[:start] + "\\x3a" + line[start + 1 :]
    return line.replace("##[", "##\\x5b") if "##[" in line else line


def printable_line(text: str) -> str:
    """A line of output that carries text it was given (a case label, a model name, a message): control
    characters escaped (:func:`printable`), and nothing in it a CI runner reads as a command (:func:`inert`)."""
    return inert(printable(text))


def printable_lines(text: str) -> str:
    """:func:`printable_line` line by line: the line breaks of a multi-line message stay breaks."""
    return "\n".join(printable_line(line) for line in text.split("\n"))


def shorten(text: str, width: int = LABEL_WIDTH) -> str:
    """``text`` if it fits in ``width`` characters, else its start and end around ``…``."""
    if len(text) <= width:
        return text
    tail = (width - 1) // 3
    return text[: width - 1 - tail] + "…" + text[len(text) - tail :]


def label_text(text: str) -> str:
    """A label (or a model name) as the terminal shows it: control characters escaped and nothing a CI runner
    reads as a command (:func:`printable_line`: a table's rows start with their label), then shortened. Escaped
    in the cell, so the columns' widths count what is shown."""
    return shorten(printable_line(text))


def scrub(text: str, secrets: list[str], limit: int = REASON_LIMIT) -> str:
    """Control characters out, every secret (or piece of one) redacted, then cut to ``limit``."""
    text = "".join(ch if ch.isprintable() else " " for ch in str(text)[:_SCAN_LIMIT])
    marked = bytearray(len(text))
    for secret in secrets:
        size = min(len(secret), SECRET_PIECE)
        pieces = {secret[i : i + size] for i in range(len(secret) - size + 1)}
        for i in range(len(text) - size + 1):
            if text[i : i + size] in pieces:
                marked[i : i + size] = b"\1" * size
    out: list[str] = []
    for ch, hidden in zip(text, marked, strict=False):
        if not hidden:
            out.append(ch)
        elif not out or out[-1] != "[redacted]":
            out.append("[redacted]")
    clean = " ".join("".join(out).split())
    return clip(clean, limit)


def redact_url(url: str) -> str:
    """Drop user info, query and fragment: they may hold credentials."""
    try:
        parts = urllib.parse.urlsplit(url.strip())
    except ValueError:
        return "<malformed URL>"
    if not parts.netloc:
        return url.strip().split("?")[0].split("@")[-1]
    host = parts.netloc.rpartition("@")[2]
    return urllib.parse.urlunsplit((parts.scheme, host, parts.path, "", ""))
