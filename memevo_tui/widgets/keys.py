"""The key a binding has now: its default, or what the user's key map gave it."""

from __future__ import annotations

from typing import Any

from textual.app import App

from ..term.compat.textual import keymap_of

RELOAD = ("app.reload", "ctrl+r")


def key_for(app: App[Any], binding: tuple[str, str]) -> str:
    """The first key of ``binding`` (its id and default key) after the user's key map."""
    binding_id, default = binding
    keys = keymap_of(app).get(binding_id, "")
    return keys.split(",")[0].strip() or default


def reopen_hint(app: App[Any]) -> str:
    """What to press for a store that was replaced on disk."""
    return f"{key_for(app, RELOAD)} reopens it"
