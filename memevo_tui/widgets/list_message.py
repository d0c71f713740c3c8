"""What a list's messages share: the list they are about, as their ``control``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.message import Message

if TYPE_CHECKING:
    from .virtual_list import VirtualList


class ListMessage(Message):
    """A message about one list (``control``: the list)."""

    def __init__(self, source: VirtualList[Any]) -> None:
        super().__init__()
        self.source = source

    @property
    def control(self) -> VirtualList[Any]:
        return self.source
