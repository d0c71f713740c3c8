"""pi's session files, read-only: the conversation a memory's source was taken from.

Each session is a JSONL file (where: ``folders.py``): a header line (``type: session``,
``version``, ``id``, ``cwd``), then entries (``type``, ``id``, ``parentId``,
``timestamp``) forming a tree: a branch is the path along ``parentId``, not file order,
and the active one ends at the file's last entry. A source id names its session and
entry (``compact:<session>:<entry>``, ``user:<session>:<ms>:<fp>``, ``progress:…``).
Everything read is untrusted text; a line that is not JSON (pi cut off mid-write) is
skipped and counted; nothing is ever written. No Textual.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Protocol

import msgspec

from .folders import SourceRef, find_session, parse_source_id

MAX_FILE = 512 << 20
"""The largest session file read (a bigger one is reported, not read)."""


class _Message(msgspec.Struct):
    role: Any = None
    timestamp: Any = None


class _Line(msgspec.Struct):
    """What indexing needs of a line; the rest (texts, tool output) is skipped unread."""

    type: Any = None
    id: Any = None
    parentId: Any = None
    timestamp: Any = None
    message: _Message | None = None
    version: Any = None
    cwd: Any = None
    parentSession: Any = None


_decode_line = msgspec.json.Decoder(_Line).decode


class Place(msgspec.Struct, frozen=True, array_like=True):
    """One entry as the index holds it: where its line is, and its place in the tree."""

    offset: int
    length: int
    id: str
    parent_id: str | None
    type: str
    role: str
    moment_ms: int | None


class _Kept(msgspec.Struct):
    file: list[int]
    header: dict[str, Any]
    corrupt: int
    places: list[Place]
    copied: int = 0


_decode_kept = msgspec.json.Decoder(_Kept).decode


@dataclass(frozen=True, slots=True)
class Entry:
    """One line of a session, read in full: its place in the tree and what it says."""

    id: str
    parent_id: str | None
    type: str
    timestamp: str
    role: str
    """``user``, ``assistant``, ``toolResult``…; for other entries, their type."""
    text: str
    """What it says, as plain text (untrusted)."""
    moment_ms: int | None
    """A message's own timestamp (Unix ms), when it has one."""


@dataclass(slots=True)
class Session:
    """A session file's index: every entry's place (its line is read when shown)."""

    path: Path
    header: dict[str, Any]
    places: dict[str, Place] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    corrupt: int = 0
    """Lines skipped: not JSON, or not an entry."""
    children: dict[str | None, list[str]] = field(default_factory=dict)
    copied: int = 0
    """A fork's or a clone's first entries, copied from its ``parentSession`` (same ids
    and times): part of its context, but no turn of its own (``fork_copies``)."""
    _copying: bool = True

    @property
    def last(self) -> str | None:
        return self.order[-1] if self.order else None

    def entry(self, entry_id: str) -> Entry:
        """The entry, its line read and parsed now (raises ``SessionUnreadable``)."""
        return _entry(self.data(entry_id), self.places[entry_id])

    def data(self, entry_id: str, opened: BinaryIO | None = None) -> dict[str, Any]:
        """The entry's line as pi wrote it, read and parsed now, from ``opened`` (the
        file, kept open by a reader of many lines) or the file opened for it (raises
        ``SessionUnreadable``; a line that is not an object reads as ``{}``)."""
        place = self.places[entry_id]
        try:
            with contextlib.nullcontext(opened) if opened else open(self.path, "rb") as f:
                f.seek(place.offset)
                raw = f.read(place.length)
            data = json.loads(as_node_reads(raw))
        except (OSError, ValueError) as exc:
            raise SessionUnreadable(f"session file changed while it was read ({exc})") from None
        return data if isinstance(data, dict) else {}

    def path_to(self, entry_id: str) -> list[str]:
        """The entries from the root to ``entry_id`` along ``parentId`` (root first)."""
        path: list[str] = []
        seen: set[str] = set()
        at: str | None = entry_id
        while at is not None and at in self.places and at not in seen:
            seen.add(at)
            path.append(at)
            at = self.places[at].parent_id
        path.reverse()
        return path


class SessionUnreadable(Exception):
    """The session file cannot be read (the message says why, in a few words)."""


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for part in content if isinstance(content, list) else ():
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind == "text" and isinstance(part.get("text"), str):
            parts.append(part["text"])
        elif kind == "toolCall":
            args = part.get("arguments")
            shown = args.get("command") if isinstance(args, dict) else None
            parts.append(f"→ {part.get('name', 'tool')}: {shown if shown else json.dumps(args)}")
    return "\n".join(parts)


def _entry(data: dict[str, Any], place: Place) -> Entry:
    text = ""
    if place.type == "message" and isinstance(data.get("message"), dict):
        message = data["message"]
        text = _text_of(message.get("content"))
        if place.role == "bashExecution":
            text = f"$ {message.get('command', '')}\n{message.get('output', '')}".strip()
    elif place.type in ("compaction", "branch_summary"):
        text = str(data.get("summary", ""))
    elif place.type == "custom":
        text = str(data.get("customType", ""))
    timestamp = data.get("timestamp")
    return Entry(place.id, place.parent_id, place.type,
                 timestamp if isinstance(timestamp, str) else "", place.role, text,
                 place.moment_ms)  # fmt: skip


def _moment(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value) if value == value and abs(value) < 2**53 else None


class IndexCache(Protocol):
    """Where a session file's index is kept between runs (the app's cache directory)."""

    def get(self, path: Path) -> bytes | None: ...

    def put(self, path: Path, data: bytes) -> None: ...


INDEX_FORMAT = 2


def _fingerprint(st: os.stat_result) -> list[int]:
    return [INDEX_FORMAT, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns]


def dump_index(session: Session, st: os.stat_result) -> bytes:
    """The index as bytes, tied to the file as it was (``st``)."""
    places = [session.places[i] for i in session.order]
    return msgspec.json.encode(
        _Kept(_fingerprint(st), session.header, session.corrupt, places, session.copied)
    )


def load_index(path: Path, data: bytes, st: os.stat_result) -> Session | None:
    """The session from a kept index, if it was made from the file as it is now."""
    try:
        kept = _decode_kept(data)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    if kept.file != _fingerprint(st):
        return None
    session = Session(path, kept.header, corrupt=kept.corrupt, copied=kept.copied)
    places, order, children = session.places, session.order, session.children
    size = st.st_size
    for place in kept.places:
        if place.offset < 0 or place.length < 0 or place.offset + place.length > size:
            return None
        places[place.id] = place
        order.append(place.id)
        children.setdefault(place.parent_id, []).append(place.id)
    return session


def read_session(path: Path, cache: IndexCache | None = None) -> Session:
    """A session file's index (read-only; each line's own fields are read, its texts
    skipped), from ``cache`` when it holds one made from the file as it is now (a 200 MB
    session then opens in milliseconds). Raises ``SessionUnreadable``."""
    if cache is not None:
        try:
            st = os.stat(path)
        except OSError:
            st = None
        kept = cache.get(path) if st is not None else None
        if kept is not None and st is not None:
            found = load_index(path, kept, st)
            if found is not None:
                return found
    session, st = _scan(path)
    if cache is not None:
        cache.put(path, dump_index(session, st))
    return session


def _scan(path: Path) -> tuple[Session, os.stat_result]:
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise SessionUnreadable("session file not found") from None
    except OSError as exc:
        raise SessionUnreadable(f"session file unreadable: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise SessionUnreadable("not a regular file")
        if st.st_size > MAX_FILE:
            raise SessionUnreadable(f"session file over {MAX_FILE >> 20} MB, not read")
        try:
            raw = f.read()
        except OSError as exc:
            raise SessionUnreadable(f"session file unreadable: {exc.strerror or exc}") from None
    session = Session(path, {})
    offset = 0
    size = len(raw)
    while offset < size:
        end = raw.find(b"\n", offset)
        end = size if end < 0 else end
        line = raw[offset:end]
        if line.strip():
            _index_line(session, line, offset)
        offset = end + 1
    return session, st


def as_node_reads(line: bytes) -> str:
    """A line's text as Node (and so pi) decodes it: each invalid UTF-8 sequence read as
    U+FFFD, the line kept."""
    return line.decode("utf-8", "replace")


def _head(line: bytes) -> _Line | None:
    """A line's fields (None: not an entry's JSON)."""
    try:
        return _decode_line(line)
    except (msgspec.DecodeError, msgspec.ValidationError):
        try:  # msgspec refuses bytes that are not UTF-8; Node reads them as U+FFFD
            line.decode("utf-8")
        except UnicodeDecodeError:
            return _decoded_again(as_node_reads(line).encode("utf-8"))
        return None


def _index_line(session: Session, line: bytes, offset: int) -> None:
    head = _head(line)
    if head is None:
        session.corrupt += 1
        return
    if head.type == "session" and not session.header:
        session.header = {"type": "session", "version": head.version, "id": head.id,
                          "cwd": head.cwd, "timestamp": head.timestamp,
                          "parentSession": head.parentSession}  # fmt: skip
        return
    entry_id, parent = head.id, head.parentId
    if not isinstance(entry_id, str) or not (parent is None or isinstance(parent, str)):
        session.corrupt += 1
        return
    if entry_id in session.places:
        session.corrupt += 1
        return
    kind = head.type if isinstance(head.type, str) else ""
    role, moment = kind, None
    if kind == "message" and head.message is not None:
        role = head.message.role if isinstance(head.message.role, str) else "message"
        moment = _moment(head.message.timestamp)
    session.places[entry_id] = Place(offset, len(line), entry_id, parent, kind, role, moment)
    if session._copying:
        session._copying = _copied(session.header, head.timestamp)
        session.copied += session._copying
    session.order.append(entry_id)
    session.children.setdefault(parent, []).append(entry_id)


def _decoded_again(line: bytes) -> _Line | None:
    try:
        return _decode_line(line)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


def _copied(header: Mapping[str, Any], stamp: Any) -> bool:
    """Is an entry dated ``stamp``, in the leading run of a file whose header names a
    ``parentSession``, a copy of the parent's (pi's ``fork``, ``clone``, ``--fork``,
    ``createBranchedSession``: the entries of the branch up to the fork, written with
    their own ids and times before the fork's own)? A copy is dated no later than the
    header, which is dated when the copy was made."""
    if not isinstance(header.get("parentSession"), str) or not header["parentSession"]:
        return False
    from ..js import parse_ms

    made, then = parse_ms(header.get("timestamp")), parse_ms(stamp)
    return made is not None and then is not None and then <= made


def locate(session: Session, ref: SourceRef) -> Place | None:
    """The entry a source id names in its session."""
    if ref.entry_id is not None:
        return session.places.get(ref.entry_id)
    for entry_id in session.order:
        p = session.places[entry_id]
        if p.role == "user" and p.moment_ms == ref.moment_ms:
            return p
    return None


def branch(session: Session, entry_id: str) -> list[Place]:
    """The branch ``entry_id`` is on, root first: its ancestors along ``parentId``, it,
    then onward: toward the file's last entry if that descends from it (the active
    branch), else along each entry's newest child."""
    places = session.places
    path: list[str] = []
    seen: set[str] = set()
    at: str | None = entry_id
    while at is not None and at in places and at not in seen:
        seen.add(at)
        path.append(at)
        at = places[at].parent_id
    path.reverse()
    active: list[str] = []
    guard: set[str] = set()
    at = session.last
    while at is not None and at in places and at not in guard:
        guard.add(at)
        active.append(at)
        at = places[at].parent_id
    onward: list[str] = []
    if entry_id in guard:
        active.reverse()
        onward = active[active.index(entry_id) + 1 :]
    else:
        at = entry_id
        while kids := [k for k in session.children.get(at, []) if k not in seen]:
            at = kids[-1]
            seen.add(at)
            onward.append(at)
    return [places[i] for i in (*path, *onward)]


TURN_TYPES = ("message", "compaction", "branch_summary")


def turns_around(session: Session, entry_id: str, n: int) -> tuple[list[Entry], list[Entry]]:
    """Up to ``n`` turns (messages, compactions, branch summaries) before and after
    ``entry_id`` on its branch, read in full."""
    line = branch(session, entry_id)
    at = next(i for i, p in enumerate(line) if p.id == entry_id)
    before = [p for p in line[:at] if p.type in TURN_TYPES][-n:] if n else []
    after = [p for p in line[at + 1 :] if p.type in TURN_TYPES][:n] if n else []
    return [session.entry(p.id) for p in before], [session.entry(p.id) for p in after]


def session_context(
    source_id: str, scope: str, root: Path, n: int, cache: IndexCache | None = None
) -> dict[str, Any]:
    """Where a source sits in pi's session: ``file``, ``entry``, ``corruptLines``, and
    ``n`` turns ``before`` and ``after`` it with the one ``at`` it (each ``id``,
    ``role``, ``timestamp``, ``text``); or a ``problem`` saying why that cannot be shown."""
    ref = parse_source_id(source_id)
    if ref is None:
        return {"problem": "not taken from a session"}
    path = find_session(root, ref.session_id, scope)
    if path is None:
        return {"problem": "session file not found: the source's text is shown instead"}
    try:
        session = read_session(path, cache)
    except SessionUnreadable as exc:
        return {"file": str(path), "problem": f"{exc}: the source's text is shown instead"}
    place = locate(session, ref)
    out: dict[str, Any] = {"file": str(path), "name": _name(path, root),
                           "corruptLines": session.corrupt}  # fmt: skip
    if place is None:
        out["problem"] = "its entry is not in the session file"
        return out
    out["entry"] = place.id
    try:
        before, after = turns_around(session, place.id, n)
        out["at"] = _turn(session.entry(place.id))
    except SessionUnreadable as exc:
        out["problem"] = str(exc)
        return out
    out["before"] = [_turn(e) for e in before]
    out["after"] = [_turn(e) for e in after]
    return out


def _name(path: Path, root: Path) -> str:
    """The file as found under the sessions folder (its folder and name)."""
    try:
        return str(path.relative_to(root))
    except ValueError:
        return path.name


def _turn(e: Entry) -> dict[str, Any]:
    return {"id": e.id, "role": e.role, "timestamp": e.timestamp, "text": e.text}
