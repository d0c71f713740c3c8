"""Validated reads: typed records, events, sources and figures; failing rows come back
as ``CorruptRow`` and never stop the others (§2.2). One class, in three parts:
``past.py`` (as of a past moment), ``records.py``, ``log.py`` (events, sources, figures)."""

from __future__ import annotations

from .log import LogReads
from .past import SLICE_SECONDS, safe_created_at

__all__ = ["SLICE_SECONDS", "Reads", "safe_created_at"]


class Reads(LogReads):
    """Everything the store reads."""
