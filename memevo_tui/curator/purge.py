"""The Curator's purge: a leaked secret out of every copy the store keeps, previewed
first (every place it sits, and what is written there), then written by
``core.purging`` (the CLI's ``purge`` runs the same flow)."""

from __future__ import annotations

from typing import Any

from store import PURGED, StoreError

from ..core.asking import Answer, PurgeQuestion
from ..core.purging import EXPORTS_NOTE, CannotPurge, PurgePlan, carry_out, plan
from .undo import Undoing

SESSIONS_NOTE = ("pi's session files keep the user's own words: they are rewritten only by "
                 "memevo-tui purge --all --sessions DIR --yes")  # fmt: skip


class Purging(Undoing):
    """Purging a record's secrets from every copy, after a preview."""

    def purge(self, memory_id: str) -> None:
        """Preview the purge of the secrets ``memory_id`` holds, then write it."""
        if not self.refused():
            self._run("curator-lookup", self._plan_purge(memory_id))

    async def _plan_purge(self, memory_id: str) -> None:
        store = self.state.store
        if store is None:
            return
        try:
            found = await plan(store, records=[memory_id])
        except (StoreError, CannotPurge) as exc:
            self.say(str(exc), title="Purge", severity="error")
            return
        if not found.chosen:
            self.say("No secret found in this record: nothing to purge",
                     title="Purge", severity="warning")  # fmt: skip
            return
        summary = (
            f"{len(found.chosen)} copy(ies) in {len({f.id for f in found.chosen})} place(s) "
            f"become {PURGED}; {len(found.holders)} record(s) are forgotten through pi's "
            "own write, in one transaction. It cannot be undone.\n" + SESSIONS_NOTE
        )

        def done(yes: Answer) -> None:
            if yes is True:
                self._run("curator-write", self._purge(found))

        self.host.ask(PurgeQuestion(found.lines(), summary), done)

    async def _purge(self, found: PurgePlan) -> None:
        store = self.state.store
        if store is None:
            return
        try:
            receipt: dict[str, Any] = await carry_out(
                store, found, sessions=False, demo=self.state.remembered is None
            )
        except (StoreError, CannotPurge) as exc:
            self.say(f"Nothing purged: {exc}", title="Purge", severity="error")
            return
        except Exception as exc:  # after the transaction: say what happened, never nothing
            self.say(f"The purge stopped: {type(exc).__name__}: {exc}; run "
                     "memevo-tui secrets to see what is left", title="Purge",
                     severity="error")  # fmt: skip
            self.host.reload()
            return
        rows = sum(receipt["written"].values())
        self.say(
            f"{len(receipt['forgotten'])} record(s) forgotten; {receipt['copies']} copy(ies) "
            f"replaced in {rows} row(s); write-ahead log: {receipt['wal']}; left in the "
            f"store: {receipt['leftInStore']}.\n{EXPORTS_NOTE}.",
            title="Purged",
            timeout=30,
        )
        self.host.reload()
