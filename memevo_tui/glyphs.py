"""Words and glyphs for a record's standing: colour is never the only signal."""

from __future__ import annotations

from store import CorruptRow, Memory

STATE_GLYPHS: dict[str, str] = {
    "fresh": "●",
    "aging": "◐",
    "dormant": "○",
    "pinned": "◆",
    "forgotten": "✗",
    "conflicted": "≠",
    "disputed": "!",
    "corrupt": "¤",
}

STATE_MEANINGS: dict[str, str] = {
    "fresh": "confirmed recently enough to be injected at full weight",
    "aging": "past half its kind's dormancy horizon; still injected, with a caution",
    "dormant": "past its kind's horizon: not injected automatically, still searchable",
    "pinned": "pinned by you: always fresh, never dormant, never changed by learning",
    "forgotten": "a tombstone: kept for history and undo, never recalled",
    "conflicted": "quarantined as contradicting another record until resolved",
    "disputed": "marked incorrect by feedback; excluded from recall",
    "corrupt": "the row fails validation; shown so you know, never acted upon",
}

KIND_LABELS = {
    "fact": "fact",
    "preference": "pref",
    "decision": "decision",
    "project_state": "state",
}


def state_of(row: Memory | CorruptRow) -> str:
    return "corrupt" if isinstance(row, CorruptRow) else row.state


def badge(state: str) -> str:
    return f"{STATE_GLYPHS[state]} {state}"


BAR_CELLS = 5
_EIGHTHS = " ▏▎▍▌▋▊▉█"


def freshness_bar(freshness: float, cells: int = BAR_CELLS) -> str:
    """A bar of ``cells`` cells, full at freshness 1."""
    eighths = round(max(0.0, min(1.0, freshness)) * cells * 8)
    full, part = divmod(eighths, 8)
    bar = "█" * full + (_EIGHTHS[part] if part and full < cells else "")
    return bar.ljust(cells, "·")
