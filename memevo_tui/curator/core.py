"""The Curator's plumbing: whether a write may happen now, asking, and running one
store write in the host's worker with its answer said (the package's ``Curator`` is
built on it). No Textual: its host (``core.asking.Host``) shows the questions."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any

from store import Changed, CorruptRow, Memory, MemoryStore, Refused, Replaced, StoreError

from ..core.asking import Answer, Host, OriginQuestion, Question, Severity, Told
from ..core.state import DashboardState, Row
from ..core.text import one_line
from ..core.verbs import Target, Verb, named

GROUPS = ("curator-write", "curator-bulk", "curator-lookup")
"""The worker groups of the Curator's flows (tests wait for them to settle)."""
Write = Callable[[MemoryStore], Awaitable[str | None]]
"""One store write, its target bound: the event it recorded, or None."""


class CuratorCore:
    """What every flow of the Curator shares."""

    def __init__(self, host: Host, state: DashboardState) -> None:
        self.host = host
        self.state = state
        self._writing = 0  # single-record writes not yet answered
        self._waiting: deque[tuple[str, str]] = deque()  # keys pressed meanwhile

    @property
    def busy(self) -> bool:
        """A flow is in flight (a worker of the Curator's; a dialog waiting for the
        user is not in flight)."""
        return self.host.running(GROUPS)

    def _run(self, group: str, work: Coroutine[Any, Any, None]) -> None:
        self.host.run(group, work)

    def say(
        self,
        text: str,
        *,
        title: str = "",
        severity: Severity = "information",
        timeout: float | None = None,
    ) -> None:
        """Say one thing through the host."""
        self.host.tell(Told(text, title, severity, timeout))

    # ------------------------------------------------------------ may it write now

    def refused(self) -> bool:
        """Say why nothing may be written now (the time dial, read-only, the file was
        replaced); True if so."""
        why = self.state.write_refusal()
        if why is not None:
            store = self.state.store
            try:
                if store is not None:
                    store.check_file()
            except Replaced as exc:  # the store's state says so at once, as a poll would
                why += f"; {self.host.reopen_hint()}"
                self.host.store_failed(exc)
            self.say(why, title="Nothing written", severity="warning")
        return why is not None

    def usable(self, row: Row | None) -> Memory | None:
        """``row`` when one record may be written now; else None, and the toast why."""
        if row is None:
            self.say("No memory selected", severity="warning")
            return None
        if isinstance(row, CorruptRow):
            self.say(
                f"{one_line(row.id)} is a corrupt row: it is shown, never acted upon",
                severity="error",
            )
            return None
        if self.state.store is None:
            self.say("The store is still opening", severity="warning")
            return None
        return None if self.refused() else row

    def ask(self, question: Question, name: str, op: Write) -> None:
        """Write ``op`` once the user says yes to ``question``."""

        def done(yes: Answer) -> None:
            if yes is True:
                self.write(name, op)

        self.host.ask(question, done)

    def ask_origin(self, then: Callable[[str], None]) -> None:
        """Adopting needs the origin: the project directory the records belong to."""

        def done(origin: Answer) -> None:
            if isinstance(origin, str) and origin.strip():
                then(origin.strip())

        self.host.ask(OriginQuestion(), done)

    def write(
        self, name: str, op: Write, *, prove: tuple[Memory, Verb, Target] | None = None
    ) -> None:
        """Run one store write; a curation key pressed meanwhile waits for its answer.
        ``prove``: the record, verb and target of a write that asks nothing: what it does
        to recent turns is worked out first and said in its toast."""
        self._writing += 1
        self._run("curator-write", self._write(name, op, prove))

    async def _write(
        self, name: str, op: Write, prove: tuple[Memory, Verb, Target] | None = None
    ) -> None:
        """Run one store write, read back the records it changed, and report it."""
        try:
            store = self.state.store
            if store is None:
                return
            effect = await self._proof(*prove) if prove is not None else ""
            try:
                event_id: str | None = await op(store)
                rows: list[Row] = []
                if event_id is not None:
                    event = await store.event(event_id)
                    rows = await store.memories(event.record_ids)
            except StoreError as exc:  # refused, read-only, busy: nothing was written
                self._waiting.clear()  # the keys pressed after it assumed it was written
                self._tell_failed(name, exc)
                return
            except Exception as exc:  # a bug: said, and the keys after it dropped
                self._waiting.clear()
                self.say(f"The write failed: {exc}", severity="error")
                return
            self._tell_written(name, event_id, rows, effect)
        finally:
            self._wrote()

    def _wrote(self) -> None:
        """A write was answered (its rows are in the state): run a key that waited."""
        self._writing = max(0, self._writing - 1)
        if not self._writing and self._waiting:
            memory_id, name = self._waiting.popleft()
            self.curate(self.state.find(memory_id), name)

    def _tell_failed(self, name: str, error: StoreError) -> None:
        if isinstance(error, Replaced):  # the host says so, and keeps saying it
            self.host.store_failed(error)
            return
        if isinstance(error, Changed):
            title = "Changed under you"
        else:
            title = "Refused" if isinstance(error, Refused) else f"Not written: {error.cause}"
        self.say(f"{name}: {error}", title=title, severity="error", timeout=8)
        if isinstance(error, Changed):
            self.host.reload()

    def _tell_written(
        self, name: str, event_id: str | None, rows: Sequence[Row], effect: str = ""
    ) -> None:
        if event_id is None:
            self.say(
                f"Feedback {name} accepted but nothing changed (the same verdict is "
                "already recorded, or it is older than the record)",
                title="Unchanged",
            )
            return
        first = rows[-1] if rows else None
        what = named(name)
        also = len(rows) - 1 if what.with_duplicates else 0
        done = what.done.format(
            id=first.id if first is not None else "",
            also=f" with {also} duplicate(s)" if also else "",
        )
        self.say(f"{done}\n{effect}" if effect else done, title="Saved")
        self.state.written(rows)

    async def _proof(self, memory: Memory, what: Verb, target: Target) -> str:
        """What writing ``what`` on ``memory`` does to its project's recent prompts, by
        the replay of pi's sessions (``state.replay``, joined or run now, with a notice)
        on the records as they would be after it ("": not known, or no sessions)."""
        becomes = what.becomes
        if becomes is None:
            return ""
        return await self._proved([memory], lambda: [becomes(memory, target)])

    async def _proved(self, before: Sequence[Memory], after: Callable[[], Sequence[Memory]]) -> str:
        """What writing ``after()`` over ``before`` does to the recent prompts of the
        first one's project (``_proof``; a merge's several records)."""
        from ..core.turnlog import fix_effect

        try:
            log = self.state.injections
            if log is None and self.state.sessions.is_dir():
                self.say("Replaying pi's sessions to show what the fix changes…",
                         title="Proving the fix")  # fmt: skip
                await self.state.replay.replayed()
                log = self.state.injections
            if log is None:
                return ""  # no sessions to prove it on: the question is asked without
            index = await self.state.recall_index()
            if index is None:
                return ""
            return await asyncio.to_thread(fix_effect, log, index, before, after())
        except StoreError:
            return ""

    def curate(self, row: Row | None, name: str) -> None:
        """Write the verb ``name`` on one record (the package's ``Curator``)."""
        raise NotImplementedError
