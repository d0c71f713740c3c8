"""The project scope: one project, or all of them, obeyed by every view, the counts, the
Timeline and the command line. Real keys; what each view lists checked against the store."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest
from test_unix import cli
from textual.widgets import OptionList

from memevo_tui.core.scope import ALL, AUTO, Scope, origins_by_size, project_for, start_scope
from memevo_tui.dialogs.menu import Menu
from memevo_tui.views.history import HistoryView
from memevo_tui.views.learning import LearningView
from memevo_tui.views.review import ReviewView
from memevo_tui.views.turns import TurnsView
from memevo_tui.widgets.event_list import EventList
from memevo_tui.widgets.memory_list import MemoryList
from memevo_tui.widgets.review_list import ReviewList
from memevo_tui.widgets.source_list import SourceList
from memevo_tui.widgets.turn_list import SessionList
from store import CorruptRow, Event, Memory, Source

from apphelpers import make_app, opened, press, settle, until, wait_loaded
from conftest import FIXTURES

INFRA, WEBSHOP = "/home/dev/projects/infra", "/home/dev/projects/webshop"
ORIGINS = {INFRA, WEBSHOP, "legacy"}


def test_the_project_of_a_directory_is_the_deepest_origin_it_is_in() -> None:
    assert project_for(WEBSHOP, ORIGINS) == WEBSHOP
    assert project_for(WEBSHOP + "/apps/api", ORIGINS) == WEBSHOP
    assert project_for("/home/dev/projects", ORIGINS) == ""
    assert project_for("/home/dev/projects/webshop2", ORIGINS) == ""  # not a prefix of a name
    assert project_for(WEBSHOP + "/apps", {*ORIGINS, WEBSHOP + "/apps"}) == WEBSHOP + "/apps"
    assert project_for("legacy", ORIGINS) == ""


def test_the_scope_opens_where_asked_or_where_started_and_cycles() -> None:
    assert start_scope(AUTO, WEBSHOP + "/src", ORIGINS) == Scope(WEBSHOP, WEBSHOP)
    assert start_scope(AUTO, "/tmp", ORIGINS) == Scope(ALL, "")
    assert start_scope(ALL, WEBSHOP, ORIGINS) == Scope(ALL, WEBSHOP)
    assert start_scope(INFRA + "/charts", WEBSHOP, ORIGINS) == Scope(INFRA, WEBSHOP)
    home = Scope(WEBSHOP, WEBSHOP)
    assert home.cycled() == Scope(ALL, WEBSHOP)  # this project, then every project,
    assert Scope(ALL, WEBSHOP).cycled() is None  # then one picked from a menu,
    assert Scope(INFRA, WEBSHOP).cycled() == home  # then this project again
    assert Scope(INFRA, "").cycled() == Scope(ALL, "")
    assert Scope(INFRA).covers(INFRA) and not Scope(INFRA).covers(WEBSHOP)
    assert Scope().covers("legacy") and Scope().name == "all projects"
    assert Scope(INFRA).name == "infra"


def _table(path: Path, sql: str) -> list[tuple[object, ...]]:
    con = sqlite3.connect(path)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


async def test_every_view_shows_the_project_scope_and_the_key_cycles_it(
    realistic: Path,
) -> None:
    webshop_ids = {
        i for (i,) in _table(realistic, f"SELECT id FROM memories WHERE scope='{WEBSHOP}'")
    }
    app = make_app(realistic)
    app.state.scope_asked = WEBSHOP
    app.state.sessions = FIXTURES / "sessions"
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_loaded(pilot)
        assert app.state.scope == Scope(WEBSHOP, "")
        assert app.sub_title.endswith("· project webshop")
        rows = app.query_one(MemoryList).rows
        assert rows and all(isinstance(r, Memory) and r.scope == WEBSHOP for r in rows)
        status = str(app.screen.query_one("#status-line").render())
        shown = sum(1 for i in webshop_ids if app.state.find(str(i)) is not None)
        assert f"shown of {shown} in webshop" in status
        await press(pilot, "h")
        events = app.query_one(EventList)
        await until(pilot, lambda: bool(events.rows), "history")
        assert all(not isinstance(e, Event) or e.scope == WEBSHOP for e in events.rows)
        await press(pilot, "l")
        sources = app.query_one(SourceList)
        await until(pilot, lambda: bool(sources.rows), "learning")
        assert all(isinstance(s, CorruptRow) or (isinstance(s, Source) and s.scope == WEBSHOP)
                   for s in sources.rows)  # fmt: skip
        await press(pilot, "w")
        review = app.query_one(ReviewList)
        await until(pilot, lambda: not app.query_one(ReviewView).busy, "review")
        assert all(any(m.scope == WEBSHOP for m in item.records) for item in review.rows)
        # @: every project (no home: started outside pi's projects), then a menu
        await press(pilot, "at")
        assert app.state.scope == Scope(ALL, "") and "project" not in app.sub_title
        assert any(any(m.scope == INFRA for m in item.records) for item in review.rows)
        await press(pilot, "at")
        assert isinstance(app.screen, Menu)
        menu = app.screen.query_one(OptionList)
        options = [str(menu.get_option_at_index(i).prompt) for i in range(menu.option_count)]
        assert options[0].startswith("All projects") and any(INFRA in o for o in options)
        index = next(n for n, o in enumerate(options) if o.startswith(INFRA))
        await press(pilot, *(["j"] * index), "enter")
        assert app.state.scope == Scope(INFRA, "")
        assert all(any(m.scope == INFRA for m in item.records) for item in review.rows)
        await press(pilot, "m", "n")  # (n in Review keeps an item)
        turns = app.query_one(TurnsView)
        await until(pilot, lambda: bool(turns.sessions), "the replay")
        await settle(pilot)
        listed = app.query_one(SessionList).rows
        assert listed and all(s.session.project == INFRA for s in listed)
        assert len(listed) < len(turns.sessions)
        assert app.query_one(HistoryView) and app.query_one(LearningView)


async def test_started_inside_a_project_the_dashboard_opens_scoped_to_it(
    realistic: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "getcwd", lambda: WEBSHOP + "/apps/api")
    async with opened(realistic) as (app, pilot):
        assert app.state.scope == Scope(WEBSHOP, WEBSHOP)
        assert all(
            r.scope == WEBSHOP for r in app.query_one(MemoryList).rows if isinstance(r, Memory)
        )
        await press(pilot, "at")  # this project, then every project
        assert app.state.scope == Scope(ALL, WEBSHOP)


def test_the_command_line_takes_the_same_scope(realistic: Path) -> None:
    listed = cli("list", "--json", "--project", INFRA + "/charts", "--db", str(realistic))
    assert listed.returncode == 0, listed.stderr
    scopes = {r["memory"]["scope"] for r in json.loads(listed.stdout)}
    assert scopes == {INFRA}
    everything = cli("list", "--json", "--all-projects", "--db", str(realistic))
    assert {r["memory"]["scope"] for r in json.loads(everything.stdout)} >= {INFRA, WEBSHOP}
    found = cli("search", "postgres", "--json", "--project", WEBSHOP, "--db", str(realistic))
    assert found.returncode == 0 and {r["memory"]["scope"] for r in json.loads(found.stdout)} <= {
        WEBSHOP
    }
    events = cli("history", "--all", "--json", "--project", WEBSHOP, "--db", str(realistic))
    assert events.returncode == 0
    assert {e["scope"] for e in json.loads(events.stdout) if "scope" in e} <= {WEBSHOP}
    both = cli("list", "--project", INFRA, "--all-projects", "--db", str(realistic))
    assert both.returncode == 2 and "not allowed with" in both.stderr


async def test_the_timeline_counts_one_project(realistic: Path) -> None:
    from store import MemoryStore, activity, fixed_clock, runs

    async with await MemoryStore.open(
        realistic, clock=fixed_clock("2026-11-01T12:00:00.000Z")
    ) as store:
        every = await activity(store, 0, 2e13)
        infra = await activity(store, 0, 2e13, INFRA)
        webshop = await activity(store, 0, 2e13, WEBSHOP)
        total = sum(sum(c.values()) for c in every.values())
        assert (
            sum(sum(c.values()) for c in infra.values())
            + sum(sum(c.values()) for c in webshop.values())
            <= total
        )
        assert 0 < sum(sum(c.values()) for c in infra.values()) < total
        ran = await runs(store, 0, 2e13)
        ran_infra = await runs(store, 0, 2e13, INFRA)
        assert sum(d.done + d.failed for d in ran_infra.values()) < sum(
            d.done + d.failed for d in ran.values()
        )
    assert origins_by_size([]) == []


def test_the_dashboard_takes_the_scope_from_its_command_line(realistic: Path) -> None:
    """--project and --all-projects reach the dashboard (its headless smoke run)."""

    def shown(*flags: str) -> str:
        run = cli("--smoke", *flags, "--db", str(realistic))
        assert run.returncode == 0, run.stderr
        return run.stdout.split(" rows shown")[0].rsplit(" ", 1)[-1]

    assert shown() == shown("--all-projects") == "186"
    assert shown("--project", INFRA + "/charts") == "77"
