"""The learning queue at a glance: the figures of pi's status report and a day of activity."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Sparkline, Static

from store import QueueStatus, iso

from ..core.text import one_line


def describe_queue(q: QueueStatus) -> Text:
    text = Text()
    states = " · ".join(f"{k} {v}" for k, v in sorted(q.sources_by_state.items())) or "no sources"
    text.append("Queue  ", style="bold")
    text.append(f"{states}; retrying {q.retrying}, paused {q.paused}")
    if q.next_eligible:
        text.append(f"; next eligible {iso(q.next_eligible)[11:19]}")
    text.append("\nFailures  ", style="bold")
    text.append(", ".join(f"{code} {n}" for code, n in sorted(q.failure_classes.items())) or "none")
    p = q.policy
    text.append("\nPolicy  ", style="bold")
    if p.problem:
        text.append(f"pi will not open this store: {p.problem}", style="bold red")
    else:
        ceiling = f"${p.daily_estimated_usd:g}/day cap" if p.daily_estimated_usd else "no daily cap"
        origin = "recovery.json" if p.origin != "defaults" else "defaults"
        fallback = "fallback across providers" if p.cross_provider_fallback else "one provider"
        text.append(
            f"{origin} · {p.calls_per_hour} calls/h · per source ≤{p.source_calls} calls, "
            f"≤{p.source_models} models, ≤{p.source_time_ms / 1000:g} s · {fallback} · {ceiling}"
        )
    text.append("\nBudget  ", style="bold")
    b = q.budget
    style = {"available": "green", "waiting": "yellow", "blocked": "bold red"}[b.state]
    text.append(b.state if b.state != "waiting" else f"waiting until {iso(b.until or 0)}", style)
    if b.reason:
        text.append(f" ({one_line(b.reason)})")
    text.append(
        f" · calls/hour {q.calls_last_hour}/{q.calls_per_hour_limit} · last 24 h "
        f"{q.calls_last_24h} calls, ${q.usd_last_24h:.4f}"
        f"{f' ({q.unknown_cost_calls} of unknown cost)' if q.unknown_cost_calls else ''}, "
        f"tokens in/out {q.input_tokens_24h:,}/{q.output_tokens_24h:,}"
    )
    text.append("\nRoutes  ", style="bold")
    if q.cooling_routes:
        text.append(
            "; ".join(
                f"{one_line(route, 40)} {code} until {iso(until)[11:19]}"
                for route, code, until in q.cooling_routes
            )
        )
    else:
        text.append("no route cooling down")
    return text


AXIS = "24 h ago" + " " * 24 + "now"
"""Under the sparklines (40 cells wide): the day they cover, oldest hour first."""


class LearningStatus(Horizontal):
    """Figures on the left, calls and failures per hour over the last day on the right."""

    def compose(self) -> ComposeResult:
        yield Static(id="queue-figures", markup=False)
        with Vertical(id="queue-activity"):
            yield Static("model calls per hour", id="calls-label", classes="spark-label")
            yield Sparkline([], id="calls-spark")
            yield Static("failures per hour", id="failures-label", classes="spark-label")
            yield Sparkline([], id="failures-spark")
            yield Static(AXIS, classes="spark-label", markup=False)

    def show(self, queue: QueueStatus) -> None:
        self.query_one("#queue-figures", Static).update(describe_queue(queue))
        calls, failures = list(queue.calls_per_hour), list(queue.failures_per_hour)
        self.query_one("#calls-label", Static).update(
            f"model calls per hour (tallest: {max(calls, default=0)})"
        )
        self.query_one("#failures-label", Static).update(
            f"failures per hour (tallest: {max(failures, default=0)})"
        )
        self.query_one("#calls-spark", Sparkline).data = calls
        self.query_one("#failures-spark", Sparkline).data = failures
