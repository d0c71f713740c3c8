"""App-wide messages posted by store workers."""

from __future__ import annotations

from textual.message import Message

from store import MemoryLoad


class MemoriesLoaded(Message):
    """A full read of the memories finished."""

    def __init__(self, load: MemoryLoad) -> None:
        super().__init__()
        self.load = load


class StoreFailed(Message):
    """The store could not be opened or read."""

    def __init__(self, message: str) -> None:
        super().__init__()
        self.message = message
