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
    "disputed": "marked incorrect by you (stored as conflicted); excluded from recall",
    "corrupt": "the row fails validation; shown so you know, never acted upon",
}

KIND_CODES = {"fact": "F", "preference": "P", "decision": "D", "project_state": "S"}
"""One letter per kind, for the list (the legend is in ?)."""

EVIDENCE_CODES = {
    "manual_correction": "m",
    "user_statement": "u",
    "tool_observation": "t",
    "summary": "s",
    "unknown": "?",
}
"""One letter per evidence basis, for the list."""

VERDICT_GLYPHS = {"useful": "+", "unhelpful": "-", "accurate": "✓", "incorrect": "✗"}

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


def freshness_bar(share: float, cells: int = BAR_CELLS) -> str:
    """A bar of ``cells`` cells, full at ``share`` 1, empty (dots) at 0."""
    eighths = round(max(0.0, min(1.0, share)) * cells * 8)
    full, part = divmod(eighths, 8)
    bar = "█" * full + (_EIGHTHS[part] if part and full < cells else "")
    return bar.ljust(cells, "·")


def time_left(m: Memory) -> float:
    """The share of its kind's dormancy horizon a record has left: 1 just confirmed (and
    always when pinned), ½ when it starts aging, 0 once dormant. This is what the bar
    draws: freshness itself never falls below its kind's floor (0.5 to 0.7)."""
    left = m.days_until_dormant
    if left is None:
        return 1.0
    horizon = left + m.age_days
    return left / horizon if horizon > 0 else 0.0


def age(days: float) -> str:
    """A short age: ``now``, ``5h``, ``3d``, ``11w``, ``8mo``, ``2y``."""
    if days < 1 / 24:
        return "now"
    if days < 1:
        return f"{int(days * 24)}h"
    if days < 14:
        return f"{int(days)}d"
    if days < 120:
        return f"{int(days / 7)}w"
    if days < 730:
        return f"{int(days / 30.44)}mo"
    return f"{int(days / 365.25)}y"
