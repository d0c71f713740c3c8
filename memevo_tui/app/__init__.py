"""The Textual app: ``MemevoApp`` (``app.py``), its main screen (``dashboard.py``), the
record menu, the key groups and the user's key map, the command palette, the registry
of views and screens, keys typed ahead, and where the stylesheets are.

``from memevo_tui.app import MemevoApp`` imports the app when it is asked for, so that
importing the registry or the key map (the CLI's ``keys``) does not build the app.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .app import MemevoApp

__all__ = ["MemevoApp"]


def __getattr__(name: str) -> Any:
    if name == "MemevoApp":
        from .app import MemevoApp

        return MemevoApp
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
