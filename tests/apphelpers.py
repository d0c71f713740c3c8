"""Helpers for driving the app in tests."""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Callable
from pathlib import Path

from textual.pilot import Pilot

from memevo_tui.app import MemevoApp
from store import fixed_clock

from conftest import FIXTURE_NOW, FIXTURES


def snapshot_copy(name: str, tmp_path: Path) -> Path:
    """A fixture copy in a directory whose name is the same on every run."""
    target_dir = tmp_path / "fixtures"
    target_dir.mkdir(exist_ok=True)
    target = target_dir / name
    shutil.copyfile(FIXTURES / name, target)
    target.chmod(0o600)
    return target


def counter_ids() -> Callable[[], str]:
    """Deterministic UUID-shaped ids, so snapshots of new events are stable."""
    state = {"n": 0}

    def new_id() -> str:
        state["n"] += 1
        return str(uuid.UUID(int=(0x7E57 << 96) | state["n"], version=4))

    return new_id


def make_app(path: Path, *, read_only: bool = False, now: str = FIXTURE_NOW) -> MemevoApp:
    return MemevoApp(
        path, read_only=read_only, clock=fixed_clock(now), keymap={}, new_id=counter_ids()
    )


async def wait_loaded(pilot: Pilot[None]) -> None:
    app = pilot.app
    assert isinstance(app, MemevoApp)
    for _ in range(400):
        if app.loaded is not None:
            break
        await pilot.pause(0.02)
    assert app.loaded is not None, "the memories never loaded"
    await pilot.pause(0.06)  # the detail pane follows the cursor after 30 ms
    await app.workers.wait_for_complete()
    await pilot.pause()
