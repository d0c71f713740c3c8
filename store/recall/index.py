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

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..js import parse_ms
from ..records.model import Memory
from ..records.quality import (
    factor_dormant,
)
from .features import document_words, locale_key
from .query import EXCLUSIONS, Query
from .recall import (
    Purpose,
    Recall,
    origin_words,
    without_quoted_questions,
)

Bools = npt.NDArray[np.bool_]
Positions = npt.NDArray[np.int32]
Floats = npt.NDArray[np.float64]


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
        The evaluation itself, step by step, is ``query.Query``'s.
        """
        return Query(self, prompt, purpose, limit, recent_user_turns, explain).run()


__all__ = ["RecallIndex"]
