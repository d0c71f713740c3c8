"""How the read verbs print: records, one record, recall, history."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from store import (
    ICU_AVAILABLE,
    REASONS,
    STATUS_REASONS,
    Candidate,
    CorruptRow,
    Diff,
    DigestLine,
    Event,
    Evidence,
    Memory,
    Recall,
    Signal,
    StoredMemory,
    iso,
    parse_ms,
    tool_matches,
    tool_text,
    utf8_len,
)

from ..core.text import field_text, iso_day, one_line, visible
from .output import Output

PURPOSES = {
    "inject": "what pi would inject (dormant excluded)",
    "tool": "what the model's memory_recall tool returns (dormant included, marked aging)",
    "explain": "/memory explain (dormant excluded)",
    "search": "/memory search (dormant included)",
}


def record_json(memory: StoredMemory) -> dict[str, Any]:
    return {"memory": memory.data, "quality": memory.quality.as_json()}


Stored = Mapping[str, StoredMemory]
"""The records as stored, by id: what JSON output prints for a record chosen by id."""


def list_order(memories: list[Memory]) -> list[Memory]:
    """pi's list order: evidence date descending, then id."""
    by_id = sorted(memories, key=lambda m: m.id)
    return sorted(by_id, key=lambda m: -(parse_ms(m.updated_at) or 0.0))


def print_table(memories: Sequence[Memory], o: Output) -> None:
    id_width = max((len(one_line(m.id)) for m in memories), default=2)
    widths = [id_width, 13, 11, 10, 10]
    if o.tty:
        o.row(["ID", "KIND", "STATUS", "STATE", "UPDATED"], widths, "CONTENT")
    for m in memories:
        cells = [m.id, m.kind, m.status, m.state, iso_day(m.updated_at)]
        o.row(cells, widths, m.content)
    o.note(f"{len(memories)} record(s)")


NOT_IN_LOG = "  (not in the event log: may have differed then)"


def print_memory(m: Memory, o: Output, *, replayed: bool = False, logged: bool = True) -> None:
    """One record, field by field. ``replayed`` (as of a past moment): the fields pi
    changes without an event say they are as the reconstruction gives them. ``logged``
    False: no event names the record (said on a line of its own)."""
    q = m.quality
    unlogged = NOT_IN_LOG if replayed else ""
    lines = [
        ("id", m.id),
        ("kind", m.kind),
        ("status", m.status),
        ("layer", m.layer),
        ("state", m.state),
        ("origin", m.scope),
        ("revision", str(m.revision)),
        ("created", m.created_at),
        ("updated", m.updated_at),
        ("confirmed", q.confirmed_at + unlogged),
        ("evidence", f"{q.basis}/{q.method}" + unlogged),
        ("evidence from", (m.evidence.source_id if m.evidence else "-") + unlogged),
        ("freshness", f"{q.freshness:.3f}  (age {q.age_days:.1f} days)"),
        ("factor", f"{q.factor:.4f} = freshness × evidence {q.evidence_weight:.2f} × "
                   f"utility {q.utility:g} × accuracy {q.accuracy:g}"),
        ("utility", m.utility.verdict if m.utility else "-"),
        ("accuracy", m.accuracy.verdict if m.accuracy else "-"),
        ("search terms", ", ".join(m.search_terms) or "-"),
        ("suppressed", str(len(m.suppressed_hashes))),
    ]  # fmt: skip
    if not logged:
        lines.append(("history", "not in the event log: taken to exist from its createdAt"))
    for key, value in lines:
        o.line(f"{key:>13}: {one_line(value)}")
    o.line(f"{'content':>13}:\n{visible(m.content, keep_newlines=True)}")


def recall_json(result: Recall, stored: Stored, lines: Sequence[DigestLine] = ()) -> dict[str, Any]:
    """``{"selected": [...records with score and rankScore...], "excluded": [{id, reason}]}``,
    and for the tool, the ``text`` it returns and how many records it names."""
    out: dict[str, Any] = {
        "selected": [
            {**record_json(stored[c.memory.id]), "score": c.score, "rankScore": c.rank_score}
            for c in result.selected
            if c.memory.id in stored  # gone since it was chosen (a note says so)
        ],
        "excluded": [{"id": c.memory.id, "reason": c.reason} for c in result.left_out],
    }
    if result.purpose == "tool":
        out["text"] = text = tool_text(lines)  # byte for byte, the header included
        out["matches"] = tool_matches(text)
    return out


def _candidate(c: Candidate, lead: str, o: Output) -> None:
    figures = f"score {c.score:.3f} × quality {c.factor:.3f} = rank {c.rank_score:.3f}"
    o.line(f"{lead:>3}  {one_line(c.memory.id)}  {c.memory.state}  {figures}")
    o.line(f"     {o.fit(c.memory.content, 5)}")


def print_recall(result: Recall, o: Output, lines: Sequence[DigestLine] = ()) -> None:
    """The recall preview in text: plan, selected records, left-out records and why."""
    plan = result.plan
    o.line(f"{result.purpose}: {PURPOSES.get(result.purpose, result.purpose)}")
    o.line(
        f"plan: {plan.mode}; query words: {', '.join(visible(w) for w in result.query) or '-'}; "
        f"{result.eligible} eligible, {result.excluded} excluded by status"
    )
    chosen = {"inject": "injected", "tool": "returned"}.get(result.purpose, "selected")
    o.line(f"{chosen} ({len(result.selected)} of at most {result.limit}):")
    for n, c in enumerate(result.selected, 1):
        _candidate(c, str(n), o)
    if not result.selected:
        o.line("  nothing would be injected" if result.purpose == "inject" else "  nothing")
    if result.left_out:
        o.line(f"left out ({len(result.left_out)}):")
        for c in result.left_out:
            _candidate(c, "-", o)
            reason = c.reason or ""
            why = f"     {reason}: {REASONS.get(reason, reason)}"
            if reason in STATUS_REASONS:
                why += f" (otherwise: {c.would_fail or 'it passes every gate'})"
            o.line(why)
    if result.purpose == "tool":
        text = tool_text(lines)
        o.line(f"returned to the model ({tool_matches(text)} record(s), "
               f"{utf8_len(text):,} of 2,048 bytes), as pi returns it:")  # fmt: skip
        for line in text.rstrip("\n").split("\n"):
            o.line(visible(line) if o.tty else line)
    if not ICU_AVAILABLE:
        o.note("note: PyICU is not installed; words are split differently from pi")


def event_line(e: Event | CorruptRow, o: Output) -> str:
    """pi's history line: ``<id> <at> [<scope>] <actor>: <reason> (<n> changes)``."""
    if isinstance(e, CorruptRow):
        return f"{one_line(e.id)} CORRUPT: {one_line(e.reason)}"
    head = f"{e.id} {e.at} [{one_line(e.scope)}] {e.actor}: "
    tail = f" ({len(e.after)} changes)"
    if o.width is None:
        return head + one_line(e.reason) + tail
    return head + one_line(e.reason, max(20, o.width - len(head) - len(tail) - 1)) + tail


def _json_value(value: Any) -> Any:
    """A field's value as JSON: a verdict as pi stores it, a tuple as a list."""
    if isinstance(value, Signal):
        return {"verdict": value.verdict, "sourceId": value.source_id, "at": value.at}
    if isinstance(value, Evidence):
        return {"basis": value.basis, "method": value.method, "sourceId": value.source_id,
                "at": value.at}  # fmt: skip
    if isinstance(value, tuple):
        return list(value)
    return value


def _summary(m: Memory) -> dict[str, Any]:
    return {
        "id": m.id,
        "kind": m.kind,
        "status": m.status,
        "layer": m.layer,
        "scope": m.scope,
        "updatedAt": m.updated_at,
        "content": m.content,
    }


def diff_json(d: Diff) -> dict[str, Any]:
    """``{"from", "to", "added": [...], "changed": [{"id", "fields": {...}}], "removed"}``."""
    return {
        "from": iso(d.start),
        "to": iso(d.end),
        "added": [_summary(m) for m in d.added],
        "changed": [
            {
                "id": c.end.id,
                "fields": {
                    name: {"before": _json_value(a), "after": _json_value(b)}
                    for name, (a, b) in c.fields.items()
                },
            }
            for c in d.changed
        ],
        "removed": [_summary(m) for m in d.removed],
    }


def print_diff(d: Diff, o: Output) -> None:
    """On a terminal, a line per record and one per changed field; piped, one
    tab-separated line per record (what, id, the fields that changed, the text)."""
    if o.tty:
        o.line(f"from {iso(d.start)} to {iso(d.end)}")
    for what, m in [*(("added", m) for m in d.added), *(("removed", m) for m in d.removed)]:
        if o.tty:
            o.line(f"{'+' if what == 'added' else '-'} {one_line(m.id)}  {m.kind} {m.status}  "
                   + o.fit(m.content, len(m.id) + len(m.kind) + len(m.status) + 6))  # fmt: skip
        else:
            o.line("\t".join([what, one_line(m.id), "", one_line(m.content)]))
    for c in d.changed:
        names = ", ".join(c.fields)
        if o.tty:
            o.line(f"~ {one_line(c.end.id)}  {names}")
            for name, (a, b) in c.fields.items():
                o.line(f"    {name}: " + o.fit(f"{field_text(a)} → {field_text(b)}", len(name) + 6))
        else:
            o.line("\t".join(["changed", one_line(c.end.id), names, one_line(c.end.content)]))
    o.note(f"{len(d.added)} added, {len(d.changed)} changed, {len(d.removed)} removed")
