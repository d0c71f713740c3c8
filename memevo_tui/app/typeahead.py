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
choose: the same chain, in the same order, priority bindings first. ``escape`` runs
its binding at once from a text box too (a text box has no use for it), so that the
key typed after it goes where ``escape`` sent the focus, not into the box.

``split_alt``: a terminal sends ESC and then ``m`` as the two bytes of alt+m; typed
quickly (in a browser tab, where the bytes come over a websocket, a quick typist
does), Textual reads them as alt+m, and a text box then inserts the ``m``. The
dashboard binds no alt key, so an alt key that nothing binds is taken for what it
was typed as: ``escape``, then the key.
"""

from __future__ import annotations

from typing import Any

from textual import events
from textual.app import App
from textual.widgets import DataTable, Input, Select, TextArea

from ..term.compat.textual import character_to_key, check_bindings

OWN_KEYS = (Input, TextArea, Select, DataTable)
"""Widgets that handle keys themselves before any binding: they get every key as usual."""


async def run_binding_now(app: App[Any], event: events.Event) -> bool:
    """Run the binding a fresh key press reaches; True if one ran (the key is used up)."""
    if not isinstance(event, events.Key) or event.is_forwarded:
        return False
    screen = app.screen
    if screen.maximized is not None:
        return False
    if isinstance(app.focused, OWN_KEYS) and not _leaves_the_box(app, event.key):
        return False
    # The app's own binding lookup, as it runs it for a key that bubbled back to it.
    return await check_bindings(app, event.key, priority=True) or await check_bindings(
        app, event.key
    )


def _leaves_the_box(app: App[Any], key: str) -> bool:
    """``escape``, bound above the focused text box, not by the box itself."""
    if key != "escape":
        return False
    active = app.screen.active_bindings.get(key)
    return active is not None and active.node is not app.focused


def split_alt(app: App[Any], event: events.Event) -> list[events.Key] | None:
    """``escape`` and the key, for an alt key that nothing binds; None otherwise."""
    if not isinstance(event, events.Key) or event.is_forwarded:
        return None
    name = event.key
    if not name.startswith("alt+") or name in app.screen.active_bindings:
        return None
    rest = name[4:]
    if rest.startswith("shift+") and len(rest) == 7:
        character = rest[6].upper()
    elif len(rest) == 1:
        character = rest
    else:
        return None  # alt with a named key (alt+up): a key of its own
    plain = character if character.isalnum() else character_to_key(character)
    return [events.Key("escape", "\x1b"), events.Key(plain, character)]
