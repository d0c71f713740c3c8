"""The store file is replaced or deleted while it is open: nothing is written anywhere.

A connection keeps the file it opened, so after ``mv new memory.sqlite`` or
``rm memory.sqlite`` a write went to a file nobody will open again, and the
dashboard said "Saved".
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memevo_tui.__main__ import main
from memevo_tui.term.compat.testing import notifications
from memevo_tui.widgets.memory_list import MemoryList
from memevo_tui.widgets.status_line import StatusLine
from store import MemoryStore, Replaced, fixed_clock

from apphelpers import (
    DURABLE,
    event_count,
    opened,
    press,
    select,
    settle,
    stored,
    until,
)
from conftest import FIXTURE_NOW, FIXTURES


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def replace_with_hostile(path: Path) -> None:
    """``cp hostile.sqlite s.new && mv s.new memory.sqlite``."""
    new = path.with_name("s.new")
    shutil.copyfile(FIXTURES / "hostile.sqlite", new)
    new.chmod(0o600)
    os.replace(new, path)


def delete_the_log(path: Path) -> None:
    path.with_name(path.name + "-wal").unlink()


CHANGES: dict[str, Callable[[Path], None]] = {
    "replaced": replace_with_hostile,
    "deleted": Path.unlink,
    "log deleted": delete_the_log,
}


@pytest.mark.parametrize("change", CHANGES)
async def test_a_write_to_a_file_no_longer_at_the_path_is_refused(
    realistic: Path, change: str
) -> None:
    store = await MemoryStore.open(realistic, clock=fixed_clock(FIXTURE_NOW))
    try:
        assert store.file_problem() is None
        await store.pin(DURABLE)  # the file is the file: it writes
        events = await store.query("SELECT count(*) FROM events")
        CHANGES[change](realistic)
        after = digest(realistic) if realistic.exists() else None
        with pytest.raises(Replaced) as refused:
            await store.unpin(DURABLE)
        assert "nothing was written" in str(refused.value)
        assert change.split()[-1] in str(refused.value)  # replaced / deleted
        assert await store.query("SELECT count(*) FROM events") == events  # not even here
        with pytest.raises(Replaced):
            store.check_file()  # what the live poll asks
    finally:
        await store.close()
    if change == "deleted":
        assert not realistic.exists()  # nothing made a new, empty store there
    elif change == "replaced":
        assert digest(realistic) == after  # what is at the path now is untouched
    else:  # the pin reached the file (SQLite applies its log as it closes); the unpin not
        assert stored(realistic, DURABLE)["layer"] == "pinned"


async def test_the_dashboard_says_so_writes_nothing_and_reopens_on_ctrl_r(realistic: Path) -> None:
    async with opened(realistic) as (app, pilot):
        await select(pilot, DURABLE)
        replace_with_hostile(realistic)
        replaced = digest(realistic)
        await press(pilot, "p")
        assert digest(realistic) == replaced
        failure = app.state.failure or ""
        assert f"{realistic} was replaced on disk" in failure and "ctrl+r reopens it" in failure
        assert any("nothing was written" in n.message for n in notifications(app))
        assert not any(n.title == "Saved" for n in notifications(app))
        status = app.screen.query_one("#status-line", StatusLine)
        assert status.indicator[0].startswith("✗ store error: replaced on disk")

        await pilot.press("ctrl+r")
        await until(pilot, lambda: app.state.failure is None and app.state.loaded, "the reopen")
        await settle(pilot)
        assert app.state.total == 32  # the hostile store, now at the path
        assert app.state.store is not None and app.state.store.file_problem() is None


async def test_the_live_poll_notices_a_deleted_store_and_nothing_is_created(
    realistic: Path,
) -> None:
    async with opened(realistic) as (app, pilot):
        realistic.unlink()
        await until(pilot, lambda: "was deleted on disk" in (app.state.failure or ""), "a poll")
        await pilot.press("slash", *DURABLE, "enter", "p")
        await settle(pilot)
        assert not realistic.exists()
        notes = [n.message for n in notifications(app)]
        assert any("was deleted on disk: nothing was written" in n for n in notes)
        await pilot.press("ctrl+r")
        await until(pilot, lambda: "No memory store at" in (app.state.failure or ""), "reload")
        assert not realistic.exists()  # reopening never creates an empty store
        assert len(app.query_one("#memory-list", MemoryList).rows) == 1  # still shown


async def test_a_deleted_log_is_noticed_before_the_dialog(realistic: Path) -> None:
    async with opened(realistic) as (app, pilot):
        await select(pilot, DURABLE)
        events = event_count(realistic)
        delete_the_log(realistic)
        await pilot.press("d")  # forget asks first: not when it cannot write
        await settle(pilot)
        assert app.screen.__class__.__name__ == "Dashboard"
        assert any("write-ahead log, was deleted" in n.message for n in notifications(app))
        assert stored(realistic, DURABLE)["status"] != "forgotten"
        assert event_count(realistic) == events


def test_a_cli_write_checks_the_file_it_holds(
    realistic: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The verbs write through the same transaction: a store swapped between the open
    and the write (by a patched pin, as another program would) gets nothing."""
    original = MemoryStore.pin

    async def pin_after_a_swap(self: MemoryStore, memory_id: str, **kwargs: Any) -> str:
        replace_with_hostile(realistic)
        return await original(self, memory_id, **kwargs)

    monkeypatch.setattr(MemoryStore, "pin", pin_after_a_swap)
    assert main(["pin", DURABLE, "--db", str(realistic)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "was replaced on disk: nothing was written" in err
    con = sqlite3.connect(realistic)
    assert con.execute("SELECT count(*) FROM memories").fetchone() == (32,)
    con.close()
