"""App-wide messages: what crosses from one part of the dashboard to another.

A view's own messages (its workers' answers) are nested in the view's class.
"""

from __future__ import annotations

from collections.abc import Sequence

from textual.message import Message

from store import Memory, MemoryLoad, StoreError

from ..core.inbox import Line
from ..core.live import Delta
from ..core.state import Change


class StateChanged(Message, bubble=False):
    """The shared state changed (each view posts this to itself when told)."""

    def __init__(self, change: Change) -> None:
        super().__init__()
        self.change = change


class StoreLoaded(Message):
    """A read of the memories finished (``partial``: only a first screenful)."""

    def __init__(
        self,
        load: MemoryLoad[Memory],
        *,
        partial: bool = False,
        total: int = 0,
        last_rowid: int = 0,
    ) -> None:
        super().__init__()
        self.load = load
        self.partial = partial
        self.total = total
        self.last_rowid = last_rowid


class StoreFailed(Message):
    """The store could not be opened or read."""

    def __init__(self, error: StoreError) -> None:
        super().__init__()
        self.error = error


class LiveDelta(Message):
    """The poller saw another connection commit."""

    def __init__(self, delta: Delta) -> None:
        super().__init__()
        self.delta = delta


class StatusChanged(Message):
    """A view's part of the status line changed."""


class ReloadWanted(Message):
    """Read every row again (a record changed under a write)."""


class StoreRecovered(Message):
    """The store answered again after a failure."""


NOW = "now"
"""``ShowView.dial``, ``ShowRecord.dial``: back to now."""


class ShowRecord(Message):
    """Show this record in the memory list (``back``: how to return, for the toast),
    the time dial first turned when ``dial`` says so (a moment before now, or ``NOW``)."""

    def __init__(self, memory_id: str, back: str, *, dial: float | str | None = None) -> None:
        super().__init__()
        self.memory_id = memory_id
        self.back = back
        self.dial = dial


class ShowProvenance(Message):
    """Show where this record came from (its sources, the passage, the session)."""

    def __init__(self, memory_id: str) -> None:
        super().__init__()
        self.memory_id = memory_id


class PurgeAsked(Message):
    """Purge the secrets this record holds from every copy (a preview first)."""

    def __init__(self, memory_id: str) -> None:
        super().__init__()
        self.memory_id = memory_id


class ShowView(Message):
    """One view asks for another, by its id in the view registry: the screen turns the
    time dial first when ``dial`` says so (a moment before now, or ``NOW``), builds the
    view if it never was, calls its ``call`` method with ``args``, shows it (unless
    ``show`` is False: the call is made where the view is), and puts the focus on
    ``focus`` (a selector in it). Views never reach into one another."""

    def __init__(
        self,
        view: str,
        call: str = "",
        args: tuple[object, ...] = (),
        *,
        dial: float | str | None = None,
        focus: str = "",
        show: bool = True,
    ) -> None:
        super().__init__()
        self.view = view
        self.call = call
        self.args = args
        self.dial = dial
        self.focus = focus
        self.show = show


class OpenScreen(Message):
    """Open a registered screen (``app.registry.SCREENS``) by its id, with ``args``."""

    def __init__(self, screen: str, *args: object) -> None:
        super().__init__()
        self.screen = screen
        self.args = args


class InboxReady(Message):
    """What changed since the last visit, ready to offer."""

    def __init__(self, heading: str, lines: Sequence[Line]) -> None:
        super().__init__()
        self.heading = heading
        self.lines = lines
