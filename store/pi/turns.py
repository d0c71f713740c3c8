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

import functools
import re
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Protocol

from ..errors import NotInLog
from ..js import iso
from ..recall.features import MAX_HISTORY_TURN_BYTES, clean_query
from ..records.model import Memory, retimed
from .sessions import Session, SessionUnreadable, read_session

if TYPE_CHECKING:
    from ..recall.index import RecordWords
    from ..recall.moving import MovingIndex

RECALL_VERSION = "0.4.0"
"""The recall the replay runs (pi-memory-evolution's release)."""
RECENT_TURNS = 6
SCAN_LIMIT = 4096
_SLASH_COMMAND = re.compile(r"^/[A-Za-z0-9_]")


@dataclass(frozen=True, slots=True)
class Prompt:
    """One user prompt of a session, with what pi's recall read beside it."""

    file: Path
    session_id: str
    project: str
    """The session's working directory (pi's ``cwd``)."""
    entry_id: str
    moment_ms: int
    text: str
    recent: tuple[str, ...]
    """The branch's earlier user texts, as ``recentUserMessages`` gives them (oldest first)."""
    branch: int
    """0: on the session's active branch; 1, 2…: another branch, in the file's order."""
    seen: tuple[str, ...] = ()
    """For each of ``recent``: "" when the model saw that text as written, "edited" or
    "omitted" when a ``context_edit`` (pi 1.6) changed what the model saw. pi's memory
    recall read the original either way (``buildContextEntries``, raw entries)."""


@dataclass(frozen=True, slots=True)
class SessionPrompts:
    """A session file and its prompts in branch order."""

    file: Path
    session_id: str
    project: str
    started: str
    prompts: tuple[Prompt, ...]
    branches: int
    corrupt: int
    problem: str = ""
    """Why the file could not be read ("" when it was)."""
    note: str = ""
    """What was read but not used (entries in a ``parentId`` cycle), "" for nothing."""
    carried: int = 0
    """User prompts a fork or a clone copied from its ``parentSession``: its context,
    not turns of its own (pi ran no recall for them in this file)."""
    parent: str = ""
    """The session file it was forked or cloned from (its header's ``parentSession``)."""


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


def session_files(
    root: Path, project: str = "", problems: list[tuple[Path, str]] | None = None
) -> list[Path]:
    """Every session file under pi's sessions folder (one folder per working
    directory, or flat, as ``--session-dir`` writes them), oldest first by name; only
    ``project``'s folder when given. A folder that cannot be read is said in
    ``problems`` (its sessions are missing from what is counted), never skipped
    silently; a missing root is no sessions."""
    from .folders import cwd_folder

    def unreadable(folder: Path, exc: OSError) -> None:
        if problems is not None and not isinstance(exc, FileNotFoundError):
            why = exc.strerror or type(exc).__name__
            problems.append((folder, f"folder unreadable ({why}); its sessions are not counted"))

    folders = [root / cwd_folder(project)] if project else [root]
    if not project:
        try:
            folders += sorted(p for p in root.iterdir() if p.is_dir() and not p.is_symlink())
        except OSError as exc:
            unreadable(root, exc)
            return []
    found: list[Path] = []
    for folder in folders:
        try:
            found += sorted(
                f for f in folder.iterdir()
                if f.suffix == ".jsonl" and not f.is_symlink() and not f.is_dir()
            )  # fmt: skip
        except OSError as exc:
            unreadable(folder, exc)
            continue
    return sorted(found, key=lambda f: f.name)


def user_text(message: Any) -> str:
    """A user message's text as pi-memory-evolution reads it: a string, or its text
    parts joined by newlines."""
    if not isinstance(message, dict):
        return ""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(
        p["text"]
        for p in content
        if isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str)
    )


Lines = Callable[[str], dict[str, Any]]
"""An entry's line, parsed, by its id (``Session.data``, or ``_LineMemo.data``)."""


def context_messages(
    session: Session, path: Sequence[str], data: Lines | None = None
) -> list[dict[str, Any]]:
    """The messages of the context pi builds for a branch (``buildContextEntries``),
    oldest first: after the newest compaction on ``path``, its kept messages (its
    ``retainedTail``, or the entries from its ``firstKeptEntryId``) then the entries
    after it; with none, every message of the path. ``data``: how a line is read
    (default: ``session.data``)."""
    places = session.places
    read = data or session.data
    cut = max((i for i, e in enumerate(path) if places[e].type == "compaction"), default=-1)
    out: list[dict[str, Any]] = []
    if cut >= 0:
        compaction = read(path[cut])
        tail = compaction.get("retainedTail")
        if isinstance(tail, list):
            out += [m for m in tail if isinstance(m, dict)]
        else:
            kept = compaction.get("firstKeptEntryId")
            start = path.index(kept) if isinstance(kept, str) and kept in path[:cut] else cut
            out += _messages(session, path[start:cut], read)
    out += _messages(session, path[cut + 1 :], read)
    return out


def _messages(session: Session, ids: Iterable[str], read: Lines) -> Iterator[dict[str, Any]]:
    for entry_id in ids:
        if session.places[entry_id].type == "message":
            message = read(entry_id).get("message")
            if isinstance(message, dict):
                yield message


class _LineMemo:
    """A session's lines read through one open file, the last ``size`` parsed kept: the
    prompts of a branch share their ancestors, each read once, not once per prompt."""

    def __init__(self, session: Session, size: int = 4096) -> None:
        self.session = session
        self.size = size
        self._kept: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._file: BinaryIO | None = None

    def data(self, entry_id: str) -> dict[str, Any]:
        found = self._kept.get(entry_id)
        if found is not None:
            self._kept.move_to_end(entry_id)
            return found
        if self._file is None:
            try:
                self._file = open(self.session.path, "rb")
            except OSError:
                return self.session.data(entry_id)  # raises, saying why, as one read does
        found = self.session.data(entry_id, self._file)
        self._kept[entry_id] = found
        if len(self._kept) > self.size:
            self._kept.popitem(last=False)
        return found

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


@functools.lru_cache(maxsize=8192)
def _cleaned(text: str) -> tuple[str, bool]:
    """A user text as recall reads it, and whether its plan is empty (pure: memoised)."""
    from ..recall.recall import resolve_plan

    clean = clean_query(text, MAX_HISTORY_TURN_BYTES)
    return clean, bool(clean) and resolve_plan(clean).mode == "empty"


def recent_user_messages(messages: Sequence[dict[str, Any]]) -> tuple[str, ...]:
    """``recentUserMessages`` over a context's messages (oldest first)."""
    found: list[str] = []
    found_empty = False  # the newest kept text's plan is empty
    for scanned, message in enumerate(reversed(messages[-SCAN_LIMIT:]), 1):
        if scanned > SCAN_LIMIT:
            break
        if message.get("role") != "user":
            continue
        clean, empty = _cleaned(user_text(message))
        if clean and not _SLASH_COMMAND.match(clean):
            if not (empty and found and found_empty):
                found.append(clean)
                found_empty = empty
        if len(found) >= RECENT_TURNS:
            break
    return tuple(reversed(found))


class _Said:
    """A user text of a branch's context, as ``recentUserMessages`` weighs it: a cell
    of a list shared by every branch through it (``prev`` is the older text)."""

    __slots__ = ("clean", "empty", "entry", "older", "older_topical", "pos")

    def __init__(
        self, pos: int, clean: str, empty: bool, older: _Said | None, entry: str = ""
    ) -> None:
        self.entry = entry
        self.pos = pos
        self.clean = clean
        self.empty = empty
        self.older = older
        self.older_topical: _Said | None = (
            None if older is None else older if not older.empty else older.older_topical
        )


_Edits = tuple[str, str, "_Edits | None"]
"""The ``context_edit`` entries on a branch so far, newest first: each one's target
entry, "edited" or "omitted", and the older ones (shared by every branch through it)."""
_Context = tuple[int, "_Said | None", "_Edits | None"]
"""A branch's context at an entry: how many messages it holds, its newest user text
that recall can use (``_Said``, the older ones behind it), and its context edits."""
_EMPTY: _Context = (0, None, None)


def _recent(context: _Context) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``recent_user_messages`` of a context, in at most six steps (a run of topic-less
    texts after a topic-less one taken is passed over at once); and for each, how the
    model saw it ("", "edited", "omitted")."""
    count, at, edits = context
    floor = count - SCAN_LIMIT
    found: list[_Said] = []
    while at is not None and at.pos >= floor and len(found) < RECENT_TURNS:
        found.append(at)
        at = at.older_topical if at.empty else at.older
    found.reverse()
    changed: dict[str, str] = {}
    while edits is not None:
        changed.setdefault(edits[0], edits[1])
        edits = edits[2]
    return tuple(s.clean for s in found), tuple(changed.get(s.entry, "") for s in found)


def _with(context: _Context, message: Any, entry: str = "") -> _Context:
    """The context with one more message (``Lines``' ``message``; not a dict: none)."""
    if not isinstance(message, dict):
        return context
    count, newest, edits = context
    if message.get("role") == "user":
        clean, empty = _cleaned(user_text(message))
        if clean and not _SLASH_COMMAND.match(clean):
            newest = _Said(count, clean, empty, newest, entry)
    return count + 1, newest, edits


class _Walk:
    """One walk of a session's tree, root to leaves, each entry visited once (linear in
    the entries, for any depth): each user prompt's recent user texts from its
    branch's context, kept as a list shared by the branches through it."""

    def __init__(self, session: Session, lines: Lines) -> None:
        self.session = session
        self.lines = lines
        self.depth: dict[str, int] = {}
        self.recent: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}

    def run(self) -> None:
        places, children = self.session.places, self.session.children
        roots = [e for e in self.session.order
                 if places[e].parent_id is None or places[e].parent_id not in places]  # fmt: skip
        path: list[str] = []  # the entries from the root to the one visited
        stack: list[tuple[str, _Context]] = [(r, _EMPTY) for r in reversed(roots)]
        while stack:
            entry_id, context = stack.pop()
            if entry_id in self.depth:
                continue  # listed twice (a duplicate child): visited once
            parent = places[entry_id].parent_id
            depth = self.depth[parent] + 1 if parent is not None and parent in places else 0
            del path[depth:]
            path.append(entry_id)
            self.depth[entry_id] = depth
            after = self._step(entry_id, context, path)
            stack += [(k, after) for k in reversed(children.get(entry_id, ())) if k != entry_id]

    def _step(self, entry_id: str, context: _Context, path: list[str]) -> _Context:
        place = self.session.places[entry_id]
        if place.type == "compaction":
            return self._compacted(entry_id, path, context[2])
        if place.type == "context_edit":  # pi 1.6: what the model sees, not what recall reads
            data = self.lines(entry_id)
            target = data.get("targetId")
            if isinstance(target, str):
                kind = "omitted" if data.get("replacement") is None else "edited"
                return context[0], context[1], (target, kind, context[2])
            return context
        if place.type != "message":
            return context
        if place.role == "user" and place.moment_ms is not None:
            self.recent[entry_id] = _recent(context)
        if place.role not in ("user", "message"):
            return context[0] + 1, context[1], context[2]  # counted; never a user's text
        return _with(context, self.lines(entry_id).get("message"), entry_id)

    def _compacted(self, entry_id: str, path: list[str], edits: _Edits | None) -> _Context:
        """The context after a compaction: the messages it kept (its ``retainedTail``, or
        the branch's entries from its ``firstKeptEntryId``), the newest ``SCAN_LIMIT``."""
        data = self.lines(entry_id)
        tail = data.get("retainedTail")
        kept: list[tuple[Any, str]] = []
        if isinstance(tail, list):
            kept = [(m, "") for m in tail[-SCAN_LIMIT:]]
        else:
            first = data.get("firstKeptEntryId")
            start = self.depth.get(first, -1) if isinstance(first, str) else -1
            here = len(path) - 1
            if 0 <= start < here and path[start] == first:
                places = self.session.places
                for at in range(here - 1, start - 1, -1):
                    if places[path[at]].type == "message":
                        message = self.lines(path[at]).get("message")
                        if isinstance(message, dict):
                            kept.append((message, path[at]))
                            if len(kept) >= SCAN_LIMIT:
                                break
                kept.reverse()
        context: _Context = (0, None, edits)
        for message, entry in kept:
            context = _with(context, message, entry)
        return context

    def unreached(self) -> int:
        """Entries no root leads to: in a ``parentId`` cycle, or below one."""
        return len(self.session.places) - len(self.depth)


def _branch_numbers(session: Session, depth: dict[str, int]) -> tuple[dict[str, int], int]:
    """Each entry's branch (root to a leaf): the active one (ending at the file's last
    entry) is 0, the others numbered in the file's order of their leaves; an entry on
    several takes the first. Each entry is numbered once."""
    places = session.places
    leaves = [e for e in session.order if e in depth and not session.children.get(e)]
    active = session.last
    ordered = ([active] if active in leaves else []) + [e for e in leaves if e != active]
    number: dict[str, int] = {}
    for n, leaf in enumerate(ordered):
        at: str | None = leaf
        while at is not None and at in depth and at not in number:
            number[at] = n
            at = places[at].parent_id
    return number, len(ordered)


def session_prompts(path: Path, cache: Any = None) -> SessionPrompts:
    """A session file's user prompts in branch order, each with its branch's recent
    user texts. An unreadable file gives no prompts and says why; entries in a
    ``parentId`` cycle (or hanging from one) are counted as corrupt and noted."""
    try:
        session = read_session(path, cache)
    except SessionUnreadable as exc:
        return SessionPrompts(path, "", "", "", (), 0, 0, str(exc))
    header = session.header
    session_id = header.get("id") if isinstance(header.get("id"), str) else ""
    project = header.get("cwd") if isinstance(header.get("cwd"), str) else ""
    prompts: list[tuple[int, int, Prompt]] = []
    lines = _LineMemo(session)
    walk = _Walk(session, lines.data)
    copies = set(session.order[: session.copied])
    try:
        walk.run()
        number, branches = _branch_numbers(session, walk.depth)
        for entry_id, (recent, seen) in walk.recent.items():
            if entry_id in copies:
                continue
            place = session.places[entry_id]
            assert place.moment_ms is not None
            text = user_text(lines.data(entry_id).get("message"))
            prompts.append((number.get(entry_id, branches), walk.depth[entry_id],
                            Prompt(path, str(session_id), str(project), entry_id,
                                   place.moment_ms, text, recent,
                                   number.get(entry_id, branches),
                                   seen if any(seen) else ())))  # fmt: skip
    except SessionUnreadable as exc:
        return SessionPrompts(path, str(session_id), str(project), "", (), 0, 0, str(exc))
    finally:
        lines.close()
    prompts.sort(key=lambda item: (item[0], item[1]))
    started = header_time(session)
    looped = walk.unreached()
    note = f"{looped} entr{'y' if looped == 1 else 'ies'} in a parentId cycle, skipped"
    parent = header.get("parentSession")
    return SessionPrompts(path, str(session_id), str(project), started,
                          tuple(p for _, _, p in prompts), branches,
                          session.corrupt + looped, "", note if looped else "",
                          sum(1 for e in copies if e in walk.recent),
                          parent if isinstance(parent, str) else "")  # fmt: skip


def header_time(session: Session) -> str:
    """When the session started: its file name's timestamp (pi names files by it)."""
    stamp = session.path.name.split("_", 1)[0]
    match = re.fullmatch(r"(\d{4}-\d\d-\d\d)T(\d\d)-(\d\d)-(\d\d)-(\d{3})Z", stamp)
    return f"{match[1]}T{match[2]}:{match[3]}:{match[4]}.{match[5]}Z" if match else ""


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
