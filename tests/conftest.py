"""Shared test fixtures: copies of the upstream stores, a fixed clock, the demo store."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from store import fixed_clock
from store.demo.demo import build_demo

ROOT = Path(__file__).resolve().parents[1]
KEPT = ROOT / "tests" / "fixtures"
"""The upstream-written fixtures, kept in the repository: a clone alone runs its tests."""


def _fixtures() -> Path:
    """``$MEMEVO_SHARED/fixtures``, else ``../shared/fixtures`` beside the repository,
    else the copy kept in ``tests/fixtures``."""
    named = os.environ.get("MEMEVO_SHARED")
    if named:
        return Path(named) / "fixtures"
    beside = ROOT.parent / "shared" / "fixtures"
    return beside if beside.is_dir() else KEPT


FIXTURES = _fixtures()


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: two workers per core (at most 8). A Pilot test spends about half
    its time waiting (for a worker, a timer, a subprocess); a second worker per core
    fills that time (2 cores: the suite's wall time down by about a quarter)."""
    return min(8, 2 * (os.cpu_count() or 1))


FIXTURE_NOW = "2026-11-01T12:00:00.000Z"
DEMO_NOW = "2026-11-29T12:00:00.000Z"


def copy_fixture(name: str, dest_dir: Path) -> Path:
    """A private, writable copy of a fixture: fixtures are never opened in place."""
    source = FIXTURES / name
    if not source.is_file():
        pytest.fail(f"fixture {source} is missing (MEMEVO_SHARED names a folder without it?)")
    target = dest_dir / name
    shutil.copyfile(source, target)
    target.chmod(0o600)
    return target


@pytest.fixture
def fixture_copy(tmp_path: Path) -> Callable[[str], Path]:
    return lambda name: copy_fixture(name, tmp_path)


@pytest.fixture
def realistic(tmp_path: Path) -> Path:
    return copy_fixture("realistic.sqlite", tmp_path)


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    return copy_fixture("hostile.sqlite", tmp_path)


@pytest.fixture
def fixture_clock() -> Callable[[], float]:
    return fixed_clock(FIXTURE_NOW)


@pytest.fixture(scope="session")
def demo_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("demo") / "memory.sqlite"
    return build_demo(path, now_ms=fixed_clock(DEMO_NOW)())


@pytest.fixture
def demo_store(tmp_path: Path, demo_template: Path) -> Path:
    target = tmp_path / "memory.sqlite"
    shutil.copyfile(demo_template, target)
    shutil.copyfile(demo_template.parent / "recovery.json", tmp_path / "recovery.json")
    target.chmod(0o600)
    return target


@pytest.fixture(autouse=True)
def _fixed_now(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Tests never depend on the wall clock, or on the user's editor and key map, unless
    they ask for them."""
    monkeypatch.setenv("MEMEVO_NOW", FIXTURE_NOW)
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.delenv("EDITOR", raising=False)
    monkeypatch.setenv("MEMEVO_KEYMAP", "/nonexistent/memevo-keymap.json")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))  # the app's own state
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # and its cache
