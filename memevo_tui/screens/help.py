"""The help screen: every key (as currently mapped), the state legend and the filter syntax."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import ClassVar

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.keys import format_key
from textual.screen import ModalScreen
from textual.widgets import Static

from store.recall import REASONS

from ..glyphs import STATE_GLYPHS, STATE_MEANINGS
from ..widgets.event_list import EventList
from ..widgets.memory_list import MemoryList
from ..widgets.recall_list import RecallList
from ..widgets.recall_pane import RecallPane
from ..widgets.source_list import SourceList
from ..widgets.virtual_list import VirtualList
from .confirm import ConfirmScreen
from .correct import CorrectScreen

FILTER_HELP = (
    "Type / in the memory list. Words match content, id, origin and search terms "
    "(all must match). Narrow with key:value tokens, commas for alternatives:\n"
    "  kind:fact,decision   status:confirmed   origin:webshop\n"
    "  state:fresh|aging|dormant|pinned|forgotten|conflicted|disputed   is:pinned   is:unpinned\n"
    "  src:<source id>   records a learning source created or last replaced\n"
    "Forgotten and conflicted records are hidden unless you press a, or ask for them."
)


def key_rows(
    groups: Iterable[tuple[str, Iterable[BindingType]]], keymap: Mapping[str, str]
) -> Table:
    table = Table(box=None, padding=(0, 2), show_header=True, header_style="bold")
    table.add_column("where")
    table.add_column("key", style="bold")
    table.add_column("does")
    table.add_column("id", style="dim")
    for where, bindings in groups:
        for b in bindings:
            if not isinstance(b, Binding) or not b.id:
                continue
            keys = keymap.get(b.id, b.key)
            shown = " / ".join(
                b.key_display if b.key_display and keys == b.key else format_key(k.strip())
                for k in keys.split(",")
            )
            table.add_row(where, shown, b.tooltip or b.description or b.action, b.id)
    return table


def legend() -> Table:
    table = Table(box=None, padding=(0, 2), show_header=False)
    for state, glyph in STATE_GLYPHS.items():
        table.add_row(Text(f"{glyph} {state}", style="bold"), STATE_MEANINGS[state])
    table.add_row(Text("█████", style="bold"), "freshness bar: full at 1, fading with age")
    table.add_row(Text("↻11-25", style="bold"), "CONF: confirmed by later evidence after UPDATED")
    table.add_row(Text("+ - ✓ ✗", style="bold"), "FB: useful, unhelpful | accurate, incorrect")
    return table


def reasons() -> Table:
    table = Table(box=None, padding=(0, 2), show_header=False)
    for key, meaning in REASONS.items():
        table.add_row(Text(key, style="bold"), meaning)
    return table


def help_text(app_bindings: Iterable[BindingType], keymap: Mapping[str, str]) -> RenderableType:
    """Every key by where it works (as ``keymap`` maps it), the legend and the reasons."""
    groups: list[tuple[str, Iterable[BindingType]]] = [
        ("anywhere", app_bindings),
        ("lists", VirtualList.BINDINGS),
        ("memory list", MemoryList.BINDINGS),
        ("history", EventList.BINDINGS),
        ("learning", SourceList.BINDINGS),
        ("recall preview", [*RecallPane.BINDINGS, *RecallList.BINDINGS]),
        ("dialogs", ConfirmScreen.BINDINGS),
        ("editor", CorrectScreen.BINDINGS),
    ]
    return Group(
        Text("Keys", style="bold underline"),
        key_rows(groups, keymap),
        Text(
            "Remap any key by id in ~/.config/memevo-tui/keymap.json, "
            'e.g. {"memory.forget": "x"}.\n',
            style="italic",
        ),
        Text("States", style="bold underline"),
        legend(),
        Text("\nFilter", style="bold underline"),
        Text(FILTER_HELP),
        Text("\nRecall preview (i): why a record is left out", style="bold underline"),
        Text(
            "pi scores each record by the prompt words it contains (rarer words weigh more), "
            "multiplies by its quality, and injects the best three; a record must pass every "
            "gate below first.",
            style="italic",
        ),
        reasons(),
    )


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark", "close", "Close", id="help.close"),
    ]

    def __init__(self, content: RenderableType) -> None:
        super().__init__()
        self.content = content

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help"):
            yield Static(self.content, markup=False)

    def action_close(self) -> None:
        self.dismiss(None)
