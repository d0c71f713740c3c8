"""What a walk of the whole event log found, kept between processes.

A first walk to the start of the log reads, parses and checks every event: about 9 s
at 300,000 events. What it found does not change while the log only grows, as pi's
does. ``Kept`` holds it as columns, encoded with msgspec:

- the events' rowids and moments (the moments alone take a statement of 2 s to read);
- every change (``intervals.Changes``): event, record, place, created or not, and the
  confirmation stamp it wrote, without the typed records;
- where the walk stopped (the start of the log, or the event that does not follow);
- a checksum of each undone event's stored text (``checksum``);
- a fingerprint of the records the walk started from (``fingerprint``).

``PastLog`` adopts it only when it is still the store's own: the newest event it
covers is in the log, and the records as they were then (the rows now, with the
events since undone and checked as usual) have the fingerprint kept. Every event
whose ``before`` is later built from the log must have the checksum kept; otherwise
the whole of it is dropped and the log walked afresh. Where it lives, and who may
read it, is the caller's (``PastKeep``): the dashboard keeps it in its cache directory,
keyed with the store's secret. No Textual.
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Iterable, Sequence
from operator import attrgetter
from typing import Protocol

import msgspec
import orjson

from ..records.model import CorruptRow, Memory

FORMAT = 3
"""The layout below; a kept walk of another layout is ignored."""


class PastKeep(Protocol):
    """Where a walk of the whole log is kept between processes."""

    def load(self) -> bytes | None:
        """The bytes kept (None: none, or none to be trusted)."""

    def save(self, data: bytes) -> None:
        """Keep ``data`` instead (a failure costs the speed, never an answer)."""


class Kept(msgspec.Struct, array_like=True, frozen=True):
    """A walk of the whole log, as ``PastLog`` keeps it (see the module)."""

    format: int
    top: int
    """The newest event the walk covers (its rowid)."""
    rows: bytes
    """``fingerprint`` of the records the walk started from (as of ``top``)."""
    rowids: bytes
    """int64, every event's rowid up to ``top``, ascending."""
    moments: bytes
    """float64, each event's moment as written (inf: unreadable)."""
    sums: bytes
    """int64 per event, ``checksum`` of its stored text (0: not undone)."""
    ids: list[str]
    event: bytes
    """int32 per change, the event's index."""
    rec: bytes
    """int32 per change, the record's index in ``ids``."""
    slot: bytes
    """int32 per change, its place in the event's arrays."""
    gone: bytes
    """uint8 per change, 1 when its ``before`` was null."""
    stamps: list[str | None]
    frontier: int
    """The rowid the walk reached (0: the start of the log)."""
    broken: tuple[int, float, str] | None
    """The event that does not follow: its rowid, the moment the log is exact back
    to, and why (None: none)."""


def checksum(raw: object) -> int:
    """An event's stored text, summed: its CRC-32 and its length in one integer."""
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    if not isinstance(data, bytes):
        return -1
    return (len(data) << 32) | zlib.crc32(data)


def fingerprint(rows: Iterable[Memory | CorruptRow], logged: Sequence[str]) -> bytes:
    """The records, on their id and every field the log records (``logged``), in id
    order, hashed: two sets of rows with the same fingerprint lead the same walk to the
    same answers. Hashed a record at a time (one text of them all would hold every
    record's text again)."""
    h = hashlib.blake2b(digest_size=16)
    update, dumps, fields = h.update, orjson.dumps, attrgetter("id", *logged)
    for r in sorted(rows, key=_id):
        update(dumps(fields(r) if isinstance(r, Memory) else (r.id, "corrupt")))
        update(b"\n")
    return h.digest()


def _id(row: Memory | CorruptRow) -> str:
    return row.id


def decode(data: bytes | None) -> Kept | None:
    """The kept walk in ``data`` (None: none, damaged, or of another layout)."""
    if not data:
        return None
    try:
        kept = msgspec.msgpack.decode(data, type=Kept)
    except (msgspec.DecodeError, ValueError):
        return None
    events, changes = len(kept.rowids) // 8, len(kept.event) // 4
    sizes = (
        len(kept.rowids) == 8 * events,
        len(kept.moments) == 8 * events,
        len(kept.sums) == 8 * events,
        len(kept.rec) == len(kept.slot) == 4 * changes,
        len(kept.gone) == len(kept.stamps) == changes,
    )
    return kept if kept.format == FORMAT and all(sizes) else None


def encode(kept: Kept) -> bytes:
    return msgspec.msgpack.encode(kept)
