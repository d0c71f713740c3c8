"""pi's session files read as pi reads them for recall: each user prompt of a
session, with its moment, its project and the context of its branch (the earlier
user texts pi passes to recall as ``recentUserMessages``: the newest compaction on
the branch, the messages it kept, then what came after; newest first, each
redacted, clipped to 2,048 bytes and trimmed; empty ones and slash commands
skipped; a topic-less message right after another topic-less one skipped; six at
most, returned oldest first). The prompt being answered is not yet in the session
when pi asks, so the context is the branch up to the prompt's parent.

No Textual; everything read from session files is untrusted text.
"""

from __future__ import annotations

import functools
import re
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from ..recall.features import MAX_HISTORY_TURN_BYTES, clean_query
from .sessions import Session, SessionUnreadable, read_session

if TYPE_CHECKING:
    pass


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
