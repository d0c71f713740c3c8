"""Since your last visit: what changed in the store while the dashboard was closed.

The last visit is the newest event the dashboard had seen and when (kept in the
app's state directory, ``core/appstate/``). Decay is a pure function of time, so
"gone dormant" compares each record's state at the visit's time with its state
now; the first line is the diff from the records as they were then (replayed from
the event log) to now. No Textual here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from store import CorruptRow, Event, Memory, Source

from .appstate import Visit
from .when import moment

if TYPE_CHECKING:
    from store import Diff

Row = Memory | CorruptRow


@dataclass(frozen=True, slots=True)
class Line:
    """One line of the summary, and the records or sources it is about."""

    text: str
    about: Literal["records", "sources", "diff"]
    ids: tuple[str, ...]
    since: tuple[float, int] | None = None
    """For the diff: the moment it starts at and the newest event seen then (it ends
    now)."""


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def diff_line(visit: Visit, d: Diff) -> Line | None:
    """The records as they were at the last visit against now, in one line (None: the
    same records)."""
    ids = (*(m.id for m in d.added), *(c.end.id for c in d.changed), *(m.id for m in d.removed))
    if not ids:
        return None
    return Line(
        f"The diff since then: {len(d.added)} added, {len(d.changed)} changed, "
        f"{len(d.removed)} removed",
        "diff",
        ids,
        (visit.at_ms, visit.rowid),
    )


def summarize(
    visit: Visit,
    events: Sequence[Event | CorruptRow],
    rows: Sequence[Row],
    sources: Sequence[Source | CorruptRow],
) -> tuple[str, list[Line]]:
    """The heading and the lines (only the ones with something in them)."""
    new: dict[str, None] = {}
    replaced: dict[str, None] = {}
    by_hand: dict[str, None] = {}
    for e in events:
        if not isinstance(e, Event) or e.rowid <= visit.rowid:
            continue
        for before, after in zip(e.before, e.after, strict=False):
            memory_id = str(after.get("id", ""))
            if before is None:
                new[memory_id] = None
            elif e.actor == "model":
                replaced[memory_id] = None
            elif e.actor == "manual":
                by_hand[memory_id] = None
    dormant = [
        m.id for m in rows if isinstance(m, Memory) and m.active and m.went_dormant(visit.at_ms)
    ]
    failing = [s for s in sources if isinstance(s, Source) and s.failed_at > visit.at_ms]
    failed = [s.id for s in failing if not s.paused]
    paused = [s.id for s in failing if s.paused]
    lines = [
        Line(_plural(len(new), "new memory", "new memories"), "records", tuple(new)),
        Line(f"{len(replaced)} replaced or confirmed by learning", "records", tuple(replaced)),
        Line(
            f"{len(by_hand)} changed by hand (pi's /memory, or memevo-tui)",
            "records",
            tuple(by_hand),
        ),
        Line(f"{len(dormant)} gone dormant", "records", tuple(dormant)),
        Line(
            _plural(len(failed), "learning run failed", "learning runs failed"),
            "sources",
            tuple(failed),
        ),
        Line(_plural(len(paused), "source paused", "sources paused"), "sources", tuple(paused)),
    ]
    return f"Since {moment(visit.at_ms)}", [line for line in lines if line.ids]
