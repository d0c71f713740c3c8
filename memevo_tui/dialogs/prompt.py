"""A one-line question: an origin to adopt records into, a moment for the time dial,
a file to export to."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import Input, Static

from store import iso

from .dialog import Dialog


class PromptScreen(Dialog[str | None]):
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
        super().on_mount()
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)


def export_prompt(count: int, what: str, now_ms: float, fmt: str) -> PromptScreen:
    """Where to export ``count`` records as ``fmt``: by default a new file in the current
    directory, named for the day."""
    day = iso(now_ms)[:10]
    suffix = ".md" if fmt == "markdown" else ".jsonl"
    base = f"memevo-export-{day}"
    name, n = Path(base + suffix), 2
    while name.exists():
        name, n = Path(f"{base}-{n}{suffix}"), n + 1
    if fmt == "markdown":
        title = f"Share {count:,} {what} record(s) as Markdown, in the file"
        what_it_is = "Markdown to read and share, every text redacted as pi redacts."
    else:
        title = f"Back up {count:,} {what} record(s) as JSONL, in the file"
        what_it_is = "JSONL that loses nothing: the records with their events and sources."
    return PromptScreen(
        title,
        value=str(name),
        hint=(
            f"{what_it_is} A name without a directory is written in {Path.cwd()}; an "
            "existing file is never overwritten. enter exports, esc cancels."
        ),
    )
