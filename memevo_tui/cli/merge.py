"""``memevo-tui merge ID ID… [--keep ID] [--text TEXT] [--yes]``: the dashboard's merge
(``M``) for scripts: pi's correct of the record kept, then a forget of each other one,
journaled as one batch, shown first and written only with ``--yes``."""

from __future__ import annotations

import argparse

from store import Memory, MemoryStore, Refused, StoreError, iso

from ..core.appstate import AppState
from ..core.bulk import Step, kept_first, merge_plan, merge_problem
from ..core.text import short_ids
from ..core.verbs import Target, named
from .exits import EXIT_OK, EXIT_REFUSED
from .ids import CannotRun, unique_prefix
from .output import Output


async def run_merge(store: MemoryStore, args: argparse.Namespace, o: Output) -> int:
    ids = [await unique_prefix(store, "memories", i) for i in dict.fromkeys(args.ids)]
    keep_id = await unique_prefix(store, "memories", args.keep) if args.keep else None
    rows = await store.memories(ids)
    missing = sorted(set(ids) - {r.id for r in rows})
    if missing:
        raise Refused(f"Unknown memory id: {missing[0]}")
    why = merge_problem(rows)
    if why is not None:
        raise CannotRun(why)
    records = [r for r in rows if isinstance(r, Memory)]
    if keep_id is not None and keep_id not in ids:
        raise CannotRun(f"--keep {keep_id} is not one of the records merged")
    keep = next((m for m in records if m.id == keep_id), None) or kept_first(records)
    text = args.text if args.text is not None else keep.content
    steps = merge_plan("merge", records, text, keep_id=keep.id)
    if keep_id is not None and steps[0].memory_id != keep_id:
        raise CannotRun(f"{steps[0].memory_id} already has that text: pi's correct would take "
                        f"it too, so it is the one kept (--keep {steps[0].memory_id})")  # fmt: skip
    short = short_ids(m.id for m in records)
    if args.json and not args.yes:
        o.json({"writes": [_step_json(s) for s in steps], "written": False})
    elif not args.json:
        for s in steps:
            o.line(_step_line(s, short))
    if steps[0].refusal:
        raise Refused(steps[0].refusal)
    if not args.yes:
        writes = sum(1 for s in steps if s.writes)
        o.note(f"memevo-tui: nothing written; --yes writes these {writes} write(s) as one batch")
        return EXIT_OK
    return await _write(store, args, o, steps)


def _step_line(s: Step, short: dict[str, str]) -> str:
    what = f"correct to {s.new_text!r}" if s.new_text else s.op
    state = s.refusal or s.unchanged
    return f"{s.op:<8} {short.get(s.memory_id, s.memory_id)}  " + (
        f"not written: {state}" if state else what if s.new_text else s.text
    )


def _step_json(s: Step) -> dict[str, object]:
    return {"op": s.op, "id": s.memory_id, "revision": s.revision, "text": s.new_text or None,
            "refusal": s.refusal, "unchanged": s.unchanged}  # fmt: skip


async def _write(store: MemoryStore, args: argparse.Namespace, o: Output, steps: list[Step]) -> int:
    """Each write as the dashboard's merge writes it, journaled as one batch first (the
    dashboard's History then undoes it with one ``u``)."""
    await store.check()
    writing = [s for s in steps if s.writes]
    journal = None if args.demo else AppState(store.path)
    batch = None
    if journal is not None and len(writing) > 1:
        at = iso(store.now_ms())
        batch = journal.begin_batch("merge", "merge", at, [s.target for s in writing],
                                    await store.last_event_rowid())  # fmt: skip
    events: list[str] = []
    refused: list[str] = []
    try:
        for n, step in enumerate(writing):
            target = Target(step.memory_id, step.revision, step.new_text)
            try:
                event = await named(step.op).call(store, target)
            except Refused as exc:
                if n == 0:  # the text kept was refused: nothing else is written
                    raise
                refused.append(f"{step.memory_id}: {exc}")
                continue
            if event is not None:
                events.append(event)
    except StoreError:
        if batch is not None and journal is not None:
            journal.finish_batch(batch, events, cut_short=True)
        raise
    if batch is not None and journal is not None:
        journal.finish_batch(batch, events)
    if args.json:
        o.json({"events": events, "refused": refused, "written": True, "batch": batch})
    else:
        for line in refused:
            o.note(f"memevo-tui: refused: {line}")
        o.line(f"Merged into {writing[0].memory_id}: {len(events)} write(s) "
               f"({', '.join(events)})" + ("; one batch: u in the dashboard's History undoes "
                                           "it whole" if batch else ""))  # fmt: skip
    return EXIT_REFUSED if refused else EXIT_OK
