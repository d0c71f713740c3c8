"""Command-line verbs: a scriptable mirror of pi's ``/memory`` command.

Exit codes: 0 done, 1 refused by the store's rules, 2 could not run. On a terminal,
tables fit the width; piped, every line is whole (tab-separated, full ids, nothing
clipped) and counts and footers go to stderr, so ``wc``, ``cut`` and ``awk`` see
only records.
"""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from .exits import EXIT_CANNOT_RUN, EXIT_OK, EXIT_REFUSED
from .parser import SESSIONS_HELP, add_verbs

if TYPE_CHECKING:
    from store import MemoryStore


def execute(store_opener: Callable[[], Awaitable[MemoryStore]], args: argparse.Namespace) -> int:
    """Run a verb (``run.execute``): its modules (the past, recall, export) are
    imported only when a verb runs, never for the dashboard."""
    from .run import execute as run

    return run(store_opener, args)


__all__ = ["EXIT_CANNOT_RUN", "EXIT_OK", "EXIT_REFUSED", "SESSIONS_HELP", "add_verbs", "execute"]
