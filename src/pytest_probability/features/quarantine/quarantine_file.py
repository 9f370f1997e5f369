"""The quarantine file: a TOML list of entries, read and checked once.

```toml
[[quarantine]]
pattern = "bench_triage.py::bench_route::refund-*"   # a case's node id; * matches any text
owner = "alice@example.org"
reason = "flaky since the model update (PROJ-123)"
until = 2026-12-31                                   # the last day it is quarantined (UTC); "2026-12-31" too
```

Every problem is a ``ValueError`` naming the file and the entry (the feature
makes it a usage error, exit status 4). TOML is read as ``config.price_file``
reads it (``tomllib``, else ``tomli``).
"""

from __future__ import annotations

import datetime as _dt
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

KEYS = ("pattern", "owner", "reason", "until")
EXAMPLE = (
    '[[quarantine]]\npattern = "bench_x.py::bench_route::refund-*"\nowner = "alice@example.org"\n'
    'reason = "PROJ-123"\nuntil = 2026-12-31'
)


@dataclass(frozen=True)
class Entry:
    """One entry: which cases (``pattern``), who owns them, why, and the last day they are quarantined."""

    index: int
    pattern: str
    owner: str
    reason: str
    until: _dt.date

    @property
    def name(self) -> str:
        return f"entry {self.index} ({self.pattern!r}, owner {self.owner})"

    def matches(self, key: str) -> bool:
        return _compiled(self.pattern).fullmatch(key) is not None

    def expired(self, today: _dt.date) -> bool:
        return today > self.until

    def to_dict(self) -> dict[str, Any]:
        return {"pattern": self.pattern, "owner": self.owner, "reason": self.reason, "until": self.until.isoformat()}

    @classmethod
    def from_dict(cls, index: int, data: dict[str, Any]) -> Entry:
        return cls(
            index,
            str(data["pattern"]),
            str(data["owner"]),
            str(data.get("reason") or ""),
            _dt.date.fromisoformat(str(data["until"])),
        )


_PATTERNS: dict[str, re.Pattern[str]] = {}


def _compiled(pattern: str) -> re.Pattern[str]:
    """``*`` matches any text; everything else is literal (node ids hold ``[``, which globs would read)."""
    found = _PATTERNS.get(pattern)
    if found is None:
        found = _PATTERNS[pattern] = re.compile(".*".join(re.escape(part) for part in pattern.split("*")), re.S)
    return found


def today() -> _dt.date:
    return _dt.datetime.now(_dt.timezone.utc).date()


def _loads_toml(text: str) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10: pytest's own dependency
        import tomli as tomllib
    return tomllib.loads(text)


def read(path: Path) -> list[Entry]:
    where = f"--prob-quarantine: {path}"
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{where}: cannot be read ({exc})") from None
    try:
        data = _loads_toml(text)
    except ValueError as exc:
        raise ValueError(f"{where}: not valid TOML: {exc}") from None
    return parse(data, where)


def parse(data: Any, where: str) -> list[Entry]:
    listed = data.get("quarantine") if isinstance(data, dict) else None
    unknown = sorted(set(data) - {"quarantine"}) if isinstance(data, dict) else []
    if not isinstance(listed, list) or unknown:
        extra = f" (unknown keys: {', '.join(unknown)})" if unknown else ""
        raise ValueError(f"{where}: must be a list of [[quarantine]] tables{extra}, for example:\n{EXAMPLE}")
    entries = []
    for index, item in enumerate(listed, 1):
        if not isinstance(item, dict):
            raise ValueError(f"{where}: entry {index} must be a table with {', '.join(KEYS)}")
        label = f"entry {index}" + (f" ({item['pattern']!r})" if isinstance(item.get("pattern"), str) else "")
        missing = [key for key in KEYS if key not in item]
        if missing:
            raise ValueError(f"{where}: {label} has no {', '.join(missing)} (each entry needs {', '.join(KEYS)})")
        unknown_keys = sorted(set(item) - set(KEYS))
        if unknown_keys:
            raise ValueError(f"{where}: {label} has unknown keys: {', '.join(unknown_keys)}")
        for key in ("pattern", "owner", "reason"):
            if not isinstance(item[key], str) or (key != "reason" and not item[key].strip()):
                raise ValueError(f"{where}: {label}: {key} must be a non-empty string, got {item[key]!r}")
        until = _until(item["until"], f"{where}: {label}")
        entries.append(Entry(index, item["pattern"].strip(), item["owner"].strip(), item["reason"].strip(), until))
    return entries


#: A quoted date: the ISO calendar form alone (``date.fromisoformat`` reads week dates and basic forms too on
#: Python 3.11+, which a quarantine file would then mean differently on 3.10).
_ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def _until(value: Any, where: str) -> _dt.date:
    """``until``: a TOML date (``until = 2026-12-31``), or the same date quoted (``until = "2026-12-31"``), as
    many TOML files write dates; a date and time, or any other text, is refused."""
    if isinstance(value, _dt.date) and not isinstance(value, _dt.datetime):
        return value
    if isinstance(value, str) and _ISO_DATE.fullmatch(value.strip()):
        try:
            return _dt.date.fromisoformat(value.strip())
        except ValueError as exc:
            raise ValueError(f"{where}: until {value!r} is not a date: {exc}") from None
    raise ValueError(f'{where}: until must be a date (until = 2026-12-31, or "2026-12-31"), got {value!r}')


class Cases:
    """Which entry in force quarantines a case (by its key), asked once per case."""

    def __init__(self, entries: Sequence[Entry]) -> None:
        self.entries = list(entries)
        self._found: dict[str, Entry | None] = {}

    def entry(self, key: str) -> Entry | None:
        if key not in self._found:
            self._found[key] = next((entry for entry in self.entries if entry.matches(key)), None)
        return self._found[key]
