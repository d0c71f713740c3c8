"""The curation verbs, each declared once.

A ``Verb`` is one upstream write: its store call, its key, its words (the key's label
and help, the palette's title, what a toast says once it is written, what a bulk
preview calls it), whether it applies to many marked records and how a bulk preview
describes a record it leaves as it is, what it asks before writing, and its command
line. Everything that offers a verb reads it from here: the curation keys of every
list of records (``widgets.memory_list``), the palette (``commands``), the bulk
planner (``bulk``), the views' toasts, the help screen (through the keys) and the
command line (``cli.parser``, ``cli.run``).

A verb takes one record, a pair (the second chosen by marking the first and pressing
the key again on the other: conflict) or several (the marked records, or a Review
pair: merge, made of other verbs' writes). No module outside this one handles a
verb by its name: what differs between verbs is a field here
(``tests/test_verbs.py`` fails on a comparison with a verb's name elsewhere).

Adding a verb is one entry in ``VERBS`` plus its store call; what an entry holds is
``verb.Verb``. No Textual here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from store import Evidence, Memory, MemoryStore, js_trim
from store import redact_text as redact

from .verb import (
    FEEDBACK,
    LAYER_ONLY,
    UNFAVOURABLE,
    Asks,
    Confirm,
    StoreCall,
    Takes,
    Target,
    Verb,
)

__all__ = [
    "BULK_VERBS",
    "BY_NAME",
    "CLI_VERBS",
    "DECISIONS",
    "FEEDBACK",
    "KEYED",
    "LAYER_ONLY",
    "LOGGED",
    "ON_RECALL",
    "PI_WRITES",
    "UNFAVOURABLE",
    "VERBS",
    "Asks",
    "Confirm",
    "StoreCall",
    "Takes",
    "Target",
    "Verb",
    "inverse_of",
    "named",
    "op_for",
    "wrote",
]


def _quarantined(m: Memory, t: Target) -> Memory:
    """pi stores a record marked incorrect as conflicted: never recalled."""
    return replace(m, status="conflicted")


def _corrected(m: Memory, t: Target) -> Memory:
    """pi's correct (§4.4): the new text, confirmed, its search terms and verdicts gone,
    a manual correction's evidence."""
    at = m.updated_at
    return replace(
        m,
        content=js_trim(redact(t.text)),
        status="confirmed",
        search_terms=(),
        utility=None,
        accuracy=None,
        evidence=Evidence("manual_correction", "manual", "manual:", at),
    )


async def _made_of_parts(store: MemoryStore, target: Target) -> str | None:
    raise TypeError("a verb made of parts is written as its parts, one batch")


def _inactive(m: Memory) -> str | None:
    return None if m.active else "Resolve/correct the memory first"


def _already(verdict: str) -> Callable[[Memory], str | None]:
    def unchanged(m: Memory) -> str | None:
        given = m.utility if verdict in ("useful", "unhelpful") else m.accuracy
        return (
            f"already marked {verdict}" if given is not None and given.verdict == verdict else None
        )

    return unchanged


def _feedback(verdict: str) -> StoreCall:
    return lambda s, t: s.feedback(t.memory_id, verdict, expected_revision=t.revision)


_INCORRECT = Confirm(
    "Mark this memory incorrect?",
    "This quarantines the record{also}: pi stores them as conflicted, never recalls them, "
    "and blocks the text from being learned again. r resolves it; 3 (accurate) replaces "
    "the verdict.",
    "Incorrect",
)

_FEEDBACK_KEYS = {
    "useful": ("1", "Feedback: useful", "Feedback: useful"),
    "unhelpful": ("2", "Feedback: unhelpful", "Feedback: unhelpful"),
    "accurate": ("3", "Feedback: accurate", "Feedback: accurate"),
    "incorrect": (
        "4",
        "Feedback: incorrect (asks first: it quarantines the record)",
        "Feedback: incorrect (quarantines the record)",
    ),
}

VERBS: tuple[Verb, ...] = (
    Verb(
        "pin",
        lambda s, t: s.pin(t.memory_id, expected_revision=t.revision),
        "p",
        "Pin",
        "Pin or unpin the record",
        "Pin or unpin the selected memory",
        "Pinned · {id}",
        "Pinned {n}",
        "pin",
        footer=True,
        bulk=True,
        refusal=_inactive,
        unchanged=lambda m: "already pinned" if m.pinned else None,
        becomes=lambda m, t: replace(m, layer="pinned"),
        toggle="unpin",
        decides=True,
        cli="pin",
        cli_help="pin an active memory",
    ),
    Verb(
        "unpin",
        lambda s, t: s.unpin(t.memory_id, expected_revision=t.revision),
        "",
        "Unpin",
        "Unpin the record (p on a pinned one)",
        "",
        "Unpinned · {id}",
        "Unpinned {n}",
        "unpin",
        becomes=lambda m, t: replace(m, layer="durable"),
        cli="unpin",
        cli_help="unpin a memory",
    ),
    *(
        Verb(
            verdict,
            _feedback(verdict),
            key,
            verdict.capitalize(),
            tooltip,
            palette,
            f"Feedback recorded: {verdict} · {{id}}"
            if verdict != "incorrect"
            else "Marked incorrect: quarantined{also}; r resolves it, 3 marks it accurate",
            f"Marked {{n}} {verdict}",
            f"mark {verdict}",
            bulk=True,
            asks="confirm" if verdict == "incorrect" else "",
            confirm=_INCORRECT if verdict == "incorrect" else None,
            becomes=_quarantined if verdict == "incorrect" else None,
            with_duplicates=verdict == "incorrect",
            decides=True,
            refusal=_inactive,
            unchanged=_already(verdict),
            cli="feedback",
            cli_help="record a verdict on a memory",
            cli_args=("id", "verdict"),
        )
        for verdict, (key, tooltip, palette) in _FEEDBACK_KEYS.items()
    ),
    Verb(
        "forget",
        lambda s, t: s.forget(t.memory_id, expected_revision=t.revision),
        "d",
        "Forget",
        "Forget (asks first)",
        "Forget the selected memory",
        "Forgotten · {id}",
        "Forgot {n}",
        "forget",
        footer=True,
        bulk=True,
        asks="confirm",
        confirm=Confirm(
            "Forget this memory?",
            "The record becomes a tombstone (kept in history, undoable); its text is "
            "blocked from being learned again in this origin.",
            "Forget",
        ),
        becomes=lambda m, t: replace(m, status="forgotten"),
        decides=True,
        on_recall=False,
        cli="forget",
        cli_help="forget a memory (it stays in history)",
    ),
    Verb(
        "correct",
        lambda s, t: s.correct(t.memory_id, t.text, expected_revision=t.revision),
        "e",
        "Correct",
        "Correct the text in $VISUAL or $EDITOR (else in a built-in editor)",
        "Correct the selected memory's text",
        "Corrected · {id}",
        "Corrected {n}",
        "correct",
        footer=True,
        asks="text",
        confirm=Confirm(
            "Correct this memory?",
            "The record becomes a confirmed manual correction; its old text is blocked "
            "from being learned again in this origin.",
            "Correct",
        ),
        becomes=_corrected,
        decides=True,
        cli="correct",
        cli_help="replace a memory's text (it becomes a confirmed manual correction)",
        cli_args=("id", "text"),
    ),
    Verb(
        "resolve",
        lambda s, t: s.resolve(t.memory_id, expected_revision=t.revision),
        "r",
        "Resolve",
        "Resolve a conflicted record as confirmed",
        "Resolve a conflicted memory",
        "Resolved as confirmed · {id}",
        "Resolved {n}",
        "resolve as confirmed",
        bulk=True,
        refusal=lambda m: None if m.status == "conflicted" else "Memory is not conflicted",
        decides=True,
        cli="resolve",
        cli_help="resolve a conflicted memory as confirmed",
    ),
    Verb(
        "conflict",
        lambda s, t: s.conflict(t.memory_id, t.other_id, expected_revision=t.revision),
        "c",
        "Conflict",
        "Mark, then pick the contradicting record and press again",
        "Mark two memories as conflicting",
        "Marked as conflicting · {id}",
        "Marked {n} as conflicting",
        "mark as conflicting",
        asks="other",
        takes="pair",
        second="Marked for conflict: select the contradicting record (same origin) and "
        "press c again; esc cancels",
        confirm=Confirm("Quarantine both as conflicting?", "", "Conflict"),
        on_recall=False,
        cli="conflict",
        cli_help="mark two active memories of one origin as contradicting",
        cli_args=("id", "other_id"),
    ),
    Verb(
        "merge",
        _made_of_parts,
        "M",
        "Merge",
        "Merge near-duplicates into one: the marked records, or a Review pair (you edit "
        "the text kept; the others are forgotten)",
        "Merge the marked memories, or a Review pair, into one",
        "Merged into {id}",
        "Merged {n} writes",
        "merge",
        asks="text",
        takes="several",
        parts=("forget", "correct"),
        decides=True,
        on_recall=False,
    ),
    Verb(
        "adopt",
        lambda s, t: s.adopt(t.memory_id, t.origin, expected_revision=t.revision),
        "A",
        "Adopt",
        "Adopt an unscoped legacy record into an origin (asks which)",
        "Adopt an unscoped legacy memory into an origin",
        "Adopted · {id}",
        "Adopted {n}",
        "adopt into",
        bulk=True,
        asks="origin",
        refusal=lambda m: (
            None if m.scope == "legacy" else "Only unscoped legacy memories can be adopted"
        ),
        cli="adopt",
        cli_help="attach an unscoped legacy memory to an origin",
        cli_args=("id", "origin"),
    ),
    Verb(
        "undo",
        lambda s, t: s.undo(t.event_id),
        "u",
        "Undo",
        "Undo the record's last event (shows a preview)",
        "Undo the selected record's last event",
        "Undone · {id}",
        "Undid {n}",
        "undo",
        footer=True,
        asks="event",
        decides=True,  # in Review too: the record's last event, after a preview
        cli="undo",
        cli_help="undo an event, if nothing changed since",
        cli_args=("event_id",),
    ),
)

BY_NAME: dict[str, Verb] = {v.name: v for v in VERBS}
KEYED: tuple[Verb, ...] = tuple(v for v in VERBS if v.key)
"""The verbs with a key of their own, in the order help and the palette list them."""
BULK_VERBS: tuple[str, ...] = tuple(v.name for v in VERBS if v.bulk)
DECISIONS: tuple[str, ...] = tuple(v.binding_id for v in KEYED if v.decides)
"""The binding ids of Review's decisions."""
ON_RECALL: tuple[str, ...] = tuple(v.binding_id for v in KEYED if v.on_recall)
"""The binding ids of the curation keys in the recall preview's list."""
PI_WRITES = ("capture", "learn", "import")
"""What pi itself writes to the log, named as History names its events: a local
capture, a learning run and a legacy import (the rest of the log is these verbs)."""
LOGGED: tuple[str, ...] = PI_WRITES + tuple(v.name for v in VERBS if not v.parts)
"""Every verb an event of the log can show (History's ``verb:`` filter)."""
CLI_VERBS: dict[str, Verb] = {}
"""Each command-line write verb, and the first verb written by it (its help, arguments)."""
for _v in VERBS:
    CLI_VERBS.setdefault(_v.cli, _v)
CLI_VERBS.pop("", None)


def named(name: str) -> Verb:
    """The verb called ``name`` (KeyError: no such verb)."""
    return BY_NAME[name]


def op_for(name: str, pinned: bool) -> str:
    """The operation a key's verb writes on a record: ``p`` on a pinned one unpins it."""
    toggle = BY_NAME[name].toggle if name in BY_NAME else ""
    return toggle if toggle and pinned else name


def inverse_of(plan: list[tuple[dict[str, Any], dict[str, Any]]]) -> str:
    """The verb that undoes ``plan``'s one record's layer change without blocking its
    text (the pin verb or its toggle), or "" when the event did more, or to more records.
    ``plan``: an undo preview's (current, restored) pairs."""
    if len(plan) != 1:
        return ""
    current, after = plan[0]
    changed = {k for k in {*current, *after} if current.get(k) != after.get(k)}
    if "layer" not in changed or not changed <= LAYER_ONLY:
        return ""
    pin = next(v for v in VERBS if v.toggle)
    return pin.toggle if current.get("layer") == "pinned" else pin.name


def wrote(name: str, target: str, actor: str, reason: str, record_ids: Sequence[str]) -> bool:
    """Is an event (its actor, reason and records) the write the verb ``name`` makes for
    ``target`` (a record; the event undone, for undo)? A verb made of parts: any part."""
    verb = BY_NAME.get(name)
    if actor != "manual" or verb is None:
        return False
    if verb.parts:
        return any(wrote(part, target, actor, reason, record_ids) for part in verb.parts)
    if verb.asks == "event":
        return reason == f"Undo {target}"
    if verb.name in FEEDBACK:
        matched = reason.startswith(f"Feedback {verb.name}: ")
    else:
        matched = reason == verb.name
    return matched and target in record_ids
