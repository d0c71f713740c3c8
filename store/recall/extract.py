"""Local claim extraction from a compaction summary (STORE.md §5.2)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..js import fp, js_len, js_trim

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^(#{1,6})\s+(\S.*)$")
_BULLET = re.compile(r"^ {0,3}(?:[-*]|\d+[.)])\s+(?:\[([ xX])\] ?)?(.*)$")
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")
_BOLD = re.compile(r"\*\*([A-Za-z0-9_-]+(?: [A-Za-z0-9_-]+)*)\*\*")
_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("preference", re.compile(r"constraints\s*(?:&|and)\s*preferences|偏好|约束", re.I)),
    ("decision", re.compile(r"key decisions|关键决策|决定", re.I)),
    ("project_state", re.compile(r"progress|blocked|next steps|进展|进行中|阻塞|下一步", re.I)),
    ("fact", re.compile(r"critical context|关键上下文|环境信息", re.I)),
)


@dataclass(frozen=True, slots=True)
class Claim:
    kind: str
    content: str


def _clean(text: str) -> str:
    spans: list[str] = []

    def keep(m: re.Match[str]) -> str:
        body = m.group(2)
        if body.startswith(" ") and body.endswith(" ") and body.strip(" "):
            body = body[1:-1]
        spans.append(body)
        return f"\x00{len(spans) - 1}\x00"

    text = _CODE_SPAN.sub(keep, text)
    text = _BOLD.sub(r"\1", text)
    text = re.sub(r"\x00(\d+)\x00", lambda m: spans[int(m.group(1))], text)
    return js_trim(text)


def extract(summary: str, limit: int | None = 16) -> list[Claim]:
    """Claims a summary yields, in order, de-duplicated, at most ``limit``."""
    claims: list[Claim] = []
    seen: set[str] = set()
    sections: list[tuple[int, str | None, str]] = []  # (level, kind, task)
    fence: tuple[str, int] | None = None
    for line in re.split(r"\r?\n", summary):
        if fence is not None:
            char, length = fence
            stripped = line.lstrip(" ")
            if len(line) - len(stripped) <= 3:
                run = len(stripped) - len(stripped.lstrip(char))
                if run >= length and not stripped[run:].strip():
                    fence = None
            continue
        m = _FENCE.match(line)
        if m:
            fence = (m.group(1)[0], len(m.group(1)))
            continue
        m = _HEADING.match(line)
        if m:
            level, heading = len(m.group(1)), m.group(2)
            while sections and sections[-1][0] >= level:
                sections.pop()
            kind = next((k for k, pattern in _RULES if pattern.search(heading)), None)
            if kind is None and sections:
                kind = sections[-1][1]
            sections.append((level, kind, js_trim(heading)))
            continue
        if not sections or sections[-1][1] is None:
            continue
        m = _BULLET.match(line)
        if not m:
            continue
        _, kind, task = sections[-1]
        assert kind is not None
        box, text = m.group(1), _clean(m.group(2))
        if kind == "project_state":
            tag = "done" if box in ("x", "X") else "pending" if box == " " else task
            text = f"[{tag}] {text}"
        if "[REDACTED" in text or not 4 <= js_len(text) <= 800:
            continue
        key = fp(f"{kind}:{text}")
        if key in seen:
            continue
        seen.add(key)
        claims.append(Claim(kind, text))
        if limit is not None and len(claims) >= limit:
            break
    return claims
