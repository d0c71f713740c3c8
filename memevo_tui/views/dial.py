"""The time dial (``t``, ``0``): the store as of another moment, asked for in a prompt.

A moment after now is simulated (decay, dormancy, recall then); one before now is
the store as it was, replayed from the event log (``DashboardState.dial_past``),
and refused or clamped where the log is not exact. The dashboard binds the keys and
calls these; the diff and other views turn the dial through ``ShowView.dial`` and
``ShowRecord.dial``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from store import StoreError, iso

from ..core.when import HELP, BadMoment, moment, parse_moment
from ..dialogs.prompt import PromptScreen

if TYPE_CHECKING:
    from ..app.dashboard import Dashboard


def ask_moment(host: Dashboard) -> None:
    """Ask for a moment (a date, or +30d): esc goes back to now."""
    state = host.state
    shown = iso(state.as_of)[:10] if state.as_of is not None else ""

    def done(text: str | None) -> None:
        if text is None:  # esc: back to now
            back_to_now(host)
            return
        try:
            when = parse_moment(text if text.strip() else "now", state.clock())
        except BadMoment as exc:
            host.notify(str(exc), title="Time dial", severity="error", markup=False)
            return
        if when is not None and when < state.clock():
            host.run_worker(dial_past(host, when), group="dial", exclusive=True)
            return
        state.set_as_of(when)
        if when is not None:
            host.notify(
                f"Showing the store as of {moment(when)} (simulated): decay, dormancy, "
                f"the review queue and what pi would inject. Nothing can be written; "
                f"0 returns to now.",
                title="Time dial",
            )

    host.app.push_screen(
        PromptScreen("Show the store as of", placeholder=HELP, value=shown,
                     hint=f"{HELP}; esc returns to now"),
        done,
    )  # fmt: skip


def back_to_now(host: Dashboard) -> None:
    if host.state.as_of is not None:
        host.state.set_as_of(None)
        host.notify("Back to now", title="Time dial")


async def dial_past(host: Dashboard, when: float) -> None:
    """Turn the dial to a past moment: the records as they were, from the event log."""
    state = host.state
    try:
        past = await state.dial_past(when)
    except StoreError as exc:
        host.notify(f"The time dial cannot go back: {exc}", title="Time dial",
                    severity="error")  # fmt: skip
        return
    shown = state.as_of if state.as_of is not None else when
    if past.clamped:
        stays = past.exact_back_to == float("inf")
        then = (
            "The dial stays where it was."
            if stays
            else f"Showing {moment(shown)}, as far back as it is exact. 0 returns to now."
        )
        host.notify(
            f"{moment(when)} is not known: the event log is {past.limit_line()}. {then}",
            title="Time dial",
            severity="warning",
            markup=False,
        )
        return
    host.notify(
        f"Showing the store as it was on {moment(shown)}, replayed from the event log "
        f"({len(past.rows)} records then). Nothing can be written; 0 returns to now.",
        title="Time dial",
    )
