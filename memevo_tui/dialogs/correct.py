"""Correcting a record's text: in the user's own editor, or in a modal one."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual.app import App, ComposeResult, SuspendNotSupported
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.keys import format_key
from textual.widgets import Button, Static, TextArea

from store import js_len, js_trim

from ..widgets.keys import key_for
from .dialog import Dialog

MIN_LEN, MAX_LEN = 4, 800


class CorrectScreen(Dialog[str | None]):
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
            yield TextArea(
                self.initial,
                id="correct-text",
                classes="-body",
                soft_wrap=True,
                show_line_numbers=False,
            )
            yield Static(id="correct-count", markup=False)
            yield Static(Text(self._keys()), id="correct-keys")
            with Horizontal(id="dialog-buttons"):
                yield Button("Save (ctrl+s)", variant="primary", id="save")
                yield Button("Cancel (esc)", id="cancel")

    def _keys(self) -> str:
        """The editor's keys, said (Textual's text box keeps its own: ctrl+a is the
        line's start there, f7 selects all)."""
        save = key_for(self.app, ("correct.save", "ctrl+s"))
        cancel = key_for(self.app, ("correct.cancel", "escape"))
        return (f"{format_key(save)} save · {format_key(cancel)} cancel · f7 select all · "
                "ctrl+z undo · ctrl+y redo · ctrl+a line start")  # fmt: skip

    def on_mount(self) -> None:
        super().on_mount()
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


EDITOR_GRACE = 2.0
"""Seconds an editor is given to end after SIGTERM before it is killed."""

_EDITORS: set[asyncio.subprocess.Process] = set()
"""The editors running now (one at most): a signal or a lost terminal ends them."""


def end_editors() -> None:
    """End every editor this process runs (SIGTERM, then SIGKILL after
    ``EDITOR_GRACE``): the app is leaving, and must not wait for a person who has gone.
    Safe from a signal handler's callback; what is left is ended as the app leaves."""
    for proc in list(_EDITORS):
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.terminate()


async def _wait_or_kill(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        proc.terminate()
    try:
        await asyncio.wait_for(proc.wait(), EDITOR_GRACE)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        await proc.wait()


async def run_editor(app: App[Any], editor: str, text: str) -> str | None:
    """``text`` as the user left it in ``editor``, or None (a toast says why).

    The app is suspended while the editor runs, so it has the terminal to itself, and
    draws nothing (a batch of updates held until it is back); headless (tests) there is
    no terminal to hand over, and it simply runs. The editor is awaited, never blocked
    on: SIGTERM, SIGHUP and a lost terminal are heard meanwhile, and end it
    (``end_editors``), and an app that leaves while it runs ends it too.
    """
    with tempfile.TemporaryDirectory(prefix="memevo-edit-") as tmp:
        path = Path(tmp) / "memory.txt"
        path.write_text(text + "\n", encoding="utf-8")
        command = [*shlex.split(editor), str(path)]
        try:
            with contextlib.ExitStack() as stack:
                if not app.is_headless:
                    stack.enter_context(app.batch_update())
                    stack.enter_context(app.suspend())
                proc = await asyncio.create_subprocess_exec(*command)
                _EDITORS.add(proc)
                try:
                    returncode = await proc.wait()
                finally:
                    _EDITORS.discard(proc)
                    await asyncio.shield(_wait_or_kill(proc))
        except (OSError, ValueError, SuspendNotSupported) as exc:
            app.notify(f"Could not run the editor {editor!r}: {exc}", severity="error",
                       markup=False)  # fmt: skip
            return None
        if returncode != 0:
            app.notify(
                f"The editor exited with status {returncode}: nothing written",
                severity="warning",
            )
            return None
        try:
            return path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            app.notify(f"Could not read what the editor saved: {exc}", severity="error",
                       markup=False)  # fmt: skip
            return None


def edit_correction(
    app: App[Any], memory_id: str, text: str, done: Callable[[str | None], None]
) -> None:
    """Let the user rewrite a record's text: in ``$VISUAL`` or ``$EDITOR`` when set,
    else (and in a browser) in ``CorrectScreen``. ``done`` gets the text, or None."""
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    if editor and not app.is_web:

        async def edit() -> None:
            done(await run_editor(app, editor, text))

        app.run_worker(edit(), group="editor", exclusive=True, exit_on_error=False)
    else:
        app.push_screen(CorrectScreen(memory_id, text), done)
