"""One query over a recall index, in pi's steps (§6.6 to §6.8): each word's masks and
weight, the scores word by word in pi's order, the gates that leave a record out
(the first that fails gives the reason), then the walk that selects, and what was
left out and why. ``RecallIndex.recall`` runs it; it reads the index's columns."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from ..js import fp, js_json
from ..records.model import Memory, retimed
from ..write.redact import redact
from .features import facets, pasted_literals, query_features
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
    resolve_plan,
)

if TYPE_CHECKING:
    from .index import Bools, Floats, Positions, RecallIndex

Masks = tuple["Bools", "Bools", "Bools", "Bools | None"]
"""A word's places: mention, alias, body, origin (None: no origin has it)."""

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


class Query:
    """One evaluation of a prompt over ``ix``: built, then ``run`` once."""

    def __init__(
        self,
        ix: RecallIndex,
        prompt: str,
        purpose: Purpose,
        limit: int | None,
        recent_user_turns: Sequence[str],
        explain: int | None,
    ) -> None:
        self.ix = ix
        if purpose == "tool":
            prompt = redact(prompt)
            recent_user_turns = ()
        elif purpose != "inject":
            recent_user_turns = ()
        if limit is None:
            limit = SEARCH_LIMIT if purpose == "search" else INJECT_LIMIT
        self.explain = explain
        plan = resolve_plan(prompt, recent_user_turns)
        self.plan = plan
        query = query_features(plan.query)
        self.query = query
        self.context = {w: None for w in query_features(plan.context or "") if w not in query}
        include_dormant = purpose in WITH_DORMANT
        self.eligible = ix._eligible_search if include_dormant else ix._eligible_inject
        self.eligible_n = int(np.count_nonzero(self.eligible))
        self.base = Recall(
            prompt=prompt,
            purpose=purpose,
            limit=limit,
            plan=plan,
            turns=tuple(recent_user_turns),
            query=tuple(query),
            context=tuple(self.context),
            weights={},
            eligible=self.eligible_n,
            excluded=len(ix) - self.eligible_n,
        )
        self.words = [*query, *self.context]
        self.at = {w: k for k, w in enumerate(self.words)}
        self.weights: dict[str, float] = {}
        self.frequency: dict[str, int] = {}
        self.masks: list[Masks] = []
        self.found: list[Bools] = []

    def run(self) -> Recall:
        if not self.query:
            return self.base
        self._weigh()
        self._score()
        self._gate()
        return self._chosen()

    # ------------------------------------------------------------ the words

    def _weigh(self) -> None:
        """Each word's masks, its document frequency among the eligible, and its weight."""
        ix = self.ix
        origin_of = ix._origin_of
        n_origins = len(ix._origins)
        for word in self.words:
            m = ix._mask(ix._mention.get(word))
            alias_at = ix._alias.get(word)
            a = ix._mask(alias_at)
            o: Bools | None = None
            origins_at = ix._origin.get(word)
            if origins_at is not None:
                has = np.zeros(n_origins, dtype=np.bool_)
                has[origins_at] = True
                o = has[origin_of]
            listed = m
            if alias_at is not None or o is not None:
                listed = m | a if o is None else m | a | o
            df = int(np.count_nonzero(self.eligible & listed))
            self.frequency[word] = df
            idf = 1 + math.log((self.eligible_n + 1) / (df + 1)) if df else 1.0
            self.weights[word] = (2.0 if word.startswith("literal:") else 1.0) * idf
            b = m
            if ix._quoted_any:
                b = (m & ~ix._quoted) | ix._mask(ix._body.get(word))
            self.masks.append((m, a, b, o))

    # ------------------------------------------------------------ the scores

    def _score(self) -> None:
        """Word by word, in pi's order; each record gets at most one addition per word
        (the four places are disjoint), so every sum runs in pi's order."""
        n = len(self.ix._memories)
        query, weights, frequency = self.query, self.weights, self.frequency
        self.rare_limit = max(RARE_MIN, 0.02 * self.eligible_n)
        total = 0.0
        for word in query:
            total += weights[word]
        self.total = total
        score = np.zeros(n)
        covered = np.zeros(n)
        focus = np.zeros(n, dtype=np.int32)
        evidence = np.zeros(n, dtype=np.bool_)  # a query word outside a quoted question
        topic = np.zeros(n, dtype=np.bool_)  # a query word that names a topic
        for word, (m, a, b, o) in zip(self.words, self.masks, strict=True):
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
            self.found.append(union)
            if not in_query:
                continue
            np.add(covered, weight, out=covered, where=union)
            focus += union
            evidence |= b | a if o is None else b | a | o
            if word.startswith("literal:") or (
                word.startswith("concept:") and frequency[word] <= self.rare_limit
            ):
                topic |= union
            elif frequency[word] <= self.rare_limit and self.ix._alias.get(word) is not None:
                topic |= a
        self.score, self.covered, self.focus = score, covered, focus
        self.evidence, self.topic = evidence, topic
        # ``query`` is never empty here
        self.touched = np.logical_or.reduce(self.found) & self.ix._alive

    # ------------------------------------------------------------ the gates

    def _gate(self) -> None:
        """The gates, in pi's order: the first that fails gives the reason."""
        plan, query, context = self.plan, self.query, self.context
        weights, frequency, found, at = self.weights, self.frequency, self.found, self.at
        facet_words = facets()
        pasted = pasted_literals(plan.query) | pasted_literals(plan.context or "")
        mandatory = [w for w in self.words if w.startswith("literal:") and w not in pasted]
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
        self.unknown = tuple(w for w in query if frequency[w] == 0)
        unknown_question_word = any(w not in facet_words for w in self.unknown)
        many_words = len(query) >= 3
        none = self.ix._mask(None)
        focus = self.focus

        def missing_any(among: Iterable[str], where: Callable[[str], Bools]) -> Bools:
            out = none
            for w in among:
                out = out | ~where(w)
            return out

        def named(w: str) -> Bools:
            _, a, b, o = self.masks[at[w]]
            return b | a if o is None else b | a | o

        def faceted(w: str) -> Bools:
            _, a, b, _ = self.masks[at[w]]
            return b | a

        gates: list[Bools] = [
            missing_any(mandatory, lambda w: found[at[w]]),
            focus == 0,
            ~self.evidence,
            (missing_any(direct_names, named) | missing_any(direct_facets, faceted))
            if focused_direct
            else none,
        ]
        if named_subjects:
            gates.append(missing_any(named_subjects, lambda w: found[at[w]]))
        elif subjects:
            share = np.zeros(len(self.ix._memories))
            for w in subjects:
                np.add(share, weights[w], out=share, where=found[at[w]])
            gates.append(share / subject_weight < 0.6)
        else:
            gates.append(none)
        gates.append((self.covered / self.total < MIN_FOCUS_COVERAGE) & ~self.topic)
        gates.append((focus < 2) & many_words | (focus == 1) & unknown_question_word)
        self.reason = np.select(gates, list(range(1, len(gates) + 1)), default=0).astype(np.int8)

    # ------------------------------------------------------------ the walk

    def _found_words(self, i: int) -> list[str]:
        return [w for k, w in enumerate(self.words) if self.found[k][i]]

    def _place(self, i: int, w: str) -> str:
        m, a, b, _ = self.masks[self.at[w]]
        return "body" if b[i] else "alias" if a[i] else "mention" if m[i] else "origin"

    def _candidate(self, i: int, why: str | None, would_fail: str | None = None) -> Candidate:
        ix = self.ix
        matched = self._found_words(i)
        score_i = float(self.final[i])
        moment = ix._moment
        return Candidate(
            memory=ix._memories[i] if moment is None else retimed(ix._memories[i], moment),
            score=score_i,
            rank_score=score_i * float(ix._factor[i]),
            coverage=float(self.covered[i]) / self.total,
            matches=tuple(matched),
            reason=why,
            would_fail=would_fail,
            places=tuple(self._place(i, w) for w in matched),
        )

    def _chosen(self) -> Recall:
        """The relative cutoff, the walk that selects (§6.8), then what was left out,
        and why, the best first (at most ``explain`` of them)."""
        ix, reason, explain = self.ix, self.reason, self.explain
        final = self.final = self.score * ix._norm
        live = self.touched & self.eligible
        passed = live & (reason == 0)
        best = float(final[passed].max()) if passed.any() else 0.0
        cut = passed & (final < best * RELATIVE_CUTOFF)
        reason[cut] = _CUTOFF
        passed &= ~cut
        rank: Floats = final * ix._factor
        candidate = self._candidate
        ranked_ids = ix._ordered(np.flatnonzero(passed).astype(np.int32), rank)
        selected_list, walked, over = _select(
            ranked_ids, self.base.limit, ix._memories.__getitem__, self._found_words, candidate
        )
        room_over = len(over) if explain is None else max(0, min(len(over), explain - len(walked)))
        walked += [candidate(i, "limit") for i in over[:room_over]]
        others_at = np.flatnonzero(live & (reason != 0)).astype(np.int32)
        touched, eligible = self.touched, self.eligible
        status_at = np.flatnonzero(touched & ~eligible & (self.focus > 0)).astype(np.int32)
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
        others = ix._ordered(others_at, rank)[:room]
        left = [*walked, *(candidate(i, REASON_CODES[reason[i]]) for i in others)]
        if explain is None or len(left) < explain:
            status_ids = ix._ordered(status_at, rank)
            for i in status_ids[: None if explain is None else explain - len(left)]:
                why = EXCLUSIONS[ix._excluded[i]] or "dormant"
                hypothetical = REASON_CODES[reason[i]] or (
                    "relative-cutoff" if final[i] < best * RELATIVE_CUTOFF else None
                )
                left.append(candidate(i, why, hypothetical))
        return replace(
            self.base,
            weights=self.weights,
            selected=tuple(selected_list),
            left_out=tuple(left),
            ranked=len(ranked_ids),
            unknown=self.unknown,
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
