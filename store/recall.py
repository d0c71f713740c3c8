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

import heapq
import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Literal

from ._js import JS_SPACE, clip_bytes, fp, js_json, js_trim, parse_ms, utf8_len
from .features import (
    LITERALS,
    MAX_HISTORY_TURN_BYTES,
    clean_query,
    document_features,
    facets,
    feature_offset,
    features,
    locale_key,
    pasted_literals,
    query_features,
)
from .model import Memory
from .redact import redact

Mode = Literal["direct", "followup", "empty", "reset"]
Purpose = Literal["search", "inject", "tool", "explain"]
"""pi's recall entry points (§6.1): ``/memory search``, automatic injection, the
``memory_recall`` tool the model calls mid-task, and ``/memory explain``."""

SEARCH_LIMIT = 10
"""``/memory search`` shows ten records."""
INJECT_LIMIT = 3
"""Automatic injection, the recall tool and ``/memory explain`` offer three."""
WITH_DORMANT: frozenset[Purpose] = frozenset(("search", "tool"))
"""Entry points that find dormant records (0.4.0): the ones someone asks explicitly."""
TOOL_QUERY_MAX = 512
"""The ``memory_recall`` tool's query: 1 to 512 characters (UTF-16 units)."""
TOOL_NO_MATCH = (
    "No matching recallable memory. This is not proof the subject was never stored; "
    "try a specific subject or known alias, not arbitrary recent records."
)
"""What ``memory_recall`` returns when no digest line is built."""
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
    norm: float  # length normalisation, from the size of ``body``
    id_key: bytes | str
    factor: float  # the quality factor (§3)
    pinned: bool


@lru_cache(maxsize=4_096)
def _origin(scope: str) -> frozenset[str]:
    """An origin's words: one set per origin, shared by its records."""
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
    body = mentions if body_text == m.content else document_features(body_text)
    return _Doc(
        memory=m,
        body=body,
        mentions=mentions,
        aliases=document_features(" ".join(m.search_terms)),
        origin=_origin(m.scope),
        excluded=excluded,
        dormant=m.quality.dormant,
        updated_ms=parse_ms(m.updated_at) or 0.0,
        norm=0.8 + 0.2 * min(1.0, 12 / max(1, len(body))),
        id_key=locale_key(m.id),
        factor=m.quality.factor,
        pinned=m.pinned,
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
    would_fail: str | None = None
    """For a record excluded by its status: the gate it would fail otherwise (None: none)."""
    doc: _Doc | None = field(default=None, repr=False, compare=False)

    @property
    def where(self) -> tuple[tuple[str, str], ...]:
        """For each matched word: body, alias, mention or origin."""
        d = self.doc
        return () if d is None else tuple((w, _place(d, w)) for w in self.matches)

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
    turns: tuple[str, ...]
    """The earlier user turns the plan was resolved with (oldest first)."""
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
    unknown: tuple[str, ...] = ()
    """Query words no eligible record contains."""
    left_out_total: int = 0
    """How many matching records were left out (``left_out`` may show fewer)."""

    @property
    def memories(self) -> list[Memory]:
        return [c.memory for c in self.selected]


# ------------------------------------------------------------------ the index


IntSet = set[int] | frozenset[int]
_EMPTY: frozenset[int] = frozenset()
_NONE: frozenset[str] = frozenset()


class RecallIndex:
    """Feature sets and per-field postings for a set of memories; immutable once built.

    A query only touches the records that share a word with it: scores are
    accumulated word by word over the postings, in the order pi sums them.
    """

    def __init__(self, memories: Iterable[Memory]) -> None:
        docs = [_make_doc(m) for m in memories]
        self._docs = docs
        mention: dict[str, set[int]] = {}
        alias: dict[str, set[int]] = {}
        origin: dict[str, set[int]] = {}
        body_q: dict[str, set[int]] = {}  # body words of records whose body differs
        quoted: set[int] = set()
        for i, d in enumerate(docs):
            tables = [(mention, d.mentions), (alias, d.aliases), (origin, d.origin)]
            if d.body is not d.mentions:
                quoted.add(i)
                tables.append((body_q, d.body))
            for table, words in tables:
                for word in words:
                    bucket = table.get(word)
                    if bucket is None:
                        table[word] = {i}
                    else:
                        bucket.add(i)
        self._mention = mention
        self._alias = alias
        self._origin = origin
        self._body_q = body_q
        self._quoted = frozenset(quoted)
        self._by_id = {d.memory.id: i for i, d in enumerate(docs)}
        self._eligible_search = frozenset(i for i, d in enumerate(docs) if d.excluded is None)
        self._eligible_inject = frozenset(i for i in self._eligible_search if not docs[i].dormant)

    def __len__(self) -> int:
        return len(self._docs)

    def updated(self, rows: Iterable[Memory]) -> RecallIndex:
        """A new index with these records added or replaced; this one is left as it is.

        Only the postings of the changed records' words are copied, so a change
        costs about what the changed records cost, not what the store costs.
        """
        new = object.__new__(RecallIndex)
        docs = list(self._docs)
        by_id = dict(self._by_id)
        tables = [dict(self._mention), dict(self._alias), dict(self._origin), dict(self._body_q)]
        fresh: list[set[str]] = [set(), set(), set(), set()]  # words whose set is a copy
        quoted = set(self._quoted)
        eligible_search = set(self._eligible_search)
        eligible_inject = set(self._eligible_inject)

        def fields(d: _Doc) -> list[frozenset[str]]:
            return [d.mentions, d.aliases, d.origin, d.body if d.body is not d.mentions else _NONE]

        def edit(n: int, word: str) -> set[int]:
            table = tables[n]
            if word not in fresh[n]:
                table[word] = set(table.get(word, ()))
                fresh[n].add(word)
            return table[word]

        for m in rows:
            d = _make_doc(m)
            i = by_id.get(m.id)
            if i is None:
                i = len(docs)
                docs.append(d)
                by_id[m.id] = i
            else:
                for n, words in enumerate(fields(docs[i])):
                    for word in words:
                        bucket = edit(n, word)
                        bucket.discard(i)
                        if not bucket:
                            del tables[n][word]
                            fresh[n].discard(word)
                docs[i] = d
            for n, words in enumerate(fields(d)):
                for word in words:
                    edit(n, word).add(i)
            quoted.discard(i)
            if d.body is not d.mentions:
                quoted.add(i)
            eligible_search.discard(i)
            eligible_inject.discard(i)
            if d.excluded is None:
                eligible_search.add(i)
                if not d.dormant:
                    eligible_inject.add(i)
        new._docs = docs
        new._by_id = by_id
        new._mention, new._alias, new._origin, new._body_q = tables
        new._quoted = frozenset(quoted)
        new._eligible_search = frozenset(eligible_search)
        new._eligible_inject = frozenset(eligible_inject)
        return new

    def _body(self, word: str, mention: IntSet) -> IntSet:
        if not self._quoted:
            return mention
        return (mention - self._quoted) | self._body_q.get(word, _EMPTY)

    def recall(
        self,
        prompt: str,
        *,
        purpose: Purpose = "search",
        limit: int | None = None,
        recent_user_turns: Sequence[str] = (),
        explain: int | None = 200,
    ) -> Recall:
        """Evaluate ``prompt`` as pi would for ``purpose`` and select up to ``limit`` records.

        ``search`` is ``/memory search`` (dormant included, ten records);
        ``inject`` is automatic injection (dormant excluded, three records);
        ``tool`` is the model's ``memory_recall`` (query redacted first, dormant
        included, three records); ``explain`` is ``/memory explain`` (as injection).
        ``explain`` caps how many left-out records are described (None: all).
        """
        include_dormant = purpose in WITH_DORMANT
        if purpose == "tool":
            prompt = redact(prompt)
            recent_user_turns = ()
        elif purpose != "inject":
            recent_user_turns = ()
        if limit is None:
            limit = SEARCH_LIMIT if purpose == "search" else INJECT_LIMIT
        plan = resolve_plan(prompt, recent_user_turns)
        query = query_features(plan.query)
        context = {w: None for w in query_features(plan.context or "") if w not in query}
        docs = self._docs
        eligible = self._eligible_search if include_dormant else self._eligible_inject
        eligible_n = len(eligible)
        base = Recall(
            prompt=prompt,
            purpose=purpose,
            limit=limit,
            plan=plan,
            turns=tuple(recent_user_turns),
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
        weights: dict[str, float] = {}
        frequency: dict[str, int] = {}
        fields: list[tuple[str, IntSet, IntSet, IntSet]] = []
        for word in words:
            m = self._mention.get(word, _EMPTY)
            a = self._alias.get(word, _EMPTY)
            o = self._origin.get(word, _EMPTY)
            df = len(eligible & (m | a | o)) if a or o else len(eligible & m)
            frequency[word] = df
            idf = 1 + math.log((eligible_n + 1) / (df + 1)) if df else 1.0
            weights[word] = (2.0 if word.startswith("literal:") else 1.0) * idf
            fields.append((word, m, a, o))
        rare_limit = max(RARE_MIN, 0.02 * eligible_n)
        total = 0.0
        for word in query:
            total += weights[word]

        # Word by word, in pi's order: body 1, alias 0.8, mention 0.25, origin 0.2.
        # Per-record tallies live in lists indexed by record: cheaper than dicts.
        n = len(docs)
        score = [0.0] * n
        covered = [0.0] * n
        focus = [0] * n
        evidence: set[int] = set()  # matched a query word outside a quoted question
        topic: set[int] = set()  # matched a query word that names a topic
        matches: list[list[str] | None] = [None] * n
        touched: list[int] = []
        for word, m, a, o in fields:
            weight = weights[word]
            in_query = word in query
            b = self._body(word, m)
            a_only = a - b
            m_only = m - b - a
            o_only = o - b - a - m
            for members, f in ((b, 1.0), (a_only, 0.8), (m_only, 0.25), (o_only, 0.2)):
                if not members:
                    continue
                add = weight * f * (1.0 if in_query else 0.35)
                for i in members:
                    score[i] += add
                    found = matches[i]
                    if found is None:
                        matches[i] = [word]
                        touched.append(i)
                    else:
                        found.append(word)
                if not in_query:
                    continue
                for i in members:
                    covered[i] += weight
                    focus[i] += 1
                evidence.update(members if f != 0.25 else members & o)
            if in_query:
                if word.startswith("literal:") or (
                    word.startswith("concept:") and frequency[word] <= rare_limit
                ):
                    topic.update(b, a, m, o)
                elif frequency[word] <= rare_limit and a:
                    topic.update(a)

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
        unknown = tuple(w for w in query if frequency[w] == 0)
        unknown_question_word = any(w not in facet_words for w in unknown)
        many_words = len(query) >= 3

        reasons: dict[int, str | None] = {}
        final: dict[int, float] = {}
        for i in touched:
            found = matches[i] or []
            d = docs[i]
            final[i] = score[i] * d.norm
            fm = focus[i]
            reason: str | None
            if mandatory and any(w not in found for w in mandatory):
                reason = "resource-mismatch"
            elif not fm:
                reason = "no-focus-match"
            elif i not in evidence:
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
                any(w not in found for w in named_subjects)
                if named_subjects
                else bool(subjects)
                and sum(weights[w] for w in subjects if w in found) / subject_weight < 0.6
            ):
                reason = "context-mismatch"
            elif covered[i] / total < MIN_FOCUS_COVERAGE and i not in topic:
                reason = "incidental-overlap"
            elif (many_words and fm < 2) or (fm == 1 and unknown_question_word):
                reason = "thin-match"
            else:
                reason = None
            reasons[i] = reason

        live = [i for i in touched if i in eligible]
        best = max((final[i] for i in live if reasons[i] is None), default=0.0)
        for i in live:
            if reasons[i] is None and final[i] < best * RELATIVE_CUTOFF:
                reasons[i] = "relative-cutoff"

        def order(i: int) -> tuple[float, int, float, bytes | str]:
            d = docs[i]
            return (-final[i] * d.factor, 0 if d.pinned else 1,
                    -d.updated_ms, d.id_key)  # fmt: skip

        def candidate(i: int, reason: str | None, would_fail: str | None = None) -> Candidate:
            d = docs[i]
            found = matches[i] or []
            return Candidate(
                memory=d.memory,
                score=final[i],
                rank_score=final[i] * d.factor,
                coverage=covered[i] / total,
                matches=tuple(found),
                reason=reason,
                doc=d,
                would_fail=would_fail,
            )

        ranked_ids = sorted((i for i in live if reasons[i] is None), key=order)
        selected_list, walked, over = _select(ranked_ids, limit, docs, matches, candidate)
        selected = tuple(selected_list)
        room_over = len(over) if explain is None else max(0, min(len(over), explain - len(walked)))
        walked += [candidate(i, "limit") for i in over[:room_over]]
        others = [i for i in live if reasons[i] is not None]
        status_ids = [i for i in touched if i not in eligible and focus[i]]
        total_left = len(walked) + len(over) - room_over + len(others) + len(status_ids)
        room = None if explain is None else max(0, explain - len(walked))
        if room is None or len(others) <= room:
            others.sort(key=order)
        elif room == 0:
            others = []
        else:
            # The best ``room`` by rank score first (a cheap key), ties at the edge kept,
            # then pi's full order over that short list.
            rank = {i: final[i] * docs[i].factor for i in others}
            best_few = heapq.nlargest(room, others, key=rank.__getitem__)
            edge = rank[best_few[-1]]
            kept = set(best_few)
            best_few += [i for i in others if rank[i] == edge and i not in kept]
            others = sorted(best_few, key=order)[:room]
        left = [*walked, *(candidate(i, reasons[i]) for i in others)]
        if explain is None or len(left) < explain:
            status_ids.sort(key=order)
            for i in status_ids[: None if explain is None else explain - len(left)]:
                d = docs[i]
                why = d.excluded or "dormant"
                hypothetical = reasons[i] or (
                    "relative-cutoff" if final[i] < best * RELATIVE_CUTOFF else None
                )
                left.append(candidate(i, why, hypothetical))
        return replace(
            base,
            weights=weights,
            selected=selected,
            left_out=tuple(left),
            ranked=len(ranked_ids),
            unknown=unknown,
            left_out_total=total_left,
        )


def _place(d: _Doc, word: str) -> str:
    if word in d.body:
        return "body"
    if word in d.aliases:
        return "alias"
    if word in d.mentions:
        return "mention"
    return "origin"


def _select(
    ranked: list[int],
    limit: int,
    docs: list[_Doc],
    matches: list[list[str] | None],
    make: Callable[[int, str | None], Candidate],
) -> tuple[list[Candidate], list[Candidate], list[int]]:
    """§6.8: walk the ranked records; the selected, the skipped (with why), the rest."""
    selected: list[Candidate] = []
    skipped: list[Candidate] = []
    seen: set[str] = set()
    covered: dict[tuple[str, str], set[str]] = {}
    top = len(matches[ranked[0]] or ()) if ranked else 0
    for n, i in enumerate(ranked):
        if len(selected) >= limit:
            return selected, skipped, ranked[n:]
        m = docs[i].memory
        found = matches[i] or []
        key = fp(js_json([m.scope, m.content]))
        if key in seen:
            skipped.append(make(i, "duplicate"))
            continue
        previous = covered.setdefault((m.scope, m.kind), set())
        if len(found) >= 2 and top >= 3 and all(w in previous for w in found):
            skipped.append(make(i, "redundant"))
            continue
        seen.add(key)
        previous.update(found)
        selected.append(make(i, None))
    return selected, skipped, []


# ------------------------------------------------------------------ excerpt


_SENTENCES = re.compile(rf"(?<=[。！？!?]){JS_SPACE}*|(?<=\.){JS_SPACE}+|\n+")


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


DIGEST_HEADER_BYTES = 375
"""The runtime digest's fixed header (title and trust guidance), newline included."""
DIGEST_MAX_BYTES = 2_048
DIGEST_RECORDS = 3


@dataclass(frozen=True, slots=True)
class DigestLine:
    """One record's line in the runtime digest (§6.10), and whether it fits."""

    memory_id: str
    line: str
    """The JSON line pi appends to the system prompt (newline included)."""
    included: bool
    """False when it would push the digest past 2,048 bytes: pi skips it."""


def label(value: str) -> str:
    """``label`` (§6.2): redacted, and clipped with a fingerprint when over 120 bytes."""
    clean = redact(value)
    if utf8_len(clean) <= 120:
        return clean
    return clip_bytes(clean, 90) + "…#" + fp(clean)


def digest(result: Recall) -> tuple[DigestLine, ...]:
    """The lines injection would add for the first three selected records, in order."""
    used = DIGEST_HEADER_BYTES
    out: list[DigestLine] = []
    for c in result.selected[:DIGEST_RECORDS]:
        m = c.memory
        q = m.quality
        entry: dict[str, object] = {
            "id": label(m.id),
            "kind": m.kind,
            "status": m.status,
            "origin": label(m.scope),
            "source": label(m.evidence.source_id if m.evidence else m.source_entry_id),
            "updated": m.updated_at[:10],
        }
        if q.confirmed_at[:10] > m.updated_at[:10]:
            entry["confirmed"] = q.confirmed_at[:10]
        entry["evidence"] = f"{q.basis}/{q.method}"
        entry["aging"] = q.aging
        if m.accuracy is not None:
            entry["assessment"] = m.accuracy.verdict
        entry["text"] = excerpt(m.content, result.plan, 400)
        line = js_json(entry) + "\n"
        size = utf8_len(line)
        fits = used + size <= DIGEST_MAX_BYTES
        if fits:
            used += size
        out.append(DigestLine(m.id, line, fits))
    return tuple(out)


__all__ = [
    "DIGEST_HEADER_BYTES",
    "DIGEST_MAX_BYTES",
    "INJECT_LIMIT",
    "LITERALS",
    "REASONS",
    "SEARCH_LIMIT",
    "STATUS_REASONS",
    "TOOL_NO_MATCH",
    "TOOL_QUERY_MAX",
    "WITH_DORMANT",
    "Candidate",
    "DigestLine",
    "Plan",
    "Recall",
    "RecallIndex",
    "digest",
    "excerpt",
    "label",
    "resolve_plan",
]
