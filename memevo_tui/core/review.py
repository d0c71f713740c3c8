"""The review queue: the records that need a human, each with why, most urgent first.

Pure functions over the loaded records, the learning sources and the conflict
events; no Textual, nothing written. An item the user chose to keep as it is
(``k``) stays out of the queue until the record changes (its key holds the
revisions).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from store import NOT_STATED, CorruptRow, Memory, Source, best_passage, fp, searched_text

from .secrets import named_secrets as secrets_in
from .text import one_line
from .verbs import UNFAVOURABLE

Row = Memory | CorruptRow

REASONS: dict[str, str] = {
    "secret": "holds what looks like a secret (a key, a token, a password): pi injects it "
    "into prompts sent to the model provider; correct it without the secret, or forget it, "
    "and run memevo-tui secrets for every other copy",
    "costly": "injected often while marked unhelpful or incorrect: pi kept putting it in "
    "front of the model (n lists the turns); correct it or forget it",
    "disputed": "marked incorrect: correct it, resolve it (accurate), or forget it",
    "conflicted": "contradicts another record: resolve the one that is right",
    "not-grounded": "not grounded in its source: no passage of it states this (enter shows "
    "the closest); correct it or forget it if the model made it up",
    "dormant-soon": "goes dormant within 7 days: pin it if it still matters",
    "duplicate": "the same text in another origin",
    "near-duplicate": "nearly the same text as another record of its origin",
    "unhelpful": "marked unhelpful",
    "failed-source": "learned from a source whose learning run failed",
    "low-quality": "a low quality factor: recall ranks it low",
}
"""Every reason, most urgent first, with what to do about it."""
ORDER = {reason: i for i, reason in enumerate(REASONS)}
URGENT = frozenset(("costly", "disputed", "conflicted"))
"""The reasons the queue shows as urgent."""
COSTLY = 2
"""Replayed turns that injected a record marked unhelpful or incorrect before it is
worth a look (the more, the more urgent)."""
SOON_DAYS = 7.0
SOON_SHARE = 0.25
"""Of its kind's life, the last share in which going dormant is news (a project state's
last 1.75 days; a kind with a long life, its last week)."""
LOW_FACTOR = 0.6
OVERLAP = 0.7
"""Share of distinct words two texts of one origin have in common to count as near-duplicates."""
RARE = 50
"""A word in more records of an origin than this is not rare: near-duplicates are looked
for through a record's rarest words only, and a common word would pair every record
with every other (at 100,000 records of a few templates, hours of work)."""
_WORD = re.compile(r"[\w.:/-]{2,}", re.UNICODE)


@dataclass(frozen=True, slots=True)
class Item:
    """One entry of the queue: a record (or a pair) and why it is there."""

    reason: str
    records: tuple[Memory, ...]
    why: str
    urgency: float

    @property
    def key(self) -> str:
        """Stable while the records are unchanged: what "keep as it is" remembers."""
        ids = ",".join(f"{m.id}@{m.revision}" for m in self.records)
        return f"{self.reason}:{ids}"

    @property
    def first(self) -> Memory:
        return self.records[0]


def _soon(days: float) -> str:
    """``2 hours``, ``1 day``, ``3.5 days``."""
    if days < 1:
        hours = max(1, round(days * 24))
        return f"{hours} hour{'s' if hours != 1 else ''}"
    return "1 day" if round(days, 1) == 1 else f"{days:.1f} days"


def words(text: str) -> frozenset[str]:
    return frozenset(w.casefold().strip(".:") for w in _WORD.findall(text))


def overlap(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def _near_duplicates(active: Sequence[Memory]) -> Iterable[tuple[Memory, Memory, float]]:
    """Pairs of one origin whose texts share most of their words, found through each
    text's three rarest words (those in at most ``RARE`` records of the origin)."""
    by_scope: dict[str, list[Memory]] = defaultdict(list)
    for m in active:
        by_scope[m.scope].append(m)
    for group in by_scope.values():
        bags = [words(m.content) for m in group]
        postings: dict[str, list[int]] = defaultdict(list)
        for i, bag in enumerate(bags):
            for w in bag:
                postings[w].append(i)
        seen: set[tuple[int, int]] = set()  # the pairs found (few), not every pair tried
        for i, bag in enumerate(bags):
            if len(bag) < 4:
                continue
            for w in sorted(bag, key=lambda w: len(postings[w]))[:3]:  # its rarest words
                if len(postings[w]) > RARE:
                    break  # the rest are commoner still
                for j in postings[w]:
                    pair = (min(i, j), max(i, j))
                    if j == i or pair in seen:
                        continue
                    share = overlap(bags[pair[0]], bags[pair[1]])
                    if share < OVERLAP:
                        continue
                    seen.add(pair)
                    a, b = group[pair[0]], group[pair[1]]
                    if fp(a.content) != fp(b.content):
                        yield a, b, share


def build(
    rows: Sequence[Row],
    sources: Mapping[str, Source],
    pairs: Sequence[tuple[str, str]],
    kept: set[str] = frozenset(),  # type: ignore[assignment]
    injected: Mapping[str, int] | None = None,
) -> list[Item]:
    """The queue, most urgent first (``pairs``: records conflicted with each other;
    ``injected``: how many replayed turns injected each record, once known)."""
    records = [r for r in rows if isinstance(r, Memory)]
    by_id = {m.id: m for m in records}
    active = [m for m in records if m.active]
    items: list[Item] = []
    taken: set[str] = set()

    def add(reason: str, group: tuple[Memory, ...], why: str, rank: float = 0.0) -> None:
        items.append(Item(reason, group, why, ORDER[reason] + rank))
        taken.update(m.id for m in group)

    live = [m for m in records if m.status != "forgotten"]
    for i, leaked in secrets_in([m.content for m in live]).items():
        add("secret", (live[i],), f"holds {leaked}: {REASONS['secret'].split(': ', 1)[1]}")
    for m in records:
        turns = injected.get(m.id, 0) if injected else 0
        verdicts = [v.verdict for v in (m.utility, m.accuracy) if v is not None]
        bad = [v for v in verdicts if v in UNFAVOURABLE]
        if turns >= COSTLY and bad and m.status != "forgotten":
            add("costly", (m,), f"injected in {turns} turns of pi's sessions, marked "
                f"{' and '.join(bad)}: correct it or forget it", 1 / (1 + turns))  # fmt: skip
    for m in records:
        if m.disputed and m.status != "forgotten":
            add("disputed", (m,), REASONS["disputed"])
    for a_id, b_id in pairs:
        a, b = by_id.get(a_id), by_id.get(b_id)
        live = [m for m in (a, b) if m is not None and m.status == "conflicted" and not m.disputed]
        if live:
            add("conflicted", tuple(live), REASONS["conflicted"])
    for m in records:
        if m.status == "conflicted" and not m.disputed and m.id not in taken:
            add("conflicted", (m,), REASONS["conflicted"])
    for m in active:
        left, horizon = m.days_until_dormant, m.horizon
        # News only near the end of its kind's life (a fresh project state, whose whole
        # life is 7 days, is not); what losing it costs ranks first: a useful verdict,
        # or pi injecting it often
        if left is not None and horizon and 0 < left <= min(SOON_DAYS, horizon * SOON_SHARE):
            turns = injected.get(m.id, 0) if injected else 0
            useful = m.utility is not None and m.utility.verdict == "useful"
            valued = useful or turns >= COSTLY
            why = "marked useful, " if useful else f"injected in {turns} turns, " if valued else ""
            add("dormant-soon", (m,), f"{why}goes dormant in {_soon(left)}: pin it if it "
                "still matters", (0.0 if valued else 0.5) + left / SOON_DAYS / 2)  # fmt: skip
    by_text: dict[str, list[Memory]] = defaultdict(list)
    for m in active:
        by_text[fp(m.content)].append(m)
    for group in by_text.values():
        if len({m.scope for m in group}) > 1:
            add("duplicate", tuple(group[:2]), REASONS["duplicate"])
    for a, b, share in _near_duplicates(active):
        add("near-duplicate", (a, b), f"{share:.0%} of their words in common", 1 - share)
    for m in active:
        if m.utility is not None and m.utility.verdict == "unhelpful":
            add("unhelpful", (m,), REASONS["unhelpful"])
        source = sources.get(m.source_entry_id) or (
            sources.get(m.evidence.source_id) if m.evidence else None
        )
        if source is not None and m.evidence is not None and m.evidence.method == "model":
            found = _ungrounded(m, source)
            if found is not None:
                add("not-grounded", (m,), found)
        if source is not None and source.state == "failed":
            code = f" ({source.last_error})" if source.last_error else ""
            add("failed-source", (m,), f"learned from {source.id}, whose run failed{code}")
        if not m.pinned and not m.dormant and (factor := m.quality.factor) < LOW_FACTOR:
            add("low-quality", (m,), f"quality factor {factor:.2f}: recall ranks it low")
    queue = [item for item in items if item.key not in kept]
    queue.sort(key=lambda item: (item.urgency, item.first.id))
    return queue


def _ungrounded(m: Memory, source: Source) -> str | None:
    """Why ``m``, which a model learned from ``source``, is not stated there (None: it
    is, or the source keeps no text): its closest passage and how much it covers."""
    passage = best_passage(m.content, searched_text(source), whole=source.kind == "progress")
    if passage is None or passage.grounded:
        return None
    closest = one_line(passage.text, 60) if passage.coverage > 0 else "none shares a word"
    return f"{NOT_STATED}: closest passage “{closest}” ({passage.coverage_line()})"


def counts(queue: Sequence[Item]) -> dict[str, int]:
    out = dict.fromkeys(REASONS, 0)
    for item in queue:
        out[item.reason] += 1
    return out
