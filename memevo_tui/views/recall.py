"""The Recall view: what pi would inject for a prompt right now, and why not the rest.

The pane (``widgets/recall_pane.py``) shows it; this view computes it over the
loaded records and re-runs it after every change, by you or by pi. ``enter``
on a record asks the App to show it in the memory list.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from textual import work
from textual.app import ComposeResult
from textual.message import Message

from store import DigestLine, Purpose, Recall, StoreError, digest

from ..core.state import Change, Dialed, LiveChanged, OwnWrite, Scoped
from ..widgets.messages import StatusChanged, StoreFailed
from ..widgets.recall_pane import CHOSEN, WITH_DIGEST, RecallPane
from .base import BaseView


class RecallView(BaseView):
    """The recall preview."""

    FOCUS = "#recall-list"
    BOX = "#recall-input"
    LIST = "#recall-list"
    TYPE_TO_BEGIN = True

    @dataclass
    class Computed(Message):
        """A recall evaluation finished (``rerun``: after the records changed)."""

        result: Recall
        digest: Sequence[DigestLine]
        rerun: bool
        own: bool = False
        """The rerun follows the user's own write (from any view)."""

    def compose(self) -> ComposeResult:
        pane = RecallPane(id="recall-pane")
        pane.covers = self.state.scope.covers
        yield pane

    @property
    def busy(self) -> bool:
        return super().busy or self.query_one(RecallPane).waiting

    def state_changed(self, change: Change) -> None:
        if isinstance(change, Scoped):
            pane = self.query_one(RecallPane)
            pane.covers = change.scope.covers
            if pane.result is not None:
                pane.show(pane.result, pane.digest)
            return
        if isinstance(change, OwnWrite | Dialed) or (
            isinstance(change, LiveChanged) and change.rows
        ):
            pane = self.query_one(RecallPane)
            if pane.prompt.strip():
                turns = tuple(pane.turns) if pane.purpose == "inject" else ()
                # a dial move is the user's own: the preview follows it without a toast
                rerun = not isinstance(change, Dialed)
                own = isinstance(change, OwnWrite)
                self.run_recall(pane.prompt, pane.purpose, turns, rerun=rerun, own=own)

    def status_parts(self) -> list[str]:
        pane = self.query_one(RecallPane)
        result = pane.result
        if result is None or not result.prompt.strip():
            return ["recall preview: / and a prompt: what pi would inject for it"]
        chosen = CHOSEN.get(result.purpose, "selected")
        return [
            f"{len(result.selected)} {chosen} of {result.limit}",
            f"{result.left_out_total} left out",
            f"{result.eligible} eligible, {result.excluded} excluded by status",
        ]

    def ask_with(self, prompt: str, turns: tuple[str, ...]) -> None:
        """What pi would inject for ``prompt`` with these earlier user turns."""
        self.query_one(RecallPane).ask_with(prompt, turns)

    def toggle_purpose(self) -> None:
        """Switch what the preview is for: injection, the model's recall tool, search."""
        self.query_one(RecallPane).action_toggle_purpose()

    def explain_search(self, query: str) -> None:
        """Show why ``/memory search`` returns what it does for ``query``."""
        self.query_one(RecallPane).explain_search(query)

    def on_recall_pane_prompt_changed(self, message: RecallPane.PromptChanged) -> None:
        message.stop()
        self.run_recall(message.prompt, message.purpose, message.turns)

    @work(exclusive=True, group="recall", exit_on_error=False)
    async def run_recall(
        self,
        prompt: str,
        purpose: Purpose,
        turns: Sequence[str] = (),
        rerun: bool = False,
        own: bool = False,
    ) -> None:
        try:
            result = await self.state.recall(prompt, purpose, turns)
            lines = await asyncio.to_thread(digest, result) if purpose in WITH_DIGEST else ()
        except StoreError as exc:
            self.post_message(StoreFailed(exc))
            return
        self.post_message(self.Computed(result, lines, rerun, own))

    def on_recall_view_computed(self, message: Computed) -> None:
        changes = self.query_one(RecallPane).show(message.result, message.digest)
        self.post_message(StatusChanged())
        # what the user's own write did to the preview is told wherever they made it;
        # another process's commit only in the preview itself
        shown = message.own or all(node.display for node in self.ancestors_with_self)
        if message.rerun and changes and shown:
            self.notify("\n".join(changes[:4]), title="Recall preview changed", timeout=8)
