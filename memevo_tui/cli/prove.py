"""``correct``, ``forget`` and ``feedback`` with ``--prove``: the dashboard's own flow
(the Curator, with the command line as its host), so the question, the proof on pi's
sessions and the write are the ones ``e``, ``d`` and ``4`` give."""

from __future__ import annotations

import argparse

from store import Memory, MemoryLoad, MemoryStore

from ..core.state import DashboardState
from ..core.verbs import named
from ..curator import Curator
from .asking import TerminalHost
from .exits import EXIT_OK
from .ids import CannotRun
from .output import Output


async def proved_write(store: MemoryStore, args: argparse.Namespace, name: str, o: Output) -> int:
    """Read every record as the dashboard does, replay pi's sessions, ask, then write
    the verb ``name`` through the Curator; the exit code says what came of it."""
    if args.json:
        raise CannotRun("--prove asks a person: leave out --json")
    if named(name).becomes is None:
        o.note(f"memevo-tui: {name} changes nothing pi recalls: there is nothing to prove")
        if not args.yes:
            o.note("Nothing written: add --yes to write it")
            return EXIT_OK
    state = DashboardState(
        store.path, read_only=store.read_only, remember=not getattr(args, "demo", False)
    )
    state.use_sessions(args.sessions)
    state.scope_asked = ""  # every project: the record's own is proved on
    host = TerminalHost(o, yes=args.yes, text=" ".join(getattr(args, "text", ()) or ()))
    try:
        await state.open()

        async def first_page(load: MemoryLoad[Memory], total: int) -> None:
            """The command line shows no first screenful."""

        load, last_rowid = await state.read(first_page)
        total = len(load.memories) + len(load.corrupt)
        state.replace(load, partial=False, total=total, last_rowid=last_rowid)
        if not state.sessions.is_dir():
            o.note(f"No pi sessions to prove it on ({state.sessions_why}): asked without")
        Curator(host, state).curate(state.find(args.id), name)
        await host.settled()
    finally:
        await state.close()
    return host.code
