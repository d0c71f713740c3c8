"""Since your last visit: the summary the dashboard offers when it opens a store again."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from ..core.inbox import Line
from ..core.text import one_line
from ..widgets.option_list import KeyedOptionList
from .dialog import Dialog


class InboxScreen(Dialog[Line | None]):
    """Dismisses with the line picked (enter opens what it is about), or None (esc)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "dismiss_all", "Dismiss", id="inbox.dismiss"),
    ]

    def __init__(self, heading: str, lines: Sequence[Line]) -> None:
        super().__init__()
        self.heading = heading
        self.lines = lines

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(f"{self.heading}:", id="dialog-title", markup=False)
            yield KeyedOptionList(
                *(Option(Text(one_line(ln.text)), id=str(i)) for i, ln in enumerate(self.lines)),
                id="inbox-lines",
                classes="-body",
            )
            yield Static("enter opens what a line is about · esc dismisses", id="prompt-hint")

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.lines[int(event.option.id or 0)])

    def action_dismiss_all(self) -> None:
        self.dismiss(None)
