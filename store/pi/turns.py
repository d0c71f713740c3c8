"""What pi injected, turn by turn: every user prompt of pi's session files replayed on
the store as it was at the prompt's moment, and on the store as it is now.

pi does not log what it injects, but its recall before each agent turn is a pure
function of three things (``before_agent_start`` in pi-memory-evolution 0.4.0): the
records at that moment, the prompt, and the earlier user texts of the session's
branch (``recentUserMessages``). So a prompt is replayed exactly where the store's
past is exact (``Reads.replay``); older moments are refused there, never guessed.

``recentUserMessages`` reads the context pi builds for the branch (the newest
compaction on it, the messages it kept, then what came after), newest first: each
user message's text parts joined by newlines, redacted, clipped to 2,048 bytes and
trimmed; empty ones and slash commands skipped; a topic-less message right after
another topic-less one skipped; six at most, returned oldest first. The prompt being
answered is not yet in the session when pi asks (its message is written once the
turn starts), so the context is the branch up to the prompt's parent.

What cannot be known: pi moves a record's confirmation stamp (``reinforcedAt``) with
no event, and only forward. A stamp a matched record carries now, dated at or before
the prompt, was in force then, and is used; one dated after it replaced what was there
(an earlier confirmation, or none): where that could change the turn, it is marked
approximate, and its note says which record's date is not known.
The replay is the 0.4.0 recall ("as pi 0.4.0 would recall"): a session older than
the store's schema was served by an older pi.

No Textual; everything read from session files is untrusted text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import NotInLog
from ..js import iso
from ..records.model import Memory, retimed

if TYPE_CHECKING:
    from ..recall.index import RecordWords
    from ..recall.moving import MovingIndex

from .prompts import Prompt

RECALL_VERSION = "0.4.0"
"""The recall the replay runs (pi-memory-evolution's release)."""


@dataclass(frozen=True, slots=True)
class Turn:
    """One prompt, what pi injected then and what it would inject now."""

    prompt: Prompt
    then: tuple[str, ...] | None
    """The records injected then, in order (None: the store's past is not known then)."""
    then_digest: str | None
    now: tuple[str, ...]
    now_digest: str | None
    changed: tuple[str, ...]
    """Records injected both then and now whose digest line differs."""
    note: str = ""
    """Why ``then`` is unknown, or why it is approximate."""
    approximate: bool = False

    @property
    def dropped(self) -> tuple[str, ...]:
        """Injected then, no longer now."""
        return tuple(i for i in self.then or () if i not in self.now)

    @property
    def added(self) -> tuple[str, ...]:
        """Injected now, not then."""
        return () if self.then is None else tuple(i for i in self.now if i not in self.then)

    @property
    def differs(self) -> bool:
        """Known then, and the same prompt would get something else now."""
        return self.then is not None and bool(self.dropped or self.added or self.changed)


# ------------------------------------------------------------------ session files


# ------------------------------------------------------------------ the replay


Injected = tuple[tuple[str, ...], str | None, dict[str, str], set[str]]


class TurnMemo(Protocol):
    """Where replayed turns are kept between runs (the app's cache directory): a turn of
    the settled past never changes, so only new prompts are replayed."""

    def get(self, key: str) -> dict[str, Any] | None: ...

    def put(self, key: str, value: dict[str, Any]) -> None: ...

    def save(self) -> None: ...

    anchor: list[list[Any]] | None
    """The events the kept turns were replayed from (``[rowid, id]`` of the log's
    first and newest), None when unknown; ``clear`` drops every kept turn."""

    def clear(self) -> None: ...


async def log_anchor(store: Any) -> list[list[Any]]:
    """The first and the newest event of the store's log (``[rowid, id]`` each): a log
    that only grew keeps both; another store at the same path has other ids."""
    rows = await store.query(
        "SELECT rowid, id FROM events WHERE rowid IN ((SELECT min(rowid) FROM events), "
        "(SELECT max(rowid) FROM events)) ORDER BY rowid"
    )
    return [[int(r[0]), str(r[1])] for r in rows]


async def _anchored(store: Any, memo: TurnMemo) -> list[list[Any]]:
    """Drop ``memo``'s turns unless the events they were replayed from are still the
    store's (the same ids at the same rowids): a store replaced at the same path, or a
    log rewritten, gets nothing kept. Returns the anchor to keep with the new turns."""
    saved = memo.anchor
    now = await log_anchor(store)
    if not saved or not all(isinstance(pair, list) and len(pair) == 2 for pair in saved):
        memo.clear()
        return now
    wanted = {int(rowid): str(eid) for rowid, eid in saved if isinstance(rowid, int)}
    found = await store.query(
        f"SELECT rowid, id FROM events WHERE rowid IN ({','.join('?' * len(wanted))})",
        list(wanted),
    )
    if {int(r[0]): str(r[1]) for r in found} != wanted:
        memo.clear()
    return now


SHOWN = "shown:"
"""A memo's key prefix for a turn as the last replay showed it (then and now)."""


def _shown(t: Turn) -> dict[str, Any]:
    return {
        "then": None if t.then is None else list(t.then),
        "thenDigest": t.then_digest,
        "now": list(t.now),
        "nowDigest": t.now_digest,
        "changed": list(t.changed),
        "note": t.note,
        "approximate": t.approximate,
    }


def last_shown(prompts: Sequence[Prompt], memo: TurnMemo) -> list[Turn] | None:
    """Every prompt's turn as the last replay showed it, read from ``memo`` without the
    store: what a warm open paints first, while the replay checks it against the store
    now. None when a prompt has none (a new prompt, or a memo from before)."""
    out = []
    for prompt in prompts:
        kept = memo.get(SHOWN + turn_key(prompt))
        if kept is None:
            return None
        try:
            then = None if kept["then"] is None else tuple(str(i) for i in kept["then"])
            out.append(Turn(
                prompt, then, kept["thenDigest"], tuple(str(i) for i in kept["now"]),
                kept["nowDigest"], tuple(str(i) for i in kept["changed"]), str(kept["note"]),
                kept["approximate"] is True,
            ))  # fmt: skip
        except (KeyError, TypeError):
            return None  # a memo that does not read as expected: the replay answers
    return out


def turn_key(p: Prompt) -> str:
    """A prompt's identity: its place, moment, text and context, and the recall's."""
    from ..js import fp, js_json

    return fp(js_json([RECALL_VERSION, str(p.file), p.entry_id, p.moment_ms, p.text,
                       list(p.recent)]))  # fmt: skip


class _Words:
    """Each text's words extracted once for every replay (the costly part of an index)."""

    def __init__(self) -> None:
        from ..recall.index import text_words  # numpy: imported only when turns are replayed

        self._extract = text_words
        self._known: dict[tuple[str, tuple[str, ...]], RecordWords] = {}

    def __call__(self, m: Memory) -> RecordWords:
        key = (m.content, tuple(m.search_terms))
        found = self._known.get(key)
        if found is None:
            found = self._known[key] = self._extract(m.content, m.search_terms)
        return found


def injected_by(index: Any, prompt: Prompt) -> Injected:
    """What pi injects for ``prompt`` over a recall index (``RecallIndex``): the ids in
    order, pi's digest, each id's digest line, and every record that matched it."""
    from ..recall.recall import digest, runtime_digest

    result = index.recall(prompt.text, purpose="inject", recent_user_turns=prompt.recent)
    lines = digest(result)
    included = tuple(d.memory_id for d in lines if d.included)
    matched = {c.memory.id for c in (*result.selected, *result.left_out)}
    return included, runtime_digest(lines), {d.memory_id: d.line for d in lines}, matched


def _injected(records: Sequence[Memory], prompt: Prompt, words: _Words) -> Injected:
    """``injected_by`` over an index of ``records`` (their words extracted once)."""
    from ..recall.index import RecallIndex

    return injected_by(RecallIndex(records, words), prompt)


async def replay_turns(
    store: Any,
    prompts: Sequence[Prompt],
    memo: TurnMemo | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[Turn]:
    """Each prompt replayed on the store as it was at its moment and as it is now
    (``store``: a ``MemoryStore`` opened on now). A moment the store's past does not
    give exactly has ``then`` None and the refusal as its note. With ``memo``, a turn
    of the settled past (before the newest event) is read from it while the records it
    matched carry the confirmation stamps they had when it was kept."""
    from ..recall.index import RecallIndex
    from ..recall.moving import MovingIndex

    words = _Words()
    moving = MovingIndex(words)  # carried from each prompt's moment to the one before
    now_ms = store.now_ms()
    current = (await store.load_memories()).memories
    by_id = {m.id: m for m in current}
    settled = await store.newest_event_ms() if memo is not None else None
    anchor = await _anchored(store, memo) if memo is not None else None
    now_index = RecallIndex(current, words)
    out: list[Turn] = []
    # Newest first: the event log is walked back once over all of them, and each
    # moment's index is the one after it with what changed in between replaced.
    newest_first = sorted(prompts, key=lambda p: -p.moment_ms)
    keys = [turn_key(p) for p in newest_first] if memo is not None else []
    for done, prompt in enumerate(newest_first):
        if progress is not None and done % 10 == 0:
            progress(done, len(prompts))
        now_ids, now_digest, now_lines, _ = injected_by(now_index, prompt)
        if prompt.moment_ms > now_ms:
            out.append(Turn(prompt, None, None, now_ids, now_digest, (), "after the store's now"))
            continue
        at = iso(prompt.moment_ms)
        key = keys[done] if memo is not None else ""
        kept = memo.get(key) if memo is not None else None
        if kept is not None and not _still(kept, by_id, at):
            kept = None
        if kept is None:
            try:
                kept = await _replay_one(store, prompt, words, by_id, at, moving)
            except NotInLog as exc:
                out.append(Turn(prompt, None, None, now_ids, now_digest, (), str(exc)))
                continue
            if memo is not None and settled is not None and prompt.moment_ms < settled:
                memo.put(key, kept)
        then_ids = tuple(kept["then"])
        then_lines: dict[str, str] = kept["lines"]
        changed = tuple(
            i for i in then_ids if i in now_lines and _moved(then_lines.get(i), now_lines[i])
        )
        unknown = kept["unknown"]
        note = (
            f"approximate: pi confirmed {', '.join(i[:8] for i in unknown)} again after "
            "then, with no event, so its confirmation date then is not known (an earlier "
            "one, or none), and the turn and its digest depend on it"
            if unknown
            else ""
        )
        out.append(Turn(prompt, then_ids, kept["digest"], now_ids, now_digest, changed, note,
                        bool(unknown)))  # fmt: skip
    if memo is not None:
        for turn, key in zip(out, keys, strict=True):  # one turn per prompt, in order
            memo.put(SHOWN + key, _shown(turn))
        memo.anchor = anchor
        memo.save()
    order = {id(p): n for n, p in enumerate(prompts)}
    out.sort(key=lambda t: order.get(id(t.prompt), 0))
    return out


_AS_OF = ("aging", "confirmed")
"""Digest fields that move with time alone, not with a change to the record."""


def _moved(then: str | None, now: str) -> bool:
    """Did the record change between its two digest lines (not counting what time alone
    moves: its aging and confirmation date)?"""
    import json

    try:
        a, b = json.loads(then or "null"), json.loads(now)
    except ValueError:
        return then != now
    if not isinstance(a, dict) or not isinstance(b, dict):
        return then != now
    return {k: v for k, v in a.items() if k not in _AS_OF} != {
        k: v for k, v in b.items() if k not in _AS_OF
    }


def _confirmations(
    then: dict[str, str | None], seen: dict[str, object], by_id: dict[str, Memory], at: str
) -> tuple[dict[str, str], list[str]]:
    """What the stamps pi moved with no event were at ``at``, for the records a prompt
    matched (``then``: each one's stamp as the log gives it; ``seen``: the stamp the
    first event after ``at`` wrote, where one did, else the record's now). pi confirms a
    record again with no event, and a stamp only moves forward: a stamp seen after
    ``at`` and dated at or before it was already in force then (certain: the first dict,
    to use); one dated after it replaced what was there then, an earlier confirmation
    or none (not known: the list)."""
    certain: dict[str, str] = {}
    unknown: list[str] = []
    for i, stamp in sorted(then.items()):
        m = by_id.get(i)
        if m is None:
            continue
        later = seen.get(i, m.reinforced_at)
        later = later if isinstance(later, str) else None
        if later == stamp:
            continue
        if later is not None and later <= at:
            certain[i] = later
        else:
            unknown.append(i)
    return certain, unknown


def _still(kept: dict[str, Any], by_id: dict[str, Memory], at: str) -> bool:
    """A kept turn holds while its matched records carry the stamps they had when it
    was kept (a stamp pi moved since may change what is known of then)."""
    try:
        now = kept["now"]
        return all((m := by_id.get(i)) is not None and m.reinforced_at == stamp
                   for i, stamp in now.items())  # fmt: skip
    except (KeyError, TypeError, AttributeError):
        return False


async def _replay_one(
    store: Any,
    prompt: Prompt,
    words: _Words,
    by_id: dict[str, Memory],
    at: str,
    moving: MovingIndex,
) -> dict[str, Any]:
    past = await store.replay(prompt.moment_ms, retime=False)  # the moving index retimes
    then_records = [r for r in past.rows if isinstance(r, Memory)]
    index = moving.at(then_records, past.when)
    then_ids, then_digest, then_lines, matched = injected_by(index, prompt)
    stamps = {r.id: r.reinforced_at for r in then_records if r.id in matched}
    seen = await store.stamps_after(past.boundary, list(stamps))
    certain, unknown = _confirmations(stamps, seen, by_id, at)
    if certain:  # the stamps pi moved with no event that were in force then: used
        then_records = [replace(r, reinforced_at=certain[r.id]) if r.id in certain else r
                        for r in then_records]  # fmt: skip
        then_ids, then_digest, then_lines, _ = _injected(
            [retimed(r, past.when) for r in then_records], prompt, words
        )
    if unknown:  # not known then: the turn is approximate only if it would differ
        # then is between the log's stamp (used above) and a confirmation at the very
        # moment; the digest names the date, and a later one only raises the quality
        later = set(unknown)
        other = [replace(r, reinforced_at=at) if r.id in later else r for r in then_records]
        alt_ids, alt_digest, _, _ = _injected([retimed(r, past.when) for r in other], prompt, words)
        if (alt_ids, alt_digest) == (then_ids, then_digest):
            unknown = []  # it would not have mattered
    now = {i: by_id[i].reinforced_at for i in stamps if i in by_id}
    return {"then": list(then_ids), "digest": then_digest, "lines": then_lines,
            "now": now, "unknown": unknown}  # fmt: skip
