"""The sort menu: the memory list's columns by name; the current one is marked."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from ..widgets.option_list import KeyedOptionList


class SortMenu(ModalScreen[str | None]):
    """Dismisses with the sort key picked (the current one again: reverse), or None."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "cancel", "Cancel", id="sort.cancel"),
    ]

    def __init__(self, keys: Sequence[tuple[str, str]], current: str, descending: bool) -> None:
        super().__init__()
        self.keys = keys
        self.current = current
        self.descending = descending

    def compose(self) -> ComposeResult:
        arrow = "▼" if self.descending else "▲"
        options = [
            Option(f"{label} {arrow}  (again: reverse)" if key == self.current else label, id=key)
            for key, label in self.keys
        ]
        with Vertical(id="sort-menu"):
            yield Static("Sort the memory list by", id="sort-title", markup=False)
            yield KeyedOptionList(*options, id="sort-options")

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        options.highlighted = next(
            (i for i, (key, _) in enumerate(self.keys) if key == self.current), 0
        )
        options.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
