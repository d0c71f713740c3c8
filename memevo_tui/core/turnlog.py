"""The Turns view's data (no Textual): pi's sessions, each prompt replayed on the store
as it was then and as it is now (``store.pi.turns``), read on a connection of its own,
read only, and closed after: the dashboard's own connection and its time dial are not
touched by the walk through the past."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from store import (
    Clock,
    FileIdentity,
    Memory,
    MemoryStore,
    Replaced,
    SessionPrompts,
    Turn,
    injected_by,
    last_shown,
    replay_turns,
    session_files,
    session_prompts,
)


@dataclass(frozen=True, slots=True)
class SessionTurns:
    """One session file and its turns, in branch order."""

    session: SessionPrompts
    turns: tuple[Turn, ...]

    @property
    def key(self) -> str:
        return str(self.session.file)

    @property
    def with_memories(self) -> int:
        """Turns that got memories then."""
        return sum(1 for t in self.turns if t.then)

    @property
    def differing(self) -> int:
        """Turns whose injection would differ now."""
        return sum(1 for t in self.turns if t.differs)

    @property
    def unknown(self) -> int:
        return sum(1 for t in self.turns if t.then is None)


Early = Callable[[list["SessionTurns"]], None]
"""Given the last replay's answers (a warm open), before the replay checks them."""


async def load_turns(
    db_path: Path,
    clock: Clock,
    root: Path,
    cache: object = None,
    progress: Callable[[int, int], None] | None = None,
    early: Early | None = None,
    held: FileIdentity | None = None,
) -> list[SessionTurns]:
    """Every session under ``root``, newest first, each with its turns replayed
    (raises ``StoreError`` when the store cannot be read; ``progress(done, total)``
    as prompts are replayed). With ``cache`` (the session index) the turns are kept in
    the cache directory too, and ``early`` is given the last replay's answers first
    when every prompt has one: the rows come first, the replay's checks after."""

    def read() -> list[SessionPrompts]:
        unreadable: list[tuple[Path, str]] = []  # each listed as a session that failed
        found = [session_prompts(f, cache) for f in session_files(root, problems=unreadable)]
        return found + [SessionPrompts(f, "", "", "", (), 0, 0, why) for f, why in unreadable]

    sessions = await asyncio.to_thread(read)
    prompts = [p for s in sessions for p in s.prompts]
    memo = None
    if cache is not None:
        from .recallcache import TurnCache

        memo = await asyncio.to_thread(TurnCache, db_path)
        shown = last_shown(prompts, memo) if early is not None else None
        if early is not None and shown is not None:
            early(_by_session(sessions, shown))
    store = await MemoryStore.open(db_path, read_only=True, clock=clock)
    checked = _held_by(held, store, progress)
    if cache is not None:  # the walk of the whole log, kept as the dial's is
        from .recallcache import keeping_past

        keeping_past(store, db_path)
    try:
        turns = await replay_turns(store, prompts, memo, checked)
    finally:
        await store.close()
    return _by_session(sessions, turns)


def _held_by(
    held: FileIdentity | None, store: MemoryStore, progress: Callable[[int, int], None] | None
) -> Callable[[int, int], None] | None:
    """``progress``, first checking (at each step of the replay) that the file replayed
    is still the one the dashboard holds (``held``): replaced, deleted or truncated under
    the replay, it ends with the reason (``Replaced``) rather than replay another store
    while every other view shows the first, or wait for good."""
    if held is None:
        return progress
    mine = store.identity
    if mine is not None and mine.main != held.main:
        raise Replaced(f"{held.path} was replaced on disk while pi's sessions were replayed")

    def check(done: int, total: int) -> None:
        problem = held.problem()
        if problem is not None:
            raise Replaced(f"{problem} while pi's sessions were replayed ({done} of {total})")
        if progress is not None:
            progress(done, total)

    return check


def _by_session(sessions: list[SessionPrompts], turns: list[Turn]) -> list[SessionTurns]:
    """The turns with their sessions, newest session first."""
    by_prompt = {(str(t.prompt.file), t.prompt.entry_id): t for t in turns}
    out = [
        SessionTurns(s, tuple(by_prompt[(str(p.file), p.entry_id)] for p in s.prompts))
        for s in sessions
    ]
    out.sort(key=lambda s: (s.session.started, s.key), reverse=True)
    return out


class InjectionLog:
    """Each record's recall log: the replayed turns that injected it then."""

    def __init__(self, sessions: list[SessionTurns]) -> None:
        self.all_turns: tuple[Turn, ...] = tuple(t for s in sessions for t in s.turns)
        self._by_id: dict[str, list[Turn]] = {}
        for s in sessions:
            for t in s.turns:
                for memory_id in t.then or ():
                    self._by_id.setdefault(memory_id, []).append(t)
        for found in self._by_id.values():
            found.sort(key=lambda t: t.prompt.moment_ms)
        self._counts = {memory_id: len(found) for memory_id, found in self._by_id.items()}
        self._last = {i: float(found[-1].prompt.moment_ms) for i, found in self._by_id.items()}

    def counts(self) -> dict[str, int]:
        """How many turns injected each record (those injected at all; not to change)."""
        return self._counts

    def last_moments(self) -> dict[str, float]:
        """When the last turn that injected each record was (those injected at all)."""
        return self._last

    def of(self, memory_id: str) -> list[Turn]:
        """The turns that injected the record, oldest first."""
        return list(self._by_id.get(memory_id, ()))

    def line(self, memory_id: str) -> str:
        """ "injected in 14 turn(s), last on 2026-10-28 in webshop"."""
        from store import iso

        from .view import origin_name

        found = self._by_id.get(memory_id)
        if not found:
            return (
                f"injected in none of the {len(self.all_turns)} turn(s) replayed from pi's sessions"
            )
        last = found[-1].prompt
        return (
            f"injected in {len(found)} turn(s), last on {iso(last.moment_ms)[:10]} in "
            f"{origin_name(last.project)} (n, or memevo-tui blame ID, lists the turns)"
        )


RECENT_PROMPTS = 100
"""How many of a project's newest prompts a fix is proved on."""


def fix_effect(
    log: InjectionLog, index: Any, before: Sequence[Memory], after: Sequence[Memory]
) -> str:
    """What writing ``after`` over ``before`` does to the newest prompts of the first
    one's project, by the same replay: "Of the last 100 prompts in infra, 7 would no
    longer get this record; 2 would get 8d07bdf8 instead." Several records at once (a
    merge: the kept one corrected, the others forgotten): a prompt loses them when it
    got one of them and would get none. ``index``: the recall index of the records as
    they are now (``RecallIndex``)."""
    from .view import origin_name

    first = before[0]
    ids = {m.id for m in before}
    prompts = sorted(
        (t.prompt for t in log.all_turns if t.prompt.project == first.scope),
        key=lambda p: p.moment_ms,
    )[-RECENT_PROMPTS:]
    where = origin_name(first.scope) or first.scope
    if not prompts:
        return f"No prompt of pi's sessions in {where} to prove this on."
    changed = index.updated(list(after))
    lost = gained = 0
    instead: dict[str, int] = {}
    for p in prompts:
        was, will = set(injected_by(index, p)[0]), injected_by(changed, p)[0]
        if was & ids and not ids.intersection(will):
            lost += 1
        elif ids.intersection(will) and not was & ids:
            gained += 1
        for other in will:
            if other not in was and other not in ids:
                instead[other] = instead.get(other, 0) + 1
    head = f"Of the last {len(prompts)} prompt(s) in {where}, "
    if not lost and not gained and not instead:
        return head + "none would get anything else: this moves no recent turn."
    them = "this record" if len(ids) == 1 else "any of these records"
    said = []
    if lost or not gained:
        said.append(f"{lost} would no longer get {them}")
    if gained:
        said.append(f"{gained} more would get it")
    line = head + "; ".join(said)
    if instead:
        top, n = max(instead.items(), key=lambda kv: (kv[1], kv[0]))
        line += f"; {n} would get {top[:8]} instead"
        if len(instead) > 1:
            line += f" (and {len(instead) - 1} other record(s) would come in)"
    return line + "."


async def load_turns_aside(
    db_path: Path,
    clock: Clock,
    root: Path,
    cache: object = None,
    progress: Callable[[int, int], None] | None = None,
    early: Early | None = None,
    held: FileIdentity | None = None,
) -> list[SessionTurns]:
    """``load_turns`` in a thread of its own, with its own event loop and connection:
    a cold replay is seconds to minutes of CPU, and the caller's loop (the dashboard's)
    keeps taking keys meanwhile. A daemon thread: leaving never waits for it."""
    import threading

    loop = asyncio.get_running_loop()
    answer: asyncio.Future[list[SessionTurns]] = loop.create_future()

    def tell(ok: list[SessionTurns] | None, error: BaseException | None) -> None:
        if answer.done():
            return
        if error is not None:
            answer.set_exception(error)
        else:
            answer.set_result(ok or [])

    def run() -> None:
        try:
            found = asyncio.run(load_turns(db_path, clock, root, cache, progress, early, held))
            ok, error = found, None
        except BaseException as exc:  # handed to the caller, raised there
            ok, error = None, exc
        try:
            loop.call_soon_threadsafe(tell, ok, error)
        except RuntimeError:  # the caller's loop is closed: nobody waits any more
            pass

    threading.Thread(target=run, name="memevo-turns", daemon=True).start()
    return await answer
