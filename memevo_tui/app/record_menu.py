"""The record menu (``enter`` or ``.`` on a record): what can be done to it, built from
the registries. Where it came from; each view that can show it (``ViewEntry.of_record``:
its history, its turns); each verb that applies to it now, with its key; copying its id
or its text. The screen acts on the choice (``Dashboard.on_record_menu_requested``)."""

from __future__ import annotations

from collections.abc import Callable, Collection

from store import Memory

from ..core.text import one_line
from ..core.verbs import KEYED, named, op_for
from ..dialogs.menu import Menu
from ..widgets.memory_list import PROVENANCE_BINDING
from .registry import VIEWS

PROVENANCE = "provenance"
VIEW, VERB, COPY = "view:", "verb:", "copy:"
COPIES = (("id", "Copy its id", ("list.copy", "y")),
          ("text", "Copy its text", ("list.copy_text", "Y")))  # fmt: skip
WIDTH = 40
"""The labels' width, the keys beside them (the menu fits 80 columns)."""

KeyOf = Callable[[tuple[str, str]], str]
"""The key a binding (its id and default key) has now, after the user's key map."""


def _line(label: str, key: str = "") -> str:
    return f"{label:<{WIDTH}}{key}" if key else label


def record_choices(
    record: Memory, offered: Collection[str], key_of: KeyOf
) -> list[tuple[str, str]]:
    """The menu's (choice, line) pairs for ``record``; ``offered``: the binding ids of
    the list it was asked from (a verb is offered where its key works)."""
    provenance = (PROVENANCE_BINDING.id or "", PROVENANCE_BINDING.key)
    choices = [(PROVENANCE, _line("Where it came from", key_of(provenance)))]
    choices += [(f"{VIEW}{v.id}", _line(v.of_record[0])) for v in VIEWS if v.of_record]
    for verb in KEYED:
        if verb.binding_id not in offered or verb.takes == "several":
            continue
        op = named(op_for(verb.name, record.pinned))
        if op.refusal(record) is not None:
            continue
        choices.append((f"{VERB}{verb.name}", _line(op.label, key_of((verb.binding_id, verb.key)))))
    choices += [(f"{COPY}{what}", _line(label, key_of(binding))) for what, label, binding in COPIES]
    return choices


def record_menu(record: Memory, offered: Collection[str], key_of: KeyOf) -> Menu:
    """The menu of what can be done to ``record``; it dismisses with the choice."""
    title = f"{record.id[:8]} · {one_line(record.content, WIDTH - 8)}"
    return Menu(title, record_choices(record, offered, key_of), "")


def view_query(view_id: str, record: Memory) -> str:
    """The filter that shows ``record`` in the view ``view_id`` (a ``VIEW`` choice)."""
    entry = next(v for v in VIEWS if v.id == view_id)
    return entry.of_record[1].format(id=record.id)
