"""The correction editor: replace a memory's text."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static, TextArea

from store._js import js_len, js_trim

MIN_LEN, MAX_LEN = 4, 800


class CorrectScreen(ModalScreen[str | None]):
    """Dismisses with the new text, or None when cancelled."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "save", "Save", id="correct.save", priority=True),
        Binding("escape", "cancel", "Cancel", id="correct.cancel"),
    ]

    def __init__(self, memory_id: str, text: str) -> None:
        super().__init__()
        self.memory_id = memory_id
        self.initial = text

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(
                f"Correct {self.memory_id}: the record becomes a confirmed manual correction "
                "and its old text is blocked from coming back.",
                id="dialog-title",
                markup=False,
            )
            yield TextArea(self.initial, id="correct-text", soft_wrap=True, show_line_numbers=False)
            yield Static(id="correct-count", markup=False)
            with Horizontal(id="dialog-buttons"):
                yield Button("Save (ctrl+s)", variant="primary", id="save")
                yield Button("Cancel (esc)", id="cancel")

    def on_mount(self) -> None:
        area = self.query_one(TextArea)
        area.focus()
        self._count(area.text)

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        self._count(event.text_area.text)

    def _count(self, text: str) -> None:
        n = js_len(js_trim(text))
        ok = MIN_LEN <= n <= MAX_LEN
        self.query_one("#correct-count", Static).update(
            f"{n} characters ({MIN_LEN}–{MAX_LEN} allowed){'' if ok else '  ✗ out of range'}"
        )

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "save":
            self.action_save()
        else:
            self.dismiss(None)

    def action_save(self) -> None:
        self.dismiss(self.query_one(TextArea).text)

    def action_cancel(self) -> None:
        self.dismiss(None)
