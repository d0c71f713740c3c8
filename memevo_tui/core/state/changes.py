"""What can change in the shared state, as the values ``DashboardState`` tells its
subscribers (each view turns one into ``messages.StateChanged``). No Textual here."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from store import CorruptRow, Event, Memory, retimed

from ..scope import Scope

Row = Memory | CorruptRow
EventRow = Event | CorruptRow


@dataclass(frozen=True, slots=True)
class Reloaded:
    """Every row was replaced by a read of the store (``partial``: a first screenful)."""

    partial: bool
    total: int
    corrupt: int


@dataclass(frozen=True, slots=True)
class OwnWrite:
    """A write of ours committed; these are the records it changed, as stored now."""

    rows: tuple[Row, ...]
    bulk: str = ""
    """A bulk action's operation ("" one record's write)."""
    stopped: bool = False
    """The bulk action stopped before its end (the store could not be written)."""


@dataclass(frozen=True, slots=True)
class LiveChanged:
    """Another connection committed: the events it added and the records it changed
    (``added``: the ids of those that are new to the dashboard)."""

    events: tuple[EventRow, ...]
    rows: tuple[Row, ...]
    added: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class Failed:
    """The store could not be opened or read (``message``: what happened and what to do;
    ``cause``: a few words for the status line), or answered again (both empty)."""

    message: str
    cause: str


@dataclass(frozen=True, slots=True)
class Warned:
    """Something worked, at a cost the user should know (a cache not trusted, say)."""

    message: str


@dataclass(frozen=True, slots=True)
class LiveToggled:
    live: bool


@dataclass(frozen=True, slots=True)
class Dialed:
    """The time dial moved: every record's quality is now as of ``as_of`` (None: now)."""

    as_of: float | None


@dataclass(frozen=True, slots=True)
class Regrouped:
    """The app's journal of bulk actions changed (a batch cut short was reconciled)."""


@dataclass(frozen=True, slots=True)
class Scoped:
    """The project scope changed (``DashboardState.scope``): every view shows it."""

    scope: Scope


@dataclass(frozen=True, slots=True)
class Replayed:
    """pi's sessions were replayed: each record's recall log is known (``injections``)."""


Change = (
    Reloaded | OwnWrite | LiveChanged | Failed | LiveToggled | Dialed | Regrouped | Warned
    | Replayed | Scoped
)  # fmt: skip


Listener = Callable[[Change], None]


def at(rows: Sequence[Row], when_ms: float) -> list[Row]:
    """The rows with their quality (freshness, aging, dormancy) as of ``when_ms``."""
    return [retimed(r, when_ms) if isinstance(r, Memory) else r for r in rows]
