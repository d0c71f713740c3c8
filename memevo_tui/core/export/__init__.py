"""Export: JSONL that loses nothing, and Markdown for reading and sharing.

JSONL: a header line (``"type": "header"``: store path, schema, time, memevo-tui
version, what was asked), then one line per record: ``"type": "memory"`` with the
row's ``id``, ``scope`` and ``hash`` columns, its ``data`` column as the very text
stored (so ``1E+2``, ``-0``, a long decimal or a repeated key restore byte for
byte), the stored object parsed as ``memory``, its ``quality`` and ``state``, and
when asked its ``events`` (every event that wrote it, oldest first, parsed) with
``eventsData`` (their texts as stored, in the same order) and ``sources`` (the
source rows that produced it, every column, the JSON ones parsed and, under
``stored``, as stored). A row that fails pi's validation is a ``"type": "corrupt"``
line carrying its columns exactly as stored, with the reason.

Markdown groups records by origin, then kind, with provenance, feedback, state
and freshness. Every text from the store goes through pi's redactor first, and
is escaped so that it reads as text, never as markup.

No Textual here: the CLI and the dashboard both call it.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TextIO

from store import (
    CorruptRow,
    Memory,
    MemoryStore,
    Snapshot,
    StoredMemory,
    iso,
    parse_event_row,
    parse_memory_row,
)

from ... import __version__
from ..text import UNSAFE, safe_json
from ..view import Filter, matches, parse_filter
from .files import NotARegularFile, atomic_file
from .markdown import (
    KIND_HEADINGS,
    group_records,
    md_code,
    md_event,
    md_record,
    md_source,
    md_text,
    md_time_left,
)

__all__ = [
    "FORMATS",
    "KIND_HEADINGS",
    "BadExport",
    "ExportRequest",
    "ExportResult",
    "Format",
    "NotARegularFile",
    "atomic_file",
    "export",
    "format_for",
    "md_text",
    "md_time_left",
]  # fmt: skip

Format = Literal["jsonl", "markdown"]
FORMATS: tuple[Format, ...] = ("jsonl", "markdown")
EXPORT_FORMAT = "memevo-tui-export"
EXPORT_VERSION = 1


class BadExport(ValueError):
    """The request cannot be exported (a filter with a typo, an unknown format)."""


@dataclass(frozen=True, slots=True)
class ExportRequest:
    format: Format = "jsonl"
    filter: str = ""
    """The dashboard's filter tokens (``kind:fact state:dormant``); empty: every record."""
    ids: frozenset[str] | None = None
    """Only these records (the dashboard's marked or listed set)."""
    marked: bool = True
    """``ids`` are the records the user marked (False: the ones the list showed)."""
    with_events: bool = False
    with_sources: bool = False


@dataclass(frozen=True, slots=True)
class ExportResult:
    records: int
    corrupt: int
    events: int
    sources: int

    @property
    def summary(self) -> str:
        parts = [f"{self.records:,} record(s)"]
        if self.corrupt:
            parts.append(f"{self.corrupt:,} corrupt row(s)")
        if self.events:
            parts.append(f"{self.events:,} event(s)")
        if self.sources:
            parts.append(f"{self.sources:,} source(s)")
        return ", ".join(parts)


def format_for(path: str | Path, asked: str | None = None) -> Format:
    """The format asked for, else the one a file name implies (``.md``: Markdown)."""
    if asked:
        if asked not in FORMATS:
            raise BadExport(f"unknown format {asked!r}: use jsonl or markdown")
        return asked
    suffix = Path(path).suffix.casefold()
    return "markdown" if suffix in (".md", ".markdown") else "jsonl"


@dataclass
class _Selection:
    records: list[tuple[tuple[Any, ...], StoredMemory]] = field(default_factory=list)
    corrupt: list[tuple[tuple[Any, ...], CorruptRow]] = field(default_factory=list)


def _select(snap: Snapshot, request: ExportRequest) -> _Selection:
    f: Filter = parse_filter(request.filter)
    if f.errors:
        raise BadExport(f"filter: {'; '.join(f.errors)}")
    out = _Selection()
    cache: dict[str, str] = {}
    for row in snap.memories:
        row_id, scope, hash_, raw = row
        if request.ids is not None and str(row_id) not in request.ids:
            continue
        parsed = parse_memory_row(row_id, scope, hash_, raw, snap.now_ms)
        if isinstance(parsed, CorruptRow):
            text = f"{parsed.id} {parsed.reason}".casefold()
            if not f.words or all(w in text for w in f.words):
                out.corrupt.append((row, parsed))
        elif matches(parsed, f, cache):
            out.records.append((row, parsed))
    return out


def _stored(value: Any) -> dict[str, Any]:
    """A column value exactly as stored: text as text, a blob as base64."""
    if isinstance(value, bytes):
        return {"data": base64.b64encode(value).decode("ascii"), "encoding": "base64"}
    return {"data": value}


_MODEL_REASON = re.compile(r"^.*?: (?P<source>\S+?)(?:; weaker replacements withheld=\d+)?$", re.S)


def _event_source(data: dict[str, Any]) -> str | None:
    """The source a capture or learning-run event came from (its reason names it)."""
    reason = data.get("reason")
    if not isinstance(reason, str):
        return None
    if data.get("actor") == "local" and reason.startswith("Capture "):
        return reason[len("Capture ") :]
    if data.get("actor") == "model":
        m = _MODEL_REASON.match(reason)
        return m.group("source") if m else None
    return None


def _source_entry(row: dict[str, Any]) -> dict[str, Any]:
    """Every column of a source row; its JSON columns parsed when they are valid, and
    their text as stored under ``stored``."""
    out = dict(row)
    out["stored"] = {
        name: _stored(row[name])["data"]
        for name in ("data", "diagnostic", "call_models")
        if name in row
    }
    for name in ("data", "diagnostic", "call_models"):
        try:
            out[name] = json.loads(row[name]) if isinstance(row.get(name), str) else row.get(name)
        except ValueError:
            return {
                **{k: _stored(v)["data"] for k, v in row.items()},
                "corrupt": f"{name} is not JSON",
            }
    data = out.get("data")
    if not isinstance(data, dict) or data.get("id") != row.get("id"):
        return {
            **{k: _stored(v)["data"] for k, v in row.items()},
            "corrupt": "source JSON is invalid or its id differs",
        }
    return out


class _History:
    """Events by the record ids they wrote, and sources by id."""

    def __init__(self, snap: Snapshot) -> None:
        self.by_record: dict[str, list[tuple[dict[str, Any], Any]]] = {}
        """Per record, each event that wrote it: its object, and its text as stored."""
        self.corrupt: list[tuple[tuple[Any, ...], CorruptRow]] = []
        self.sources_of: dict[str, list[str]] = {}
        for row in snap.events:
            rowid, eid, scope, raw = row
            parsed = parse_event_row(rowid, eid, scope, raw)
            if isinstance(parsed, CorruptRow):
                self.corrupt.append((row, parsed))
                continue
            source = _event_source(parsed.data)
            for rid in parsed.record_ids:
                self.by_record.setdefault(rid, []).append((parsed.data, raw))
                if source:
                    self.sources_of.setdefault(rid, []).append(source)
        self.sources = {str(r.get("id")): r for r in snap.sources}

    def sources_for(self, m: Memory) -> list[dict[str, Any]]:
        wanted = [m.evidence.source_id if m.evidence else "", m.source_entry_id]
        wanted += self.sources_of.get(m.id, [])
        seen: dict[str, None] = {}
        for sid in wanted:
            if sid and sid in self.sources:
                seen[sid] = None
        return [_source_entry(self.sources[sid]) for sid in seen]


async def export(store: MemoryStore, request: ExportRequest, out: TextIO) -> ExportResult:
    """Write the export to ``out``; raises ``BadExport`` or a ``StoreError``."""
    need_history = request.with_events or request.with_sources
    snap = await store.snapshot(events=need_history, sources=request.with_sources)
    chosen = _select(snap, request)
    history = _History(snap) if need_history else None
    if request.format == "markdown":
        return _markdown(store, snap, request, chosen, history, out)
    return _jsonl(store, snap, request, chosen, history, out)


def _jsonl(
    store: MemoryStore,
    snap: Snapshot,
    request: ExportRequest,
    chosen: _Selection,
    history: _History | None,
    out: TextIO,
) -> ExportResult:
    def emit(value: dict[str, Any]) -> None:
        out.write(safe_json(value) + "\n")

    emit(
        {
            "type": "header",
            "format": EXPORT_FORMAT,
            "version": EXPORT_VERSION,
            "store": str(store.path),
            "schema": snap.schema,
            "exportedAt": iso(snap.now_ms),
            "memevoTui": __version__,
            "filter": request.filter,
            "marked": sorted(request.ids) if request.ids is not None and request.marked else None,
            "listed": len(request.ids) if request.ids is not None and not request.marked else None,
            "withEvents": request.with_events,
            "withSources": request.with_sources,
            "records": len(chosen.records),
            "corrupt": len(chosen.corrupt),
        }
    )
    events: set[str] = set()
    sources: set[str] = set()
    for (row_id, scope, hash_, raw), m in chosen.records:
        head: dict[str, Any] = {
            "type": "memory",
            "id": row_id,
            "scope": scope,
            "hash": hash_,
            **_stored(raw),  # the row's text exactly as stored: it restores byte for byte
        }
        line: dict[str, Any] = {"quality": m.quality.as_json(), "state": m.state}
        if history is not None and request.with_events:
            written = history.by_record.get(m.id, [])
            line["events"] = [data for data, _ in written]
            line["eventsData"] = [stored for _, stored in written]
            events.update(str(e.get("id")) for e in line["events"])
        if history is not None and request.with_sources:
            line["sources"] = history.sources_for(m)
            sources.update(str(s.get("id")) for s in line["sources"])
        out.write(_memory_line(head, raw, m.data, line) + "\n")
    for (row_id, scope, hash_, raw), bad in chosen.corrupt:
        emit(
            {
                "type": "corrupt",
                "table": "memories",
                "id": row_id,
                "scope": scope,
                "hash": hash_,
                **_stored(raw),
                "reason": bad.reason,
            }
        )
    if history is not None and request.with_events:
        for (rowid, eid, scope, raw), bad in history.corrupt:
            emit(
                {
                    "type": "corrupt",
                    "table": "events",
                    "rowid": rowid,
                    "id": eid,
                    "scope": scope,
                    **_stored(raw),
                    "reason": bad.reason,
                }
            )
    return ExportResult(len(chosen.records), len(chosen.corrupt), len(events), len(sources))


def _memory_line(head: dict[str, Any], raw: Any, parsed: Any, tail: dict[str, Any]) -> str:
    """A memory's line: ``head``, then ``memory`` as the stored text itself where that
    text can stand in a line as it is (one line, nothing a terminal would obey), so its
    numbers keep their spelling (``1E+2``, ``-0``, a long decimal) and a repeated key
    stays; else as parsed. Then ``tail``."""
    memory = raw if _splices(raw) else safe_json(parsed)
    rest = safe_json(tail)
    return f'{safe_json(head)[:-1]}, "memory": {memory}' + (
        f", {rest[1:]}" if rest != "{}" else "}"
    )


def _splices(raw: Any) -> bool:
    return (
        isinstance(raw, str)
        and "\n" not in raw
        and "\r" not in raw
        and UNSAFE.search(raw) is None
        and raw.lstrip().startswith("{")
    )


def _markdown(
    store: MemoryStore,
    snap: Snapshot,
    request: ExportRequest,
    chosen: _Selection,
    history: _History | None,
    out: TextIO,
) -> ExportResult:
    w: Callable[[str], int] = out.write
    records = [m for _, m in chosen.records]
    w("# What pi remembers\n\n")
    w(
        f"Exported {iso(snap.now_ms)} by memevo-tui {__version__} from {md_code(str(store.path))}"
        f" (schema {md_text(snap.schema)}): {len(records):,} record(s)"
    )
    if request.filter:
        w(f", filter {md_code(request.filter)}")
    if request.ids is not None:
        w(", the marked records")
    w(".\n\n")
    w(
        "> Every text below went through pi's redactor (the one pi applies before it stores "
        "or recalls anything), so secrets it recognises read `[REDACTED…]`. Ids are kept, "
        "so a record can be found again with `memevo-tui show <id>`.\n\n"
    )
    events: set[str] = set()
    sources: set[str] = set()
    for origin, kinds in group_records(records):
        w(f"## {md_text(origin)}\n\n")
        for kind, rows in kinds:
            w(f"### {md_text(KIND_HEADINGS.get(kind, kind))} ({len(rows)})\n\n")
            for m in sorted(rows, key=lambda m: (m.updated_at, m.id), reverse=True):
                w(md_record(m))
                if history is not None and request.with_events:
                    evs = [data for data, _ in history.by_record.get(m.id, [])]
                    events.update(str(e.get("id")) for e in evs)
                    w("".join(md_event(e) for e in evs))
                if history is not None and request.with_sources:
                    found = history.sources_for(m)
                    sources.update(str(f.get("id")) for f in found)
                    w("".join(md_source(s) for s in found))
                w("\n")
    if chosen.corrupt:
        w(f"## Corrupt rows ({len(chosen.corrupt)})\n\n")
        w("Rows pi's validation rejects; shown as stored reasons, never as records.\n\n")
        for _, bad in chosen.corrupt:
            w(f"- {md_code(bad.id)}: {md_text(bad.reason)}\n")
        w("\n")
    return ExportResult(len(records), len(chosen.corrupt), len(events), len(sources))
