"""Where a memory came from: each source that shaped it, its text with the passage that
states the claim highlighted, and the turns of pi's session around it (``enter`` on a
record, or ``P``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from store import NOT_STATED, Provenance, Source, SourceLink, StoreError

from ..core.text import one_line, visible

Loaded = tuple[Provenance, list[dict[str, Any]]]
"""The record's provenance, and each source's place in pi's session (``session_context``)."""
Loader = Callable[[], Awaitable[Loaded]]

HIGHLIGHT = "bold reverse"
TURNS = 3
"""Turns of the session shown on each side of a source's entry."""


def render(loaded: Loaded) -> Text:
    """The whole pane, from untrusted text: built as ``Text``, never as markup."""
    p, contexts = loaded
    out = Text()
    out.append("esc closes · j/k scroll · y copies the session entry\n\n", style="dim")
    out.append("The memory\n", style="bold underline")
    out.append(visible(p.record.content, keep_newlines=True) + "\n")
    verdict = p.grounded
    if p.corrected is not None:
        out.append(f"\n✎ {p.verdict()}\n", style="bold")
        out.append("  earlier text: ", style="dim")
        out.append(visible(p.corrected.earlier, keep_newlines=True) + "\n")
    elif verdict is False:
        out.append(f"\n✗ {NOT_STATED}: the model inferred it, or invented it\n",
                   style="bold red")  # fmt: skip
    if not p.sources:
        out.append("\nNo source: this record names none (imported, or written by hand).\n",
                   style="italic")  # fmt: skip
    of = " (the earlier text's)" if p.corrected is not None else ""
    for link, context in zip(p.sources, contexts, strict=True):
        _source(out, link, context, of)
    if p.manual:
        out.append("\nManual changes\n", style="bold underline")
        for m in p.manual:
            out.append(f"  {one_line(m.at)}  {one_line(m.reason)}\n")
    if not p.logged:
        out.append("\nHistory: not in the event log\n", style="italic")
    return out


def _source(out: Text, link: SourceLink, context: dict[str, Any], of: str = "") -> None:
    row = link.source if isinstance(link.source, Source) else None
    out.append("\n")
    out.append(f"Source {one_line(link.source_id)}\n", style="bold underline")
    when = f"{row.created_at} · {row.state}" if row else "not in the store"
    out.append(f"  {link.kind} · {one_line(when)} · {one_line(', '.join(link.roles))}",
               style="dim")  # fmt: skip
    if link.models:
        out.append(" · by ", style="dim")
        out.append(one_line(", ".join(link.models)))
    out.append("\n")
    passage = link.passage
    if passage is None:
        out.append("  No text is kept for this source.\n", style="italic")
        return
    if passage.section and passage.coverage > 0:
        out.append("  under ", style="dim")
        out.append(f"{one_line(passage.section)}\n", style="bold")
    if passage.grounded:
        out.append(f"  ✓ {passage.coverage_line()}{of}\n", style="green")
    else:
        out.append(f"  ✗ {NOT_STATED}{of} (closest: {passage.coverage_line()})\n", style="red")
    text = link.text
    marked = passage if passage.coverage > 0 else None
    body = Text("  ")
    if marked is None:
        body.append(visible(text, keep_newlines=True))
    else:
        body.append(visible(text[: marked.start], keep_newlines=True))
        body.append(visible(text[marked.start : marked.end], keep_newlines=True), HIGHLIGHT)
        body.append(visible(text[marked.end :], keep_newlines=True))
    out.append_text(Text("\n  ").join(body.split("\n")))
    out.append("\n")
    if "problem" in context:
        out.append(f"  Session: {one_line(context['problem'])}\n", style="italic")
        return
    corrupt = context.get("corruptLines", 0)
    out.append(f"  Session {one_line(context['name'])} · entry {one_line(context['entry'])}",
               style="dim")  # fmt: skip
    out.append(f" · {corrupt} corrupt line(s) skipped\n" if corrupt else "\n", style="dim")
    for turn in context["before"]:
        _turn(out, turn, False)
    _turn(out, context["at"], True)
    for turn in context["after"]:
        _turn(out, turn, False)


def _turn(out: Text, turn: dict[str, Any], here: bool) -> None:
    out.append("  ▶ " if here else "    ", style="bold")
    out.append(f"{one_line(turn['role'])}: ", style="bold" if here else "dim")
    out.append(one_line(turn["text"], 200) + "\n")


class ProvenanceScreen(ModalScreen[None]):
    """A record's provenance, read by ``load`` in a worker."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Close", id="provenance.close"),
        Binding("down,j", "scroll('down')", "Down", id="provenance.down", show=False),
        Binding("up,k", "scroll('up')", "Up", id="provenance.up", show=False),
        Binding("g,home", "scroll('home')", "Top", id="provenance.top", show=False),
        Binding("G,end", "scroll('end')", "Bottom", id="provenance.bottom", show=False),
        Binding(
            "pagedown,ctrl+d,space",
            "scroll('page_down')",
            "Page down",
            id="provenance.page_down",
            show=False,
        ),
        Binding(
            "pageup,ctrl+u", "scroll('page_up')", "Page up", id="provenance.page_up", show=False
        ),
        Binding(
            "y",
            "yank",
            "Yank",
            id="provenance.yank",
            tooltip="Copy the session file's path and the entry id",
        ),
    ]

    def __init__(self, memory_id: str, load: Loader) -> None:
        super().__init__()
        self.memory_id = memory_id
        self._load = load
        self.loaded: Loaded | None = None

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="provenance"):
            yield Static(Text("Reading where it came from…", style="italic"), markup=False,
                         id="provenance-body")  # fmt: skip

    def on_mount(self) -> None:
        self.run_worker(self._read(), exclusive=True, exit_on_error=False)

    async def _read(self) -> None:
        body = self.query_one("#provenance-body", Static)
        try:
            self.loaded = await self._load()
        except StoreError as exc:
            body.update(Text(f"Cannot read where it came from: {exc}", style="red"))
            return
        body.update(render(self.loaded))

    @property
    def plain(self) -> str:
        return "" if self.loaded is None else render(self.loaded).plain

    def action_scroll(self, where: str) -> None:
        box = self.query_one("#provenance", VerticalScroll)
        getattr(box, f"scroll_{where}")(animate=False)

    def action_yank(self) -> None:
        places = [
            f"{c['file']}#{c['entry']}"
            for c in (self.loaded[1] if self.loaded else [])
            if "entry" in c
        ]
        if not places:
            self.notify("No session entry to copy", severity="warning")
            return
        self.app.copy_to_clipboard("\n".join(places))
        self.notify(f"Copied {len(places)} session entr{'y' if len(places) == 1 else 'ies'}",
                    markup=False)  # fmt: skip

    def action_close(self) -> None:
        self.dismiss(None)
