"""Snapshots pin the look, with a fixed clock and fixed fixtures."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from apphelpers import make_app, snapshot_copy, wait_loaded


@pytest.mark.parametrize("size", [(80, 24), (160, 50)], ids=["80x24", "160x50"])
def test_memory_list_realistic(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    app = make_app(snapshot_copy("realistic.sqlite", tmp_path))
    assert snap_compare(app, terminal_size=size, run_before=wait_loaded, press=["j", "j"])


@pytest.mark.parametrize("size", [(80, 24), (160, 50)], ids=["80x24", "160x50"])
def test_memory_list_hostile(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    app = make_app(snapshot_copy("hostile.sqlite", tmp_path))
    assert snap_compare(app, terminal_size=size, run_before=wait_loaded)
