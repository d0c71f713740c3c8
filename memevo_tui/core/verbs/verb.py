"""What a curation verb declares (``Verb``), what one write names (``Target``) and the
words a verb's confirmation uses (``Confirm``). The verbs themselves are ``VERBS`` in
the package. No Textual here."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal

from store import Memory, MemoryStore

FEEDBACK = ("useful", "unhelpful", "accurate", "incorrect")
"""The verdicts pi records (``store.feedback``)."""
UNFAVOURABLE = ("unhelpful", "incorrect")
"""The verdicts that say a record costs the user (Review's "costly")."""
LAYER_ONLY = frozenset(("layer", "revision", "updatedAt", "reinforcedAt", "suppressedHashes"))
"""The fields a pin or an unpin changes."""


@dataclass(frozen=True, slots=True)
class Target:
    """What one write names. ``revision``: the one the record had on screen (the write
    is refused if it changed since); None writes whatever revision is stored (the CLI)."""

    memory_id: str = ""
    revision: int | None = None
    text: str = ""
    """correct: the new text."""
    other_id: str = ""
    """conflict: the contradicting record."""
    origin: str = ""
    """adopt: the origin the legacy record joins."""
    event_id: str = ""
    """undo: the event undone."""


StoreCall = Callable[[MemoryStore, Target], Awaitable[str | None]]
"""One upstream write: the id of the event it recorded, or None when nothing changed."""

Asks = Literal["", "confirm", "origin", "text", "other", "event"]
Takes = Literal["one", "pair", "several"]


@dataclass(frozen=True, slots=True)
class Confirm:
    """The verb's own dialog (``asks="confirm"``, or a pair's): its title, what it warns
    of (``{also}``: " and its N same-text duplicate(s)", where the verb takes them too),
    and its yes button."""

    title: str
    warning: str
    yes: str


def _never(m: Memory) -> str | None:
    return None


@dataclass(frozen=True, slots=True)
class Verb:
    name: str
    """The operation, as ``curate('<name>')`` and the CLI name it."""
    call: StoreCall
    key: str
    """Its key in every list of records ("" reached through another verb: unpin)."""
    label: str
    """The key's label in the footer and help."""
    tooltip: str
    """What the key does, in the help."""
    palette: str
    """Its title in the command palette ("" not listed there)."""
    done: str
    """The toast once one record is written: "Pinned"."""
    did: str
    """How a bulk action's toast counts what it wrote: "Pinned {n}"."""
    words: str
    """How a bulk preview names the write: "resolve as confirmed"."""
    footer: bool = False
    """Shown in the footer (else in help and the palette only)."""
    bulk: bool = False
    """Applies to every marked record at once."""
    asks: Asks = ""
    """What it needs from the user before it writes: a yes ("confirm", the verb's own
    dialog), an origin, a new text, the contradicting record, or the event (undo looks
    up the record's last one and previews it)."""
    refusal: Callable[[Memory], str | None] = _never
    """Upstream's refusal for a record, in its words (a bulk preview lists it)."""
    unchanged: Callable[[Memory], str | None] = _never
    """Why a bulk action leaves a record as it is (it already is what the verb makes
    it). A single key still writes: pi records a repeated pin, and a repeated verdict
    as a receipt; a bulk action writes only what changes."""
    cli: str = ""
    """The command-line verb it is written by (the verdicts share ``feedback``)."""
    cli_help: str = ""
    cli_args: tuple[str, ...] = ("id",)
    """Its command line's arguments: ``id``, ``verdict``, ``text`` (the rest of the
    line), ``other_id``, ``origin`` or ``event_id``."""
    becomes: Callable[[Memory, Target], Memory] | None = None
    """The record as recall will see it once written, for the write ``Target`` names
    (its confirmation proves the fix on the project's recent prompts first; a verb
    that asks nothing says what it did in its toast); None: not proved."""
    takes: Takes = "one"
    """One record; a pair (the first marked, then the key again on the other); or
    several (the marked records, or a Review pair)."""
    second: str = ""
    """A pair: what to do once the first record is marked."""
    confirm: Confirm | None = None
    """Its dialog, when it asks for a yes (or takes a pair)."""
    toggle: str = ""
    """The verb its key writes instead on a record it already applies to (pin: unpin)."""
    decides: bool = False
    """One of Review's decisions (its key acts on the highlighted item's record)."""
    on_recall: bool = True
    """Its key works in the recall preview's list of candidates."""
    parts: tuple[str, ...] = ()
    """A verb made of other verbs' writes (merge: a forget of each other record, then a
    correct of the one kept), journaled as one batch; its ``call`` is never used."""
    with_duplicates: bool = False
    """Its write takes the record's same-text duplicates too, and its toast says so."""

    @property
    def asking(self) -> Confirm:
        """Its question for one record: its own, else "<label>?" (the dialog and the
        command line's ``--prove`` ask it alike)."""
        return self.confirm or Confirm(f"{self.label}?", "", self.label)

    @property
    def binding_id(self) -> str:
        return f"memory.{self.name}"

    @property
    def action(self) -> str:
        return f"curate({self.name!r})"
