"""Snapshots pin the look, with a fixed clock and fixed fixtures.

Review ``snapshot_report.html`` before running ``--snapshot-update``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from memevo_tui.core.appstate import AppState, Visit
from store import fixed_clock

from apphelpers import make_app, settle, snapshot_copy, wait_loaded

SIZES = pytest.mark.parametrize("size", [(80, 24), (160, 50)], ids=["80x24", "160x50"])
Before = Callable[[Pilot[None]], Awaitable[None]]


def then(*keys: str) -> Before:
    """Wait for the store, then press each key and wait until the dashboard settles."""

    async def run(pilot: Pilot[None]) -> None:
        await wait_loaded(pilot)
        for key in keys:
            await pilot.press(key)
            await settle(pilot)

    return run


@SIZES
def test_list(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    app = make_app(snapshot_copy("realistic.sqlite", tmp_path))
    assert snap_compare(app, terminal_size=size, run_before=then("j", "j"))


@SIZES
def test_list_all_sorted_by_state(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    app = make_app(snapshot_copy("realistic.sqlite", tmp_path))
    keys = then("a", "o", "j", "j", "j", "enter", "O")  # the fourth sort key, reversed
    assert snap_compare(app, terminal_size=size, run_before=keys)


@SIZES
def test_detail_of_a_reinforced_record(
    snap_compare: Any, tmp_path: Path, size: tuple[int, int]
) -> None:
    """The decay in words and as a plot (at 80x24, z brings the stacked pane up)."""
    app = make_app(snapshot_copy("realistic.sqlite", tmp_path))
    keys = ["slash", *"914865763607d795d17d5853", "enter", *(["z"] if size[0] < 110 else [])]
    assert snap_compare(app, terminal_size=size, run_before=then(*keys, "tab"))


@SIZES
def test_filter_error_inline(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    app = make_app(snapshot_copy("realistic.sqlite", tmp_path))
    keys = ["slash", *"kind:bogus state:dormant"]
    assert snap_compare(app, terminal_size=size, run_before=then(*keys))


@SIZES
def test_history_with_undo_preview(
    snap_compare: Any, tmp_path: Path, size: tuple[int, int]
) -> None:
    app = make_app(snapshot_copy("realistic.sqlite", tmp_path))
    assert snap_compare(app, terminal_size=size, run_before=then("p", "h"))


@SIZES
def test_search(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    app = make_app(snapshot_copy("realistic.sqlite", tmp_path))
    keys = ["s", "slash", *"postgres", "enter", "j"]
    assert snap_compare(app, terminal_size=size, run_before=then(*keys))


@SIZES
def test_recall_preview(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    app = make_app(snapshot_copy("realistic.sqlite", tmp_path))
    keys = ["i", "slash", *"kyverno", "enter", "j", "j"]
    assert snap_compare(app, terminal_size=size, run_before=then(*keys))


@SIZES
def test_recall_preview_cart_totals(
    snap_compare: Any, tmp_path: Path, size: tuple[int, int]
) -> None:
    app = make_app(snapshot_copy("realistic.sqlite", tmp_path))
    keys = ["i", "slash", *"cart totals", "enter"]
    assert snap_compare(app, terminal_size=size, run_before=then(*keys))


def test_recall_preview_digest_line(snap_compare: Any, tmp_path: Path) -> None:
    app = make_app(snapshot_copy("realistic.sqlite", tmp_path))
    keys = ["i", "slash", *"loki retention", "enter"]
    assert snap_compare(app, terminal_size=(160, 50), run_before=then(*keys))


def test_recall_tool_mode(snap_compare: Any, tmp_path: Path) -> None:
    """What the model's memory_recall tool gets: the dormant match returned, marked aging."""
    app = make_app(snapshot_copy("realistic.sqlite", tmp_path))
    keys = ["i", "slash", *"kyverno", "enter", "ctrl+t", "j", "j"]
    assert snap_compare(app, terminal_size=(160, 50), run_before=then(*keys))


@SIZES
def test_help(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    app = make_app(snapshot_copy("realistic.sqlite", tmp_path))
    assert snap_compare(app, terminal_size=size, run_before=then("question_mark"))


@SIZES
def test_hostile(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    app = make_app(snapshot_copy("hostile.sqlite", tmp_path))
    assert snap_compare(app, terminal_size=size, run_before=then("a", *["j"] * 8))


def test_light_theme(snap_compare: Any, tmp_path: Path) -> None:
    app = make_app(snapshot_copy("realistic.sqlite", tmp_path))
    app.theme = "textual-light"
    assert snap_compare(app, terminal_size=(160, 50), run_before=then("a", "j", "j"))


MARK_THREE = ["slash", *"origin:infra kind:fact", "enter", "space", "j", "space", "j", "space"]


@SIZES
def test_marks(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    app = make_app(snapshot_copy("realistic.sqlite", tmp_path))
    assert snap_compare(app, terminal_size=size, run_before=then(*MARK_THREE))


@SIZES
def test_bulk_preview(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    app = make_app(snapshot_copy("realistic.sqlite", tmp_path))
    assert snap_compare(app, terminal_size=size, run_before=then(*MARK_THREE, "p"))


@SIZES
def test_batch_in_history(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    """Three pins of one bulk action: one entry, expanded to its events."""
    app = make_app(snapshot_copy("realistic.sqlite", tmp_path))
    keys = [*MARK_THREE, "p", "y", "h", "enter"]
    assert snap_compare(app, terminal_size=size, run_before=then(*keys))


@SIZES
def test_review_queue(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    app = make_app(snapshot_copy("realistic.sqlite", tmp_path))
    assert snap_compare(app, terminal_size=size, run_before=then("w", "j"))


@SIZES
def test_inbox(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    """Opened before, two days ago, at event 230: what changed since."""
    path = snapshot_copy("realistic.sqlite", tmp_path)
    AppState(path).save_visit(Visit(230, fixed_clock("2026-10-30T12:00:00.000Z")()))
    app = make_app(path)
    assert snap_compare(app, terminal_size=size, run_before=then())


@SIZES
def test_time_dial(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    app = make_app(snapshot_copy("realistic.sqlite", tmp_path))
    assert snap_compare(app, terminal_size=size, run_before=then("t", *"+30d", "enter"))


@SIZES
def test_provenance(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    """Where a record came from: its summary, the passage highlighted, the session."""
    from conftest import FIXTURES

    app = make_app(snapshot_copy("realistic.sqlite", tmp_path))
    app.state.sessions = FIXTURES / "sessions"
    keys = ["slash", *"807775ca", "enter", "enter", "enter"]  # the menu, its first line
    assert snap_compare(app, terminal_size=size, run_before=then_loaded(*keys))


def test_provenance_of_a_claim_its_source_never_states(snap_compare: Any, tmp_path: Path) -> None:
    from conftest import FIXTURES

    app = make_app(snapshot_copy("realistic.sqlite", tmp_path))
    app.state.sessions = FIXTURES / "sessions"
    keys = ["slash", *"73f58dd4", "enter", "P"]
    assert snap_compare(app, terminal_size=(80, 24), run_before=then_loaded(*keys))


def test_provenance_on_the_hostile_store(snap_compare: Any, tmp_path: Path) -> None:
    app = make_app(snapshot_copy("hostile.sqlite", tmp_path))
    app.state.sessions = tmp_path / "no-sessions"
    keys = ["slash", *"7042e723", "enter", "P"]
    assert snap_compare(app, terminal_size=(80, 24), run_before=then_loaded(*keys))


@SIZES
def test_record_menu(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    app = make_app(snapshot_copy("realistic.sqlite", tmp_path))
    keys = ["slash", *"914865763607d795d17d5853", "enter", "enter"]
    assert snap_compare(app, terminal_size=size, run_before=then(*keys))


def test_one_project_in_scope(snap_compare: Any, tmp_path: Path) -> None:
    app = make_app(snapshot_copy("realistic.sqlite", tmp_path))
    app.state.scope_asked = "/home/dev/projects/infra"
    assert snap_compare(app, terminal_size=(80, 24), run_before=then())


def test_merge_preview(snap_compare: Any, tmp_path: Path) -> None:
    app = make_app(snapshot_copy("realistic.sqlite", tmp_path))
    pair = "id:e95e2126a08864e18d8594a1,cf8f3f95303d31090296a36f"
    text = "Runbook for k3s node replacement: written, reviewed, merged."
    keys = ["slash", *pair, "enter", "ctrl+a", "M", "f7", *text, "ctrl+s"]
    assert snap_compare(app, terminal_size=(80, 24), run_before=then(*keys))


def then_loaded(*keys: str) -> Before:
    """``then``, and wait for the provenance pane to have read its sources."""

    async def run(pilot: Pilot[None]) -> None:
        from memevo_tui.views.provenance import ProvenanceScreen

        from apphelpers import until

        await then(*keys)(pilot)
        screen = pilot.app.screen
        await until(pilot, lambda: isinstance(pilot.app.screen, ProvenanceScreen)
                    and pilot.app.screen.loaded is not None, "the provenance pane")  # fmt: skip
        assert screen is pilot.app.screen
        await settle(pilot)

    return run
