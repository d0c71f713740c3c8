"""Keys typed ahead take effect in order.

Textual delivers a key to the focused widget and runs a binding only once the key
has bubbled back up to the app; by then the app may already have delivered the
next keys, typed in the same burst (a fast typist, a paste of key presses over
ssh, or keys pressed while a 100,000-record load keeps the app busy). So ``/``
followed at once by ``postgres`` would give the letters to the list, where ``p``
means pin, instead of to the filter box ``/`` opens.

``run_binding_now`` runs the binding a key would reach at the moment the key is
taken from the queue, when the focused widget has no key handling of its own (text
boxes do: they type the key first). The binding chosen is the one bubbling would
choose: the same chain, in the same order, priority bindings first.
"""

from __future__ import annotations

from typing import Any

from textual import events
from textual.app import App
from textual.widgets import DataTable, Input, Select, TextArea

OWN_KEYS = (Input, TextArea, Select, DataTable)
"""Widgets that handle keys themselves before any binding: they get every key as usual."""


async def run_binding_now(app: App[Any], event: events.Event) -> bool:
    """Run the binding a fresh key press reaches; True if one ran (the key is used up)."""
    if not isinstance(event, events.Key) or event.is_forwarded:
        return False
    screen = app.screen
    if screen.maximized is not None or isinstance(app.focused, OWN_KEYS):
        return False
    # The app's own binding lookup, as it runs it for a key that bubbled back to it.
    return await app._check_bindings(event.key, priority=True) or await app._check_bindings(
        event.key
    )
