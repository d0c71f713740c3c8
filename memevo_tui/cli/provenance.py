"""``memevo-tui source ID``: where a memory came from, on a terminal or piped."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from store import (
    NOT_STATED,
    MemoryStore,
    Passage,
    Provenance,
    Source,
    SourceLink,
    session_context,
    sessions_folder,
)

from ..core.text import one_line
from .output import Output

if TYPE_CHECKING:
    from ..core.recallcache import SessionIndexCache

OPEN, CLOSE = "[[", "]]"


def marked(text: str, passage: Passage | None, tty: bool) -> list[list[tuple[str, str]]]:
    """``text`` as lines of ``(text, sgr)`` pieces for ``Output.styled``: the passage
    bold on a terminal, between [[ ]] when piped."""
    if passage is None:
        parts = [(text, "")]
    elif tty:
        parts = [(text[: passage.start], ""), (text[passage.start : passage.end], "1"),
                 (text[passage.end :], "")]  # fmt: skip
    else:
        parts = [(text[: passage.start] + OPEN + text[passage.start : passage.end] + CLOSE
                  + text[passage.end :], "")]  # fmt: skip
    lines: list[list[tuple[str, str]]] = [[]]
    for piece, sgr in parts:
        first, *rest = piece.split("\n")
        lines[-1].append((first, sgr))
        lines += [[(more, sgr)] for more in rest]
    return lines


def _cache() -> SessionIndexCache | None:
    from ..core.recallcache import SessionIndexCache

    return SessionIndexCache()


def _scope(link: SourceLink) -> str:
    return link.source.scope if isinstance(link.source, Source) else ""


def source_json(p: Provenance, root: Path, n: int) -> dict[str, Any]:
    out: dict[str, Any] = {"id": p.record.id, "content": p.record.content,
                           "grounded": p.grounded, "sources": []}  # fmt: skip
    for link in p.sources:
        row = link.source if isinstance(link.source, Source) else None
        item: dict[str, Any] = {
            "id": link.source_id,
            "kind": link.kind,
            "roles": list(link.roles),
            "models": list(link.models),
            "inStore": row is not None,
            "createdAt": row.created_at if row else None,
            "state": row.state if row else None,
            "text": link.text,
        }
        passage = link.passage
        item["passage"] = None if passage is None else {
            "start": passage.js_start, "end": passage.js_end, "coverage": passage.coverage,
            "section": passage.section, "grounded": passage.grounded,
            "matched": list(passage.matched), "missing": list(passage.missing),
        }  # fmt: skip
        item["session"] = session_context(link.source_id, _scope(link), root, n, _cache())
        out["sources"].append(item)
    out["manual"] = [{"at": m.at, "reason": m.reason} for m in p.manual]
    c = p.corrected
    out["correctedByHand"] = None if c is None else {"at": c.at, "earlierText": c.earlier}
    out["verdict"] = p.verdict()
    out["inEventLog"] = p.logged
    return out


def print_source(p: Provenance, o: Output, root: Path, n: int) -> None:
    o.line(f"{one_line(p.record.id)}  {p.record.kind}  " + o.fit(p.record.content, 40))
    if not p.sources:
        o.line("  no source: this record names none (imported, or written by hand)")
    if p.corrected is not None:
        o.line(f"  {p.verdict()}")
        o.line("  earlier text: " + o.fit(p.corrected.earlier, 16))
    for link in p.sources:
        row = link.source if isinstance(link.source, Source) else None
        facts = ", ".join(link.roles) + (f"; by {', '.join(link.models)}" if link.models else "")
        when = f"{row.created_at}, {row.state}" if row else "not in the store"
        o.line("")
        o.line(f"source {one_line(link.source_id)}  ({link.kind}; {when}; {one_line(facts)})")
        passage = link.passage
        if passage is None:
            o.line("  no text kept for this source")
            continue
        if passage.section:
            o.line(f"  section: {one_line(passage.section)}")
        of = " of the earlier text" if p.corrected is not None else ""
        if passage.grounded:
            o.line(f"  passage{of}: {passage.coverage_line()}")
        else:
            o.line(f"  {NOT_STATED}{of} (the closest passage has {passage.coverage_line()})")
        shown = passage if passage.coverage > 0 else None  # nothing to point at
        for pieces in marked(link.text, shown, o.tty):
            o.styled([("  | ", ""), *pieces])
        context = session_context(link.source_id, _scope(link), root, n, _cache())
        if "problem" in context:
            o.line(f"  session: {one_line(context['problem'])}")
            continue
        corrupt = context.get("corruptLines", 0)
        skipped = f" ({corrupt} corrupt line(s) skipped)" if corrupt else ""
        o.line(f"  session: {one_line(context['file'])}  entry {context['entry']}{skipped}")
        for label, turns in (("before", context["before"]), ("after", context["after"])):
            if label == "after":
                o.line(f"    > {context['at']['role']}: " + o.fit(context["at"]["text"], 12))
            for t in turns:
                o.line(f"      {t['role']}: " + o.fit(t["text"], 12))
    for m in p.manual:
        o.line(f"manual change {one_line(m.at)}: {one_line(m.reason)}")
    if not p.logged:
        o.line("history: not in the event log")


async def run_source(store: MemoryStore, args: argparse.Namespace, o: Output) -> int:
    p = await store.provenance(args.id)
    root = sessions_folder(args.sessions)[0]
    if args.json:
        o.json(source_json(p, root, args.context))
    else:
        print_source(p, o, root, args.context)
    grounded = p.grounded
    if grounded is False:
        o.note(f"memevo-tui: {NOT_STATED}")
    return 0
