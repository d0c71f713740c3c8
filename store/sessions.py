"""pi's session files, read-only: the conversation a memory's source was taken from.

pi keeps each session as JSONL under ``$PI_CODING_AGENT_DIR/sessions`` (default
``~/.pi/agent/sessions``), in a folder per working directory (``--`` + the cwd
without its leading ``/``, each ``/`` as ``-``, + ``--``), one file per session named
``<timestamp>_<session id>.jsonl``. Line 1 is the header (``type: session``,
``version``, ``id``, ``cwd``); every other line is an entry with ``type``, ``id``,
``parentId`` and ``timestamp``, forming a tree: a session that went back (``/tree``)
and continued has branches, and a branch is the path along ``parentId``, not file
order. The active branch ends at the file's last entry.

A source id names its session and entry (§ sources): ``compact:<session>:<entry>``,
``user:<session>:<ms>:<fp>`` (the user message sent at that moment) and
``progress:<session>:<entry or ms>:…``. Everything read is untrusted text, a line that
is not JSON (pi cut off mid-write, say) is skipped and counted, and nothing is ever
written. No Textual.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MAX_FILE = 512 << 20
"""The largest session file read (a bigger one is reported, not read)."""


def sessions_root(environ: Mapping[str, str] | None = None) -> Path:
    """Where pi keeps its session files."""
    env = os.environ if environ is None else environ
    agent = env.get("PI_CODING_AGENT_DIR", "").strip()
    base = Path(agent).expanduser() if agent else Path.home() / ".pi" / "agent"
    return base / "sessions"


def cwd_folder(cwd: str) -> str:
    """The folder pi keeps a working directory's sessions in."""
    return "--" + cwd.lstrip("/").replace("/", "-") + "--"


@dataclass(frozen=True, slots=True)
class SourceRef:
    """What a source id says of where it was taken from."""

    kind: str
    session_id: str
    entry_id: str | None
    moment_ms: int | None


def parse_source_id(source_id: str) -> SourceRef | None:
    """The session and entry a source id names (None: not a session's source)."""
    parts = source_id.split(":")
    if len(parts) < 3 or parts[0] not in ("compact", "user", "progress") or not parts[1]:
        return None
    kind, session, third = parts[0], parts[1], parts[2]
    if kind == "compact":
        return SourceRef(kind, session, third, None)
    if third.isdigit() and len(third) >= 10:
        return SourceRef(kind, session, None, int(third))
    return SourceRef(kind, session, third, None)


def find_session(root: Path, session_id: str, cwd: str = "") -> Path | None:
    """The file of session ``session_id``: in ``cwd``'s folder first, then any."""
    if not session_id or "/" in session_id or session_id.startswith("."):
        return None
    suffix = f"_{session_id}.jsonl"
    folders = []
    if cwd:
        folders.append(root / cwd_folder(cwd))
    try:
        folders += sorted(p for p in root.iterdir() if p.is_dir() and p not in folders)
    except OSError:
        pass
    for folder in folders:
        try:
            for name in sorted(os.listdir(folder)):
                if name.endswith(suffix):
                    return folder / name
        except OSError:
            continue
    return None


@dataclass(frozen=True, slots=True)
class Entry:
    """One line of a session: its place in the tree and what it says."""

    line: int
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
    path: Path
    header: dict[str, Any]
    entries: dict[str, Entry] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    corrupt: int = 0
    """Lines skipped: not JSON, or not an entry."""
    children: dict[str | None, list[str]] = field(default_factory=dict)

    @property
    def last(self) -> str | None:
        return self.order[-1] if self.order else None


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


def _entry(line: int, data: dict[str, Any]) -> Entry | None:
    entry_id, parent = data.get("id"), data.get("parentId")
    if not isinstance(entry_id, str) or not (parent is None or isinstance(parent, str)):
        return None
    kind = str(data.get("type", ""))
    role, text, moment = kind, "", None
    if kind == "message" and isinstance(data.get("message"), dict):
        message = data["message"]
        role = str(message.get("role", "message"))
        text = _text_of(message.get("content"))
        if role == "bashExecution":
            text = f"$ {message.get('command', '')}\n{message.get('output', '')}".strip()
        stamp = message.get("timestamp")
        moment = (
            int(stamp) if isinstance(stamp, int | float) and not isinstance(stamp, bool) else None
        )
    elif kind in ("compaction", "branch_summary"):
        text = str(data.get("summary", ""))
    elif kind == "custom":
        text = str(data.get("customType", ""))
    timestamp = data.get("timestamp")
    return Entry(line, entry_id, parent, kind, timestamp if isinstance(timestamp, str) else "",
                 role, text, moment)  # fmt: skip


def read_session(path: Path) -> Session:
    """Every entry of a session file (read-only). Raises ``SessionUnreadable``."""
    try:
        fd = os.open(
            path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        )
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
        raw = f.read()
    session = Session(path, {})
    for number, line in enumerate(raw.split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except ValueError:
            session.corrupt += 1
            continue
        if not isinstance(data, dict):
            session.corrupt += 1
            continue
        if data.get("type") == "session" and not session.header:
            session.header = data
            continue
        entry = _entry(number, data)
        if entry is None or entry.id in session.entries:
            session.corrupt += 1
            continue
        session.entries[entry.id] = entry
        session.order.append(entry.id)
        session.children.setdefault(entry.parent_id, []).append(entry.id)
    return session


def locate(session: Session, ref: SourceRef) -> Entry | None:
    """The entry a source id names in its session."""
    if ref.entry_id is not None:
        return session.entries.get(ref.entry_id)
    for entry_id in session.order:
        e = session.entries[entry_id]
        if e.role == "user" and e.moment_ms == ref.moment_ms:
            return e
    return None


def branch(session: Session, entry_id: str) -> list[Entry]:
    """The branch ``entry_id`` is on, root first: its ancestors along ``parentId``, it,
    then onward: toward the file's last entry if that descends from it (the active
    branch), else along each entry's newest child."""
    path: list[str] = []
    seen: set[str] = set()
    at: str | None = entry_id
    while at is not None and at in session.entries and at not in seen:
        seen.add(at)
        path.append(at)
        at = session.entries[at].parent_id
    path.reverse()
    onward: list[str] = []
    last = session.last
    active: list[str] = []
    at = last
    guard: set[str] = set()
    while at is not None and at in session.entries and at not in guard:
        guard.add(at)
        active.append(at)
        at = session.entries[at].parent_id
    if entry_id in guard:
        active.reverse()
        onward = active[active.index(entry_id) + 1 :]
    else:
        at = entry_id
        while kids := [k for k in session.children.get(at, []) if k not in seen]:
            at = kids[-1]
            seen.add(at)
            onward.append(at)
    return [session.entries[i] for i in (*path, *onward)]


TURN_TYPES = ("message", "compaction", "branch_summary")


def turns_around(session: Session, entry_id: str, n: int) -> tuple[list[Entry], list[Entry]]:
    """Up to ``n`` turns (messages, compactions, branch summaries) before and after
    ``entry_id`` on its branch."""
    line = branch(session, entry_id)
    at = next(i for i, e in enumerate(line) if e.id == entry_id)
    before = [e for e in line[:at] if e.type in TURN_TYPES][-n:] if n else []
    after = [e for e in line[at + 1 :] if e.type in TURN_TYPES][:n] if n else []
    return before, after


def session_context(source_id: str, scope: str, root: Path, n: int) -> dict[str, Any]:
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
        session = read_session(path)
    except SessionUnreadable as exc:
        return {"file": str(path), "problem": f"{exc}: the source's text is shown instead"}
    entry = locate(session, ref)
    out: dict[str, Any] = {"file": str(path), "name": _name(path, root),
                           "corruptLines": session.corrupt}  # fmt: skip
    if entry is None:
        out["problem"] = "its entry is not in the session file"
        return out
    out["entry"] = entry.id
    before, after = turns_around(session, entry.id, n)
    out["before"] = [_turn(e) for e in before]
    out["at"] = _turn(entry)
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
