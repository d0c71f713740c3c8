"""One source: its job, its model calls, and the records its runs changed."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from store import (
    NOT_STATED,
    CorruptRow,
    Event,
    ModelCall,
    Source,
    best_passage,
    iso,
    js_json,
    searched_text,
)

from ..core.text import visible
from .source_list import STATE_GLYPHS, STATE_MEANINGS, source_state


def describe_source(
    source: Source | CorruptRow | None,
    calls: Sequence[ModelCall],
    events: Sequence[Event | CorruptRow],
    now_ms: float = 0.0,
) -> RenderableType:
    if source is None:
        return Text("No source selected.", style="italic")
    if isinstance(source, CorruptRow):
        return Text(f"Corrupt source {visible(source.id)}: {source.reason}", style="italic")
    head = Text()
    head.append(visible(source.id), style="bold")
    head.append(f"\n{source.kind} from ")
    head.append(visible(source.scope))
    head.append(f", captured {source.created_at}\n")
    state = source_state(source, now_ms)
    head.append(f"{STATE_GLYPHS[state]} {state}", style="bold")
    head.append(f": {STATE_MEANINGS[state]}\n", style="italic")
    if source.state == "running" and source.lease:
        ago = (now_ms - source.lease) / 60_000
        when = iso(source.lease)[:19].replace("T", " ")
        head.append(
            f"lease expired {when} UTC ({ago:.0f} min ago)\n"
            if ago >= 0
            else f"lease held until {when} UTC\n",
            style="bold" if ago >= 0 else "",
        )
    head.append(
        f"job state {source.state}{' (paused)' if source.paused else ''}; "
        f"attempts {source.attempt}; "
        f"failures {source.failures}/5; output failures {source.output_failures}/3; "
        f"calls {source.calls}; {source.call_ms / 1000:.1f}s in calls; "
        f"corrections {source.corrections}\n"
    )
    if source.last_error:
        head.append(f"last error {source.last_error}\n", style="bold")
    if source.diagnostic:
        head.append("diagnostic ", style="bold")
        head.append(visible(js_json(source.diagnostic)) + "\n")
    table = _calls_table(calls)
    note = Text(
        "" if calls else "No model calls in the last 24 h (pi prunes older finished calls).\n",
        style="italic",
    )
    text = searched_text(source)
    changed = Text("\nRecords its runs changed\n", style="bold")
    any_change = False
    spans: list[tuple[int, int]] = []
    for e in events:
        if isinstance(e, CorruptRow):
            continue
        for before, after in zip(e.before, e.after, strict=False):
            any_change = True
            verb = "created" if before is None else f"→ {after.get('status')}"
            content = str(after.get("content", ""))
            changed.append(f"  {e.actor:<6} {visible(str(after.get('id')))} {verb}: ")
            changed.append(visible(content)[:100] + "\n")
            passage = best_passage(content, text) if text else None
            if passage is None:
                continue
            if passage.grounded:
                spans.append((passage.start, passage.end))
                changed.append(f"         ✓ {passage.coverage_line()}: ", style="green")
                changed.append(visible(passage.text)[:100] + "\n")
            else:
                changed.append(f"         ✗ {NOT_STATED}\n", style="red")
    if not any_change:
        changed.append("  none (yet)\n", style="italic")
    return Group(head, table, note, changed, _source_text(text, spans))


def _calls_table(calls: Sequence[ModelCall]) -> Table:
    """The source's model calls, one row each."""
    table = Table(title="Model calls", title_justify="left", expand=True, box=None)
    for column in (
        "#", "model", "provider", "outcome", "code", "in", "out", "reserved", "charged", "took",
    ):  # fmt: skip
        table.add_column(column, no_wrap=column not in ("model", "provider"), overflow="fold")
    for c in calls:
        took = f"{(c.finished_at - c.at) / 1000:.1f}s" if c.finished_at else "running"
        table.add_row(
            str(c.attempt),
            Text(visible(c.model)),
            Text(visible(c.provider)),
            c.outcome,
            c.code or "",
            "" if c.input_tokens is None else str(c.input_tokens),
            "" if c.output_tokens is None else str(c.output_tokens),
            "" if c.reserved_usd is None else f"${c.reserved_usd:.4f}",
            "" if c.charged_usd is None else f"${c.charged_usd:.4f}",
            took,
        )
    return table


def _source_text(text: str, spans: list[tuple[int, int]]) -> Text:
    """The source's text, the passages its records were found in highlighted."""
    out = Text("\nIts text\n", style="bold")
    if not text:
        out.append("  none kept\n", style="italic")
        return out
    at = 0
    for start, end in sorted(set(spans)):
        if start < at:
            continue
        out.append(visible(text[at:start], keep_newlines=True))
        out.append(visible(text[start:end], keep_newlines=True), style="bold reverse")
        at = end
    out.append(visible(text[at:], keep_newlines=True) + "\n")
    return out


class SourceDetail(VerticalScroll, can_focus=True):
    body: RenderableType = ""
    shown: Source | CorruptRow | None = None
    """The source it shows."""

    def compose(self) -> ComposeResult:
        yield Static(id="source-detail-body")

    def show(
        self,
        source: Source | CorruptRow | None,
        calls: Sequence[ModelCall] = (),
        events: Sequence[Event | CorruptRow] = (),
        now_ms: float = 0.0,
    ) -> None:
        self.shown = source
        self.body = describe_source(source, calls, events, now_ms)
        self.query_one("#source-detail-body", Static).update(self.body)
