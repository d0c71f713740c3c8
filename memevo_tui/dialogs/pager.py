"""A text too long to lay out at once (a 50 MB prompt), page by page: each page is at
most ``SHOWN_CHARS`` characters, made visible as every text of a file is, so opening
it costs what one page costs and keys stay live."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Static

from ..core.text import SHOWN_CHARS, megabytes, one_line, visible
from .dialog import Dialog


class Pager(Dialog[None]):
    """``title`` and ``text``, one page at a time (esc closes)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Close", id="pager.close"),
        Binding("space,pagedown,right,l", "page(1)", "Next page", id="pager.next"),
        Binding("b,pageup,left,h", "page(-1)", "Previous page", id="pager.previous"),
        Binding("g,home", "page_at(0)", "First page", id="pager.first"),
        Binding("G,end", "page_at(-1)", "Last page", id="pager.last"),
        Binding("j,down", "scroll(1)", "Down", id="pager.down", show=False),
        Binding("k,up", "scroll(-1)", "Up", id="pager.up", show=False),
    ]

    def __init__(self, title: str, text: str, page: int = SHOWN_CHARS) -> None:
        super().__init__()
        self.title_text = title
        self.text = text
        self.size_words = megabytes(len(text.encode("utf-8", "surrogatepass")))
        self.per_page = page
        self.pages = max(1, -(-len(text) // page))
        self.page = 0

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(id="dialog-title")
            with VerticalScroll(id="pager-body", classes="-body"):
                yield Static(id="pager-text")
            yield Static(
                "space/b: next/previous page · g/G: first/last · j/k: scroll · esc closes",
                id="prompt-hint",
            )

    def on_mount(self) -> None:
        super().on_mount()
        self._show()

    def _show(self) -> None:
        start = self.page * self.per_page
        chunk = self.text[start : start + self.per_page]
        head = f"{one_line(self.title_text, 60)}: page {self.page + 1:,} of {self.pages:,} "
        self.query_one("#dialog-title", Static).update(Text(f"{head}({self.size_words})"))
        self.query_one("#pager-text", Static).update(Text(visible(chunk, keep_newlines=True)))
        self.query_one("#pager-body", VerticalScroll).scroll_home(animate=False)

    def action_page(self, step: int) -> None:
        self.action_page_at(min(self.pages - 1, max(0, self.page + step)))

    def action_page_at(self, page: int) -> None:
        page = self.pages - 1 if page < 0 else page
        if page != self.page:
            self.page = page
            self._show()

    def action_scroll(self, step: int) -> None:
        body = self.query_one("#pager-body", VerticalScroll)
        body.scroll_relative(y=step, animate=False)

    def action_close(self) -> None:
        self.dismiss(None)
