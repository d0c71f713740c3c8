"""Pilot steps shared by the Turns view's tests and snapshots."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from textual.pilot import Pilot

from apphelpers import press, settle, until, wait_loaded


def open_turns(session: str = "", down: int = 1) -> Callable[[Pilot[None]], Awaitable[None]]:
    """Show the Turns view once every session is replayed; with ``session`` (an id's
    start), open that session's prompts and move ``down`` rows."""

    async def run(pilot: Pilot[None]) -> None:
        from memevo_tui.views.turns import TurnsView
        from memevo_tui.widgets.turn_list import SessionList, TurnDetail

        await wait_loaded(pilot)
        await press(pilot, "n")
        view = pilot.app.query_one(TurnsView)
        await until(pilot, lambda: bool(view.sessions) and not view.busy, "the sessions")
        replay = pilot.app.state.replay  # type: ignore[attr-defined]
        summary = pilot.app.query_one("#turns-summary")

        rows = pilot.app.query_one(SessionList)
        detail = pilot.app.query_one(TurnDetail)

        def settled() -> bool:  # the one replay ended, and its answer is what is drawn
            drawn = str(summary.render())
            highlighted = rows.highlighted  # and the pane beside the list follows it
            beside = highlighted is None or highlighted.session.session_id in "".join(
                detail.plain.split()
            )
            return not replay.running and not view.busy and "replaying" not in drawn and beside

        await until(pilot, settled, "the replay to settle")
        await settle(pilot)  # and the pane's new text laid out and painted
        if session:
            target = next(s for s in view.sessions if s.session.session_id.startswith(session))
            index = rows.index_of(target.key)
            assert index is not None
            rows.cursor = index
            await press(pilot, "enter", *(["j"] * down))

    return run
