"""The command line as the Curator's host (``core.asking.Host``): a write run with
``--prove`` goes through the dashboard's own flow, its question and its proof
printed, and written only with ``--yes`` or a yes typed on a terminal."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Collection, Coroutine
from typing import Any, TextIO

from store import StoreError

from ..core.asking import Answer, Question, TextQuestion, Told, VerbQuestion
from ..core.text import visible
from .exits import EXIT_CANNOT_RUN, EXIT_OK, EXIT_REFUSED
from .output import Output


class TerminalHost:
    """Answers the Curator from the command line: the text given as an argument, yes
    from ``--yes`` or the terminal; says each notice on stderr (an error sets the exit
    code: 1 refused, 2 could not run)."""

    def __init__(
        self, o: Output, *, yes: bool, text: str = "", stdin: TextIO | None = None
    ) -> None:
        self.o = o
        self.yes = yes
        self.text = text
        self.stdin = stdin if stdin is not None else sys.stdin
        self.code = EXIT_OK
        self._work: set[asyncio.Task[None]] = set()

    def ask(self, question: Question, then: Callable[[Answer], None]) -> None:
        if isinstance(question, TextQuestion):
            then(self.text)
            return
        if isinstance(question, VerbQuestion):
            self.o.line(question.verb.asking.title)
            self.o.line(visible(question.text, keep_newlines=True))
            if question.effect:
                self.o.line(question.effect)
        else:  # the command line asks nothing else through --prove
            self.o.line(f"{type(question).__name__}: not asked on the command line")
            then(False)
            return
        then(self._yes())

    def _yes(self) -> bool:
        if self.yes:
            return True
        tty = getattr(self.stdin, "isatty", lambda: False)()
        if not tty:
            self.o.note("Nothing written: add --yes to write it")
            return False
        self.o.err.write("Write it? [y/N] ")
        self.o.err.flush()
        answer = self.stdin.readline().strip().lower()
        if answer not in ("y", "yes"):
            self.o.note("Nothing written")
            return False
        return True

    def tell(self, told: Told) -> None:
        title = f"{told.title}: " if told.title else ""
        if told.severity == "error":
            self.code = EXIT_REFUSED if told.title in ("Refused", "Changed under you") \
                else EXIT_CANNOT_RUN  # fmt: skip
        if told.title == "Saved":
            self.o.line(told.text)
            return
        self.o.note(f"{title}{told.text}")

    def store_failed(self, error: StoreError) -> None:
        self.code = EXIT_CANNOT_RUN
        self.o.note(f"memevo-tui: {error}")

    def reload(self) -> None:
        """Nothing on show to read again."""

    def run(self, group: str, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work, name=group)
        self._work.add(task)
        task.add_done_callback(self._work.discard)

    def running(self, groups: Collection[str]) -> bool:
        return any(t.get_name() in groups for t in self._work)

    def reopen_hint(self) -> str:
        return "run the command again"

    async def settled(self) -> None:
        """Wait for every piece of work the Curator began (and what each began)."""
        while self._work:
            await asyncio.gather(*list(self._work))
