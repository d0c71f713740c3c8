"""Command-palette entries: every action reachable by key is reachable by name.

Actions are the App's (live, reload, help) or the dashboard screen's (``screen.``).
Textual's own entries (Keys, Maximize, Screenshot, Theme, Quit) follow the dashboard's,
under "App:", from this one provider, so that their order is fixed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

from textual.command import DiscoveryHit, Hit, Hits, Provider

from .core.verbs import KEYED
from .core.view import SORTS
from .views.registry import SCREENS, VIEWS


def _in(view: str, call: str, *args: object, show: bool = False) -> str:
    """The action calling ``call`` on view ``view`` (its keys, by name)."""
    return f"screen.ask({', '.join(repr(a) for a in (view, call, show, *args))})"


COMMANDS: tuple[tuple[str, str, str], ...] = (
    *((v.palette, v.key, f"screen.{v.action}") for v in KEYED if v.palette),
    ("Filter this view", "/", "screen.filter"),
    ("Clear the memory list's filter", "", _in("memories", "clear_filter")),
    (
        "Show or hide forgotten and conflicted memories",
        "a",
        _in("memories", "action_toggle_hidden"),
    ),
    (
        "Sort the memory list (a menu of columns)",
        "o",
        _in("memories", "action_sort_menu", show=True),
    ),
    ("Reverse the sort order", "O", _in("memories", "action_reverse_sort")),
    *((v.palette, v.key, f"screen.show_tab({v.id!r})") for v in VIEWS),
    ("Copy the highlighted id", "y", "screen.yank(False)"),
    ("Copy the highlighted text", "Y", "screen.yank(True)"),
    ("Hide or show the detail pane", "z", "screen.toggle_side"),
    ("Pause or resume live updates", "ctrl+space", "toggle_live"),
    ("Time dial: show the store as of another day", "t", "screen.time_dial"),
    ("Time dial: back to now", "0", "screen.now"),
    *((s.palette, s.key, f"screen.open_screen({s.id!r})") for s in SCREENS),
    ("Project scope: this project, all projects, or pick one", "@", "screen.scope"),
    ("Project scope: pick a project (or all of them)…", "", "screen.pick_scope"),
    ("Mark or unmark the highlighted record", "space", "screen.mark"),
    (
        "Export the marked records, or the listed ones, to a file",
        "ctrl+e",
        _in("memories", "action_export"),
    ),
    (
        "Recall preview: switch injection / the model's recall tool / search",
        "ctrl+t",
        _in("recall", "toggle_purpose", show=True),
    ),
    ("Reload from the store", "ctrl+r", "reload"),
    ("Help: keys and legend", "?", "help"),
)


def all_commands() -> list[tuple[str, str, str]]:
    sorts = [(f"Sort by {key}", "", _in("memories", "sort_by", key))
             for key in SORTS]  # fmt: skip
    return [*COMMANDS, *sorts]


class MemevoCommands(Provider):
    """memevo-tui's actions for the command palette, then Textual's under "App:"."""

    def _entries(self) -> Iterator[tuple[str, Callable[[], Any], str | None]]:
        for title, key, action in all_commands():
            yield title, partial(self.app.run_action, action), f"key: {key}" if key else None
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
