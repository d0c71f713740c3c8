"""Command-palette entries: every action reachable by key is reachable by name.

Actions are the App's (live, reload, help) or the dashboard screen's (``screen.``).
Textual's own entries (Keys, Maximize, Screenshot, Theme, Quit) follow the dashboard's,
under "App:", from this one provider, so that their order is fixed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.keys import format_key

from ..core.verbs import KEYED
from ..core.view import SORTS
from ..widgets.keys import key_for
from .registry import SCREENS, VIEWS


def _in(view: str, call: str, *args: object, show: bool = False) -> str:
    """The action calling ``call`` on view ``view`` (its keys, by name)."""
    return f"screen.ask({', '.join(repr(a) for a in (view, call, show, *args))})"


COMMANDS: tuple[tuple[str, str, str], ...] = (
    *((v.palette, v.binding_id, f"screen.{v.action}") for v in KEYED if v.palette),
    ("Filter this view", "app.filter", "screen.filter"),
    ("Clear the memory list's filter", "", _in("memories", "clear_filter")),
    ("Show or hide forgotten and conflicted memories", "memory.toggle_hidden",
     _in("memories", "action_toggle_hidden")),
    ("Sort the memory list (a menu of columns)", "memory.sort",
     _in("memories", "action_sort_menu", show=True)),
    ("Reverse the sort order", "memory.reverse_sort", _in("memories", "action_reverse_sort")),
    *((v.palette, v.binding.id or "", f"screen.show_tab({v.id!r})") for v in VIEWS),
    ("Copy the highlighted id", "list.copy", "screen.yank(False)"),
    ("Copy the highlighted text", "list.copy_text", "screen.yank(True)"),
    ("Hide or show the detail pane", "split.toggle", "screen.toggle_side"),
    ("Pause or resume live updates", "app.live", "toggle_live"),
    ("Time dial: show the store as of another day", "app.time", "screen.time_dial"),
    ("Time dial: back to now", "app.now", "screen.now"),
    *((s.palette, s.binding.id or "", f"screen.open_screen({s.id!r})") for s in SCREENS),
    ("Project scope: this project, all projects, or pick one", "app.scope", "screen.scope"),
    ("Project scope: pick a project (or all of them)…", "", "screen.pick_scope"),
    ("Mark or unmark the highlighted record", "memory.mark", "screen.mark"),
    ("Purge a leaked secret the highlighted record holds, from every copy", "record.purge",
     "screen.on_list('purge')"),
    ("Export the marked records, or the listed ones, to a file", "memory.export",
     _in("memories", "action_export")),
    ("Recall preview: switch injection / the model's recall tool / search", "recall.purpose",
     _in("recall", "toggle_purpose", show=True)),
    ("Reload from the store", "app.reload", "reload"),
    ("Help: keys and legend", "app.help", "help"),
)  # fmt: skip
"""Every entry: its title, the id of the binding that runs it ("" for none: the
palette only), and its action. The key the palette shows is read from the binding as
it is now, the user's key map applied: never written out here."""


def default_keys() -> dict[str, str]:
    """Each binding id's default key: the dashboard's, the lists' and panes', and every
    view's (read from the registry when the palette opens, as help reads them)."""
    from ..widgets.split import Split
    from ..widgets.virtual_list import VirtualList
    from .dashboard import Dashboard

    found: dict[str, str] = {}
    groups = [Dashboard.BINDINGS, VirtualList.BINDINGS, Split.BINDINGS,
              *(view.keys() for view in VIEWS)]  # fmt: skip
    for bindings in groups:
        for b in bindings:
            if isinstance(b, Binding) and b.id:
                found.setdefault(b.id, b.key.split(",")[0].strip())
    return found


def all_commands() -> list[tuple[str, str, str]]:
    sorts = [(f"Sort by {key}", "", _in("memories", "sort_by", key))
             for key in SORTS]  # fmt: skip
    return [*COMMANDS, *sorts]


class MemevoCommands(Provider):
    """memevo-tui's actions for the command palette, then Textual's under "App:"."""

    def _entries(self) -> Iterator[tuple[str, Callable[[], Any], str | None]]:
        defaults = default_keys()
        for title, binding_id, action in all_commands():
            key = (
                key_for(self.app, (binding_id, defaults.get(binding_id, ""))) if binding_id else ""
            )
            shown = f"key: {format_key(key)}" if key else None
            yield title, partial(self.app.run_action, action), shown
        stock = sorted(self.app.get_system_commands(self.screen), key=lambda c: c.title)
        for command in stock:
            yield f"App: {command.title}", command.callback, command.help

    async def discover(self) -> Hits:
        for title, run, help_text in self._entries():
            yield DiscoveryHit(title, run, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, run, help_text in self._entries():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), run, help=help_text)
