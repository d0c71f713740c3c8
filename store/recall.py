"""Recall and search exactly as pi decides them (STORE.md §6.5 to §6.8), with every decision kept.

``RecallIndex`` holds the per-record feature sets of a list of memories and an
inverted index over them, so one query only touches the records that share a
word with it. ``RecallIndex.recall`` runs the whole pipeline (plan, exclusion,
weights, gates, relative cutoff, order, selection) and returns a ``Recall``
that explains itself: what was selected, and why every other matching record
was left out.

Nothing here writes, and nothing about a query is stored beyond an in-process
cache of feature sets.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from ._js import clip_bytes, fp, js_json, js_trim, parse_ms, utf8_len
from .features import (
    _S,
    LITERALS,
    MAX_HISTORY_TURN_BYTES,
    clean_query,
    document_features,
    facets,
    feature_offset,
    features,
    pasted_literals,
    query_features,
)
from .model import Memory
from .redact import redact

try:  # pragma: no cover - depends on the machine
    import icu as _icu

    _COLLATOR = _icu.Collator.createInstance(_icu.Locale("en_US"))
except ImportError:  # pragma: no cover
    _COLLATOR = None

Mode = Literal["direct", "followup", "empty", "reset"]
Purpose = Literal["search", "inject"]

SEARCH_LIMIT = 10
"""``/memory search`` shows ten records."""
INJECT_LIMIT = 3
"""Automatic injection and the recall tool offer three."""
MIN_FOCUS_COVERAGE = 0.45
RELATIVE_CUTOFF = 0.75
RARE_MIN = 3
"""``rare(w)`` holds when ``df(w) <= max(RARE_MIN, 0.02 * N)`` (§6.7 step 7)."""

REASONS: dict[str, str] = {
    "forgotten": "never recalled",
    "conflicted": "never recalled until it is resolved",
    "disputed": "marked incorrect, never recalled",
    "dormant": "past its kind's horizon: not injected, though search still finds it",
    "resource-mismatch": "a path or file name you typed is not in it",
    "no-focus-match": "only matched the earlier turns, not this prompt",
    "question-only": "only matched inside a quoted question",
    "subject-attribute-mismatch": "names another subject or attribute than the prompt",
    "context-mismatch": "does not match the subject of the earlier turns",
    "incidental-overlap": "covers under 45% of the prompt and names no topic",
    "thin-match": "too few of the prompt's words match",
    "relative-cutoff": "matches, but scores under 75% of the best match",
    "duplicate": "same text as a record selected above (same origin)",
    "redundant": "adds no matched word the records above did not cover",
    "limit": "ranked below the selection limit",
}
"""What each reason means, in one line."""

STATUS_REASONS = ("forgotten", "conflicted", "disputed", "dormant")

_QUOTED_QUESTION = re.compile(r"“[^”\n]*[?？]”|「[^」\n]*[?？]」|\"[^\"\n]*[?？]\"")
_SCOPE_SPLIT = re.compile(r"[\\/]")
_RESET = re.compile(
    "换个话题|新话题|从头开始|不是那个|不是这个"
    "|\\b(?:new topic|start over|forget that|not that|not this)\\b",
    re.IGNORECASE | re.ASCII,
)
_FOLLOWUP = re.compile(
    "继续|接着|接上|这个|那个|它|其|呢[？?。.!]*$"
    "|\\b(?:this|that|its?|their|continue|resume|what about|how about)\\b",
    re.IGNORECASE | re.ASCII,
)


# ------------------------------------------------------------------ the plan


@dataclass(frozen=True, slots=True)
class Plan:
    """What a prompt asks for (§6.5): the query, optional context, and how it was read."""

    query: str
    context: str | None = None
    mode: Mode = "direct"

    @property
    def text(self) -> str:
        return "\n".join(part for part in (self.query, self.context) if part)


def _advance(current: str, previous: Plan | None) -> Plan:
    terms = query_features(current)
    if _RESET.search(current):
        return Plan(current if terms else "", None, "reset")
    if not terms:
        if previous is not None and previous.query:
            return Plan(previous.query, previous.context, "followup")
        return Plan("", None, "empty")
    if previous is not None and previous.query and _FOLLOWUP.search(current):
        prior = query_features(previous.text)
        facet_words = facets()
        if all(term in prior for term in terms if term not in facet_words):
            context = previous.context or previous.query
            if query_features(context) and context != current:
                return Plan(current, context, "followup")
    return Plan(current, None, "direct")


def resolve_plan(prompt: str, recent_user_turns: Sequence[str] = ()) -> Plan:
    """``resolveRecallQuery``: fold the last six user turns, oldest first, then the prompt."""
    current = clean_query(prompt)
    current_as_history = clean_query(prompt, MAX_HISTORY_TURN_BYTES)
    previous: Plan | None = None
    for text in list(recent_user_turns)[-6:]:
        value = clean_query(text, MAX_HISTORY_TURN_BYTES)
        if value != current_as_history:
            previous = _advance(value, previous)
    return _advance(current, previous)


# ------------------------------------------------------------------ documents


@dataclass(frozen=True, slots=True)
class _Doc:
    memory: Memory
    body: frozenset[str]
    mentions: frozenset[str]
    aliases: frozenset[str]
    origin: frozenset[str]
    excluded: str | None  # forgotten / conflicted / disputed (dormant is per purpose)
    dormant: bool
    updated_ms: float


def _origin(scope: str) -> frozenset[str]:
    if scope == "legacy":
        return frozenset()
    words = document_features(scope) | document_features(_SCOPE_SPLIT.split(scope)[-1])
    return frozenset(w for w in words if not w.startswith("concept:"))


def _make_doc(m: Memory) -> _Doc:
    body_text = _QUOTED_QUESTION.sub(" ", m.content)
    mentions = document_features(m.content)
    excluded = (
        m.status if m.status in ("forgotten", "conflicted") else "disputed" if m.disputed else None
    )
    return _Doc(
        memory=m,
        body=mentions if body_text == m.content else document_features(body_text),
        mentions=mentions,
        aliases=document_features(" ".join(m.search_terms)),
        origin=_origin(m.scope),
        excluded=excluded,
        dormant=m.quality.dormant,
        updated_ms=parse_ms(m.updated_at) or 0.0,
    )


# ------------------------------------------------------------------ results


@dataclass(frozen=True, slots=True)
class Candidate:
    """One record that shares a word with the query, and what became of it."""

    memory: Memory
    score: float
    rank_score: float
    coverage: float
    matches: tuple[str, ...]
    reason: str | None
    """None when selected; otherwise a key of ``REASONS``."""
    where: tuple[tuple[str, str], ...] = ()
    """For each matched word: body, alias, mention or origin."""
    would_fail: str | None = None
    """For a record excluded by its status: the gate it would fail otherwise (None: none)."""

    @property
    def selected(self) -> bool:
        return self.reason is None

    @property
    def factor(self) -> float:
        return self.memory.quality.factor


@dataclass(frozen=True, slots=True)
class Recall:
    """One evaluation, explained."""

    prompt: str
    purpose: Purpose
    limit: int
    plan: Plan
    query: tuple[str, ...]
    context: tuple[str, ...]
    weights: dict[str, float] = field(repr=False)
    eligible: int = 0
    excluded: int = 0
    selected: tuple[Candidate, ...] = ()
    left_out: tuple[Candidate, ...] = ()
    """Matching records not selected, in pi's order; status exclusions after them."""
    ranked: int = 0
    """How many records passed every gate (before selection)."""

    @property
    def memories(self) -> list[Memory]:
        return [c.memory for c in self.selected]


# ------------------------------------------------------------------ the index


def _id_key(memory_id: str) -> bytes | str:
    """``localeCompare`` order for the last tie-break (plain order for hex ids)."""
    if _COLLATOR is None:  # pragma: no cover
        return memory_id
    key: bytes = _COLLATOR.getSortKey(memory_id)
    return key


class RecallIndex:
    """Feature sets and postings for a set of memories; immutable once built."""

    def __init__(self, memories: Iterable[Memory]) -> None:
        self._docs: dict[str, _Doc] = {}
        self._postings: dict[str, set[str]] = {}
        for m in memories:
            self._add(_make_doc(m))
        self._active = sum(1 for d in self._docs.values() if d.excluded is None)
        self._active_awake = sum(
            1 for d in self._docs.values() if d.excluded is None and not d.dormant
        )

    def _add(self, doc: _Doc) -> None:
        memory_id = doc.memory.id
        self._docs[memory_id] = doc
        postings = self._postings
        for words in (doc.mentions, doc.body, doc.aliases, doc.origin):
            for word in words:
                bucket = postings.get(word)
                if bucket is None:
                    postings[word] = {memory_id}
                else:
                    bucket.add(memory_id)

    def __len__(self) -> int:
        return len(self._docs)

    def updated(self, rows: Iterable[Memory]) -> RecallIndex:
        """A new index with these records added or replaced (this one is left as it is)."""
        changed = {m.id: m for m in rows}
        memories = [changed.pop(d.memory.id, d.memory) for d in self._docs.values()]
        return RecallIndex([*memories, *changed.values()])

    def recall(
        self,
        prompt: str,
        *,
        purpose: Purpose = "search",
        limit: int | None = None,
        recent_user_turns: Sequence[str] = (),
    ) -> Recall:
        """Evaluate ``prompt`` as pi would for ``purpose`` and select up to ``limit`` records.

        ``search`` is ``/memory search`` (dormant included, ten records);
        ``inject`` is automatic injection (dormant excluded, three records).
        """
        include_dormant = purpose == "search"
        if limit is None:
            limit = SEARCH_LIMIT if purpose == "search" else INJECT_LIMIT
        plan = resolve_plan(prompt, recent_user_turns)
        query = query_features(plan.query)
        context = {w: None for w in query_features(plan.context or "") if w not in query}
        docs = self._docs

        def status_reason(d: _Doc) -> str | None:
            if d.excluded is not None:
                return d.excluded
            return "dormant" if d.dormant and not include_dormant else None

        eligible_n = self._active if include_dormant else self._active_awake
        base = Recall(
            prompt=prompt,
            purpose=purpose,
            limit=limit,
            plan=plan,
            query=tuple(query),
            context=tuple(context),
            weights={},
            eligible=eligible_n,
            excluded=len(docs) - eligible_n,
        )
        if not query:
            return base

        facet_words = facets()
        words = [*query, *context]
        postings = self._postings
        weights: dict[str, float] = {}
        frequency: dict[str, int] = {}
        touched: set[str] = set()
        for word in words:
            ids = postings.get(word, ())
            touched.update(ids)
            df = 0
            for memory_id in ids:
                d = docs[memory_id]
                if status_reason(d) is None and (
                    word in d.mentions or word in d.aliases or word in d.origin
                ):
                    df += 1
            frequency[word] = df
            idf = 1 + math.log((eligible_n + 1) / (df + 1)) if df else 1.0
            weights[word] = (2.0 if word.startswith("literal:") else 1.0) * idf
        rare_limit = max(RARE_MIN, 0.02 * eligible_n)
        total = 0.0
        for word in query:
            total += weights[word]
        pasted = pasted_literals(plan.query) | pasted_literals(plan.context or "")
        mandatory = [w for w in words if w.startswith("literal:") and w not in pasted]
        subjects = [w for w in context if w not in facet_words]
        subject_weight = sum(weights[w] for w in subjects)
        named_subjects = [w for w in subjects if not w.startswith("concept:")]
        direct_names = [
            w
            for w in query
            if not w.startswith(("concept:", "literal:"))
            and not w[:1].isdigit()
            and w not in facet_words
        ]
        direct_facets = [
            w
            for w in query
            if w in facet_words and w not in ("concept:status", "concept:progress", "error", "错误")
        ]
        focused_direct = (
            not context and len(query) <= 4 and len(direct_names) == 1 and bool(direct_facets)
        )
        unknown_question_word = any(frequency[w] == 0 and w not in facet_words for w in query)

        live: list[Candidate] = []
        status_out: list[tuple[str, Candidate]] = []
        for memory_id in touched:
            d = docs[memory_id]
            score = covered = 0.0
            focus = evidence = topic = 0
            matches: list[str] = []
            where: list[tuple[str, str]] = []
            for word, weight in weights.items():
                if word in d.body:
                    f, place = 1.0, "body"
                elif word in d.aliases:
                    f, place = 0.8, "alias"
                elif word in d.mentions:
                    f, place = 0.25, "mention"
                elif word in d.origin:
                    f, place = 0.2, "origin"
                else:
                    continue
                in_query = word in query
                score += weight * f * (1.0 if in_query else 0.35)
                matches.append(word)
                where.append((word, place))
                if in_query:
                    covered += weight
                    focus += 1
                    if place != "mention" or word in d.origin:
                        evidence += 1
                    if word.startswith("literal:") or (
                        (word.startswith("concept:") or word in d.aliases)
                        and frequency[word] <= rare_limit
                    ):
                        topic += 1
            score *= 0.8 + 0.2 * min(1.0, 12 / max(1, len(d.body)))
            coverage = covered / total if total else 0.0
            reason: str | None
            if any(w not in matches for w in mandatory):
                reason = "resource-mismatch"
            elif not focus:
                reason = "no-focus-match"
            elif not evidence:
                reason = "question-only"
            elif focused_direct and (
                any(
                    w not in d.body and w not in d.aliases and w not in d.origin
                    for w in direct_names
                )
                or any(w not in d.body and w not in d.aliases for w in direct_facets)
            ):
                reason = "subject-attribute-mismatch"
            elif (
                any(w not in matches for w in named_subjects)
                if named_subjects
                else bool(subjects)
                and sum(weights[w] for w in subjects if w in matches) / subject_weight < 0.6
            ):
                reason = "context-mismatch"
            elif coverage < MIN_FOCUS_COVERAGE and not topic:
                reason = "incidental-overlap"
            elif (len(query) >= 3 and focus < 2) or (focus == 1 and unknown_question_word):
                reason = "thin-match"
            else:
                reason = None
            candidate = Candidate(
                memory=d.memory,
                score=score,
                rank_score=score * d.memory.quality.factor,
                coverage=coverage,
                matches=tuple(matches),
                reason=reason,
                where=tuple(where),
            )
            excluded = status_reason(d)
            if excluded is not None:
                if focus:
                    status_out.append((excluded, candidate))
            else:
                live.append(candidate)

        best = max((c.score for c in live if c.reason is None), default=0.0)
        live = [
            _with(c, reason="relative-cutoff")
            if c.reason is None and c.score < best * RELATIVE_CUTOFF
            else c
            for c in live
        ]
        order = self._order_key
        live.sort(key=order)
        ranked = [c for c in live if c.reason is None]
        chosen = _select(ranked, limit)
        outcome = {c.memory.id: c for c in chosen}
        selected = tuple(c for c in chosen if c.reason is None)
        left = [
            outcome.get(c.memory.id, c) for c in live if not outcome.get(c.memory.id, c).selected
        ]
        if status_out:
            for reason, c in sorted(status_out, key=lambda rc: order(rc[1])):
                left.append(_with(c, reason=reason, would_fail=c.reason or _would_cut(c, best)))
        return Recall(
            prompt=prompt,
            purpose=purpose,
            limit=limit,
            plan=plan,
            query=tuple(query),
            context=tuple(context),
            weights=weights,
            eligible=eligible_n,
            excluded=len(docs) - eligible_n,
            selected=selected,
            left_out=tuple(left),
            ranked=len(ranked),
        )

    def _order_key(self, c: Candidate) -> tuple[float, int, float, bytes | str]:
        d = self._docs[c.memory.id]
        return (-c.rank_score, 0 if c.memory.pinned else 1, -d.updated_ms, _id_key(c.memory.id))


def _with(c: Candidate, *, reason: str | None, would_fail: str | None = None) -> Candidate:
    return Candidate(
        memory=c.memory,
        score=c.score,
        rank_score=c.rank_score,
        coverage=c.coverage,
        matches=c.matches,
        reason=reason,
        where=c.where,
        would_fail=would_fail,
    )


def _would_cut(c: Candidate, best: float) -> str | None:
    return "relative-cutoff" if c.score < best * RELATIVE_CUTOFF else None


def _select(ranked: list[Candidate], limit: int) -> list[Candidate]:
    """§6.8: walk the ranked list; every record comes back selected or with its reason."""
    out: list[Candidate] = []
    seen: set[str] = set()
    covered: dict[tuple[str, str], set[str]] = {}
    count = 0
    top = len(ranked[0].matches) if ranked else 0
    for c in ranked:
        if count >= limit or limit <= 0:
            out.append(_with(c, reason="limit"))
            continue
        m = c.memory
        key = fp(js_json([m.scope, m.content]))
        if key in seen:
            out.append(_with(c, reason="duplicate"))
            continue
        previous = covered.setdefault((m.scope, m.kind), set())
        if len(c.matches) >= 2 and top >= 3 and all(w in previous for w in c.matches):
            out.append(_with(c, reason="redundant"))
            continue
        seen.add(key)
        previous.update(c.matches)
        out.append(c)
        count += 1
    return out


# ------------------------------------------------------------------ excerpt


_SENTENCES = re.compile(rf"(?<=[。！？!?]){_S}*|(?<=\.){_S}+|\n+")


def excerpt(content: str, plan: Plan, budget: int = 400) -> str:
    """The text a digest line carries for this query (§6.11)."""
    clean = js_trim(redact(content))
    if utf8_len(clean) <= budget:
        return clean
    if budget <= 3:
        return clip_bytes(clean, max(0, budget))
    query = query_features(plan.query)
    context = query_features(plan.context or "")
    sentences = [s for s in _SENTENCES.split(clean) if s]

    def overlap(text: str, words: dict[str, None]) -> int:
        found = features(text)
        return sum(1 for w in words if w in found)

    sentences.sort(key=lambda s: (-overlap(s, query), -overlap(s, context)))
    best = sentences[0] if sentences else clean
    if utf8_len(best) <= budget - 3:
        return best + "…"
    positions = [p for p in (feature_offset(best, w) for w in query) if p >= 0]
    offset = min(positions) if positions else 0
    before = best[:offset]
    keep = clip_bytes(before[::-1], (budget - 6) // 3)[::-1]
    start = offset - len(keep)
    lead = "…" if start > 0 and budget >= 6 else ""
    return lead + clip_bytes(best[start:], budget - utf8_len(lead) - 3) + "…"


def recall_memories(
    memories: Iterable[Memory],
    prompt: str,
    *,
    purpose: Purpose = "search",
    limit: int | None = None,
) -> Recall:
    """One-off recall over a list of memories (builds a throw-away index)."""
    return RecallIndex(memories).recall(prompt, purpose=purpose, limit=limit)


__all__ = [
    "INJECT_LIMIT",
    "LITERALS",
    "REASONS",
    "SEARCH_LIMIT",
    "STATUS_REASONS",
    "Candidate",
    "Plan",
    "Recall",
    "RecallIndex",
    "excerpt",
    "recall_memories",
    "resolve_plan",
]
