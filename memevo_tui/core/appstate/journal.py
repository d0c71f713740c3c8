"""The records of the app's state directory: the last visit, and the journal of bulk
actions (each begun before its first write, completed after its last, reconciled
with the events table when cut short), as lines that a damaged file costs a
convenience, never data. No Textual here."""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from store import Event

from ..verbs import wrote

BEGUN_HERE: set[str] = set()
"""The bulk actions this process journaled and has not completed yet."""


@dataclass(frozen=True, slots=True)
class Visit:
    """The newest event the dashboard had seen when it last closed this store, and when."""

    rowid: int
    at_ms: float


@dataclass(frozen=True, slots=True)
class Batch:
    """One bulk action: its verb, when, and the events it wrote (one per record)."""

    id: str
    verb: str
    at: str
    events: tuple[str, ...]
    planned: int = 0
    """How many records it set out to write (0: not journaled, an older entry)."""
    cut_short: bool = False
    """It stopped before its end (the process was killed, the machine went down):
    ``events`` are the ones the events table shows it wrote."""


@dataclass(frozen=True, slots=True)
class Pending:
    """A bulk action journaled before its first write and not completed."""

    id: str
    verb: str
    op: str
    """The upstream operation each write is: pin, unpin, forget, a verdict, undo..."""
    at: str
    after_rowid: int
    """The newest event before its first write."""
    targets: tuple[str, ...]
    """The records it writes (for an undo, the events it undoes), in order."""
    pid: int
    host: str

    @property
    def running(self) -> bool:
        """True while the process that journaled it may still be writing it."""
        if self.id in BEGUN_HERE:
            return True
        if self.host != socket.gethostname() or self.pid == os.getpid():
            return False  # its pid is ours now: whatever journaled it is gone
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except OSError:
            return True  # it exists, and is somebody else's
        return True


def reconcile(pending: Pending, events: Sequence[Event | Any]) -> tuple[str, ...]:
    """The events a bulk action cut short wrote, read from the events table: for each
    of its targets, the first later event by hand of its operation that names it."""
    left = list(pending.targets)
    found: list[str] = []
    later = sorted(
        (e for e in events if isinstance(e, Event) and e.rowid > pending.after_rowid),
        key=lambda e: e.rowid,
    )
    for e in later:
        for target in left:
            if wrote(pending.op, target, e.actor, e.reason, e.record_ids):
                found.append(e.id)
                left.remove(target)
                break
    return tuple(found)


def read_json(text: str) -> Any:
    """The JSON value, or None for garbage (a damaged file costs a convenience)."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def kept_keys(data: Any) -> set[str]:
    kept = data.get("kept") if isinstance(data, dict) else None
    return {str(k) for k in kept} if isinstance(kept, list) else set()


def batch_line(b: Batch) -> dict[str, Any]:
    line: dict[str, Any] = {"id": b.id, "verb": b.verb, "at": b.at, "events": list(b.events)}
    if b.planned:
        line["planned"] = b.planned
    if b.cut_short:
        line["cutShort"] = True
    return line


def pending_line(p: Pending) -> dict[str, Any]:
    return {
        "id": p.id,
        "state": "begun",
        "verb": p.verb,
        "op": p.op,
        "at": p.at,
        "afterRowid": p.after_rowid,
        "targets": list(p.targets),
        "pid": p.pid,
        "host": p.host,
    }


def parse_line(line: str) -> Batch | Pending | None:
    try:
        data = json.loads(line)
        if not isinstance(data, dict):
            return None
        if data.get("state") == "begun":
            return Pending(
                str(data["id"]), str(data["verb"]), str(data["op"]), str(data["at"]),
                int(data["afterRowid"]), tuple(str(t) for t in data["targets"]),
                int(data["pid"]), str(data["host"]),
            )  # fmt: skip
        events = data["events"]
        if not isinstance(events, list):
            return None
        return Batch(
            str(data["id"]), str(data["verb"]), str(data["at"]), tuple(str(e) for e in events),
            int(data.get("planned") or 0), data.get("cutShort") is True,
        )  # fmt: skip
    except (ValueError, KeyError, TypeError, OverflowError, RecursionError):
        return None  # a damaged line costs its batch's grouping, nothing else
