"""The views, each declared once: the tabs (``VIEWS``) and the screens opened over
them (``SCREENS``).

A ``ViewEntry`` gives a view's tab id, the key that shows it, its tab title, its
class, its palette entry, and the keys that work in it (for help, and for the key
map's check that no key means two things at once). The dashboard composes its tabs
and binds their keys from ``VIEWS``; the palette (``commands``) and the key map
(``keygroups.scopes``, ``keygroups.key_groups``) read it too. Adding a view is its module
plus one entry here.

A ``ScreenEntry`` is a view that opens over the tabs (the diff): its key, its
palette entry, its keys, and the function that opens it (``open(dashboard, *args)``,
in its own module). The dashboard binds ``open_screen('<id>')`` and routes
``OpenScreen`` messages to it, and knows nothing else of it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from textual.binding import Binding, BindingType

from ..widgets.memory_list import CURATION_BINDINGS, MemoryList
from ..widgets.virtual_list import VirtualList

if TYPE_CHECKING:
    from ..views.base import BaseView

Keys = Callable[[], list[BindingType]]

LATER: list[Later] = []
"""Every name the registry imports when first asked for (``tests/test_layers.py``
checks that each names what it says, and that start-up has not imported it: what
start-up imports anyway is named directly)."""


@dataclass(frozen=True, slots=True)
class Later:
    """A class or function of a module that start-up does not import (a view, its
    widgets, a screen): ``module:name`` under ``memevo_tui``, imported when first asked
    for. The registry's one lazy mechanism."""

    place: str

    def __post_init__(self) -> None:
        LATER.append(self)

    @property
    def module(self) -> str:
        return f"memevo_tui.{self.place.split(':')[0]}"

    def get(self) -> Any:
        return getattr(importlib.import_module(self.module), self.place.split(":")[1])


def _key(key: str, action: str, title: str, entry_id: str, tooltip: str) -> Binding:
    """The key of a registry entry: binding id ``app.<id>``, not in the footer."""
    return Binding(key, action, title, show=False, id=f"app.{entry_id}", tooltip=tooltip)


def _none() -> list[BindingType]:
    return []


@dataclass(frozen=True, slots=True)
class ViewEntry:
    id: str
    """The tab's id: ``show_tab('<id>')``; its key's binding id is ``app.<id>``."""
    key: str
    title: str
    """The tab's title."""
    where: Later
    """Its class: imported when the view is first built, so the first screen loads
    only the view it shows."""
    tooltip: str
    """What its key does, in help."""
    palette: str
    """Its title in the command palette."""
    scope: str = ""
    """The name of the keys that work in it, in help and the key map ("" none of its own)."""
    keys: Keys = _none
    """The bindings active in it beyond the dashboard's and every list's."""
    help: Keys | None = None
    """The bindings help lists under ``scope`` (default: ``keys``)."""
    of_record: tuple[str, ...] = ()
    """How the record menu offers this view for one record: its line, and the filter
    that shows the record here (``{id}``: the record's id); () not offered."""

    @property
    def cls(self) -> type[BaseView]:
        found: type[BaseView] = self.where.get()
        return found

    @property
    def binding(self) -> Binding:
        return _key(self.key, f"show_tab({self.id!r})", self.title, self.id, self.tooltip)


def _not_curation(bindings: list[BindingType]) -> list[BindingType]:
    """Without the curation keys (help lists them once, under the memory list)."""
    curation = {b.id for b in CURATION_BINDINGS}
    return [b for b in bindings if isinstance(b, Binding) and b.id not in curation]


def _of(*where: str | type[Any]) -> Keys:
    """The bindings of these classes (a class, or ``module:Class`` under ``memevo_tui``
    for one start-up does not import), read when asked (help, the key map): naming a
    view's keys imports nothing until then."""
    classes = [Later(w) if isinstance(w, str) else w for w in where]

    def keys() -> list[BindingType]:
        out: list[BindingType] = []
        for cls in classes:
            out += (cls.get() if isinstance(cls, Later) else cls).BINDINGS
        return out

    return keys


def _less(keys: Keys, *, curation: bool = False, lists: bool = False) -> Keys:
    """``keys`` without the curation keys (help lists them once, under the memory list)
    or every list's own (help lists them once, under lists)."""

    def fewer() -> list[BindingType]:
        found = keys()
        if curation:
            found = _not_curation(found)
        if lists:
            common = VirtualList.BINDINGS
            found = [b for b in found if b not in common]
        return found

    return fewer


VIEWS: tuple[ViewEntry, ...] = (
    ViewEntry(
        "memories",
        "m",
        "Memories",
        Later("views.memories:MemoriesView"),
        "Show the memory list",
        "Show memories",
        "memory list",
        _of(
            "views.memories:MemoriesView",
            "views.marks:MarkingView",
            MemoryList,
        ),
    ),
    ViewEntry(
        "history",
        "h",
        "History",
        Later("views.history:HistoryView"),
        "Show the event history",
        "Show event history",
        "history",
        _of("views.history:HistoryView", "widgets.event_list:EventList"),
        of_record=("Its history (every event)", "{id}"),
    ),
    ViewEntry(
        "learning",
        "l",
        "Learning",
        Later("views.learning:LearningView"),
        "Show the learning queue and its model calls",
        "Show the learning queue",
        "learning",
        _of("widgets.source_list:SourceList"),
        _less(_of("widgets.source_list:SourceList"), lists=True),
    ),
    ViewEntry(
        "search",
        "s",
        "Search",
        Later("views.search:SearchView"),
        "Search like /memory search",
        "Search memories",
    ),
    ViewEntry(
        "recall",
        "i",
        "Recall",
        Later("views.recall:RecallView"),
        "Recall preview: what pi would inject for a prompt, and why",
        "Recall preview: what pi would inject",
        "recall preview",
        _of("widgets.recall_list:RecallList", "widgets.recall_pane:RecallPane"),
        lambda: [
            *_of("widgets.recall_pane:RecallPane")(),
            *_less(_of("widgets.recall_list:RecallList"), curation=True)(),
        ],
    ),
    ViewEntry(
        "review",
        "w",
        "Review",
        Later("views.review:ReviewView"),
        "The review queue: the records that need you, most urgent first",
        "Review queue: what needs a human",
        "review",
        _of("widgets.review_list:ReviewList"),
        _less(_of("widgets.review_list:ReviewList"), curation=True),
    ),
    ViewEntry(
        "timeline",
        "T",
        "Timeline",
        Later("views.timeline:TimelineView"),
        "The store over time: records by state, events, runs and spend, from the event log",
        "Show the timeline",
        "timeline",
        _of("widgets.timeline_chart:TimelineChart"),
    ),
    ViewEntry(
        "turns",
        "n",
        "Turns",
        Later("views.turns:TurnsView"),
        "What pi injected into each past prompt of its sessions, then and now",
        "Show the turns: what pi injected, prompt by prompt",
        "turns",
        _of("widgets.turn_list:SessionList", "widgets.turn_list:TurnList", "views.turns:TurnsView"),
        of_record=("Its turns (prompts pi gave it to)", "record:{id}"),
    ),
)
"""The views, in the order of their tabs."""


@dataclass(frozen=True, slots=True)
class ScreenEntry:
    id: str
    """``open_screen('<id>')``; its key's binding id is ``app.<id>``."""
    key: str
    title: str
    where: Later
    """The function that opens it: called with the dashboard and the request's
    arguments, imported when first opened."""
    tooltip: str
    palette: str
    scope: str
    """The name of the keys that work in it, in help and the key map."""
    keys: Keys = _none

    def open(self, host: Any, *args: object) -> None:
        self.where.get()(host, *args)

    @property
    def binding(self) -> Binding:
        return _key(self.key, f"open_screen({self.id!r})", self.title, self.id, self.tooltip)


SCREENS: tuple[ScreenEntry, ...] = (
    ScreenEntry(
        "diff",
        "D",
        "Diff",
        Later("views.diff:open_diff"),
        "Diff: the records added, changed and removed between two moments",
        "Diff… the records added, changed and removed between two moments",
        "diff",
        _of("views.diff:DiffScreen", "widgets.diff_list:DiffList"),
    ),
)
"""The views that open over the tabs."""
