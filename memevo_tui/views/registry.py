"""The views, each declared once.

A ``ViewEntry`` gives a view's tab id, the key that shows it, its tab title, its
class, its palette entry, and the keys that work in it (for help, and for the key
map's check that no key means two things at once). The dashboard composes its tabs
and binds their keys from ``VIEWS``; the palette (``commands``) and the key map
(``keymap.scopes``, ``keymap.key_groups``) read it too. Adding a view is its module
plus one entry here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from textual.binding import Binding, BindingType

from ..widgets.event_list import EventList
from ..widgets.memory_list import CURATION_BINDINGS, MemoryList
from ..widgets.recall_list import RecallList
from ..widgets.recall_pane import RecallPane
from ..widgets.review_list import ReviewList
from ..widgets.source_list import SourceList
from ..widgets.timeline_chart import TimelineChart
from ..widgets.turn_list import SessionList, TurnList
from ..widgets.virtual_list import VirtualList
from .base import BaseView
from .history import HistoryView
from .learning import LearningView
from .marks import MarkingView
from .memories import MemoriesView
from .recall import RecallView
from .review import ReviewView
from .search import SearchView
from .timeline import TimelineView
from .turns import TurnsView

Keys = Callable[[], list[BindingType]]


def _none() -> list[BindingType]:
    return []


@dataclass(frozen=True, slots=True)
class ViewEntry:
    id: str
    """The tab's id: ``show_tab('<id>')``; its key's binding id is ``app.<id>``."""
    key: str
    title: str
    """The tab's title."""
    cls: type[BaseView]
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

    @property
    def binding(self) -> Binding:
        return Binding(
            self.key,
            f"show_tab({self.id!r})",
            self.title,
            show=False,
            id=f"app.{self.id}",
            tooltip=self.tooltip,
        )


def _not_curation(bindings: list[BindingType]) -> list[BindingType]:
    """Without the curation keys (help lists them once, under the memory list)."""
    curation = {b.id for b in CURATION_BINDINGS}
    return [b for b in bindings if isinstance(b, Binding) and b.id not in curation]


VIEWS: tuple[ViewEntry, ...] = (
    ViewEntry(
        "memories",
        "m",
        "Memories",
        MemoriesView,
        "Show the memory list",
        "Show memories",
        "memory list",
        lambda: [*MemoriesView.BINDINGS, *MarkingView.BINDINGS, *MemoryList.BINDINGS],
    ),
    ViewEntry(
        "history",
        "h",
        "History",
        HistoryView,
        "Show the event history",
        "Show event history",
        "history",
        lambda: [*HistoryView.BINDINGS, *EventList.BINDINGS],
    ),
    ViewEntry(
        "learning",
        "l",
        "Learning",
        LearningView,
        "Show the learning queue and its model calls",
        "Show the learning queue",
        "learning",
        lambda: list(SourceList.BINDINGS),
        lambda: [b for b in SourceList.BINDINGS if b not in VirtualList.BINDINGS],
    ),
    ViewEntry(
        "search",
        "s",
        "Search",
        SearchView,
        "Search like /memory search",
        "Search memories",
    ),
    ViewEntry(
        "recall",
        "i",
        "Recall",
        RecallView,
        "Recall preview: what pi would inject for a prompt, and why",
        "Recall preview: what pi would inject",
        "recall preview",
        lambda: [*RecallList.BINDINGS, *RecallPane.BINDINGS],
        lambda: [*RecallPane.BINDINGS, *_not_curation(list(RecallList.BINDINGS))],
    ),
    ViewEntry(
        "review",
        "w",
        "Review",
        ReviewView,
        "The review queue: the records that need you, most urgent first",
        "Review queue: what needs a human",
        "review",
        lambda: list(ReviewList.BINDINGS),
        lambda: _not_curation(list(ReviewList.BINDINGS)),
    ),
    ViewEntry(
        "timeline",
        "T",
        "Timeline",
        TimelineView,
        "The store over time: records by state, events, runs and spend, from the event log",
        "Show the timeline",
        "timeline",
        lambda: list(TimelineChart.BINDINGS),
    ),
    ViewEntry(
        "turns",
        "n",
        "Turns",
        TurnsView,
        "What pi injected into each past prompt of its sessions, then and now",
        "Show the turns: what pi injected, prompt by prompt",
        "turns",
        lambda: [*SessionList.BINDINGS, *TurnList.BINDINGS],
    ),
)
"""The views, in the order of their tabs."""
