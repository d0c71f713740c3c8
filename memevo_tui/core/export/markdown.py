"""Export's Markdown: store text redacted and escaped so it reads as written and obeys
none of it, and the lines of a record, an event and a source. No Textual here."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from store import Memory
from store import redact_text as redact

from ..glyphs import STATE_MEANINGS
from ..text import UNSAFE, iso_day, visible

KIND_HEADINGS = {
    "fact": "Facts",
    "preference": "Preferences",
    "decision": "Decisions",
    "project_state": "Project states",
}


_MD_INLINE = re.compile(r"([\\`*_\[\]<>|~&!@])")
_MD_LINE_START = re.compile(r"^(\s*)(\d+)?([#+\-=>.)])", re.M)
_LINKABLE = re.compile(
    r"(?:\b[a-z][a-z0-9+.-]*://|\bwww\.)[^\s<>`]+"  # what a forge turns into a link
    r"|[\w.+-]+@[\w-]+(?:\.[\w-]+)+",  # and an address it turns into a mailto: link
    re.IGNORECASE,
)
_TRAILING = ".,:;!?'\")]}*_~"
"""Punctuation after a URL that reads as the sentence's, not the URL's."""


def _url_end(url: str) -> str:
    """``url`` without the sentence's punctuation after it (a ")" it opened stays)."""
    while url and url[-1] in _TRAILING:
        if url[-1] == ")" and url.count("(") >= url.count(")"):
            break
        url = url[:-1]
    return url


def md_text(text: str) -> str:
    """Store text, redacted, as Markdown that shows it as written and obeys none of it:
    markup characters escaped (``@`` too, so a forge mentions nobody), and each URL or
    address as inline code, so that no forge makes it a link."""
    clean = visible(redact(text), keep_newlines=True).replace("\t", " ")
    parts: list[str] = []
    at = 0
    for m in _LINKABLE.finditer(clean):
        url = _url_end(m.group(0))
        parts.append(_MD_INLINE.sub(r"\\\1", clean[at : m.start()]))
        parts.append(md_code(url))
        at = m.start() + len(url)
    parts.append(_MD_INLINE.sub(r"\\\1", clean[at:]))
    return _MD_LINE_START.sub(_escape_line_start, "".join(parts))


def _escape_line_start(m: re.Match[str]) -> str:
    lead, number, mark = m.group(1), m.group(2), m.group(3)
    if number is None and mark in ".)":
        return m.group(0)  # a line starting "." or ")" is no block marker
    return f"{lead}{number or ''}\\{mark}"


def md_code(text: str) -> str:
    """An id or label as inline code (redacted; backticks cannot close it early)."""
    clean = UNSAFE.sub("\ufffd", redact(text))
    fence = "``" if "`" in clean else "`"
    pad = " " if clean.startswith("`") or clean.endswith("`") else ""
    return f"{fence}{pad}{clean}{pad}{fence}"


def group_records(
    records: Iterable[Memory],
) -> Iterator[tuple[str, list[tuple[str, list[Memory]]]]]:
    by_origin: dict[str, dict[str, list[Memory]]] = {}
    for m in records:
        by_origin.setdefault(m.scope, {}).setdefault(m.kind, []).append(m)
    for origin in sorted(by_origin):
        kinds = by_origin[origin]
        yield (
            origin,
            [(k, kinds[k]) for k in KIND_HEADINGS if k in kinds]
            + [(k, v) for k, v in sorted(kinds.items()) if k not in KIND_HEADINGS],
        )


def md_event(e: dict[str, Any]) -> str:
    at, actor, reason = (str(e.get(k, "")) for k in ("at", "actor", "reason"))
    return f"  - {md_text(at)} {md_text(actor)}: {md_text(reason)}\n"


def md_source(s: dict[str, Any]) -> str:
    data = s.get("data")
    kind = str(data.get("kind", "?")) if isinstance(data, dict) else "corrupt"
    state = md_text(str(s.get("state")))
    return f"  - source {md_code(str(s.get('id')))} ({md_text(kind)}, {state})\n"


def md_time_left(m: Memory) -> str:
    """How fresh a record is, in words a reader takes at once: "aging, dormant in 12
    days" (a bare "freshness 0.71" read as "71% fresh")."""
    if m.status in ("forgotten", "conflicted"):
        return "never recalled"
    left = m.days_until_dormant
    if left is None:
        return "pinned: never goes dormant"
    if left <= 0:
        return f"dormant (confirmed {m.age_days:.0f} days ago)"
    days = max(1, round(left))
    return f"{m.state}, dormant in {days} day{'s' if days != 1 else ''}"


def md_record(m: Memory) -> str:
    q = m.quality
    text = md_text(m.content).replace("\n", "  \n  ")
    feedback = ", ".join(s.verdict for s in (m.utility, m.accuracy) if s is not None)
    lines = [
        f"- {text}",
        f"  {md_code(m.id)} · {m.status} · {m.state}: {STATE_MEANINGS.get(m.state, '')}",
        f"  evidence {q.basis}/{q.method} · updated {iso_day(m.updated_at)}"
        f" · confirmed {iso_day(q.confirmed_at)} · {md_time_left(m)}",
        f"  feedback: {feedback or 'none'}"
        + (
            f" · search terms: {', '.join(md_text(t) for t in m.search_terms)}"
            if m.search_terms
            else ""
        ),
    ]
    return "  \n".join(lines) + "\n"


# ------------------------------------------------------------------ files
