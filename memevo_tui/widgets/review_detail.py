"""One review item in full: why it is in the queue, and its record (a pair side by side,
the words they do not share marked)."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from store import Memory

from ..core.glyphs import badge
from ..core.review import REASONS, Item, words
from ..core.secrets import spans
from ..core.text import visible


def marked_text(m: Memory, other: Memory | None, secrets: bool = False) -> Text:
    """The record's text; with ``other``, the words the other text lacks in reverse;
    with ``secrets``, each secret's span marked (X purges it)."""
    text = Text(visible(m.content, keep_newlines=True))
    if secrets:
        for _, start, end in spans(text.plain):
            text.stylize("bold reverse red", start, end)
    if other is not None:
        theirs = words(other.content)
        for word in sorted(words(m.content) - theirs, key=len, reverse=True):
            text.highlight_words([word], style="reverse", case_sensitive=False)
    return text


def describe_item(item: Item | None, side: int = 0) -> RenderableType:
    if item is None:
        return Text("Nothing selected.", style="italic")
    head = Text()
    head.append(f"{item.reason}\n", style="bold")
    head.append(f"{item.why}\n", style="italic")
    general = REASONS[item.reason]
    if general.rpartition(": ")[2] not in item.why:  # the rule, unless the item said it
        head.append(f"{general}\n", style="dim")
    head.append(
        ("\nX purge it from every copy (a preview first) · " if item.reason == "secret" else "\n")
        + "p pin · 1-4 feedback · e correct · r resolve · d forget · K keep it as it is"
        + (" · o the other record" if len(item.records) == 2 else "")
        + "\n",
        style="dim",
    )
    if len(item.records) == 1:
        m = item.records[0]
        body = Text()
        body.append(f"\n{badge(m.state)}  {m.kind} · {visible(m.scope)} · {m.id}\n\n", style="bold")
        body.append_text(marked_text(m, None, secrets=item.reason == "secret"))
        return Group(head, body)
    a, b = item.records
    table = Table(expand=True, box=None, padding=(0, 1), show_header=True, header_style="bold")
    for i, m in enumerate((a, b)):
        acting = "▸ " if i == side else "  "
        table.add_column(f"{acting}{badge(m.state)} · {m.id[:12]}", ratio=1)
    table.add_row(marked_text(a, b), marked_text(b, a))
    table.add_row(Text(visible(a.scope), style="dim"), Text(visible(b.scope), style="dim"))
    return Group(head, Text("\n(the words one text has and the other lacks are marked)",
                            style="dim"), table)  # fmt: skip


class ReviewDetail(VerticalScroll, can_focus=True):
    shown: Item | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="review-detail-body")

    def show(self, item: Item | None, side: int = 0) -> None:
        self.shown = item
        self.query_one("#review-detail-body", Static).update(describe_item(item, side))
