"""Textual's private API, every use of it.

The dashboard needs a few things Textual does not offer publicly: its input parser
(to make pastes safe), its output thread and Linux driver (to end the process when
the terminal goes away), the app's binding lookup (so keys typed ahead take effect in
order), its key map and key-name table, and one message handler of
``TabbedContent``. Each is reached through this module only, and
``tests/test_compat.py`` checks each against the installed Textual, by name
and shape, so an upgrade that moves one fails there, loudly, and not at a user's key.

Checked against Textual 8.2.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from textual._xterm_parser import XTermParser
from textual.drivers import linux_driver
from textual.drivers._writer_thread import WriterThread
from textual.drivers.linux_driver import LinuxDriver
from textual.keys import _character_to_key
from textual.widgets import TabbedContent, TabPane

if TYPE_CHECKING:
    from textual.app import App
    from textual.driver import Driver

__all__ = [
    "DRIVER_PRIVATE",
    "WRITER_PRIVATE",
    "LateFocusTabs",
    "LinuxDriver",
    "WriterThread",
    "XTermParser",
    "character_to_key",
    "check_bindings",
    "driver_of",
    "keymap_of",
    "use_writer_thread",
]

WRITER_PRIVATE = ("_queue", "_file")
"""What ``guarded.GuardedWriter`` reads of Textual's output thread."""
DRIVER_PRIVATE = (
    "_writer_thread",
    "_loop",
    "_app",
    "_file",
    "_auto_restart",
    "_debug",
    "_sigtstp_application",
    "_sigcont_application",
)
"""What ``guarded.GuardedDriver`` reads or overrides of Textual's Linux driver."""


def use_writer_thread(writer: type[WriterThread]) -> None:
    """Make Textual's Linux driver start ``writer`` as its output thread (it looks the
    class up by name in its module when application mode starts)."""
    linux_driver.WriterThread = writer  # type: ignore[attr-defined]


async def check_bindings(app: App[Any], key: str, *, priority: bool = False) -> bool:
    """The app's own binding lookup, as it runs it for a key that bubbled back to it:
    True if a binding for ``key`` ran."""
    return await app._check_bindings(key, priority=priority)


def character_to_key(character: str) -> str:
    """Textual's key name for a typed character (``"+"`` is ``plus``)."""
    return _character_to_key(character)


def keymap_of(app: App[Any]) -> Mapping[str, str]:
    """The key map ``set_keymap`` stored: binding id to its keys."""
    return app._keymap


def driver_of(app: App[Any]) -> Driver | None:
    """The driver the app runs on (None before it starts)."""
    return app._driver


class LateFocusTabs(TabbedContent):
    """Tabs that ignore late news of a focused pane. Textual shows the tab of a widget
    that was given the focus when the news arrives; by then a key typed in the same
    burst may have shown another tab (esc from a text box, then m): that news is late
    and is ignored."""

    def _on_tab_pane_focused(self, event: TabPane.Focused) -> None:
        focused = self.app.focused
        if focused is not None and event.tab_pane not in focused.ancestors:
            event.prevent_default()  # Textual's own handler (next in the MRO) is skipped
            event.stop()
