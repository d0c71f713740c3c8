"""``memevo-tui purge (KEY… | --all) [--yes] [--sessions DIR]``: a secret out of every
copy. Without ``--yes`` it lists what it would write and writes nothing. The flow is
``core.purging``'s (the dashboard's Purge action runs the same); this prints it."""

from __future__ import annotations

import argparse
from typing import Any

from store import PURGED, MemoryStore, session_files, sessions_folder

from ..core.purging import CannotPurge, PurgePlan, carry_out, plan
from .exits import EXIT_OK
from .ids import CannotRun
from .output import Output


async def run_purge(store: MemoryStore, args: argparse.Namespace, o: Output) -> int:
    if not args.all and not args.keys:
        raise CannotRun("name the findings to purge (their keys, as secrets prints them), or --all")
    if store.read_only:
        raise CannotRun(f"the store is read-only ({store.read_only_reason}): nothing purged")
    await store.check()
    root, _ = sessions_folder(args.sessions)
    files = session_files(root) if args.sessions else []
    try:
        found = await plan(store, keys=args.keys or (), every=args.all, files=files)
    except CannotPurge as exc:
        raise CannotRun(str(exc)) from None
    if not found.chosen:
        o.note("memevo-tui: no secret found: nothing to purge")
        return EXIT_OK
    if not args.yes:
        _preview(o, found, args.json)
        return EXIT_OK
    try:
        receipt = await carry_out(store, found, sessions=True,
                                  demo=bool(getattr(args, "demo", False)))  # fmt: skip
    except CannotPurge as exc:
        raise CannotRun(str(exc)) from None
    _receipt(o, receipt, args.json)
    return EXIT_OK


def _preview(o: Output, found: PurgePlan, as_json: bool) -> None:
    if as_json:
        o.json({"findings": [f.json() for f in found.chosen],
                "forget": [m.id for m in found.holders], "written": False})  # fmt: skip
    else:
        for line in found.lines():
            o.line(line)
        if found.files:
            o.line(f"rewrite  pi's session files that hold it (of {len(found.files)} read)")
    o.note(f"memevo-tui: nothing written; --yes purges {len(found.chosen)} finding(s): each "
           f"copy becomes {PURGED}, in one transaction")  # fmt: skip


def _receipt(o: Output, receipt: dict[str, Any], as_json: bool) -> None:
    if as_json:
        o.json(receipt)
        return
    o.line(f"forgotten through pi's write: {len(receipt['forgotten'])} record(s)")
    for table, n in receipt["written"].items():
        o.line(f"rewritten: {n} row(s) of {table}")
    o.line(f"copies replaced by {PURGED}: {receipt['copies']}")
    o.line(f"write-ahead log: {receipt['wal']}")
    o.line(f"app caches removed (rebuilt when next needed): {receipt['caches']}")
    for path, n in receipt["sessions"].items():
        o.line(f"session file rewritten: {path} ({n} line(s))")
    o.line(f"left in the store: {receipt['leftInStore']}")
    o.note(f"memevo-tui: {receipt['note']}")
