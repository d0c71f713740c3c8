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

from ..core.glyphs import STATE_GLYPHS, STATE_MEANINGS

FILTER_HELP = (
    "/ filters the view you are in; esc leaves the box, and esc in the list clears the filter. "
    "Words must all match; key:value tokens narrow, commas for alternatives, and a known "
    "value may be shortened (kind:dec). A value that is not known is said under the box, "
    "and then nothing matches.\n"
    "  Memories: kind:fact,decision  status:confirmed  origin:webshop  is:pinned  is:unpinned\n"
    "            state:fresh|aging|dormant|pinned|forgotten|conflicted|disputed\n"
    "            src:<source id> (the records a learning source created or last replaced)\n"
    "            injected:0  injected:>10 (how many replayed turns injected it; n replays them)\n"
    "  History:  actor:manual|model|local|migration  verb:pin|forget|correct|undo|useful|"
    "learn|capture…  kind:  origin:\n"
    "  Learning: state:pending|running|stalled|done|failed|paused  kind:  origin:  "
    "code:timeout|rate_limit|…\n"
    "Forgotten and conflicted records are hidden unless you press a, or ask for them."
)


def key_rows(
    groups: Iterable[tuple[str, Iterable[BindingType]]], keymap: Mapping[str, str]
) -> Table:
    """Every binding with an id (dim, after what it does), under a heading for where
    it works."""
    table = Table(box=None, padding=(0, 2, 0, 0), show_header=True, header_style="bold")
    table.add_column("key", style="bold", max_width=18)
    table.add_column("does · id (for keymap.json)", ratio=1)
    for where, bindings in groups:
        rows = [b for b in bindings if isinstance(b, Binding) and b.id]
        if not rows:
            continue
        table.add_row(Text.assemble("\n", (where, "bold underline")), "")
        for b in rows:
            keys = keymap.get(b.id or "", b.key)
            if b.key_display and keys == b.key:  # one name for the binding's keys
                shown = b.key_display
            else:
                shown = " / ".join(format_key(k.strip()) for k in keys.split(","))
            does = Text(b.tooltip or b.description or b.action)
            does.append(f"  {b.id}", style="dim")
            table.add_row(f"  {shown}", does)
    return table


def legend() -> Table:
    from ..widgets.source_list import STATE_GLYPHS as SOURCE_GLYPHS
    from ..widgets.source_list import STATE_MEANINGS as SOURCE_MEANINGS

    table = Table(box=None, padding=(0, 2), show_header=False)
    for state, glyph in STATE_GLYPHS.items():
        table.add_row(Text(f"{glyph} {state}", style="bold"), STATE_MEANINGS[state])
    for key, meaning in COLUMNS:
        table.add_row(Text(key, style="bold"), meaning)
    for state, glyph in SOURCE_GLYPHS.items():
        table.add_row(Text(f"{glyph} {state}", style="bold"), f"learning: {SOURCE_MEANINGS[state]}")
    return table


COLUMNS = (
    ("FRESH ██▌··", "time left before dormancy: full just confirmed, half when aging starts, "
     "empty when dormant; in the state's colour (freshness itself never falls below its "
     "kind's floor, 0.5 to 0.7)"),
    ("K  F P D S", "kind: fact, preference, decision, project state"),
    ("C  ✓", "confirmed (blank: provisional)"),
    ("AGE  3d ↻", "since the last confirmation; ↻ confirmed again by later evidence"),
    ("E  u t s m ?", "evidence: user statement, tool observation, summary, manual "
     "correction, none"),
    ("FB  + - ✓ ✗", "feedback: useful, unhelpful | accurate, incorrect (· none)"),
)  # fmt: skip
"""The memory list's short columns."""


def reasons() -> Table:
    from store import REASONS  # the help's parts are imported when it is shown

    table = Table(box=None, padding=(0, 2), show_header=False)
    for key, meaning in REASONS.items():
        table.add_row(Text(key, style="bold"), meaning)
    return table


def terms() -> Table:
    from ..widgets.recall_pane import TERMS

    table = Table(box=None, padding=(0, 2), show_header=False)
    for key, meaning in TERMS:
        table.add_row(Text(key, style="bold"), meaning)
    return table


def help_text(
    groups: Iterable[tuple[str, Iterable[BindingType]]], keymap: Mapping[str, str]
) -> RenderableType:
    """Every key by where it works (as ``keymap`` maps it), the legend and the reasons."""
    return Group(
        Text("Keys", style="bold underline"),
        key_rows(groups, keymap),
        Text(
            "The curation keys (p, 1-4, e, r, u) work on Search results and in the recall "
            "preview too. Remap any key by id in ~/.config/memevo-tui/keymap.json, "
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
        Text("\nRecall preview: its terms", style="bold underline"),
        terms(),
    )


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark", "close", "Close", id="help.close"),
        Binding("down,j", "scroll('down')", "Down", id="help.down", show=False),
        Binding("up,k", "scroll('up')", "Up", id="help.up", show=False),
        Binding("g,home", "scroll('home')", "Top", id="help.top", show=False),
        Binding("G,end", "scroll('end')", "Bottom", id="help.bottom", show=False),
        Binding("pagedown,ctrl+d,space", "scroll('page_down')", "Page down", show=False),
        Binding("pageup,ctrl+u", "scroll('page_up')", "Page up", show=False),
    ]

    def __init__(self, content: RenderableType) -> None:
        super().__init__()
        self.content = content

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help"):
            yield Static(self.content, markup=False)

    def action_scroll(self, where: str) -> None:
        box = self.query_one("#help", VerticalScroll)
        getattr(box, f"scroll_{where}")(animate=False)

    def action_close(self) -> None:
        self.dismiss(None)
