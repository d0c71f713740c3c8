"""App-wide messages: what store workers post back to the UI."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from textual.message import Message

from store import CorruptRow, Event, Memory, MemoryLoad, ModelCall, Source
from store.recall import DigestLine, Recall
from store.status import QueueStatus

UndoPlan = list[tuple[dict[str, Any], dict[str, Any]]]


class MemoriesLoaded(Message):
    """A read of the memories finished (``partial``: only a first screenful)."""

    def __init__(
        self, load: MemoryLoad, *, partial: bool = False, total: int = 0, last_rowid: int = 0
    ) -> None:
        super().__init__()
        self.load = load
        self.partial = partial
        self.total = total
        self.last_rowid = last_rowid


class StoreFailed(Message):
    """The store could not be opened or read."""

    def __init__(self, message: str) -> None:
        super().__init__()
        self.message = message


class RecordEvents(Message):
    """One record's own events, for the detail pane."""

    def __init__(
        self, memory_id: str, events: Sequence[Event | CorruptRow], detail_id: str
    ) -> None:
        super().__init__()
        self.memory_id = memory_id
        self.events = events
        self.detail_id = detail_id


class EventsLoaded(Message):
    """A page of the event history."""

    def __init__(
        self, rows: Sequence[Event | CorruptRow], *, append: bool, exhausted: bool
    ) -> None:
        super().__init__()
        self.rows = rows
        self.append = append
        self.exhausted = exhausted


class UndoPreview(Message):
    """What undoing an event would write, or upstream's reason for refusing."""

    def __init__(self, event_id: str, plan: UndoPlan | str) -> None:
        super().__init__()
        self.event_id = event_id
        self.plan = plan


class RecallComputed(Message):
    """A recall evaluation finished, for the search list or the recall preview."""

    def __init__(
        self,
        result: Recall,
        target: str,
        *,
        rerun: bool = False,
        digest: Sequence[DigestLine] = (),
    ) -> None:
        super().__init__()
        self.result = result
        self.target = target
        self.rerun = rerun
        self.digest = digest


class WriteDone(Message):
    """A curation write committed (``event_id`` None: accepted, nothing recorded)."""

    def __init__(
        self, label: str, event_id: str | None, rows: Sequence[Memory | CorruptRow]
    ) -> None:
        super().__init__()
        self.label = label
        self.event_id = event_id
        self.rows = rows


class WriteFailed(Message):
    """A curation write was refused or could not run; nothing was written."""

    def __init__(self, label: str, message: str) -> None:
        super().__init__()
        self.label = label
        self.message = message


class UndoAsked(Message):
    """An undo's preview is ready for the user to confirm (or its refusal to show)."""

    def __init__(self, event_id: str, what: str, plan: UndoPlan | str) -> None:
        super().__init__()
        self.event_id = event_id
        self.what = what
        self.plan = plan


class LiveChange(Message):
    """Another connection (pi, or the demo learner) committed: what it changed."""

    def __init__(
        self,
        events: Sequence[Event | CorruptRow],
        rows: Sequence[Memory | CorruptRow],
        at: float,
        full: MemoryLoad | None = None,
    ) -> None:
        super().__init__()
        self.events = events
        self.rows = rows
        self.at = at
        self.full = full


class SourcesLoaded(Message):
    """The learning queue and its status figures."""

    def __init__(self, sources: Sequence[Source | CorruptRow], queue: QueueStatus) -> None:
        super().__init__()
        self.sources = sources
        self.queue = queue


class SourceDetails(Message):
    """One source's model calls and the events of its runs."""

    def __init__(
        self, source_id: str, calls: Sequence[ModelCall], events: Sequence[Event | CorruptRow]
    ) -> None:
        super().__init__()
        self.source_id = source_id
        self.calls = calls
        self.events = events
