"""The diff between two moments, as a list: what was added, changed and removed.

``D`` (or the palette's "Diff…") asks for the two moments; "since your last
visit" opens it from the visit to now. ``enter`` shows a record in the memory
list as it was at the diff's end (a removed one as it was at its start), ``u``
undoes the record's newest change in the range as ``u`` in History does, and
``y``/``Y`` copy its id or text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Footer, Static

from store import Diff, Event, StoreError, parse_ms

from ..core.state import DashboardState
from ..core.text import field_text, one_line
from ..core.when import HELP, BadMoment, moment, parse_moment
from ..curator import Curator
from ..dialogs.prompt import PromptScreen
from ..widgets.diff_list import DiffList, DiffRow, diff_rows
from ..widgets.messages import NOW, ShowRecord

if TYPE_CHECKING:
    from ..app.dashboard import Dashboard


@dataclass(frozen=True, slots=True)
class Opened:
    """enter on a record: show it as of ``when`` (None: now)."""

    memory_id: str
    when: float | None


def describe(row: DiffRow) -> Text:
    """The highlighted record: what happened to it, and each changed field in full."""
    text = Text()
    text.append(f"{row.what} ", style="bold")
    text.append(one_line(row.id))
    text.append(f"  {row.record.kind} · {row.record.status} · {row.record.layer}\n")
    if row.what == "changed":
        for name, (before, after) in row.fields.items():
            text.append(f"{name}: ", style="bold")
            text.append(field_text(before), style="red")
            text.append(" → ")
            text.append(field_text(after), style="green")
            text.append("\n")
    text.append(one_line(row.record.content, 400))
    return text


class DiffScreen(Screen[Opened | None]):
    """A summary line, the records, and the highlighted one's fields in full."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Close", id="diff.close", tooltip="Close the diff"),
    ]

    def __init__(self, state: DashboardState, diff: Diff, *, now: bool) -> None:
        super().__init__()
        self.state = state
        self.diff = diff
        self.to_now = now
        """The diff ends now (enter then shows the records as they are)."""

    @property
    def span(self) -> str:
        end = "now" if self.to_now else moment(self.diff.end)
        return f"{moment(self.diff.start)} → {end}"

    def compose(self) -> ComposeResult:
        d = self.diff
        yield Static(
            f"Diff {self.span}: {len(d.added)} added · {len(d.changed)} changed · "
            f"{len(d.removed)} removed (from the event log)",
            id="diff-summary",
            markup=False,
        )
        yield DiffList(id="diff-list")
        yield Static(id="diff-detail", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        rows = self.query_one(DiffList)
        rows.set_rows(diff_rows(self.diff))
        self.set_focus(rows)

    def on_diff_list_highlighted(self, message: DiffList.Highlighted) -> None:
        row = message.row
        detail = self.query_one("#diff-detail", Static)
        detail.update(describe(row) if isinstance(row, DiffRow) else "")

    def on_diff_list_opened(self, message: DiffList.Opened) -> None:
        row = message.row
        if row.what == "removed":  # not there at the end: as it was at the start
            when: float | None = self.diff.start
        else:
            when = None if self.to_now else self.diff.end
        self.dismiss(Opened(row.id, when))

    def on_diff_list_undo_wanted(self, message: DiffList.UndoWanted) -> None:
        self._undo(message.row)

    @work(group="diff-undo", exclusive=True, exit_on_error=False)
    async def _undo(self, row: DiffRow) -> None:
        """The record's newest event in the range, undone after the History's preview."""
        curator = getattr(self.app, "curator", None)
        assert isinstance(curator, Curator)
        if curator.refused():
            return
        try:
            store = await self.state.open()
            found = await store.events(memory_id=row.id, limit=None)
        except StoreError as exc:
            self.notify(f"Could not read its events: {exc}", title="Undo", severity="error")
            return
        d = self.diff
        event = next(
            (
                e
                for e in found
                if isinstance(e, Event) and d.start < (parse_ms(e.at) or 0.0) <= d.end
            ),
            None,
        )
        if event is None:
            self.notify("No event of this record in the range to undo", severity="warning")
            return
        curator.undo_event(event.id, f"event {event.id} ({one_line(event.reason, 60)})")

    def action_close(self) -> None:
        self.dismiss(None)


# ------------------------------------------------------------ opened from the registry


def open_diff(host: Dashboard, start: float | None = None, start_rowid: int | None = None) -> None:
    """``D``: ask for two moments (FROM [TO], TO now by default), then show the diff;
    with ``start`` (a last visit), the diff from then (or just after event
    ``start_rowid``) to now, without asking."""
    if start is not None:
        host.run_worker(_diff(host, start, None, start_rowid), group="diff", exclusive=True)
        return

    def done(text: str | None) -> None:
        if text is None or not text.strip():
            return
        words = text.split()
        clock = host.state.clock()
        try:
            if len(words) > 2:
                raise BadMoment("Give one or two moments: FROM [TO]")
            ends = [parse_moment(w, clock) for w in words]
        except BadMoment as exc:
            host.notify(str(exc), title="Diff", severity="error", markup=False)
            return
        start = clock if ends[0] is None else ends[0]
        end = ends[1] if len(ends) == 2 else None
        if end is not None and end >= clock:
            end = None
        if start > (clock if end is None else end):
            host.notify("FROM is after TO: nothing to diff", title="Diff", severity="error")
            return
        host.run_worker(_diff(host, start, end, None), group="diff", exclusive=True)

    host.app.push_screen(
        PromptScreen("Diff between", placeholder=f"FROM [TO]: {HELP}",
                     hint="FROM [TO], TO now by default; e.g. -7d, or 2026-10-01 2026-11-01"),
        done,
    )  # fmt: skip


async def _diff(host: Dashboard, start: float, end: float | None, start_rowid: int | None) -> None:
    try:
        found = await host.state.diff(start, end, start_rowid=start_rowid)
    except StoreError as exc:
        host.notify(f"No diff: {exc}", title="Diff", severity="error")
        return

    def opened(picked: Opened | None) -> None:
        """A record shown now, or as it was then (the dial turned there)."""
        if picked is not None:
            back = "D shows the diff again" if picked.when is None else "0 returns to now"
            dial = NOW if picked.when is None else picked.when
            host.post_message(ShowRecord(picked.memory_id, back, dial=dial))

    host.app.push_screen(DiffScreen(host.state, found, now=end is None), opened)
