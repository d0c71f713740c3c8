"""Every use of a private API, in this package and nowhere else.

``compat.textual`` holds what the dashboard takes from Textual's private API (its input
parser, output thread and Linux driver, the app's binding lookup, its key map and
key-name table, one handler of ``TabbedContent``). This module holds the one piece of
asyncio's, and imports no Textual, so the shared state (``core/state/``) may use it.
``tests/test_compat.py`` checks each piece against what is installed, so an upgrade
that moves one fails there, loudly, and not at a user's key.
"""

from __future__ import annotations

import asyncio

__all__ = ["loop_has_ready"]


def loop_has_ready(loop: asyncio.AbstractEventLoop) -> bool:
    """True while ``loop`` has callbacks ready to run (CPython's queue of them: a
    private attribute; a loop without it reads as idle)."""
    return bool(getattr(loop, "_ready", None))
