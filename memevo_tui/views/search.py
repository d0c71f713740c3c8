"""The Search view: ``/memory search`` as pi runs it, over the loaded records.

Curation keys on a result are handled by the Memories view, through the App.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual import work
from textual.app import ComposeResult
from textual.message import Message
from textual.widgets import Input

from store import Recall, StoreError

from ..core.state import Change, DashboardState, Dialed, LiveChanged, OwnWrite, Row, Scoped
from ..core.text import one_line
from ..widgets.debounced_input import DebouncedInput
from ..widgets.memory_detail import MemoryDetail
from ..widgets.memory_list import MemoryList
from ..widgets.messages import StatusChanged, StoreFailed
from ..widgets.split import Split
from .base import BaseView


class SearchView(BaseView):
    """A query box, the results in pi's order, and the highlighted result in full."""

    FOCUS = "#search-results"
    BOX = "#search-input"
    LIST = "#search-results"
    TYPE_TO_BEGIN = True
    DELAY = 0.15
    """Seconds of typing pause before the search runs."""

    @dataclass
    class Results(Message):
        """A search finished."""

        result: Recall

    def __init__(self, state: DashboardState, *, id: str | None = None) -> None:
        super().__init__(state, id=id)
        self._shown = ""  # the query whose results are on screen
        self._all_found = 0  # how many pi found, in every project

    def compose(self) -> ComposeResult:
        yield DebouncedInput(
            delay=self.DELAY,
            placeholder="/ to search memories (dormant included)",
            id="search-input",
        )
        with Split(width=30, id="search-main"):
            yield MemoryList(id="search-results")
            yield MemoryDetail(id="search-detail", load_events=self.state.record_events)

    def on_mount(self) -> None:
        results = self.query_one(MemoryList)
        results.empty_text = "/ and a query: the records pi's /memory search returns for it."
        results.sort_key = None  # results come in relevance order

    def handover(self, to: str) -> tuple[str, tuple[object, ...]] | None:
        """From a search to the recall preview: explain the search."""
        if to == "recall" and self.query_text.strip():
            return ("explain_search", (self.query_text,))
        return None

    @property
    def query_text(self) -> str:
        return self.query_one("#search-input", Input).value

    @property
    def highlighted(self) -> Row | None:
        return self.query_one(MemoryList).highlighted

    @property
    def busy(self) -> bool:
        box, detail = self.query_one(DebouncedInput), self.query_one(MemoryDetail)
        results = self.query_one(MemoryList)
        return (
            super().busy
            or box.pending
            or self._shown != self.query_text
            or not detail.caught_up_with(results.highlighted)
        )

    def status_parts(self) -> list[str]:
        if not self._shown.strip():
            return ["search: / and a query (dormant records included, as /memory search)"]
        found = len(self.query_one(MemoryList).rows)
        scope = self.state.scope
        if scope.everything:
            return [f"{found} result(s) for {one_line(self._shown, 40)!r}, in pi's order"]
        return [f"{found} of pi's {self._all_found} result(s) for {one_line(self._shown, 40)!r} "
                f"in {scope.name}, in pi's order"]  # fmt: skip

    def state_changed(self, change: Change) -> None:
        if isinstance(change, Dialed | Scoped) and self.query_text.strip():
            self.run_search(self.query_text)
        if isinstance(change, OwnWrite | LiveChanged):
            results = self.query_one(MemoryList)
            for row in change.rows:
                results.replace_row(row.id, row)
            if (isinstance(change, OwnWrite) or change.rows) and (self.query_text.strip()):
                self.run_search(self.query_text)

    def on_debounced_input_settled(self, event: DebouncedInput.Settled) -> None:
        event.stop()
        if event.stale:  # typed on, or submitted, since
            return
        self.run_search(event.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.run_search(event.value)
        self.focus_now(self.query_one(MemoryList))

    @work(exclusive=True, group="search", exit_on_error=False)
    async def run_search(self, query: str) -> None:
        try:
            result = await self.state.recall(query, "search")
        except StoreError as exc:
            self.post_message(StoreFailed(exc))
            return
        self.post_message(self.Results(result))

    def on_search_view_results(self, message: Results) -> None:
        result = message.result
        same = result.prompt == self._shown  # asked again after a change: keep the record
        self._shown = result.prompt
        results = self.query_one(MemoryList)
        results.empty_text = (
            f"No record matches '{one_line(result.prompt, 60)}' as pi's /memory search "
            f"reads it, of {len(self.state.rows)} (i shows why)."
            if result.prompt.strip()
            else "/ and a query: the records pi's /memory search returns for it."
        )
        scope = self.state.scope
        self._all_found = len(result.memories)
        results.set_rows([m for m in result.memories if scope.covers(m.scope)], top=not same)
        self.post_message(StatusChanged())

    def on_memory_list_highlighted(self, message: MemoryList.Highlighted) -> None:
        message.stop()
        self.query_one(MemoryDetail).follow(message.row)
