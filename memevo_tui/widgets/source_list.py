"""The learning queue: every captured source and its job, newest first."""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.message import Message

from store import CorruptRow, Source, iso

from ..core.text import one_line
from ..core.view import origin_name
from .virtual_list import Column, VirtualList

SourceRow = Source | CorruptRow
STATE_GLYPHS = {
    "pending": "…",
    "running": "▶",
    "stalled": "⊘",
    "done": "✓",
    "failed": "✗",
    "paused": "‖",
}
STATE_MEANINGS = {
    "pending": "waiting for a learning run",
    "running": "a learning run holds its lease now",
    "stalled": "running, but its lease expired: the run died (a crash or a kill) without "
    "finishing; pi takes it up again at its next start",
    "done": "learned from (or retired)",
    "failed": "its last run failed; it is retried after a backoff",
    "paused": "failed too often, or its failure needs you: resume it in pi "
    "(/memory evolve <id>; y copies the command)",
}


def source_state(s: Source, now_ms: float) -> str:
    if s.paused:
        return "paused"
    if s.state == "running" and s.lease <= now_ms:
        return "stalled"
    return s.state


def _until_it_reads_differently(left_ms: float) -> float:
    """Milliseconds until ``countdown`` with ``left_ms`` to go next changes: seconds
    under 90 s, minutes under 90 min, hours above, each rounded down: it changes as
    soon as less than a whole unit more is left, or the next range is reached."""
    if left_ms < 90_000:
        return left_ms % 1000 + 1
    floor, step = (90_000, 60_000) if left_ms < 5_400_000 else (5_400_000, 3_600_000)
    return min(left_ms % step + 1, left_ms - floor + 1)


def next_change(rows: Iterable[SourceRow], now_ms: float) -> float | None:
    """Milliseconds until a row reads differently because the clock moved on: a lease
    runs out (running becomes stalled), a retry falls due, or a countdown ticks down.
    None: no row depends on the clock."""
    soonest: float | None = None
    for row in rows:
        if isinstance(row, CorruptRow) or row.paused:
            continue
        if row.state == "running":
            deadline = row.lease
        elif row.state in ("pending", "failed"):
            deadline = row.retry_at
        else:
            continue
        left = deadline - now_ms
        if left <= 0:
            continue
        wait = _until_it_reads_differently(left)
        soonest = wait if soonest is None else min(soonest, wait)
    return soonest


def countdown(target_ms: int, now_ms: float) -> str:
    if target_ms <= 0:
        return ""
    seconds = int((target_ms - now_ms) / 1000)
    if seconds <= 0:
        return "due"
    if seconds < 90:
        return f"{seconds}s"
    if seconds < 5400:
        return f"{seconds // 60}m"
    return f"{seconds // 3600}h"


def source_cells(row: SourceRow, now_ms: float) -> dict[str, str]:
    if isinstance(row, CorruptRow):
        return {"state": "¤ corrupt", "id": f"{one_line(row.id)}: {row.reason}"}
    state = source_state(row, now_ms)
    lease = ""
    if row.state == "running":
        lease = "expired" if row.lease <= now_ms else countdown(row.lease, now_ms)
    failures = f"{row.failures}/5 {row.last_error}" if row.failures or row.last_error else ""
    return {
        "state": f"{STATE_GLYPHS[state]} {state}",
        "kind": row.kind,
        "origin": one_line(origin_name(row.scope)),
        "created": iso(_parse(row.created_at, now_ms))[5:16].replace("T", " "),
        "attempt": str(row.attempt),
        "failures": failures,
        "retry": (
            countdown(row.retry_at, now_ms)
            if row.state in ("pending", "failed") and not row.paused
            else ""
        ),
        "lease": lease,
        "calls": str(row.calls),
        "time": f"{row.call_ms / 1000:.0f}s" if row.call_ms else "",
        "models": one_line(", ".join(m.split("/", 1)[-1] for m in row.call_models)),
        "corrections": str(row.corrections) if row.corrections else "",
        "diagnostic": diagnostic_summary(row.diagnostic),
        "id": one_line(row.id),
    }


def diagnostic_summary(diagnostic: dict[str, object]) -> str:
    """The diagnostic's reason, error class, HTTP status and stop reason, briefly."""
    parts = [
        str(diagnostic[key])
        for key in ("reason", "errorClass", "httpStatus", "stopReason")
        if key in diagnostic
    ]
    return one_line(" ".join(parts))


def _parse(value: str, fallback: float) -> float:
    from store import parse_ms

    ms = parse_ms(value)
    return ms if ms is not None else fallback


class SourceList(VirtualList[SourceRow]):
    """Sources newest first, with their job state, retries and costs."""

    COLUMNS = (
        Column("state", "STATE", 10),
        Column("kind", "KIND", 8),
        Column("origin", "ORIGIN", 10),
        Column("created", "CREATED", 11),
        Column("attempt", "ATT", 3),
        Column("failures", "FAILURES", 18),
        Column("retry", "RETRY", 5),
        Column("lease", "LEASE", 7),
        Column("calls", "CALLS", 5),
        Column("time", "TIME", 5),
        Column("models", "MODELS", 16),
        Column("corrections", "COR", 3),
        Column("diagnostic", "DIAGNOSTIC", 14),
        Column("id", "SOURCE", 0),
    )
    DROP_ORDER = (
        "models", "corrections", "time", "lease", "diagnostic", "calls", "origin", "attempt",
        "created",
    )  # fmt: skip
    CLASS_PREFIX = "source-list"
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "source-list--header",
        "source-list--cursor",
        "source-list--empty",
        "source-list--pending",
        "source-list--running",
        "source-list--stalled",
        "source-list--done",
        "source-list--failed",
        "source-list--paused",
        "source-list--corrupt",
    }

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "enter",
            "open",
            "Its records",
            id="learning.open",
            tooltip="Show the records this source created or last replaced",
        ),
    ]

    class Highlighted(VirtualList.Highlighted):
        """The highlighted source changed."""

    class OpenRequested(Message):
        """Show the records of the highlighted source in the memory list."""

        def __init__(self, source_list: SourceList, source_id: str) -> None:
            super().__init__()
            self.source_list = source_list
            self.source_id = source_id

        @property
        def control(self) -> SourceList:
            return self.source_list

    def action_open(self) -> None:
        row = self.highlighted
        if isinstance(row, Source):
            self.post_message(self.OpenRequested(self, row.id))

    def __init__(self, *, name: str | None = None, id: str | None = None) -> None:
        super().__init__(name=name, id=id)
        self.now_ms = 0.0
        self.empty_text = "No sources."

    def row_key(self, row: SourceRow) -> str:
        return row.id

    def cells(self, row: SourceRow) -> dict[str, str]:
        return source_cells(row, self.now_ms)

    def cell_class(self, row: SourceRow, column: str) -> str | None:
        if isinstance(row, CorruptRow):
            return "corrupt"
        state = source_state(row, self.now_ms)
        if column == "state":
            return state
        if column == "failures" and (row.failures or row.last_error):
            return "paused" if state == "paused" else "failed"
        return None

    def make_highlighted(self, row: SourceRow | None) -> SourceList.Highlighted:
        return self.Highlighted(self, row)

    def yank_text(self, row: SourceRow, long: bool) -> tuple[str, str] | None:
        if isinstance(row, CorruptRow):
            return (row.raw, "the corrupt row as stored") if long else (row.id, "its id")
        if long:
            return row.content, "its captured text"
        if row.paused:  # what the user does next: resume it in pi
            return f"/memory evolve {row.id}", "the pi command that resumes it"
        return row.id, "its id"
