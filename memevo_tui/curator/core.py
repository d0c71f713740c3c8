"""The Curator's plumbing: whether a write may happen now, asking, and running one
store write in a worker with its answer said (the package's ``Curator`` is built on it)."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any

from textual.app import App
from textual.worker import WorkerState

from store import Changed, CorruptRow, Memory, MemoryStore, Refused, Replaced, StoreError

from ..core.state import DashboardState, Row
from ..core.text import one_line
from ..core.verbs import Target, Verb, named
from ..widgets.keys import reopen_hint
from ..widgets.messages import ReloadWanted, StoreFailed

if TYPE_CHECKING:  # the dialogs are imported when first asked for, not at start-up
    from ..dialogs.confirm import ConfirmScreen

GROUPS = ("curator-write", "curator-bulk", "curator-lookup")
"""The worker groups of the Curator's flows (tests wait for them to settle)."""
IN_FLIGHT = (WorkerState.PENDING, WorkerState.RUNNING)
"""A worker still working (the views' busy checks read it too)."""
Write = Callable[[MemoryStore], Awaitable[str | None]]
"""One store write, its target bound: the event it recorded, or None."""


class CuratorCore:
    """What every flow of the Curator shares."""

    def __init__(self, app: App[Any], state: DashboardState) -> None:
        self.app = app
        self.state = state
        self._writing = 0  # single-record writes not yet answered
        self._waiting: deque[tuple[str, str]] = deque()  # keys pressed meanwhile

    @property
    def busy(self) -> bool:
        """A flow is in flight (a worker of the Curator's; a dialog waiting for the
        user is not in flight)."""
        return any(w.group in GROUPS and w.state in IN_FLIGHT for w in self.app.workers)

    def _run(self, group: str, work: Coroutine[Any, Any, None]) -> None:
        self.app.run_worker(work, group=group, exit_on_error=False)

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
                why += f"; {reopen_hint(self.app)}"
                self.app.post_message(StoreFailed(exc))
            self.app.notify(why, title="Nothing written", severity="warning")
        return why is not None

    def usable(self, row: Row | None) -> Memory | None:
        """``row`` when one record may be written now; else None, and the toast why."""
        if row is None:
            self.app.notify("No memory selected", severity="warning")
            return None
        if isinstance(row, CorruptRow):
            self.app.notify(
                f"{one_line(row.id)} is a corrupt row: it is shown, never acted upon",
                severity="error",
            )
            return None
        if self.state.store is None:
            self.app.notify("The store is still opening", severity="warning")
            return None
        return None if self.refused() else row

    def ask(self, dialog: ConfirmScreen, name: str, op: Write) -> None:
        """Write ``op`` once the user says yes to ``dialog``."""

        def done(yes: bool | None) -> None:
            if yes:
                self.write(name, op)

        self.app.push_screen(dialog, done)

    def ask_origin(self, then: Callable[[str], None]) -> None:
        """Adopting needs the origin: the project directory the records belong to."""

        from ..dialogs.prompt import PromptScreen

        def done(origin: str | None) -> None:
            if origin is not None and origin.strip():
                then(origin.strip())

        self.app.push_screen(
            PromptScreen(
                "Adopt into which origin?",
                placeholder="/home/you/projects/app",
                hint="An absolute path: the project these unscoped legacy records belong to.",
            ),
            done,
        )

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
                self.app.notify(f"The write failed: {exc}", severity="error")
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
        if isinstance(error, Replaced):  # the app says so, and keeps saying it
            self.app.post_message(StoreFailed(error))
            return
        if isinstance(error, Changed):
            title = "Changed under you"
        else:
            title = "Refused" if isinstance(error, Refused) else f"Not written: {error.cause}"
        self.app.notify(f"{name}: {error}", title=title, severity="error", timeout=8)
        if isinstance(error, Changed):
            self.app.post_message(ReloadWanted())

    def _tell_written(
        self, name: str, event_id: str | None, rows: Sequence[Row], effect: str = ""
    ) -> None:
        if event_id is None:
            self.app.notify(
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
        self.app.notify(f"{done}\n{effect}" if effect else done, title="Saved")
        self.state.written(rows)

    async def _proof(self, memory: Memory, what: Verb, target: Target) -> str:
        """What writing ``what`` on ``memory`` does to its project's recent prompts, by
        the replay of pi's sessions (``state.replay``, joined or run now, with a notice)
        on the records as they would be after it ("": not known, or no sessions)."""
        from ..core.turnlog import fix_effect

        becomes = what.becomes
        try:
            log = self.state.injections
            if log is None and becomes is not None and self.state.sessions.is_dir():
                self.app.notify("Replaying pi's sessions to show what the fix changes…",
                                title="Proving the fix")  # fmt: skip
                await self.state.replay.replayed()
                log = self.state.injections
            if log is None or becomes is None:
                return ""  # no sessions to prove it on: the question is asked without
            index = await self.state.recall_index()
            if index is None:
                return ""
            after = becomes(memory, target)
            return await asyncio.to_thread(fix_effect, log, index, memory, after)
        except StoreError:
            return ""

    def curate(self, row: Row | None, name: str) -> None:
        """Write the verb ``name`` on one record (the package's ``Curator``)."""
        raise NotImplementedError
