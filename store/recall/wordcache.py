"""The recall index's words, kept between processes (a cache, never the truth).

Extracting a record's words (``index.record_words``: redaction, literals,
concepts, ICU segmentation) is most of what building a recall index costs: about
20 s of CPU at 100,000 records on a slow machine, paid again by every CLI
``search`` and every dashboard that recalls. The words depend only on the
record's text, so they are kept keyed by each record's id and a fingerprint of
the text they came from; a record whose text changed, or that is new, is
extracted again and the rest are read.

The bytes (``dumps``/``loads``) are::

    MAGIC | keyed digest of the rest | header length (8 bytes, little-endian) | header (JSON)
          | words | bounds

the header naming the format and what the words were made with (``tag()``: the
code that makes the words, hashed, and the ICU that segments them), the counts, the ids, the
fingerprints and the distinct words; ``words`` is every record's words as int32
numbers into that list, and ``bounds`` three int64 ends per record (mentions,
search terms, quoted body; a body of -1 is "the same as its mentions").

The digest is keyed (``key``: a secret the caller keeps where only the user can read
it), so bytes written by anyone without the key, or changed by hand, are refused as
damage is. Nothing read is trusted: bytes that are not exactly this format, made with other
rules, or with any count, bound or number out of place give an empty cache (every
record extracted again). Where the bytes live is the caller's business (no file here).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import struct
import sys
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ..lifeline import die_with_parent
from ..records.model import Memory
from .features import ICU_AVAILABLE
from .index import RecordWords, record_words, text_words
from .pool import children_quiet, started_whole

if TYPE_CHECKING:
    pass

MAGIC = b"memevo-words\x00v1\n"
FORMAT = 1
_RULES = (
    "recall/features.py",
    "recall/concepts.py",
    "write/redact.py",
    "recall/recall.py",
    "js.py",
)
"""The modules whose code decides a record's words (paths under ``store/``)."""


@lru_cache(maxsize=1)
def tag() -> str:
    """What the words are made with: a hash of the code that makes them and the ICU
    that segments them. Words made by other code, or another ICU, are not used."""
    h = hashlib.blake2b(digest_size=12)
    here = Path(__file__).parents[1]
    for name in _RULES:
        try:
            h.update((here / name).read_bytes())
        except OSError:  # not files (a zipped install): the version stands for them
            h.update(f"{name}?{_version()}".encode())
    icu = "fallback"
    if ICU_AVAILABLE:
        import icu as _icu

        icu = f"icu-{getattr(_icu, 'ICU_VERSION', '?')}"
    return f"{h.hexdigest()}/{icu}"


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("memevo-tui")
    except PackageNotFoundError:
        return "unknown"


MAX_HEADER = 1 << 30
_LEN = struct.Struct("<Q")
_DIGEST = 16
POOL_MIN = 5_000
"""Fewer records to extract than this: worker processes cost more than they save."""


def fingerprint(m: Memory) -> str:
    """What a record's words depend on (its text and its search terms), hashed."""
    h = hashlib.blake2b(digest_size=12)
    h.update(m.content.encode("utf-8", "surrogatepass"))
    for term in m.search_terms:
        h.update(b"\x00")
        h.update(term.encode("utf-8", "surrogatepass"))
    return h.hexdigest()


class WordCache:
    """Words per record id, each with the fingerprint it was made for; called as the
    index's ``words_of``: a record whose fingerprint matches is read, any other is
    extracted (and kept, so ``dumps`` writes what the next process needs)."""

    __slots__ = ("_checked", "_held", "_kept", "hits", "misses")

    def __init__(
        self, entries: dict[str, tuple[str, RecordWords]] | None = None, kept: _Kept | None = None
    ) -> None:
        self._held = entries if entries is not None else None if kept is not None else {}
        self._kept = kept
        """The bytes' columns, until a record's words are asked for one by one."""
        self._checked: dict[str, tuple[Memory, str]] = {}
        """The fingerprints ``fill`` took, by record id, with the record object they
        were taken of: the index's call for that same object does not hash it again."""
        self.hits = 0
        self.misses = 0

    @property
    def _entries(self) -> dict[str, tuple[str, RecordWords]]:
        """Words per record id, made from the kept columns when first needed."""
        if self._held is None:
            assert self._kept is not None
            self._held = self._kept.entries()
        return self._held

    def __len__(self) -> int:
        if self._held is None and self._kept is not None:
            return len(self._kept.ids)
        return len(self._entries)

    def prebuilt(self, memories: Sequence[Memory]) -> Prebuilt | None:
        """The index's postings of ``memories`` built at once from the kept columns,
        when they are exactly the records kept, in the same order, each with the text
        its words were made of (else None: the index reads them one by one)."""
        kept = self._kept
        if kept is None or not self._all_kept(memories):
            return None
        self._checked.clear()
        self.hits += len(memories)
        return kept.postings()

    def _current(self, m: Memory) -> tuple[str, RecordWords | None]:
        """The record's fingerprint, and its words if the cache holds them for it."""
        checked = self._checked.pop(m.id, None)
        mark = checked[1] if checked is not None and checked[0] is m else fingerprint(m)
        known = self._entries.get(m.id)
        return mark, known[1] if known is not None and known[0] == mark else None

    def __call__(self, m: Memory) -> RecordWords:
        mark, known = self._current(m)
        if known is not None:
            self.hits += 1
            return known
        self.misses += 1
        words = record_words(m)
        self._entries[m.id] = (mark, words)
        return words

    def fill(
        self,
        memories: Sequence[Memory],
        workers: int,
        progress: Callable[[int, int], None] | None = None,
    ) -> int:
        """Extract, in ``workers`` processes, the words of the records the cache does
        not hold as they are now (a first build: both cores of a laptop rather than
        one); ``progress(done, total)`` after each part. How many were extracted.
        Fewer than ``POOL_MIN`` such records, or one worker, and nothing is done here
        (the index extracts them as it goes)."""
        if self._all_kept(memories):
            return 0  # the index builds them at once (``prebuilt``)
        entries = self._entries
        missing: list[tuple[Memory, str]] = []
        checked = self._checked
        for m in memories:
            mark, known = self._current(m)
            checked[m.id] = (m, mark)
            if known is None:
                missing.append((m, mark))
        if workers < 2 or len(missing) < POOL_MIN:
            return 0
        import multiprocessing

        size = max(500, len(missing) // (workers * 8))
        parts = [missing[i : i + size] for i in range(0, len(missing), size)]
        done = 0
        # spawn: a fresh interpreter per worker, never a fork of this process's threads.
        # A pool, not an executor: leaving its block for any reason (a signal turned into
        # an exception, a Ctrl+C) terminates the workers at once rather than waiting for
        # their work; and each worker ends with this process should it die first.
        context = multiprocessing.get_context("spawn")
        with (
            children_quiet(),
            started_whole(lambda: context.Pool(workers, initializer=die_with_parent)) as pool,
        ):
            texts = [[(m.content, m.search_terms) for m, _ in part] for part in parts]
            for part, found in zip(parts, pool.imap(_texts_words, texts), strict=True):
                for (m, mark), (mentions, alias, body) in zip(part, found, strict=True):
                    entries[m.id] = (mark, (
                        tuple(map(sys.intern, mentions)), tuple(map(sys.intern, alias)),
                        None if body is None else tuple(map(sys.intern, body)),
                    ))  # fmt: skip
                done += len(part)
                self.misses += len(part)
                if progress is not None:
                    progress(done, len(missing))
        return done

    def _all_kept(self, memories: Sequence[Memory]) -> bool:
        """The kept columns hold exactly ``memories``, in order, their texts unchanged
        (their fingerprints are kept for ``prebuilt``)."""
        kept = self._kept
        if kept is None or self._held is not None or len(memories) != len(kept.ids):
            return False
        checked = self._checked
        for m, memory_id, mark in zip(memories, kept.ids, kept.marks, strict=True):
            taken = checked.get(m.id)
            if taken is None or taken[0] is not m:  # each record hashed once (``fill``)
                taken = checked[m.id] = (m, fingerprint(m))
            if m.id != memory_id or taken[1] != mark:
                return False
        return True

    def keep_only(self, ids: Iterable[str]) -> None:
        """Forget the records not among ``ids`` (gone from the store)."""
        self._checked.clear()
        wanted = set(ids)
        if self._held is None and self._kept is not None and wanted == set(self._kept.ids):
            return  # every record kept is still there: nothing to forget
        for gone in [k for k in self._entries if k not in wanted]:
            del self._entries[gone]

    # ------------------------------------------------------------ bytes

    def dumps(self, key: bytes = b"") -> bytes:
        ids = list(self._entries)
        marks: list[str] = []
        table: dict[str, int] = {}
        numbers: list[int] = []
        bounds: list[int] = []
        for memory_id in ids:
            mark, (mentions, alias, body) = self._entries[memory_id]
            marks.append(mark)
            for part in (mentions, alias, body):
                if part is None:
                    bounds.append(-1)
                    continue
                for word in part:
                    n = table.get(word)
                    if n is None:
                        n = table[word] = len(table)
                    numbers.append(n)
                bounds.append(len(numbers))
        header = json.dumps(
            {"format": FORMAT, "tag": tag(), "records": len(ids), "numbers": len(numbers),
             "ids": ids, "fingerprints": marks, "words": list(table)},
            ensure_ascii=True, separators=(",", ":"),
        ).encode("ascii")  # fmt: skip
        rest = b"".join((
            _LEN.pack(len(header)), header,
            np.asarray(numbers, dtype="<i4").tobytes(),
            np.asarray(bounds, dtype="<i8").tobytes(),
        ))  # fmt: skip
        return MAGIC + _digest(rest, key) + rest

    @classmethod
    def loads(cls, data: bytes, key: bytes = b"") -> WordCache:
        """The cache these bytes hold, or an empty one if they are anything else (or
        were not written with ``key``)."""
        try:
            kept = _decode(data, key)
        except (ValueError, TypeError, KeyError, struct.error, UnicodeDecodeError):
            kept = None
        return cls(kept=kept) if kept is not None else cls()


def _texts_words(texts: list[tuple[str, tuple[str, ...]]]) -> list[RecordWords]:
    """Words of many texts (run in a worker process of ``WordCache.fill``)."""
    return [text_words(content, terms) for content, terms in texts]


def _digest(body: bytes | memoryview, key: bytes = b"") -> bytes:
    return hashlib.blake2b(body, digest_size=_DIGEST, key=key[:64]).digest()


def _decode(data: bytes, key: bytes = b"") -> _Kept | None:
    if not data.startswith(MAGIC):
        return None
    start = len(MAGIC) + _DIGEST
    if not hmac.compare_digest(data[len(MAGIC) : start], _digest(memoryview(data)[start:], key)):
        return None  # damaged (or cut short) since it was written
    (size,) = _LEN.unpack_from(data, start)
    start += _LEN.size
    if size > MAX_HEADER or start + size > len(data):
        return None
    header: Any = json.loads(data[start : start + size].decode("ascii"))
    start += size
    if not isinstance(header, dict) or header.get("format") != FORMAT or header.get("tag") != tag():
        return None
    records, count = header["records"], header["numbers"]
    ids, marks, words = header["ids"], header["fingerprints"], header["words"]
    if not (
        type(records) is int
        and type(count) is int
        and 0 <= records == len(ids) == len(marks)
        and count >= 0
        and isinstance(words, list)
        and all(type(x) is str for x in ids)
        and all(type(x) is str for x in marks)
        and all(type(x) is str and x for x in words)
        and len(data) == start + 4 * count + 8 * 3 * records
    ):
        return None
    numbers = np.frombuffer(data, dtype="<i4", count=count, offset=start)
    bounds = np.frombuffer(data, dtype="<i8", count=3 * records, offset=start + 4 * count)
    if count and (int(numbers.min()) < 0 or int(numbers.max()) >= len(words)):
        return None
    bounds = bounds.reshape(records, 3)
    starts = _starts(ids, len(numbers), bounds)
    if starts is None:
        return None
    return _Kept(ids, marks, [sys.intern(w) for w in words], numbers, bounds, starts)


def _starts(
    ids: list[str], count: int, bounds: npt.NDArray[np.int64]
) -> npt.NDArray[np.int64] | None:
    """Where each record's words start (None: the ends are out of place, or an id is
    there twice)."""
    records = len(ids)
    if records == 0:
        return np.zeros(0, dtype=np.int64) if count == 0 else None
    mention, alias, body = bounds[:, 0], bounds[:, 1], bounds[:, 2]
    ends = np.where(body == -1, alias, body)
    starts = np.concatenate((np.zeros(1, dtype=np.int64), ends[:-1]))
    ordered = (
        (starts <= mention) & (mention <= alias) & (alias <= count)
        & ((body == -1) | ((alias <= body) & (body <= count)))
    )  # fmt: skip
    if not bool(ordered.all()) or int(ends[-1]) != count or len(set(ids)) != records:
        return None
    return starts


class _Kept:
    """The bytes' columns as read: every record's words as numbers into ``words``,
    and three ends per record (mentions, search terms, quoted body or -1)."""

    __slots__ = ("bounds", "ids", "marks", "numbers", "starts", "words")

    def __init__(
        self,
        ids: list[str],
        marks: list[str],
        words: list[str],
        numbers: npt.NDArray[np.int32],
        bounds: npt.NDArray[np.int64],
        starts: npt.NDArray[np.int64],
    ) -> None:
        self.ids, self.marks, self.words = ids, marks, words
        self.numbers, self.bounds, self.starts = numbers, bounds, starts
        """``starts``: where each record's words start (``_starts``)."""

    def entries(self) -> dict[str, tuple[str, RecordWords]]:
        """Each record's words, by id, as ``WordCache`` holds them."""
        table = self.words
        every = [table[n] for n in self.numbers.tolist()]
        entries: dict[str, tuple[str, RecordWords]] = {}
        at = 0
        for r, (mention_end, alias_end, body_end) in enumerate(self.bounds.tolist()):
            mentions = tuple(every[at:mention_end])
            alias = tuple(every[mention_end:alias_end])
            at = alias_end
            body: tuple[str, ...] | None = None
            if body_end != -1:
                body = tuple(every[at:body_end])
                at = body_end
            entries[self.ids[r]] = (self.marks[r], (mentions, alias, body))
        return entries

    def postings(self) -> Prebuilt:
        """The index's postings of every record, in the order kept, built at once: for
        each word, the positions of the records whose words hold it (a record that
        holds it twice, twice), as ``RecallIndex`` builds them one record at a time."""
        starts = self.starts
        mention, alias, body = self.bounds[:, 0], self.bounds[:, 1], self.bounds[:, 2]
        quoted = body != -1
        ends = np.where(quoted, body, alias)
        records = np.arange(len(self.ids), dtype=np.int32)
        owner = np.repeat(records, ends - starts)
        place = np.arange(len(self.numbers), dtype=np.int64)
        in_mention = place < mention[owner]
        in_alias = ~in_mention & (place < alias[owner])
        in_body = ~in_mention & ~in_alias
        sizes = np.where(quoted, body - alias, mention - starts)
        norm = 0.8 + 0.2 * np.minimum(1.0, 12 / np.maximum(1, sizes))
        return Prebuilt(
            mention=self._table(in_mention, owner),
            alias=self._table(in_alias, owner),
            body=self._table(in_body, owner),
            norm=norm.astype(np.float64),
            quoted=quoted,
        )

    def _table(
        self, chosen: npt.NDArray[np.bool_], owner: npt.NDArray[np.int32]
    ) -> dict[str, npt.NDArray[np.int32]]:
        numbers, owners = self.numbers[chosen], owner[chosen]
        if not len(numbers):
            return {}
        order = np.argsort(numbers, kind="stable")  # each word's records, in order
        numbers, owners = numbers[order], owners[order]
        cuts = np.flatnonzero(np.diff(numbers)) + 1
        firsts = np.concatenate((np.zeros(1, dtype=np.int64), cuts))
        words = self.words
        return {
            words[n]: part
            for n, part in zip(
                numbers[firsts].tolist(), np.split(owners.astype(np.int32), cuts), strict=True
            )
        }


class Prebuilt:
    """What ``RecallIndex`` builds from records' words, built from a kept cache."""

    __slots__ = ("alias", "body", "mention", "norm", "quoted")

    def __init__(
        self,
        *,
        mention: dict[str, npt.NDArray[np.int32]],
        alias: dict[str, npt.NDArray[np.int32]],
        body: dict[str, npt.NDArray[np.int32]],
        norm: npt.NDArray[np.float64],
        quoted: npt.NDArray[np.bool_],
    ) -> None:
        self.mention, self.alias, self.body = mention, alias, body
        self.norm, self.quoted = norm, quoted
