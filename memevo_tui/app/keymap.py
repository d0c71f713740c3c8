"""The user's key overrides (binding id -> keys, from ``keymap.json``), checked before use.

Every problem is named once at start-up: an unknown binding id, a key that cannot
be parsed, or a key another binding already uses where both are active. An
override that clashes is not applied, so a typo can never turn a harmless key
into a destructive one.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from textual.binding import Binding, BindingType
from textual.keys import Keys, key_to_character

from ..term.compat.textual import character_to_key

MODIFIERS = frozenset(("ctrl", "shift", "alt", "meta", "super", "hyper"))
KEY_NAMES = frozenset(k.value for k in Keys if "+" not in k.value and not k.value.startswith("<"))
RENAMED = {
    "app.toggle_hidden": "memory.toggle_hidden",
    "app.sort": "memory.sort",
    "app.reverse_sort": "memory.reverse_sort",
    "sort.cancel": "menu.cancel",
}
"""Ids of earlier versions, and what they are now."""
FIXED_KEYS = ("ctrl+q", "ctrl+c", "ctrl+p")
"""The App's own keys (quit, copy, palette): active everywhere, never remapped here."""


def keymap_path() -> Path:
    explicit = os.environ.get("MEMEVO_KEYMAP")
    if explicit:
        return Path(explicit).expanduser()
    base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return base / "memevo-tui" / "keymap.json"


def load_keymap(path: Path) -> tuple[dict[str, str], str | None]:
    """Binding id -> keys, from a JSON object; an error message when it is unusable."""
    if not path.is_file():
        return {}, None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return {}, f"Ignoring {path}: {exc}"
    if not isinstance(data, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in data.items()
    ):
        return {}, f"Ignoring {path}: expected an object of binding id to keys"
    return dict(data), None


PALETTE = Binding(
    "ctrl+p",
    "command_palette",
    "palette",
    id="app.palette",
    show=False,
    priority=True,
    tooltip="The command palette: every action by name",
)
"""The app's palette key, declared here so help lists it and a key map can move it."""


def parse_keys(keys: str) -> list[str] | None:
    """Textual's names for a comma-separated key list, or None if a key is not one."""
    out = []
    for raw in keys.split(","):
        key = raw.strip()
        if not key:
            return None
        if len(key) == 1:
            key = character_to_key(key)
        *mods, base = key.split("+")
        if not base or any(m not in MODIFIERS for m in mods):
            return None
        if base not in KEY_NAMES and len(base) != 1 and key_to_character(base) is None:
            return None
        out.append(key)
    return out


def _keys_of(binding: Binding, overrides: Mapping[str, list[str]]) -> list[str]:
    if binding.id and binding.id in overrides:
        return overrides[binding.id]
    return parse_keys(binding.key) or []


def check_keymap(
    wanted: Mapping[str, str], scopes: Mapping[str, Sequence[BindingType]]
) -> tuple[dict[str, str], list[str]]:
    """The overrides that can be applied, and one line per problem with the others."""
    bindings = [b for group in scopes.values() for b in group if isinstance(b, Binding)]
    known = {b.id for b in bindings if b.id}
    problems: list[str] = []
    parsed: dict[str, list[str]] = {}
    renamed = {RENAMED.get(i, i): keys for i, keys in wanted.items()}
    problems += [f"{old} is now {RENAMED[old]} (applied)" for old in wanted if old in RENAMED]
    wanted = renamed
    for binding_id, keys in wanted.items():
        if binding_id not in known:
            problems.append(f"{binding_id}: no such binding id (see ? for the list)")
            continue
        names = parse_keys(keys)
        if names is None:
            problems.append(f"{binding_id}: {keys!r} is not a key Textual knows")
            continue
        parsed[binding_id] = names
    # Drop the overrides that clash, until none do (one drop can free a key for another).
    while True:
        clashes = dict(_clashes(parsed, scopes))
        if not clashes:
            break
        for binding_id, line in clashes.items():
            parsed.pop(binding_id, None)
            problems.append(line)
    return {binding_id: wanted[binding_id] for binding_id in parsed}, problems


def _clashes(
    parsed: Mapping[str, list[str]], scopes: Mapping[str, Sequence[BindingType]]
) -> Iterable[tuple[str, str]]:
    for where, group in scopes.items():
        users: dict[str, list[Binding]] = {}
        for b in group:
            if isinstance(b, Binding):
                for key in _keys_of(b, parsed):
                    users.setdefault(key, []).append(b)
        fixed = set(FIXED_KEYS) if where != "editor" else set()
        for key, owners in users.items():
            ids = list(dict.fromkeys(b.id or b.action for b in owners))
            for b in owners:
                if not (b.id and b.id in parsed and key in parsed[b.id]):
                    continue
                others = [i for i in ids if i != b.id]
                if others or key in fixed:
                    taken = others[0] if others else "the app"
                    yield b.id, (f"{b.id}: {key!r} is already {taken}'s key ({where}); not applied")
