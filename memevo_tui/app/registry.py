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

if TYPE_CHECKING:
    from ..views.base import BaseView

Keys = Callable[[], list[BindingType]]


def _named(place: str, package: str = "memevo_tui") -> Any:
    """What ``module:Name`` names under ``package``, its module imported now."""
    module, name = place.split(":")
    return getattr(importlib.import_module(f"{package}.{module}"), name)


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
    where: str
    """Its class, as ``module:Class`` under ``memevo_tui.views``: imported when the view is
    first built, so the first screen loads only the view it shows."""
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
        found: type[BaseView] = _named(self.where, "memevo_tui.views")
        return found

    @property
    def binding(self) -> Binding:
        return _key(self.key, f"show_tab({self.id!r})", self.title, self.id, self.tooltip)


def _not_curation(bindings: list[BindingType]) -> list[BindingType]:
    """Without the curation keys (help lists them once, under the memory list)."""
    from ..widgets.memory_list import CURATION_BINDINGS

    curation = {b.id for b in CURATION_BINDINGS}
    return [b for b in bindings if isinstance(b, Binding) and b.id not in curation]


def _of(*where: str) -> Keys:
    """The bindings of these classes (``module:Class`` under ``memevo_tui``), read when
    asked (help, the key map): naming a view's keys imports nothing until then."""

    def keys() -> list[BindingType]:
        out: list[BindingType] = []
        for place in where:
            out += _named(place).BINDINGS
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
            common = _of("widgets.virtual_list:VirtualList")()
            found = [b for b in found if b not in common]
        return found

    return fewer


VIEWS: tuple[ViewEntry, ...] = (
    ViewEntry(
        "memories",
        "m",
        "Memories",
        "memories:MemoriesView",
        "Show the memory list",
        "Show memories",
        "memory list",
        _of(
            "views.memories:MemoriesView",
            "views.marks:MarkingView",
            "widgets.memory_list:MemoryList",
        ),
    ),
    ViewEntry(
        "history",
        "h",
        "History",
        "history:HistoryView",
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
        "learning:LearningView",
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
        "search:SearchView",
        "Search like /memory search",
        "Search memories",
    ),
    ViewEntry(
        "recall",
        "i",
        "Recall",
        "recall:RecallView",
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
        "review:ReviewView",
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
        "timeline:TimelineView",
        "The store over time: records by state, events, runs and spend, from the event log",
        "Show the timeline",
        "timeline",
        _of("widgets.timeline_chart:TimelineChart"),
    ),
    ViewEntry(
        "turns",
        "n",
        "Turns",
        "turns:TurnsView",
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
    where: str
    """The function that opens it, as ``module:function`` under ``memevo_tui``: called
    with the dashboard and the request's arguments, imported when first opened."""
    tooltip: str
    palette: str
    scope: str
    """The name of the keys that work in it, in help and the key map."""
    keys: Keys = _none

    def open(self, host: Any, *args: object) -> None:
        _named(self.where)(host, *args)

    @property
    def binding(self) -> Binding:
        return _key(self.key, f"open_screen({self.id!r})", self.title, self.id, self.tooltip)


SCREENS: tuple[ScreenEntry, ...] = (
    ScreenEntry(
        "diff",
        "D",
        "Diff",
        "views.diff:open_diff",
        "Diff: the records added, changed and removed between two moments",
        "Diff… the records added, changed and removed between two moments",
        "diff",
        _of("views.diff:DiffScreen", "widgets.diff_list:DiffList"),
    ),
)
"""The views that open over the tabs."""
