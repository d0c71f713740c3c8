"""A menu of named choices, the current one highlighted: the sort menu (the memory
list's columns) and the export menu (share or back up)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from ..core.text import one_line
from ..widgets.option_list import KeyedOptionList
from .dialog import Dialog


class Menu(Dialog[str | None]):
    """Dismisses with the key of the choice picked (enter), or None (esc)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "cancel", "Cancel", id="menu.cancel"),
    ]

    def __init__(self, title: str, choices: Sequence[tuple[str, str]], current: str) -> None:
        super().__init__()
        self.title_text = title
        self.choices = choices
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(id="menu"):
            yield Static(Text(one_line(self.title_text)), id="menu-title")
            yield KeyedOptionList(  # labels quote the store (origins): never markup
                *(Option(Text(one_line(label)), id=key) for key, label in self.choices),
                id="menu-options",
                classes="-body",
            )

    def on_mount(self) -> None:
        super().on_mount()
        options = self.query_one(OptionList)
        options.highlighted = next(
            (i for i, (key, _) in enumerate(self.choices) if key == self.current), 0
        )
        options.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)


def sort_menu(keys: Sequence[tuple[str, str]], current: str, descending: bool) -> Menu:
    """The memory list's sort keys by name; picking the current one again reverses it."""
    arrow = "▼" if descending else "▲"
    choices = [
        (key, f"{label} {arrow}  (again: reverse)" if key == current else label)
        for key, label in keys
    ]
    return Menu("Sort the memory list by", choices, current)


SHARE, BACKUP = "markdown", "jsonl"
EXPORT_CHOICES = (
    (SHARE, "Share: Markdown to read, every text redacted as pi redacts"),
    (BACKUP, "Backup: JSONL that loses nothing, with events and sources"),
)


def export_menu(count: int, what: str) -> Menu:
    """Which export ``count`` records get: one to share (the default) or a backup."""
    return Menu(f"Export {count:,} {what} record(s) as", EXPORT_CHOICES, SHARE)
