"""Command-palette entries: every action reachable by key is reachable by name."""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("Pin or unpin the selected memory", "p", "curate('pin')"),
    ("Feedback: useful", "1", "curate('useful')"),
    ("Feedback: unhelpful", "2", "curate('unhelpful')"),
    ("Feedback: accurate", "3", "curate('accurate')"),
    ("Feedback: incorrect (quarantines the record)", "4", "curate('incorrect')"),
    ("Forget the selected memory", "d", "curate('forget')"),
    ("Correct the selected memory's text", "e", "curate('correct')"),
    ("Resolve a conflicted memory", "r", "curate('resolve')"),
    ("Mark two memories as conflicting", "c", "curate('conflict')"),
    ("Undo the selected record's last event", "u", "curate('undo')"),
    ("Filter the memory list", "/", "filter"),
    ("Clear the filter", "", "clear_filter"),
    ("Show or hide forgotten and conflicted memories", "a", "toggle_hidden"),
    ("Sort by the next column", "o", "cycle_sort"),
    ("Reverse the sort order", "O", "reverse_sort"),
    ("Show memories", "m", "show_tab('memories')"),
    ("Show event history", "h", "show_tab('history')"),
    ("Search memories", "s", "show_tab('search')"),
    ("Show the learning queue", "l", "show_tab('learning')"),
    ("Pause or resume live updates", "space", "toggle_live"),
    ("Reload from the store", "ctrl+r", "reload"),
    ("Help: keys and legend", "?", "help"),
)
SORTS = (
    "updated",
    "confirmed",
    "fresh",
    "state",
    "kind",
    "status",
    "origin",
    "evidence",
    "feedback",
    "content",
)


def all_commands() -> list[tuple[str, str, str]]:
    sorts = [(f"Sort by {key}", "", f"sort_by('{key}')") for key in SORTS]
    return [*COMMANDS, *sorts]


class MemevoCommands(Provider):
    """memevo-tui's actions for the command palette."""

    async def discover(self) -> Hits:
        for title, key, action in all_commands():
            yield DiscoveryHit(
                title,
                partial(self.app.run_action, action),
                help=f"key: {key}" if key else None,
            )

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, key, action in all_commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(
                    score,
                    matcher.highlight(title),
                    partial(self.app.run_action, action),
                    help=f"key: {key}" if key else None,
                )
