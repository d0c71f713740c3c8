"""Where a memory came from: the sources that shaped it, and the passage of each that
states it.

A record names the source that created it (``sourceEntryId``), its evidence's source
(``evidence.sourceId``), and the learning runs that changed it name theirs in their
events' reasons (§4.1: ``Capture <source>`` for a local capture, ``<model>: <source>``
for a model's run). Each source row keeps the text the model learned from
(``sources.data.content``): pi's compaction summary (Markdown, in sections), a user's
message, or a progress request and its completion (JSON).

The passage is the sentence or line of that text whose recall features (ICU words,
concepts, literals: ``features.features``) cover most of the claim's. A claim that no
passage covers well (``GROUNDED`` of its features) is "not stated" by its source: the
signature of a memory the model inferred, or invented. No Textual, nothing written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

from ..js import js_len
from ..recall.features import features
from ..records.model import CorruptRow, Event, Memory, Source

GROUNDED = 0.5
"""The share of a claim's features a passage must hold for the claim to be stated there."""
NOT_STATED = "no passage of its source states this"
_MODEL_REASON = re.compile(r"^.*?: (?P<source>\S+?)(?:; weaker replacements withheld=\d+)?$", re.S)
_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")


@dataclass(frozen=True, slots=True)
class Passage:
    """A span of a source's text: ``start``/``end`` index the text (Python characters);
    ``js_start``/``js_end`` are the same in UTF-16 code units, as JavaScript counts."""

    start: int
    end: int
    js_start: int
    js_end: int
    text: str
    section: str
    """The Markdown heading it sat under ("" when none)."""
    coverage: float
    """Share of the claim's features it holds (0..1)."""
    matched: tuple[str, ...]
    missing: tuple[str, ...]

    @property
    def grounded(self) -> bool:
        return self.coverage >= GROUNDED

    def coverage_line(self) -> str:
        """ "94% of the claim's words (17 of 18)"."""
        total = len(self.matched) + len(self.missing)
        return (
            f"{round(self.coverage * 100)}% of the claim's words ({len(self.matched)} of {total})"
        )


@dataclass(frozen=True, slots=True)
class SourceLink:
    """One source that shaped a record, and how."""

    source_id: str
    roles: tuple[str, ...]
    """Why it is listed: "created it", "its evidence", "a learning run on <date>"."""
    models: tuple[str, ...]
    """The models whose runs on it changed the record (its events' reasons name them)."""
    source: Source | CorruptRow | None
    """The row (None: the store has no row for it; pi may have pruned it)."""
    text: str
    """The text searched for the claim ("" when there is none)."""
    passage: Passage | None
    """The best passage (None: no text to search)."""

    @property
    def kind(self) -> str:
        return self.source_id.split(":", 1)[0] if ":" in self.source_id else "?"


@dataclass(frozen=True, slots=True)
class ManualChange:
    at: str
    reason: str


@dataclass(frozen=True, slots=True)
class HandCorrection:
    """The record's text is the user's: corrected by hand after its sources spoke."""

    at: str
    """When (the newest manual change of the text)."""
    earlier: str
    """The text before the user's corrections: what the sources stated, if anything."""


@dataclass(frozen=True, slots=True)
class Provenance:
    record: Memory
    sources: tuple[SourceLink, ...]
    manual: tuple[ManualChange, ...]
    logged: bool
    """False: no event names the record."""
    corrected: HandCorrection | None = None
    """Set when the text now is a manual correction: its evidence is the user, and each
    source's passage is the one that states the earlier text."""

    @property
    def best(self) -> Passage | None:
        """The passage that covers the claim best, among every source."""
        found = [s.passage for s in self.sources if s.passage is not None]
        return max(found, key=lambda p: p.coverage, default=None)

    @property
    def grounded(self) -> bool | None:
        """True: a source states it; False: none does; None: no source text to ask, or
        the text is the user's own correction (``corrected``)."""
        best = self.best
        return None if best is None or self.corrected is not None else best.grounded

    def verdict(self) -> str:
        """The provenance in one line: corrected by hand, stated, not stated, no text."""
        if self.corrected is not None:
            best = self.best
            source = (
                "its source keeps no text" if best is None
                else "its source stated the earlier text" if best.grounded
                else "no passage of its source states the earlier text either"
            )  # fmt: skip
            return (
                f"corrected by hand on {self.corrected.at[:10]}: the evidence is the user; {source}"
            )
        grounded = self.grounded
        if grounded is None:
            return "no source text to look in"
        return "a passage of its source states it" if grounded else NOT_STATED


def event_source(e: Event) -> str | None:
    """The source a capture or a learning run's event came from (its reason names it)."""
    reason = e.reason
    if e.actor == "local" and reason.startswith("Capture "):
        return reason[len("Capture ") :].strip() or None
    if e.actor == "model":
        m = _MODEL_REASON.match(reason)
        return m.group("source") if m else None
    return None


def event_model(e: Event) -> str | None:
    """The model a learning run's event names before its source ("provider/model")."""
    if e.actor != "model" or ": " not in e.reason:
        return None
    return e.reason.split(": ", 1)[0].strip() or None


def searched_text(source: Source) -> str:
    """The text a claim is looked for in: a progress source's request, each operation
    with everything it kept (its command, exit code, output, path…) and its completion,
    as lines; any other source's content as stored. Nothing of what pi stored is left
    out: a test's "3 passed" output is what states that it passes."""
    if source.kind != "progress":
        return source.content
    try:
        data = json.loads(source.content)
    except ValueError:
        return source.content
    if not isinstance(data, dict):
        return source.content
    lines = []
    if isinstance(data.get("userText"), str):
        lines.append(f"Request: {data['userText']}")
    for op in data.get("operations") or ():
        if not isinstance(op, dict):
            lines.append(f"operation: {_said(op)}")
            continue
        command = op.get("command") or op.get("path") or ""
        code = op.get("exitCode")
        lines.append(f"{op.get('tool', 'tool')}: {_said(command)}" + (
            f" (exit {code})" if code is not None else ""))  # fmt: skip
        for key, value in op.items():
            if key not in ("tool", "command", "exitCode") and not (
                key == "path" and not op.get("command")
            ):
                lines += [f"  {key}: {line}" for line in _said(value).splitlines() or [""]]
    if isinstance(data.get("completion"), str):
        lines.append(f"Completion: {data['completion']}")
    for key, value in data.items():
        if key not in ("userText", "operations", "completion"):
            lines.append(f"{key}: {_said(value)}")
    return "\n".join(lines) if lines else source.content


def _said(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def passages(text: str) -> Iterator[tuple[int, int, str]]:
    """Each sentence of each line of ``text``: its start, end and section heading."""
    section = ""
    at = 0
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        heading = _HEADING.match(body)
        if heading:
            section = heading.group(2)
        elif body.strip():
            start = 0
            for m in _SENTENCE_END.finditer(body):
                if body[start : m.start()].strip():
                    yield at + start, at + m.start(), section
                start = m.end()
            if body[start:].strip():
                yield at + start, at + len(body), section
        at += len(line)


@lru_cache(maxsize=4096)
def _claim(content: str) -> tuple[str, ...]:
    return tuple(features(content, True))


def best_passage(claim: str, text: str, *, whole: bool = False) -> Passage | None:
    """The passage of ``text`` whose features cover most of ``claim``'s (ties: the
    shorter); None when ``text`` has no passage or the claim no features. ``whole``:
    the whole text is a passage too (a progress run: its request, commands, outputs
    and completion state a claim together)."""
    wanted = _claim(claim)
    if not wanted or not text.strip():
        return None
    wanted_set = set(wanted)
    best: tuple[float, int, int, int, str] | None = None
    candidates = list(passages(text))
    if whole and len(candidates) > 1:
        candidates.append((0, len(text.rstrip()), ""))
    for start, end, section in candidates:
        have = set(features(text[start:end], True)) & wanted_set
        score = len(have) / len(wanted_set)
        key = (score, -(end - start))
        if best is None or key > (best[0], -(best[2] - best[1])):
            best = (score, start, end, len(have), section)
    if best is None:
        return None
    score, start, end, _, section = best
    have = set(features(text[start:end], True))
    return Passage(
        start=start,
        end=end,
        js_start=js_len(text[:start]),
        js_end=js_len(text[:end]),
        text=text[start:end],
        section=section,
        coverage=score,
        matched=tuple(w for w in wanted if w in have),
        missing=tuple(w for w in wanted if w not in have),
    )


def provenance(
    record: Memory,
    events: Sequence[Event | CorruptRow],
    rows: dict[str, Source | CorruptRow],
) -> Provenance:
    """What shaped ``record``: ``events`` are its own (any order), ``rows`` the source
    rows by id (those named and found)."""
    roles: dict[str, list[str]] = {}
    models: dict[str, list[str]] = {}

    def name(source_id: str | None, role: str) -> None:
        if source_id:
            roles.setdefault(source_id, [])
            if role not in roles[source_id]:
                roles[source_id].append(role)

    name(record.source_entry_id, "created it")
    if record.evidence is not None:
        name(record.evidence.source_id, "its evidence")
    manual: list[ManualChange] = []
    corrected = _by_hand(record, events)
    claim = record.content if corrected is None else corrected.earlier
    for e in sorted((e for e in events if isinstance(e, Event)), key=lambda e: e.at):
        source = event_source(e)
        if source is not None:
            name(source, f"{'captured' if e.actor == 'local' else 'a learning run'} "
                         f"on {e.at[:10]}")  # fmt: skip
            model = event_model(e)
            if model and model not in models.setdefault(source, []):
                models[source].append(model)
        elif e.actor == "manual":
            manual.append(ManualChange(e.at, e.reason))
    links = []
    for source_id, why in roles.items():
        if source_id.startswith("manual:"):
            continue  # a manual change's own id: listed with the manual changes
        row = rows.get(source_id)
        text = searched_text(row) if isinstance(row, Source) else ""
        progress = isinstance(row, Source) and row.kind == "progress"
        passage = best_passage(claim, text, whole=progress) if text else None
        found = tuple(models.get(source_id, ()))
        links.append(SourceLink(source_id, tuple(why), found, row, text, passage))
    logged = any(isinstance(e, Event) for e in events)
    return Provenance(record, tuple(links), tuple(manual), logged, corrected)


def _content_of(side: Sequence[dict[str, object] | None], record_id: str) -> str | None:
    for item in side:
        if isinstance(item, dict) and item.get("id") == record_id:
            content = item.get("content")
            return content if isinstance(content, str) else None
    return None


def _by_hand(record: Memory, events: Sequence[Event | CorruptRow]) -> HandCorrection | None:
    """The user's correction the text now is, if it is one: the newest event that
    changed the record's text was a manual one; ``earlier`` is the text before the run
    of manual changes that led to it (what a source could have stated)."""
    changes = []
    for e in sorted((e for e in events if isinstance(e, Event)), key=lambda e: (e.at, e.rowid)):
        before, after = _content_of(e.before, record.id), _content_of(e.after, record.id)
        if after is not None and before is not None and before != after:
            changes.append((e, before))
    if not changes or changes[-1][0].actor != "manual":
        return None
    first = len(changes) - 1
    while first > 0 and changes[first - 1][0].actor == "manual":
        first -= 1
    return HandCorrection(changes[-1][0].at, changes[first][1])


def named_sources(record: Memory, events: Iterable[Event | CorruptRow]) -> list[str]:
    """Every source id ``record`` and its ``events`` name (for reading their rows)."""
    ids = [record.source_entry_id]
    if record.evidence is not None:
        ids.append(record.evidence.source_id)
    ids += [s for e in events if isinstance(e, Event) and (s := event_source(e))]
    return [i for i in dict.fromkeys(ids) if i]
