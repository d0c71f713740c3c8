"""``memevo-tui turns`` and ``memevo-tui blame ID``: what pi injected into each past
turn, then and now, replayed from pi's session files (``store.pi.turns``)."""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from store import (
    RECALL_VERSION,
    MemoryStore,
    Prompt,
    Turn,
    iso,
    replay_turns,
    session_files,
    session_prompts,
    sessions_folder,
)

from ..core.scope import project_for, resolve_project
from ..core.text import one_line, short_ids
from ..core.when import BadMoment, parse_moment
from .ids import CannotRun
from .output import Output

if TYPE_CHECKING:
    from ..core.recallcache import SessionIndexCache, TurnCache

AS_PI = f"as pi {RECALL_VERSION} would recall"


def _cache() -> SessionIndexCache | None:
    from ..core.recallcache import SessionIndexCache

    return SessionIndexCache()


def prompts_of(
    root: Path,
    *,
    project: str = "",
    session: str = "",
    since_ms: float | None = None,
    origins: Iterable[str] = (),
) -> tuple[list[Prompt], int, list[str]]:
    """Every prompt under ``root`` that passes the filters, oldest first; how many
    session files were read; and a line for each file or folder that could not be.
    ``project`` is resolved as every verb resolves it (``resolve_project``, among
    ``origins`` and the sessions' own directories); a session is the project's when
    pi ran it there or in a directory inside it."""
    cache = _cache()
    unreadable: list[tuple[Path, str]] = []
    files = session_files(root, problems=unreadable)
    problems = [f"{folder}: {why}" for folder, why in unreadable]
    found_all = []
    for path in files:
        found = session_prompts(path, cache)
        if found.problem:
            problems.append(f"{path.name}: {found.problem}")
            continue
        if found.note:
            problems.append(f"{path.name}: {found.note}")
        found_all.append(found)
    wanted = ""
    if project:
        wanted = resolve_project(project, [*origins, *(f.project for f in found_all)])
    if session:
        named = sorted({f.session_id for f in found_all if f.session_id.startswith(session)})
        if len(named) > 1 and session not in named:
            listed = ", ".join(named[:10]) + (", …" if len(named) > 10 else "")
            raise CannotRun(f"--session {session} is ambiguous: {len(named)} sessions "
                            f"start so ({listed})")  # fmt: skip
        session = named[0] if named else session
    prompts: list[Prompt] = []
    read = 0
    for found in found_all:
        if wanted and project_for(found.project, [wanted]) != wanted:
            continue
        if session and found.session_id != session:
            continue
        read += 1
        prompts += [p for p in found.prompts if since_ms is None or p.moment_ms >= since_ms]
    prompts.sort(key=lambda p: (p.moment_ms, str(p.file), p.entry_id))
    return prompts, read, problems


def turn_json(t: Turn) -> dict[str, Any]:
    p = t.prompt
    return {
        "at": iso(p.moment_ms),
        "session": p.session_id,
        "project": p.project,
        "file": str(p.file),
        "entry": p.entry_id,
        "branch": p.branch,
        "prompt": p.text,
        "recentUserTexts": list(p.recent),
        "modelSawRecent": list(p.seen) or None,
        "then": None if t.then is None else list(t.then),
        "thenDigest": t.then_digest,
        "now": list(t.now),
        "nowDigest": t.now_digest,
        "noLongerInjected": list(t.dropped),
        "newlyInjected": list(t.added),
        "changedSince": list(t.changed),
        "approximate": t.approximate,
        "note": t.note,
    }


Short = dict[str, str]
"""Each id shown, at its shortest unique prefix (``short_ids``)."""


def _ids(ids: tuple[str, ...] | None, short: Short) -> str:
    if ids is None:
        return "?"
    return ",".join(short.get(i, i) for i in ids) or "-"


def shorts(turns: list[Turn], records: list[str]) -> tuple[Short, Short, Short]:
    """The sessions', the entries' and the records' ids at their shortest unique
    prefixes: sessions among those shown, entries within them, records among every
    record of the store (so a printed id is taken back by every verb)."""
    sessions = short_ids(t.prompt.session_id for t in turns)
    entries = short_ids(t.prompt.entry_id for t in turns)
    return sessions, entries, short_ids(records)


def turn_line(t: Turn, o: Output, short: tuple[Short, Short, Short]) -> str:
    p = t.prompt
    sessions, entries, records = short
    mark = "~" if t.approximate else ("?" if t.then is None else " ")
    branch = f" b{p.branch}" if p.branch else ""
    session = sessions.get(p.session_id, p.session_id[:8])
    head = (
        f"{iso(p.moment_ms)[:16]}{mark} {session} {entries.get(p.entry_id, p.entry_id)}"
        f"{branch}  then {_ids(t.then, records)}  now {_ids(t.now, records)}  "
    )
    return head + o.fit(p.text, len(head))


async def _record_ids(store: MemoryStore) -> list[str]:
    return [str(r[0]) for r in await store.query("SELECT id FROM memories")]


def _memo(store: MemoryStore, args: argparse.Namespace) -> TurnCache | None:
    """The kept turns (none for a demo store, or a store opened as of the past)."""
    if getattr(args, "demo", False) or store.as_of is not None:
        return None
    from ..core.recallcache import TurnCache

    return TurnCache(Path(store.path))


def _since(args: argparse.Namespace, store: MemoryStore) -> float | None:
    if not getattr(args, "since", None):
        return None
    try:
        when = parse_moment(args.since, store.now_ms())
    except BadMoment as exc:
        raise CannotRun(f"--since: {exc}") from None
    return store.now_ms() if when is None else when


async def run_turns(store: MemoryStore, args: argparse.Namespace, o: Output) -> int:
    root, why = sessions_folder(args.sessions)
    prompts, read, problems = prompts_of(
        root,
        project=args.project or "",
        session=args.session or "",
        since_ms=_since(args, store),
        origins=await store.origins() if args.project else (),
    )
    for line in problems:
        o.note(f"memevo-tui: {one_line(line)}")
    if not read and not problems:
        raise CannotRun(f"no pi session files under {root} ({why})" +
                             (f" for {args.project}" if args.project else ""))  # fmt: skip
    turns = await replay_turns(store, prompts, _memo(store, args))
    if args.json:
        o.json({"recall": AS_PI, "turns": [turn_json(t) for t in turns]})
    else:
        short = shorts(turns, await _record_ids(store))
        for t in turns:
            o.line(turn_line(t, o, short))
    _summary(turns, read, o, f"{root} ({why})")
    return 0


async def run_blame(store: MemoryStore, args: argparse.Namespace, o: Output) -> int:
    m = await store.memory(args.id)  # NotFound: pi's own refusal, exit 1
    root, why = sessions_folder(args.sessions)
    prompts, read, problems = prompts_of(root)
    for line in problems:
        o.note(f"memevo-tui: {one_line(line)}")
    replayed = await replay_turns(store, prompts, _memo(store, args))
    turns = [t for t in replayed if m.id in (t.then or ())]
    short = shorts(turns, await _record_ids(store))
    if args.json:
        o.json({"id": m.id, "recall": AS_PI, "turns": [turn_json(t) for t in turns]})
    else:
        for t in turns:
            o.line(turn_line(t, o, short))
    last = f", last on {iso(turns[-1].prompt.moment_ms)[:10]}" if turns else ""
    partial = (f"; partial: {len(problems)} file(s) or folder(s) could not be read, "
               "their turns are not counted") if problems else ""  # fmt: skip
    shown = short[2].get(m.id, m.id)
    o.note(f"memevo-tui: {shown} injected in {len(turns)} turn(s){last}; "
           f"{read} session file(s) read{partial} from {root} ({why}), {AS_PI}")  # fmt: skip
    return 0


def _summary(turns: list[Turn], read: int, o: Output, where: str) -> None:
    got = sum(1 for t in turns if t.then)
    unknown = sum(1 for t in turns if t.then is None)
    approx = sum(1 for t in turns if t.approximate)
    changed = sum(1 for t in turns if t.differs)
    extra = "".join(
        (
            f"; {unknown} not known (? : the store's past is not exact then)" if unknown else "",
            f"; {approx} approximate (~)" if approx else "",
        )
    )
    o.note(f"memevo-tui: {len(turns)} prompt(s) in {read} session file(s) under {where}; "
           f"{got} got memories then; {changed} would differ now{extra}; {AS_PI}")  # fmt: skip
