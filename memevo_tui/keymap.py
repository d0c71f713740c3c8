"""The user's key overrides: binding id -> keys, from ``keymap.json``."""

from __future__ import annotations

import json
import os
from pathlib import Path


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
