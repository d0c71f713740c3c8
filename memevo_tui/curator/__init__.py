"""The Curator: every write the dashboard makes, and nothing else.

A plain object the app owns (no widget, no Textual: the dashboard's host,
``app/asking.py``, shows its questions as dialogs; the command line's, ``cli/asking.py``,
on the terminal). Views call it directly, with the records
they mean: ``curate`` for one record, ``bulk`` for the marked ones, ``undo_event``
and ``undo_batch`` from the history, ``purge`` for a record's secret (``X`` on any
list of records). Each flow checks that a write may happen now,
asks what the verb needs (``verbs.Verb.asks``: a yes in the verb's dialog, an
origin, a new text, the event to undo), runs the store call in one of the app's
workers, and reports the one result: the records as stored now go to the shared
state (``DashboardState.written``), which tells every view, and a toast says what
was written or why not. A bulk action is journaled before its first write and
completed after its last (``appstate``), so History shows it as one entry.

Follow one key, ``p``: ``MemoryList`` binds it to ``curate('pin')`` and posts
``CurationRequested``; the Memories view calls ``Curator.curate(row, "pin")`` (from
Search, Recall and Review the screen hands the request to it, where the marks and
the pending pair are); the verb, pin or unpin as the record
is, is written by ``_write`` at the revision on screen; its rows reach the state and
every view repaints them in place. A curation key pressed while a single write is in
flight waits for its answer, then acts on the record as that write left it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from store import Memory, correction_refusal

from ..core.asking import Answer, PairQuestion, TextQuestion, VerbQuestion
from ..core.state import Row
from ..core.verbs import Target, Verb, named, op_for
from .core import GROUPS, CuratorCore, Write
from .purge import Purging

__all__ = ["GROUPS", "Curator", "CuratorCore", "Write"]


class Curator(Purging):
    """Owns every write: one record, many, an undo, a batch's undo, a purge, and the
    journal."""

    def curate(self, row: Row | None, name: str) -> None:
        """Write the verb ``name`` on one record (a pair: see ``pair``; several: ``merge``)."""
        memory = self.usable(row)
        if memory is None:
            return
        if self._writing:  # p p: the second acts on the record as the first leaves it
            self._waiting.append((memory.id, name))
            return
        what = named(op_for(name, memory.pinned))
        target = Target(memory.id, memory.revision)
        if what.asks == "confirm":
            duplicates = len(self.state.duplicates(memory)) if what.with_duplicates else 0

            def dialog(effect: str = "") -> VerbQuestion:
                return VerbQuestion(what, memory.content, duplicates, effect)

            if what.becomes is not None:  # the fix proved first (the replay joined if needed)
                self._run("curator-lookup", self._ask_proved(memory, what, target, dialog))
            else:
                self.ask(dialog(), what.name, lambda s: what.call(s, target))
        elif what.asks == "text":
            self._edit_correction(memory, what)
        elif what.asks == "event":
            self._run("curator-lookup", self._undo_last(memory.id))
        elif what.asks == "origin":
            self.ask_origin(
                lambda origin: self.write(
                    what.name, lambda s: what.call(s, replace(target, origin=origin))
                )
            )
        else:
            proved = what.becomes is not None and self.state.injections is not None
            self.write(what.name, lambda s: what.call(s, target),
                       prove=(memory, what, target) if proved else None)  # fmt: skip

    def pair(self, first: Memory, second: Memory, name: str) -> None:
        """Write the verb ``name`` that takes a pair on ``first`` and ``second``, after
        its dialog."""
        what = named(name)
        target = Target(first.id, first.revision, other_id=second.id)
        self.ask(
            PairQuestion(what, first.content, second.content),
            what.name,
            lambda s: what.call(s, target),
        )

    def _edit_correction(self, row: Memory, what: Verb) -> None:
        def done(text: Answer) -> None:
            if not isinstance(text, str):
                return
            if text.strip() == row.content.strip():
                self.say("Text unchanged: nothing written")
                return
            target = Target(row.id, row.revision, text=text)
            if (why := correction_refusal(text)) is not None:  # pi's refusal: nothing to ask
                self.say(why, title="Refused", severity="error")
                return
            if what.becomes is None:
                self.write(what.name, lambda s: what.call(s, target))
                return

            def dialog(effect: str = "") -> VerbQuestion:  # the fix proved, then asked
                return VerbQuestion(what, f"{row.content}\n  →\n{text}", 0, effect)

            self._run("curator-lookup", self._ask_proved(row, what, target, dialog))

        self.host.ask(TextQuestion(row.id, row.content), done)

    async def _ask_proved(
        self, memory: Memory, what: Verb, target: Target, dialog: Callable[[str], VerbQuestion]
    ) -> None:
        """Ask, having proved the write on the project's recent prompts: the same replay
        as the Turns view's, on the records as they would be after it."""
        effect = await self._proof(memory, what, target)
        self.ask(dialog(effect), what.name, lambda s: what.call(s, target))
