"""The Review view: the records that need a human, each with why, most urgent first.

One key decides (pin, feedback, correct, resolve, forget, keep) and the next item
comes up: a handled record no longer qualifies and leaves the queue, a kept one
is remembered in the app's state directory. The writes are the Memories view's,
through the main screen. ``/`` filters by reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from textual import work
from textual.app import ComposeResult
from textual.message import Message
from textual.widgets import Static

from store import Source, StoreError

from ..core.filters import Field
from ..core.review import REASONS, Item, Row, build, counts
from ..core.state import Change, DashboardState, Dialed, Failed, OwnWrite, Scoped
from ..core.text import one_line
from ..widgets.filter_box import FilterBox
from ..widgets.messages import StatusChanged, StoreFailed
from ..widgets.review_detail import ReviewDetail
from ..widgets.review_list import ReviewList
from ..widgets.split import Split
from .base import FilteringView

FIELDS = (Field("reason", ("r",), {r: r for r in REASONS}),)


class ReviewView(FilteringView):
    """Counts per reason on top, the queue beside the highlighted item in full."""

    FOCUS = "#review-list"
    FIELDS = FIELDS
    BOX = "#review-filter"

    @dataclass
    class Context(Message):
        """What the queue needs beyond the records: the sources and the conflict pairs."""

        sources: dict[str, Source]
        pairs: Sequence[tuple[str, str]]

    @dataclass
    class Built(Message):
        """A queue built in a thread, for the rebuild numbered ``generation``."""

        generation: int
        queue: list[Item] | None
        """None: the build failed (the queue shown stays as it was)."""

    def __init__(self, state: DashboardState, *, id: str | None = None) -> None:
        super().__init__(state, id=id)
        self.sources: dict[str, Source] = {}
        self.pairs: Sequence[tuple[str, str]] = ()
        self.queue: list[Item] = []
        self._generation = 0
        self._follow: str | None = None
        """The id of the record a write of ours just changed: once the queue is rebuilt,
        the cursor goes to its item, or where it left the queue, stays on its neighbour."""
        self._building = False
        """A build is running: a rebuild asked meanwhile waits for it, then builds once
        from the newest records (a thread cannot be stopped, and at 100,000 records
        each build takes seconds: pi's commits must not stack them up)."""

    def compose(self) -> ComposeResult:
        yield Static(id="review-counts", markup=False)
        yield FilterBox(
            delay=0.12,
            placeholder="/ filter: words, reason:dormant-soon,near-duplicate …",
            id="review-filter",
        )
        with Split(width=45, id="review-main"):
            yield ReviewList(id="review-list")
            yield ReviewDetail(id="review-detail")

    def activated(self) -> None:
        self.read_context()

    def state_changed(self, change: Change) -> None:
        # Hidden, it builds nothing (the queue reads every record and source): showing
        # it reads them again (``activated``).
        if isinstance(change, Failed) or not self.active:
            return
        if isinstance(change, OwnWrite) and not change.bulk:
            self._follow = self._written(change)
        if isinstance(change, Scoped):
            self._show()
        elif isinstance(change, Dialed):
            self.rebuild()
        else:
            self.read_context()  # a write or a live change: pairs and sources may move

    def _written(self, change: OwnWrite) -> str | None:
        """Of the records a write changed, the one the cursor was on (else the first)."""
        review_list = self.query_one(ReviewList)
        ids = [row.id for row in change.rows]
        item = review_list.highlighted
        acted = review_list.record(item).id if item is not None else None
        return acted if acted in ids else next(iter(ids), None)

    @property
    def busy(self) -> bool:
        review_list = self.query_one(ReviewList)
        behind = self.query_one(ReviewDetail).shown is not review_list.highlighted
        return super().busy or behind or self._building

    @work(exclusive=True, group="review", exit_on_error=False)
    async def read_context(self) -> None:
        try:
            store = await self.state.open()
            sources = {s.id: s for s in await store.sources() if isinstance(s, Source)}
            pairs = await store.conflict_pairs()
        except StoreError as exc:
            self.post_message(StoreFailed(exc))
            return
        self.post_message(self.Context(sources, pairs))

    def on_review_view_context(self, message: Context) -> None:
        self.sources, self.pairs = message.sources, message.pairs
        self.rebuild()

    def rebuild(self) -> None:
        """The queue from the records as loaded (and as of the time dial), built in a
        thread: it reads every record (about 3 s at 100,000), and keys stay live."""
        self._generation += 1
        if not self._building:
            self._start_build()

    def _start_build(self) -> None:
        self._building = True
        remembered = self.state.remembered
        kept = remembered.kept() if remembered is not None else set()
        rows = list(self.state.rows)
        log = self.state.injections
        injected = log.counts() if log is not None else None
        self._build(self._generation, rows, dict(self.sources), self.pairs, kept, injected)

    @work(exclusive=True, group="review-build", exit_on_error=False, thread=True)
    def _build(
        self,
        generation: int,
        rows: list[Row],
        sources: dict[str, Source],
        pairs: Sequence[tuple[str, str]],
        kept: set[str],
        injected: dict[str, int] | None = None,
    ) -> None:
        queue: list[Item] | None = None
        try:
            queue = build(rows, sources, pairs, kept, injected)
        finally:
            self.post_message(self.Built(generation, queue))

    def on_review_view_built(self, message: Built) -> None:
        self._building = False
        if message.generation != self._generation:  # asked again meanwhile: the newest
            self._start_build()
        elif message.queue is not None:
            self.queue = message.queue
            self._show()

    def _show(self) -> None:
        q = self.filter_query
        reasons = q.get("reason")
        scope = self.state.scope
        queue = [i for i in self.queue if any(scope.covers(m.scope) for m in i.records)]
        shown = [] if q.errors else [
            item for item in queue
            if (not reasons or item.reason in reasons)
            and all(w in " ".join(m.content for m in item.records).casefold() for w in q.words)
        ]  # fmt: skip
        review_list = self.query_one(ReviewList)
        typed = self.filter_text.strip()
        review_list.empty_text = (
            f"No item matches {one_line(typed, 60)} ({len(queue)} in the queue)."
            if typed and queue
            else "Nothing needs you: the queue is empty."
        )
        follow, self._follow = self._follow, None
        at = (
            None
            if follow is None
            else next((i for i in shown if any(m.id == follow for m in i.records)), None)
        )
        review_list.set_rows(shown, None if at is None else at.key)
        if at is not None:
            review_list.face(next(n for n, m in enumerate(at.records) if m.id == follow))
        elif follow is not None:
            self._say_neighbour(review_list.highlighted)
        per = counts(queue)
        line = " · ".join(f"{reason} {n}" for reason, n in per.items() if n) or "nothing to review"
        where = "" if scope.everything else f" in {scope.name}"
        self.query_one("#review-counts", Static).update(f"{len(queue)} to review{where}: {line}")
        self.post_message(StatusChanged())

    def _say_neighbour(self, item: Item | None) -> None:
        """The record written left the queue: say where the cursor is now."""
        if item is None:
            self.notify("Done: the queue is empty now")
            return
        record = self.query_one(ReviewList).record(item)
        self.notify(f"It left the queue. The cursor is on the next item ({item.reason}): "
                    f"{one_line(record.content, 60)}")  # fmt: skip

    def status_parts(self) -> list[str]:
        shown = len(self.query_one(ReviewList).rows)
        return [f"review: {shown} of {len(self.queue)} item(s) shown, most urgent first"]

    def on_review_list_highlighted(self, message: ReviewList.Highlighted) -> None:
        review_list = self.query_one(ReviewList)
        self.query_one(ReviewDetail).show(message.row, review_list.side)

    def on_review_list_kept(self, message: ReviewList.Kept) -> None:
        remembered = self.state.remembered
        if remembered is None or not remembered.keep(message.item.key):
            self.notify("Could not remember that (no state directory)", severity="warning")
            return
        self.notify("Kept as it is: it leaves the queue until the record changes")
        self.rebuild()

    # ------------------------------------------------------------ the filter

    def refilter(self) -> None:
        self._show()
