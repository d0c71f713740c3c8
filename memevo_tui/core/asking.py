"""What the Curator needs from whoever runs it, and what it tells them (no Textual).

The Curator plans each write and, where a person must decide, hands its host a
question: a yes or no about a verb, a pair, many records, an undo or a purge; a
new text; an origin. The host shows it (the dashboard as a dialog, the command line
on the terminal) and calls back with the answer. What the Curator says (written,
refused, nothing to do) goes to ``Host.tell``. So the dashboard, a browser tab and
the command line run the same flow, with its checks, proof and words.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Coroutine, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from store import StoreError

from .bulk import AnyStep
from .verbs import Verb

Severity = Literal["information", "warning", "error"]

INSTEAD = "instead"
"""The answer to a question that offers another write instead (pin back, rather than
undo a pin): the host's ``i``."""


@dataclass(frozen=True, slots=True)
class VerbQuestion:
    """Write ``verb`` on a record whose text is ``text``? (``duplicates``: its same-text
    twins the write takes too; ``effect``: what the write does to the project's recent
    prompts, when pi's sessions prove it.)"""

    verb: Verb
    text: str
    duplicates: int = 0
    effect: str = ""


@dataclass(frozen=True, slots=True)
class PairQuestion:
    """Write ``verb``, which takes a pair, on the records whose texts are these?"""

    verb: Verb
    first: str
    second: str


@dataclass(frozen=True, slots=True)
class ManyQuestion:
    """Write each step (a bulk action, a merge, a batch's undo)? ``notes``: what the
    person must know first; ``grouped``: the history shows them as one entry;
    ``instead``: the words of the write offered instead ("" none)."""

    title: str
    steps: Sequence[AnyStep]
    notes: Sequence[str] = ()
    grouped: bool = True
    instead: str = ""


@dataclass(frozen=True, slots=True)
class UndoQuestion:
    """Undo ``what``, writing ``plan`` (the store's preview)? ``instead``: the inverse
    verb, offered first when the event only pinned or unpinned."""

    what: str
    plan: list[tuple[dict[str, Any], dict[str, Any]]]
    instead: str = ""


@dataclass(frozen=True, slots=True)
class PurgeQuestion:
    """Purge a secret from every place ``lines`` name? ``summary``: what it writes."""

    lines: Sequence[str]
    summary: str


@dataclass(frozen=True, slots=True)
class TextQuestion:
    """The new text of ``memory_id`` (a correction, a merge's kept text): the answer
    is the text, or None."""

    memory_id: str
    text: str


@dataclass(frozen=True, slots=True)
class OriginQuestion:
    """The origin to adopt records into (a project's absolute path): a text, or None."""

    title: str = "Adopt into which origin?"
    placeholder: str = "/home/you/projects/app"
    hint: str = "An absolute path: the project these unscoped legacy records belong to."


Question = (
    VerbQuestion
    | PairQuestion
    | ManyQuestion
    | UndoQuestion
    | PurgeQuestion
    | TextQuestion
    | OriginQuestion
)
Answer = bool | str | None
"""A yes (True), a no (False, or None: closed), ``INSTEAD``; for a text, the text."""


@dataclass(frozen=True, slots=True)
class Told:
    """One thing said (the command line prints it; the dashboard shows a notice)."""

    text: str
    title: str = ""
    severity: Severity = "information"
    timeout: float | None = None


class Host(Protocol):
    """Who runs the Curator: asks, tells, and runs its work."""

    def ask(self, question: Question, then: Callable[[Answer], None]) -> None:
        """Show ``question``; call ``then`` with the answer (never, if it is dropped)."""

    def tell(self, told: Told) -> None:
        """Say what happened."""

    def store_failed(self, error: StoreError) -> None:
        """The store cannot be used any more (replaced, unreadable): say so, and keep
        saying it."""

    def reload(self) -> None:
        """The records on show are stale: read them again."""

    def run(self, group: str, work: Coroutine[Any, Any, None]) -> None:
        """Run ``work`` beside the person (a worker of ``group``)."""

    def running(self, groups: Collection[str]) -> bool:
        """Work of one of ``groups`` is still running."""

    def reopen_hint(self) -> str:
        """What to press (or run) to reopen a store replaced on disk."""
