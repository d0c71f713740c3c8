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
import contextlib
import errno
import json
import os
import re
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator
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
from store import redact_text as redact

from . import __version__
from .glyphs import STATE_MEANINGS
from .text import UNSAFE, iso_day, safe_json, visible
from .view import Filter, matches, parse_filter

Format = Literal["jsonl", "markdown"]
KIND_HEADINGS = {
    "fact": "Facts",
    "preference": "Preferences",
    "decision": "Decisions",
    "project_state": "Project states",
}
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


# ------------------------------------------------------------------ Markdown

_MD_INLINE = re.compile(r"([\\`*_\[\]<>|~&!@])")
_MD_LINE_START = re.compile(r"^(\s*)(\d+)?([#+\-=>.)])", re.M)
_LINKABLE = re.compile(
    r"(?:\b[a-z][a-z0-9+.-]*://|\bwww\.)[^\s<>`]+"  # what a forge turns into a link
    r"|[\w.+-]+@[\w-]+(?:\.[\w-]+)+",  # and an address it turns into a mailto: link
    re.IGNORECASE,
)
_TRAILING = ".,:;!?'\")]}*_~"
"""Punctuation after a URL that reads as the sentence's, not the URL's."""


def _url_end(url: str) -> str:
    """``url`` without the sentence's punctuation after it (a ")" it opened stays)."""
    while url and url[-1] in _TRAILING:
        if url[-1] == ")" and url.count("(") >= url.count(")"):
            break
        url = url[:-1]
    return url


def md_text(text: str) -> str:
    """Store text, redacted, as Markdown that shows it as written and obeys none of it:
    markup characters escaped (``@`` too, so a forge mentions nobody), and each URL or
    address as inline code, so that no forge makes it a link."""
    clean = visible(redact(text), keep_newlines=True).replace("\t", " ")
    parts: list[str] = []
    at = 0
    for m in _LINKABLE.finditer(clean):
        url = _url_end(m.group(0))
        parts.append(_MD_INLINE.sub(r"\\\1", clean[at : m.start()]))
        parts.append(md_code(url))
        at = m.start() + len(url)
    parts.append(_MD_INLINE.sub(r"\\\1", clean[at:]))
    return _MD_LINE_START.sub(_escape_line_start, "".join(parts))


def _escape_line_start(m: re.Match[str]) -> str:
    lead, number, mark = m.group(1), m.group(2), m.group(3)
    if number is None and mark in ".)":
        return m.group(0)  # a line starting "." or ")" is no block marker
    return f"{lead}{number or ''}\\{mark}"


def md_code(text: str) -> str:
    """An id or label as inline code (redacted; backticks cannot close it early)."""
    clean = UNSAFE.sub("\ufffd", redact(text))
    fence = "``" if "`" in clean else "`"
    pad = " " if clean.startswith("`") or clean.endswith("`") else ""
    return f"{fence}{pad}{clean}{pad}{fence}"


def _group(records: Iterable[Memory]) -> Iterator[tuple[str, list[tuple[str, list[Memory]]]]]:
    by_origin: dict[str, dict[str, list[Memory]]] = {}
    for m in records:
        by_origin.setdefault(m.scope, {}).setdefault(m.kind, []).append(m)
    for origin in sorted(by_origin):
        kinds = by_origin[origin]
        yield (
            origin,
            [(k, kinds[k]) for k in KIND_HEADINGS if k in kinds]
            + [(k, v) for k, v in sorted(kinds.items()) if k not in KIND_HEADINGS],
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
    for origin, kinds in _group(records):
        w(f"## {md_text(origin)}\n\n")
        for kind, rows in kinds:
            w(f"### {md_text(KIND_HEADINGS.get(kind, kind))} ({len(rows)})\n\n")
            for m in sorted(rows, key=lambda m: (m.updated_at, m.id), reverse=True):
                w(_md_record(m))
                if history is not None and request.with_events:
                    evs = [data for data, _ in history.by_record.get(m.id, [])]
                    events.update(str(e.get("id")) for e in evs)
                    w("".join(_md_event(e) for e in evs))
                if history is not None and request.with_sources:
                    found = history.sources_for(m)
                    sources.update(str(f.get("id")) for f in found)
                    w("".join(_md_source(s) for s in found))
                w("\n")
    if chosen.corrupt:
        w(f"## Corrupt rows ({len(chosen.corrupt)})\n\n")
        w("Rows pi's validation rejects; shown as stored reasons, never as records.\n\n")
        for _, bad in chosen.corrupt:
            w(f"- {md_code(bad.id)}: {md_text(bad.reason)}\n")
        w("\n")
    return ExportResult(len(records), len(chosen.corrupt), len(events), len(sources))


def _md_event(e: dict[str, Any]) -> str:
    at, actor, reason = (str(e.get(k, "")) for k in ("at", "actor", "reason"))
    return f"  - {md_text(at)} {md_text(actor)}: {md_text(reason)}\n"


def _md_source(s: dict[str, Any]) -> str:
    data = s.get("data")
    kind = str(data.get("kind", "?")) if isinstance(data, dict) else "corrupt"
    state = md_text(str(s.get("state")))
    return f"  - source {md_code(str(s.get('id')))} ({md_text(kind)}, {state})\n"


def md_time_left(m: Memory) -> str:
    """How fresh a record is, in words a reader takes at once: "aging, dormant in 12
    days" (a bare "freshness 0.71" read as "71% fresh")."""
    if m.status in ("forgotten", "conflicted"):
        return "never recalled"
    left = m.days_until_dormant
    if left is None:
        return "pinned: never goes dormant"
    if left <= 0:
        return f"dormant (confirmed {m.age_days:.0f} days ago)"
    days = max(1, round(left))
    return f"{m.state}, dormant in {days} day{'s' if days != 1 else ''}"


def _md_record(m: Memory) -> str:
    q = m.quality
    text = md_text(m.content).replace("\n", "  \n  ")
    feedback = ", ".join(s.verdict for s in (m.utility, m.accuracy) if s is not None)
    lines = [
        f"- {text}",
        f"  {md_code(m.id)} · {m.status} · {m.state}: {STATE_MEANINGS.get(m.state, '')}",
        f"  evidence {q.basis}/{q.method} · updated {iso_day(m.updated_at)}"
        f" · confirmed {iso_day(q.confirmed_at)} · {md_time_left(m)}",
        f"  feedback: {feedback or 'none'}"
        + (
            f" · search terms: {', '.join(md_text(t) for t in m.search_terms)}"
            if m.search_terms
            else ""
        ),
    ]
    return "  \n".join(lines) + "\n"


# ------------------------------------------------------------------ files


class NotARegularFile(OSError):
    """The export's target is there and is not a regular file (a symbolic link, a
    device, a FIFO, a directory): an export replaces only a regular file."""


_KINDS = (
    (stat.S_ISLNK, "a symbolic link"),
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISCHR, "a device"),
    (stat.S_ISBLK, "a device"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
)


def _regular_or_new(target: Path) -> None:
    """Raise ``NotARegularFile`` unless nothing, or a regular file, is at ``target``
    (never following a symbolic link)."""
    try:
        mode = os.lstat(target).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISREG(mode):
        return
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    raise NotARegularFile(
        errno.EEXIST,
        f"it is {kind}; an export writes only to a regular file or a new path",
        str(target),
    )


@contextlib.contextmanager
def atomic_file(path: Path, *, replace: bool = False) -> Iterator[TextIO]:
    """A file written beside ``path`` (mode 0600: memories are private) and moved into
    place once complete: an interrupted export never leaves half a file. Unless
    ``replace``, a file already at ``path`` is never overwritten, not even one that
    appeared meanwhile (``FileExistsError``): the new file is linked in, not renamed."""
    target = path.expanduser()
    if not replace and os.path.lexists(target):
        raise FileExistsError(errno.EEXIST, "it already exists", str(target))
    _regular_or_new(target)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        if replace:
            _regular_or_new(target)  # again: something else may have been put there
            os.replace(tmp, target)
            return
        try:
            os.link(tmp, target)  # fails, atomically, if anything is there now
        except FileExistsError:
            raise
        except OSError:  # no hard links here (some network and FAT file systems)
            if os.path.lexists(target):
                raise FileExistsError(errno.EEXIST, "it already exists", str(target)) from None
            os.replace(tmp, target)
            return
        os.unlink(tmp)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
