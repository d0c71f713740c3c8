"""An option list that moves as every list here does: ``j``/``k``, ``g``/``G``."""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.widgets import OptionList


class KeyedOptionList(OptionList):
    """Textual's ``OptionList`` with the dashboard's list keys beside its arrows."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "cursor_down", "Down", show=False, id="option.down"),
        Binding("k", "cursor_up", "Up", show=False, id="option.up"),
        Binding("g", "first", "First", show=False, id="option.first"),
        Binding("G", "last", "Last", show=False, id="option.last"),
    ]
