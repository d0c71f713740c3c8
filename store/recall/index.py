"""The recall index: records as integer positions, words as array postings (§6.6 to §6.8).

Each record is a position ``0..N-1``, and what a query needs of it lives in
columns (length normalisation, quality factor, pins, dormancy, exclusion,
origin, update time), never in per-record objects. Each word maps to the
sorted positions of the records holding it (an ``int32`` array per field:
mentions, search terms, and the body of records whose body differs from
their text because of a quoted question); an origin's words map to origin
numbers, one per distinct origin.

A query turns each of its words into masks over every position and sums the
scores word by word, in pi's order, with array arithmetic. Each record still
receives its additions one word at a time and in the same order as pi's
loop, so every score is the same float.

An index never changes once built: ``updated`` returns a new one that shares
what it did not change. A record whose text changed is appended at a new
position and its old position is marked dead, so no posting is ever searched
or rewritten; a change that leaves the words alone (a pin, feedback, a time
dial) rewrites only that record's columns.

numpy is imported by this module only, and this module only when a recall is
first asked for: the dashboard does not pay for it at start-up.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from ..js import fp, js_json, parse_ms
from ..records.model import Memory, retimed
from ..records.quality import (
    DAY_MS,
    POLICY,
    confirmed_ms,
    evidence_weight,
    factor_dormant,
    verdict_weights,
)
from ..write.redact import redact
from .features import document_words, facets, locale_key, pasted_literals, query_features
from .recall import (
    INJECT_LIMIT,
    MIN_FOCUS_COVERAGE,
    RARE_MIN,
    RELATIVE_CUTOFF,
    SEARCH_LIMIT,
    WITH_DORMANT,
    Candidate,
    Purpose,
    Recall,
    origin_words,
    resolve_plan,
    without_quoted_questions,
)

Bools = npt.NDArray[np.bool_]
Positions = npt.NDArray[np.int32]
Floats = npt.NDArray[np.float64]

EXCLUSIONS: tuple[str | None, ...] = (None, "forgotten", "conflicted", "disputed")
"""A record's exclusion code is its place here (dormancy is per purpose, apart)."""
REASON_CODES: tuple[str | None, ...] = (
    None,
    "resource-mismatch",
    "no-focus-match",
    "question-only",
    "subject-attribute-mismatch",
    "context-mismatch",
    "incidental-overlap",
    "thin-match",
    "relative-cutoff",
)
_CUTOFF = REASON_CODES.index("relative-cutoff")
_NO_POSITIONS: Positions = np.zeros(0, dtype=np.int32)


def _exclusion(m: Memory) -> int:
    if m.status in ("forgotten", "conflicted"):
        return EXCLUSIONS.index(m.status)
    return EXCLUSIONS.index("disputed") if m.disputed else 0


def _same_words(a: Memory, b: Memory) -> bool:
    return a.content == b.content and a.search_terms == b.search_terms and a.scope == b.scope


@dataclass(slots=True)
class _Columns:
    """Per-record values, one list each, while an index is being built."""

    norm: list[float]
    factor: list[float]
    updated: list[float]
    pinned: list[bool]
    dormant: list[bool]
    excluded: list[int]
    origin_of: list[int]
    quoted: list[bool]

    @classmethod
    def empty(cls) -> _Columns:
        return cls([], [], [], [], [], [], [], [])

    def put(self, m: Memory) -> None:
        """The columns that depend on the record but not on its words."""
        factor, dormant = factor_dormant(m, m.quality_at)
        self.factor.append(factor)
        self.updated.append(parse_ms(m.updated_at) or 0.0)
        self.pinned.append(m.pinned)
        self.dormant.append(dormant)
        self.excluded.append(_exclusion(m))


RecordWords = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...] | None]
"""What the index reads of a record's text: the words it mentions, those of its
search terms, and those of its body when quoted questions make it differ (else None)."""
WordsOf = Callable[[Memory], RecordWords]


def record_words(m: Memory) -> RecordWords:
    """A record's words, extracted (the costly part of building an index: a cache of
    them, keyed by each record's text, can stand in for this; see ``WordsOf``)."""
    return text_words(m.content, m.search_terms)


def text_words(content: str, search_terms: Sequence[str]) -> RecordWords:
    """The words of a record with this text and these search terms."""
    body_text = without_quoted_questions(content)
    return (
        document_words(content),
        document_words(" ".join(search_terms)),
        document_words(body_text) if body_text != content else None,
    )


class _Postings:
    """Word -> positions, being collected (lists, turned into arrays at the end)."""

    def __init__(self, words_of: WordsOf) -> None:
        self.mention: dict[str, list[int]] = {}
        self.alias: dict[str, list[int]] = {}
        self.body: dict[str, list[int]] = {}
        self.origin: dict[str, list[int]] = {}  # word -> origin numbers
        self.words_of = words_of

    def add(self, i: int, m: Memory, columns: _Columns, origins: dict[str, int]) -> None:
        mentions, alias, quoted_body = self.words_of(m)
        quoted = quoted_body is not None
        body = mentions if quoted_body is None else quoted_body
        for table, words in (
            (self.mention, mentions),
            (self.alias, alias),
            *(((self.body, body),) if quoted else ()),
        ):
            for word in words:
                bucket = table.get(word)
                if bucket is None:
                    table[word] = [i]
                else:
                    bucket.append(i)
        columns.norm.append(0.8 + 0.2 * min(1.0, 12 / max(1, len(body))))
        columns.quoted.append(quoted)
        self.place(m, columns, origins)

    def place(self, m: Memory, columns: _Columns, origins: dict[str, int]) -> None:
        """The record's origin and the columns that do not depend on its words."""
        origin = origins.get(m.scope)
        if origin is None:
            origin = origins[m.scope] = len(origins)
            for word in origin_words(m.scope):
                self.origin.setdefault(word, []).append(origin)
        columns.origin_of.append(origin)
        columns.put(m)


def _arrays(
    lists: dict[str, list[int]], onto: dict[str, Positions] | None = None
) -> dict[str, Positions]:
    """Postings as arrays; ``onto``'s are extended (new positions are always larger)."""
    out = {} if onto is None else dict(onto)
    for word, found in lists.items():
        fresh = np.array(found, dtype=np.int32)
        before = out.get(word)
        out[word] = fresh if before is None else np.concatenate((before, fresh))
    return out


class RecallIndex:
    """Columns and postings for a set of memories; immutable once built."""

    __slots__ = (
        "_alias",
        "_alive",
        "_body",
        "_by_id",
        "_dormant",
        "_eligible_inject",
        "_eligible_search",
        "_excluded",
        "_factor",
        "_memories",
        "_mention",
        "_moment",
        "_norm",
        "_origin",
        "_origin_of",
        "_origins",
        "_pinned",
        "_quoted",
        "_quoted_any",
        "_updated",
    )

    _memories: list[Memory]
    _moment: float | None
    """None: each record's quality is taken at its own ``quality_at``; else at this
    moment (a ``MovingIndex``'s records keep the moment they were read with)."""
    _by_id: dict[str, int]
    _origins: dict[str, int]
    _mention: dict[str, Positions]
    _alias: dict[str, Positions]
    _body: dict[str, Positions]
    _origin: dict[str, Positions]
    _norm: Floats
    _factor: Floats
    _updated: Floats
    _pinned: Bools
    _dormant: Bools
    _excluded: Positions
    _origin_of: Positions
    _quoted: Bools
    _alive: Bools
    _quoted_any: bool
    _eligible_search: Bools
    _eligible_inject: Bools

    def __init__(self, memories: Iterable[Memory], words_of: WordsOf = record_words) -> None:
        listed = list(memories)
        prebuilt = getattr(words_of, "prebuilt", None)  # a word cache's, built at once
        parts = prebuilt(listed) if callable(prebuilt) else None
        postings = _Postings(words_of)
        columns = _Columns.empty()
        origins: dict[str, int] = {}
        for i, m in enumerate(listed):
            if parts is None:
                postings.add(i, m, columns, origins)
            else:  # its words are in ``parts``: only the rest of its columns here
                postings.place(m, columns, origins)
        self._memories = listed
        self._moment = None
        self._by_id = {m.id: i for i, m in enumerate(listed)}
        self._origins = origins
        self._set(postings, columns, np.ones(len(listed), dtype=np.bool_), None)
        if parts is not None:  # ``wordcache.Prebuilt``: postings, norms and quoted flags
            self._mention, self._alias, self._body = parts.mention, parts.alias, parts.body
            self._norm = np.asarray(parts.norm, dtype=np.float64)
            self._quoted = np.asarray(parts.quoted, dtype=np.bool_)
        self._requalify()

    def _set(
        self,
        postings: _Postings,
        columns: _Columns,
        alive: Bools,
        base: RecallIndex | None,
    ) -> None:
        def column(name: str, dtype: type[np.generic]) -> npt.NDArray[Any]:
            fresh = np.array(getattr(columns, name), dtype=dtype)
            return fresh if base is None else np.concatenate((getattr(base, f"_{name}"), fresh))

        self._mention = _arrays(postings.mention, None if base is None else base._mention)
        self._alias = _arrays(postings.alias, None if base is None else base._alias)
        self._body = _arrays(postings.body, None if base is None else base._body)
        self._origin = _arrays(postings.origin, None if base is None else base._origin)
        self._norm = column("norm", np.float64)
        self._factor = column("factor", np.float64)
        self._updated = column("updated", np.float64)
        self._pinned = column("pinned", np.bool_)
        self._dormant = column("dormant", np.bool_)
        self._excluded = column("excluded", np.int8)
        self._origin_of = column("origin_of", np.int32)
        self._quoted = column("quoted", np.bool_)
        self._alive = alive

    def _requalify(self) -> None:
        """The masks derived from the columns, once they are all in place."""
        self._quoted_any = bool((self._quoted & self._alive).any())
        self._eligible_search = self._alive & (self._excluded == 0)
        self._eligible_inject = self._eligible_search & ~self._dormant

    def __len__(self) -> int:
        return len(self._by_id)

    def memories(self) -> list[Memory]:
        """The records it holds, in the order they were first given."""
        alive = self._alive
        return [m for i, m in enumerate(self._memories) if alive[i]]

    def updated(self, rows: Iterable[Memory], words_of: WordsOf = record_words) -> RecallIndex:
        """A new index with these records added or replaced; this one is left as it is.

        A record whose words are unchanged keeps its position and only its columns
        are rewritten; one whose words changed is appended, and its old position
        is marked dead. Either way a change costs what the changed records cost.
        """
        new = object.__new__(RecallIndex)
        memories = list(self._memories)
        by_id = dict(self._by_id)
        origins = dict(self._origins)
        alive = self._alive.copy()
        in_place: dict[int, Memory] = {}
        postings = _Postings(words_of)
        columns = _Columns.empty()
        start = len(memories)
        fresh_alive: list[bool] = []
        for m in rows:
            i = by_id.get(m.id)
            if i is not None and i < start and alive[i] and _same_words(memories[i], m):
                in_place[i] = m
                memories[i] = m
                continue
            if i is not None:  # its words changed: the old position is dead
                if i < start:
                    alive[i] = False
                    in_place.pop(i, None)
                else:  # the same id twice in ``rows``: the last one counts
                    fresh_alive[i - start] = False
            i = start + len(fresh_alive)
            fresh_alive.append(True)
            memories.append(m)
            by_id[m.id] = i
            postings.add(i, m, columns, origins)
        new._memories = memories
        new._moment = self._moment
        new._by_id = by_id
        new._origins = origins
        grown = np.concatenate((alive, np.array(fresh_alive, dtype=np.bool_)))
        new._set(postings, columns, grown, self)
        if in_place:
            at = np.fromiter(in_place, dtype=np.int64, count=len(in_place))
            fresh = _Columns.empty()
            for m in in_place.values():
                fresh.put(m)
            new._factor[at] = fresh.factor
            new._updated[at] = fresh.updated
            new._pinned[at] = fresh.pinned
            new._dormant[at] = fresh.dormant
            new._excluded[at] = fresh.excluded
        new._requalify()
        return new

    # -------------------------------------------------------------- a query

    def _mask(self, positions: Positions | None) -> Bools:
        mask = np.zeros(len(self._memories), dtype=np.bool_)
        if positions is not None:
            mask[positions] = True
        return mask

    def _ordered(self, positions: Positions, rank: Floats) -> list[int]:
        """Positions in pi's order: rank score, pinned first, newest first, then id."""
        if len(positions) == 0:
            return []
        by_rank = -rank[positions]
        unpinned = ~self._pinned[positions]
        older = -self._updated[positions]
        order = np.lexsort((older, unpinned, by_rank))
        out: list[int] = positions[order].tolist()
        r, p, u = by_rank[order], unpinned[order], older[order]
        ties = np.flatnonzero((r[1:] == r[:-1]) & (p[1:] == p[:-1]) & (u[1:] == u[:-1]))
        if len(ties):
            memories = self._memories
            start = end = -1
            for t in [*ties.tolist(), -2]:  # runs of equal keys, sorted by id
                if t == end:
                    end = t + 1
                    continue
                if start >= 0:
                    out[start : end + 1] = sorted(
                        out[start : end + 1], key=lambda i: locale_key(memories[i].id)
                    )
                start, end = t, t + 1
        return out

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
        eligible = self._eligible_search if include_dormant else self._eligible_inject
        eligible_n = int(np.count_nonzero(eligible))
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
            excluded=len(self) - eligible_n,
        )
        if not query:
            return base

        n = len(self._memories)
        facet_words = facets()
        words = [*query, *context]
        origin_of = self._origin_of
        n_origins = len(self._origins)
        weights: dict[str, float] = {}
        frequency: dict[str, int] = {}
        masks: list[tuple[Bools, Bools, Bools, Bools | None]] = []  # mention, alias, body, origin
        for word in words:
            m = self._mask(self._mention.get(word))
            alias_at = self._alias.get(word)
            a = self._mask(alias_at)
            o: Bools | None = None
            origins_at = self._origin.get(word)
            if origins_at is not None:
                has = np.zeros(n_origins, dtype=np.bool_)
                has[origins_at] = True
                o = has[origin_of]
            listed = m
            if alias_at is not None or o is not None:
                listed = m | a if o is None else m | a | o
            df = int(np.count_nonzero(eligible & listed))
            frequency[word] = df
            idf = 1 + math.log((eligible_n + 1) / (df + 1)) if df else 1.0
            weights[word] = (2.0 if word.startswith("literal:") else 1.0) * idf
            b = m
            if self._quoted_any:
                b = (m & ~self._quoted) | self._mask(self._body.get(word))
            masks.append((m, a, b, o))
        rare_limit = max(RARE_MIN, 0.02 * eligible_n)
        total = 0.0
        for word in query:
            total += weights[word]

        # Word by word, in pi's order; each record gets at most one addition per word
        # (the four places are disjoint), so every sum runs in pi's order.
        score = np.zeros(n)
        covered = np.zeros(n)
        focus = np.zeros(n, dtype=np.int32)
        evidence = np.zeros(n, dtype=np.bool_)  # a query word outside a quoted question
        topic = np.zeros(n, dtype=np.bool_)  # a query word that names a topic
        found: list[Bools] = []
        for word, (m, a, b, o) in zip(words, masks, strict=True):
            weight = weights[word]
            in_query = word in query
            scale = 1.0 if in_query else 0.35
            a_only = a & ~b
            m_only = m & ~b & ~a
            places = [(b, 1.0), (a_only, 0.8), (m_only, 0.25)]
            union = b | a | m
            if o is not None:
                places.append((o & ~union, 0.2))
                union = union | o
            for members, f in places:
                np.add(score, weight * f * scale, out=score, where=members)
            found.append(union)
            if not in_query:
                continue
            np.add(covered, weight, out=covered, where=union)
            focus += union
            evidence |= b | a if o is None else b | a | o
            if word.startswith("literal:") or (
                word.startswith("concept:") and frequency[word] <= rare_limit
            ):
                topic |= union
            elif frequency[word] <= rare_limit and self._alias.get(word) is not None:
                topic |= a
        touched = np.logical_or.reduce(found) & self._alive  # ``query`` is never empty here
        at = {w: k for k, w in enumerate(words)}

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

        # The gates, in pi's order: the first that fails gives the reason.
        none = self._mask(None)

        def missing_any(among: Iterable[str], where: Callable[[str], Bools]) -> Bools:
            out = none
            for w in among:
                out = out | ~where(w)
            return out

        def named(w: str) -> Bools:
            _, a, b, o = masks[at[w]]
            return b | a if o is None else b | a | o

        def faceted(w: str) -> Bools:
            _, a, b, _ = masks[at[w]]
            return b | a

        gates: list[Bools] = [
            missing_any(mandatory, lambda w: found[at[w]]),
            focus == 0,
            ~evidence,
            (missing_any(direct_names, named) | missing_any(direct_facets, faceted))
            if focused_direct
            else none,
        ]
        if named_subjects:
            gates.append(missing_any(named_subjects, lambda w: found[at[w]]))
        elif subjects:
            share = np.zeros(n)
            for w in subjects:
                np.add(share, weights[w], out=share, where=found[at[w]])
            gates.append(share / subject_weight < 0.6)
        else:
            gates.append(none)
        gates.append((covered / total < MIN_FOCUS_COVERAGE) & ~topic)
        gates.append((focus < 2) & many_words | (focus == 1) & unknown_question_word)
        reason = np.select(gates, list(range(1, len(gates) + 1)), default=0).astype(np.int8)
        final = score * self._norm
        live = touched & eligible
        passed = live & (reason == 0)
        best = float(final[passed].max()) if passed.any() else 0.0
        cut = passed & (final < best * RELATIVE_CUTOFF)
        reason[cut] = _CUTOFF
        passed &= ~cut
        rank = final * self._factor
        memories = self._memories

        def found_words(i: int) -> list[str]:
            return [w for k, w in enumerate(words) if found[k][i]]

        def place(i: int, w: str) -> str:
            m, a, b, _ = masks[at[w]]
            return "body" if b[i] else "alias" if a[i] else "mention" if m[i] else "origin"

        moment = self._moment

        def candidate(i: int, why: str | None, would_fail: str | None = None) -> Candidate:
            matched = found_words(i)
            score_i = float(final[i])
            return Candidate(
                memory=memories[i] if moment is None else retimed(memories[i], moment),
                score=score_i,
                rank_score=score_i * float(self._factor[i]),
                coverage=float(covered[i]) / total,
                matches=tuple(matched),
                reason=why,
                would_fail=would_fail,
                places=tuple(place(i, w) for w in matched),
            )

        ranked_ids = self._ordered(np.flatnonzero(passed).astype(np.int32), rank)
        selected_list, walked, over = _select(
            ranked_ids, limit, memories.__getitem__, found_words, candidate
        )
        room_over = len(over) if explain is None else max(0, min(len(over), explain - len(walked)))
        walked += [candidate(i, "limit") for i in over[:room_over]]
        others_at = np.flatnonzero(live & (reason != 0)).astype(np.int32)
        status_at = np.flatnonzero(touched & ~eligible & (focus > 0)).astype(np.int32)
        total_left = len(walked) + len(over) - room_over + len(others_at) + len(status_at)
        room = None if explain is None else max(0, explain - len(walked))
        if room is not None and len(others_at) > room:
            if room == 0:
                others_at = _NO_POSITIONS
            else:
                # The best ``room`` by rank score, ties at the edge kept, then pi's order.
                ranks = rank[others_at]
                edge = np.partition(ranks, len(ranks) - room)[len(ranks) - room]
                others_at = others_at[ranks >= edge]
        others = self._ordered(others_at, rank)[:room]
        left = [*walked, *(candidate(i, REASON_CODES[reason[i]]) for i in others)]
        if explain is None or len(left) < explain:
            status_ids = self._ordered(status_at, rank)
            for i in status_ids[: None if explain is None else explain - len(left)]:
                why = EXCLUSIONS[self._excluded[i]] or "dormant"
                hypothetical = REASON_CODES[reason[i]] or (
                    "relative-cutoff" if final[i] < best * RELATIVE_CUTOFF else None
                )
                left.append(candidate(i, why, hypothetical))
        return replace(
            base,
            weights=weights,
            selected=tuple(selected_list),
            left_out=tuple(left),
            ranked=len(ranked_ids),
            unknown=unknown,
            left_out_total=total_left,
        )


def _select(
    ranked: list[int],
    limit: int,
    memory: Callable[[int], Memory],
    found: Callable[[int], list[str]],
    make: Callable[[int, str | None], Candidate],
) -> tuple[list[Candidate], list[Candidate], list[int]]:
    """§6.8: walk the ranked records; the selected, the skipped (with why), the rest."""
    selected: list[Candidate] = []
    skipped: list[Candidate] = []
    seen: set[str] = set()
    covered: dict[tuple[str, str], set[str]] = {}
    top = len(found(ranked[0])) if ranked else 0
    for n, i in enumerate(ranked):
        if len(selected) >= limit:
            return selected, skipped, ranked[n:]
        m = memory(i)
        words = found(i)
        key = fp(js_json([m.scope, m.content]))
        if key in seen:
            skipped.append(make(i, "duplicate"))
            continue
        previous = covered.setdefault((m.scope, m.kind), set())
        if len(words) >= 2 and top >= 3 and all(w in previous for w in words):
            skipped.append(make(i, "redundant"))
            continue
        seen.add(key)
        previous.update(words)
        selected.append(make(i, None))
    return selected, skipped, []


__all__ = ["RecallIndex"]


def _standing_key(m: Memory) -> tuple[Any, ...]:
    """Which version of a record this is: pi raises a record's revision with every
    write to it (an undo too), and stamps ``reinforcedAt`` alone when a learning run
    confirms it; so these name everything its index entry depends on but its moment."""
    return (m.revision, m.updated_at, m.reinforced_at)


def _static(m: Memory) -> tuple[float, float, float, float, float, float, float, bool]:
    """The figures of a record's quality that do not move with time: its confirmation,
    its kind's half-life, floor and dormancy horizon, and its evidence, utility and
    accuracy weights (``quality._standing`` takes the rest from the moment)."""
    half_life, floor, dormant_days = POLICY[m.kind]
    utility, accuracy = verdict_weights(
        m.utility.verdict if m.utility else None, m.accuracy.verdict if m.accuracy else None
    )
    return (
        confirmed_ms(m.updated_at, m.reinforced_at),
        half_life,
        floor,
        dormant_days,
        evidence_weight(m.kind, m.evidence.basis if m.evidence else None),
        utility,
        accuracy,
        m.layer == "pinned",
    )


class MovingIndex:
    """One recall index carried from moment to moment, for a replay that asks recall of
    the store at many moments (pi's past turns, newest first). Each moment's index is
    the previous one with the records that changed between them replaced, those that
    did not exist yet taken out, and every record's time-dependent columns (its quality
    factor and dormancy) computed for the moment at once, with the arithmetic of
    ``quality._standing`` in the same order, so that its recall is exactly that of
    ``RecallIndex(rows)`` (``tests/test_turns.py`` compares them prompt by prompt)."""

    def __init__(self, words_of: WordsOf = record_words) -> None:
        self._words_of = words_of
        self._index: RecallIndex | None = None
        self._rows: dict[str, Memory] = {}
        """The records of the last moment, as given (most are the same objects at the
        next moment: only the changed ones cost anything)."""
        self._figures = np.zeros((0, 8), dtype=np.float64)
        """Per position of the index: ``_static``'s figures of its record."""

    def at(self, rows: Sequence[Memory], now_ms: float) -> RecallIndex:
        """The index of exactly ``rows``: the records at one moment, each with its
        quality taken at ``now_ms`` (whatever moment the records carry: a candidate
        recall returns carries ``now_ms``)."""
        last, prev = self._index, self._rows
        if last is None:
            return self._build(rows, now_ms)
        changed: list[Memory] = []
        for m in rows:
            p = prev.get(m.id)
            if p is not m and (p is None or _standing_key(p) != _standing_key(m)):
                changed.append(m)
        current = {m.id: m for m in rows}
        if len(current) != len(rows):  # an id twice: what pi never writes; built afresh
            return self._build(rows, now_ms)
        new = last.updated(changed, self._words_of)
        by_id = new._by_id
        if len(prev) + sum(1 for m in changed if m.id not in prev) != len(rows):
            gone = [by_id.pop(i) for i in prev if i not in current]  # not created yet
            new._alive[np.array(gone, dtype=np.int64)] = False
        figures = self._figures
        if len(new._memories) > len(figures):
            grown = np.zeros((len(new._memories), 8), dtype=np.float64)
            grown[: len(figures)] = figures
            figures = grown
        for m in changed:
            figures[by_id[m.id]] = _static(m)
        self._apply_moment(new, figures, now_ms)
        self._index, self._rows, self._figures = new, current, figures
        return new

    def _build(self, rows: Sequence[Memory], now_ms: float) -> RecallIndex:
        built = RecallIndex((retimed(m, now_ms) for m in rows), self._words_of)
        built._moment = now_ms
        figures = np.array([_static(m) for m in built._memories], dtype=np.float64)
        self._index, self._rows = built, {m.id: m for m in rows}
        self._figures = figures.reshape(len(built._memories), 8)
        return built

    @staticmethod
    def _apply_moment(index: RecallIndex, figures: Floats, now_ms: float) -> None:
        """Every position's quality factor and dormancy at ``now_ms``: ``_standing``'s
        arithmetic, element by element in its order (a dead position's are not read)."""
        confirmed, half_life, floor, dormant_days, weight, utility, accuracy = figures[:, :7].T
        pinned = figures[:, 7] != 0
        age = np.maximum(0.0, (now_ms - confirmed) / DAY_MS)
        power = np.array([2**v for v in ((-age) / half_life).tolist()], dtype=np.float64)
        freshness = np.where(pinned, 1.0, floor + (1 - floor) * power)
        index._factor = freshness * weight * utility * accuracy
        index._dormant = ~pinned & (age > dormant_days)
        index._moment = now_ms
        index._requalify()
