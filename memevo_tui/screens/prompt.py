"""A one-line question: an origin to adopt records into, a moment for the time dial,
a file to export to."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from store._js import iso


class PromptScreen(ModalScreen[str | None]):
    """Dismisses with the text entered (enter), or None (esc)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="prompt.cancel"),
    ]

    def __init__(
        self, title: str, *, placeholder: str = "", value: str = "", hint: str = ""
    ) -> None:
        super().__init__()
        self.title_text = title
        self.placeholder = placeholder
        self.value = value
        self.hint = hint

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(self.title_text, id="dialog-title", markup=False)
            yield Input(self.value, placeholder=self.placeholder, id="prompt-input")
            if self.hint:
                yield Static(self.hint, id="prompt-hint", markup=False)

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)


def export_prompt(count: int, what: str, now_ms: float) -> PromptScreen:
    """Where to export ``count`` records: a new file in the current directory by default."""
    day = iso(now_ms)[:10]
    base = Path.cwd() / f"memevo-export-{day}"
    name, n = base.with_suffix(".jsonl"), 2
    while name.exists():
        name, n = Path(f"{base}-{n}.jsonl"), n + 1
    return PromptScreen(
        f"Export {count:,} {what} record(s) to",
        value=str(name),
        hint=(
            "A name ending .md writes Markdown to read and share (every text redacted as pi "
            "redacts); any other, JSONL that loses nothing (with events and sources). An "
            "existing file is never overwritten. enter exports, esc cancels."
        ),
    )
