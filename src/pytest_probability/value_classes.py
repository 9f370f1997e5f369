"""Plain value classes: what ``@dataclass`` would generate, written once for the classes every session creates.

A leaf: pure and standard-library only. ``dataclasses.dataclass`` compiles the
methods it generates from source when its class is created (``exec``: several
per class, about 0.5 ms a class on Python 3.11, before 3.13 batched them). Every
session pays that for each class on its start-up path: 111 M of the 275 M
instructions the plugin added to a session that uses no feature were the core's
28 dataclasses (``benchmarks/import_time.py --instructions``; docs/performance.md,
"Start-up"). Those classes therefore write their ``__init__`` by hand and take
equality, hashing and ``repr`` from these two bases, which read the class's
:attr:`Value.FIELDS`; their code is in the bytecode cache like any other.

- :class:`Value`: what a frozen dataclass was. Its fields are declared
  ``Final`` (mypy refuses an assignment after ``__init__``, as it refused one to a
  frozen dataclass's field; nothing checks it at run time), and it is compared
  and hashed by its fields.
- :class:`Record`: what a mutable dataclass was: compared by its fields, not
  hashable.

Classes created only when a feature is on, and the public ``TokenUsage`` and
``RunInfo`` (users may hand them to ``dataclasses.asdict``), stay dataclasses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from typing_extensions import Self


class Value:
    """Compared and hashed by its :attr:`Value.FIELDS`, shown with them: a frozen dataclass's behaviour."""

    __slots__ = ()
    #: The fields, in ``__init__``'s order: what equality, the hash and ``repr`` read.
    FIELDS: ClassVar[tuple[str, ...]] = ()

    def field_values(self) -> tuple[Any, ...]:
        return tuple([getattr(self, name) for name in self.FIELDS])

    def replace(self, **changes: Any) -> Self:
        """A copy with ``changes`` (``dataclasses.replace``'s): ``__init__`` takes every field by its name."""
        return type(self)(**{**{name: getattr(self, name) for name in self.FIELDS}, **changes})

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, Value)
        return self.field_values() == other.field_values()

    def __hash__(self) -> int:
        return hash(self.field_values())

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.FIELDS)
        return f"{type(self).__qualname__}({shown})"


class Record(Value):
    """A :class:`Value` whose fields change (a mutable dataclass's behaviour): compared by them, not hashable."""

    __slots__ = ()

    def __hash__(self) -> int:
        raise TypeError(f"unhashable type: {type(self).__name__!r} (its fields change)")
