"""Run one verb against the store and map what happens to an exit code."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Awaitable, Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from store import (
    TOOL_QUERY_MAX,
    UNLOGGED_JSON,
    Event,
    Memory,
    MemoryLoad,
    MemoryStore,
    Purpose,
    Refused,
    StoredMemory,
    StoreError,
    diff,
    digest,
    iso,
    js_len,
    status_report,
)

from ..core.appstate import AppState
from ..core.export import BadExport, ExportRequest, NotARegularFile, atomic_file, export, format_for
from ..core.scope import ALL, Scope, start_scope
from ..core.secrets import purged_note
from ..core.text import one_line
from ..core.verbs import CLI_VERBS, Target, named
from ..core.view import HIDDEN_STATUSES, matches, parse_filter
from ..core.when import BadMoment, parse_moment
from .exits import EXIT_CANNOT_RUN, EXIT_OK, EXIT_REFUSED
from .ids import CannotRun, unique_prefix
from .output import Output
from .parser import WRITE_VERBS
from .reads import (
    Stored,
    diff_json,
    event_line,
    list_order,
    print_diff,
    print_memory,
    print_recall,
    print_table,
    recall_json,
    record_json,
)
from .status import print_status, status_json

if TYPE_CHECKING:
    from store import RecallIndex


async def _merge(store: MemoryStore, args: argparse.Namespace, o: Output) -> int:
    from .merge import run_merge  # the bulk rules: loaded for a merge only

    return await run_merge(store, args, o)


async def _secrets(store: MemoryStore, args: argparse.Namespace, o: Output) -> int:
    from .secrets import run_secrets  # detect-secrets' rules: loaded for a scan only

    return await run_secrets(store, args, o)


async def _purge(store: MemoryStore, args: argparse.Namespace, o: Output) -> int:
    from .purge import run_purge

    return await run_purge(store, args, o)


_OWN_RUNNERS = {"merge": _merge, "secrets": _secrets, "purge": _purge}
"""The verbs whose command line is a module of its own (a merge: a preview, a batch)."""

ID_ARGS = (("id", "memories"), ("other_id", "memories"), ("event_id", "events"))
"""A verb's arguments that name a record or an event, and the table that holds them."""


async def run_verb(store: MemoryStore, args: argparse.Namespace, o: Output) -> int:
    verb: str = args.verb
    for name, table in ID_ARGS:
        if isinstance(given := getattr(args, name, None), str):
            setattr(args, name, await unique_prefix(store, table, given))
    if verb in WRITE_VERBS:
        return await _write_verb(store, args, o)
    if (runner := _OWN_RUNNERS.get(verb)) is not None:
        return await runner(store, args, o)
    if verb == "export":
        return await _export(store, args, o)
    if verb == "show":
        m = await store.memory(args.id)
        past = await store.past()
        logged = bool(await store.events(memory_id=m.id, limit=1))
        if args.json:
            out = record_json(m)
            if past is not None:  # what the event log could not give back
                out["asOf"] = {"at": iso(past.when), "notInEventLog": list(UNLOGGED_JSON)}
            if not logged:
                out["inEventLog"] = False
            o.json(out)
        else:
            print_memory(m, o, replayed=past is not None, logged=logged)
        if purged := purged_note(m.id, m.content, AppState(Path(store.path)).purges()):
            o.note(f"memevo-tui: {purged}")
        return EXIT_OK
    if verb == "history":
        return await _history(store, args, o)
    if verb == "source":
        from .provenance import run_source

        return await run_source(store, args, o)
    if verb == "diff":
        return await _diff(store, args, o)
    if verb in ("turns", "blame"):
        from .turns import run_blame, run_turns

        return await (run_turns if verb == "turns" else run_blame)(store, args, o)
    if verb == "status":
        r = await status_report(store)
        if store.as_of is not None:
            o.note(
                "memevo-tui: the records and model calls are as of then; the learning queue "
                "and route health are as they are now (marked: as now)"
            )
        o.json(status_json(r)) if args.json else print_status(r, o, as_of=store.as_of is not None)
        return EXIT_OK
    # Only ``list --json`` prints every record as stored; the others print a few, whose
    # stored objects are read once they are chosen (``_stored``).
    everything = verb == "list" and args.json
    load: MemoryLoad[Memory] = await (store.load_stored() if everything else store.load_memories())
    if load.corrupt:
        o.note(f"memevo-tui: {len(load.corrupt)} corrupt row(s) left out")
    if verb in ("recall", "explain"):
        return await _recall(store, args, load.memories, o)
    if verb == "list":
        f = parse_filter(args.filter)
        if f.errors:
            raise CannotRun(f"--filter: {'; '.join(f.errors)}")
        show_hidden = args.all or f.names_hidden
        rows: list[Memory] = [
            m
            for m in load.memories
            if (show_hidden or m.status not in HIDDEN_STATUSES) and matches(m, f)
        ]
        if args.dormant:
            rows = [m for m in rows if m.dormant]
        scope = _scope(args, {m.scope for m in load.memories})
        rows = list_order([m for m in rows if scope.covers(m.scope)])
    else:  # search: pi's results, those of the project scope
        found = _index(store, args, load.memories).recall(" ".join(args.query), limit=args.limit)
        scope = _scope(args, {m.scope for m in load.memories})
        rows = [m for m in found.memories if scope.covers(m.scope)]
    if args.json:
        stored = await _stored(store, rows, o)
        o.json([record_json(stored[m.id]) for m in rows if m.id in stored])
    else:
        print_table(rows, o)
    return EXIT_OK


async def _recall(
    store: MemoryStore, args: argparse.Namespace, memories: Sequence[Memory], o: Output
) -> int:
    """recall and explain: pi's injection, its memory_recall tool, or /memory explain."""
    verb: str = args.verb
    words = " ".join(args.query if verb == "recall" else args.text)
    purpose: Purpose = "explain" if verb == "explain" else "tool" if args.tool else "inject"
    if purpose == "tool" and not 1 <= js_len(words) <= TOOL_QUERY_MAX:
        raise CannotRun(f"memory_recall takes a query of 1 to {TOOL_QUERY_MAX} characters")
    limit = getattr(args, "limit", None)
    result = _index(store, args, memories).recall(words, purpose=purpose, limit=limit, explain=None)
    lines = digest(result) if purpose == "tool" else ()
    if args.json:
        o.json(recall_json(result, await _stored(store, result.memories, o), lines))
    else:
        print_recall(result, o, lines)
    return EXIT_OK


async def _stored(store: MemoryStore, shown: Sequence[Memory], o: Output) -> Stored:
    """The records ``shown`` as stored. A load that kept them (``list --json``, a past)
    gives them; the others are read again, and one pi changed or removed meanwhile is
    printed as it is now, or left out, with a note."""
    have: dict[str, StoredMemory] = {m.id: m for m in shown if isinstance(m, StoredMemory)}
    wanted = {m.id: m for m in shown if m.id not in have}
    if not wanted:
        return have
    fresh = {r.id: r for r in await store.stored_memories(list(wanted))}
    changed = 0
    for memory_id, loaded in wanted.items():
        now = fresh.get(memory_id)
        if isinstance(now, StoredMemory):
            have[memory_id] = now
            changed += now.revision != loaded.revision or now.content != loaded.content
        else:
            changed += 1
    if changed:
        o.note(
            f"memevo-tui: {changed} record(s) changed while this ran: printed as they are now, "
            "or left out if gone"
        )
    return have


def _index(store: MemoryStore, args: argparse.Namespace, memories: Sequence[Memory]) -> RecallIndex:
    """The recall index, its words read from the cache where they still hold (none for
    a demo store; the past's records are read from it, never written to it)."""
    from ..core.recallcache import cores, indexed  # numpy: only the verbs that recall import it

    path = None if getattr(args, "demo", False) else Path(store.path)

    def progress(done: int, total: int) -> None:  # on a terminal only: pipes stay clean
        if sys.stderr.isatty():
            end = "\n" if done >= total else ""
            print(f"\rmemevo-tui: reading the words of {total:,} records for recall, "
                  f"once (kept for next time): {done * 100 // total}%", end=end,
                  file=sys.stderr, flush=True)  # fmt: skip

    def warn(line: str) -> None:
        print(f"memevo-tui: {one_line(line)}", file=sys.stderr, flush=True)

    return indexed(
        path, memories, save=store.as_of is None, workers=cores(), progress=progress, warn=warn
    )


def _scope(args: argparse.Namespace, origins: Iterable[str]) -> Scope:
    """The project scope ``--project`` asks for (none: every project), among ``origins``."""
    project = getattr(args, "project", None)
    return start_scope(project or ALL, os.getcwd(), origins)


async def _history(store: MemoryStore, args: argparse.Namespace, o: Output) -> int:
    limit = None if args.all else args.limit
    if args.project:  # the project's events: read them all, then the newest of them
        scope = _scope(args, await store.origins())
        events = [e for e in await store.events(memory_id=args.id, limit=None)
                  if scope.shows(e)]  # fmt: skip
        events = events[: None if limit is None else limit + 1]
    else:
        events = await store.events(memory_id=args.id, limit=None if limit is None else limit + 1)
    more = limit is not None and len(events) > limit
    events = events[:limit] if limit is not None else events
    if args.json:
        o.json(
            [
                e.data if isinstance(e, Event) else {"corrupt": e.id, "reason": e.reason}
                for e in events
            ]
        )
    else:
        for e in events:
            o.line(event_line(e, o))
    if more:
        o.note(f"the {limit} newest events shown; more exist: --limit N or --all for them")
    return EXIT_OK


async def _diff(store: MemoryStore, args: argparse.Namespace, o: Output) -> int:
    now = store.now_ms()
    moments: list[float] = []
    for name, text in (("FROM", args.start), ("TO", args.end)):
        try:
            when = parse_moment(text, now)
        except BadMoment as exc:
            raise CannotRun(f"{name}: {exc}") from None
        moments.append(now if when is None else when)
    start, end = moments  # FROM may be after TO: the change from the first to the second
    d = diff(*await store.replay_pair(start, end))
    if args.json:
        o.json(diff_json(d))
    else:
        print_diff(d, o)
    return EXIT_OK


async def _export(store: MemoryStore, args: argparse.Namespace, o: Output) -> int:
    try:
        fmt = format_for(args.output or "", args.format)
    except BadExport as exc:
        raise CannotRun(str(exc)) from None
    request = ExportRequest(
        format=fmt,
        filter=args.filter,
        with_events=args.with_events,
        with_sources=args.with_sources,
    )
    try:
        if args.output:
            path = Path(args.output).expanduser()
            try:
                with atomic_file(path, replace=args.force) as handle:
                    result = await export(store, request, handle)
            except NotARegularFile as exc:
                raise CannotRun(f"{path}: {exc.strerror}") from None
            except FileExistsError:
                raise CannotRun(f"{path} already exists; --force replaces it") from None
            except OSError as exc:
                raise CannotRun(f"cannot write {path}: {exc.strerror or exc}") from None
            o.note(f"Exported {result.summary} to {path}")
        else:
            result = await export(store, request, o.out)
            o.note(f"Exported {result.summary}")
    except BadExport as exc:
        raise CannotRun(str(exc)) from None
    return EXIT_OK


async def _write_verb(store: MemoryStore, args: argparse.Namespace, o: Output) -> int:
    verb: str = args.verb
    await store.check()  # never write into a damaged file: it could spread the damage
    name = args.verdict if "verdict" in CLI_VERBS[verb].cli_args else verb  # feedback
    if getattr(args, "prove", False):
        from .prove import proved_write

        return await proved_write(store, args, name, o)
    target = Target(
        getattr(args, "id", ""),
        text=" ".join(getattr(args, "text", ())),
        other_id=getattr(args, "other_id", ""),
        origin=getattr(args, "origin", ""),
        event_id=getattr(args, "event_id", ""),
    )
    event_id = await named(name).call(store, target)
    if args.json:
        o.json({"event": event_id})
    elif event_id is None:
        o.line("Feedback unchanged (nothing to record)")
    else:
        label = "Undo recorded" if named(name).asks == "event" else "Update recorded"
        o.line(f"{label}: {event_id}")
    return EXIT_OK


def execute(store_opener: Callable[[], Awaitable[MemoryStore]], args: argparse.Namespace) -> int:
    """Open the store, run one verb, and map errors to exit codes."""
    o = Output()

    def fail(message: str, code: int) -> int:
        if args.json:
            o.json({"error": message})
        else:
            sys.stderr.write(f"memevo-tui: {one_line(message)}\n")
        return code

    async def main() -> int:
        try:
            store = await store_opener()
        except StoreError as exc:
            return fail(str(exc), EXIT_CANNOT_RUN)
        try:
            code = await run_verb(store, args, o)
            if note := store.past_note():
                o.note(f"memevo-tui: {note}")
            return code
        except Refused as exc:
            return fail(str(exc), EXIT_REFUSED)
        except (StoreError, CannotRun) as exc:  # read-only, busy, corrupt, disk full
            return fail(str(exc), EXIT_CANNOT_RUN)
        except Exception as exc:  # a bug: one line, not a traceback (MEMEVO_DEBUG=1 shows it)
            if os.environ.get("MEMEVO_DEBUG") == "1":
                raise
            return fail(
                f"internal error ({type(exc).__name__}: {exc}): this is a bug in memevo-tui; "
                "MEMEVO_DEBUG=1 shows where",
                EXIT_CANNOT_RUN,
            )
        finally:
            await store.close()

    return asyncio.run(main())
