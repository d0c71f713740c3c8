"""What pi injected, turn by turn: each prompt of pi's sessions replayed on the store as
it was then (with the branch's recent user texts as pi derives them) and as it is now."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memevo_tui.__main__ import main
from store import MemoryStore, fixed_clock
from store.js import iso
from store.pi.prompts import recent_user_messages, session_files, session_prompts
from store.pi.turns import replay_turns
from store.recall.recall import digest, runtime_digest

from apphelpers import opened
from conftest import FIXTURE_NOW, FIXTURES

SESSIONS = FIXTURES / "sessions"
T0 = 1_780_000_000_000


async def _records(path: Path) -> list[Any]:
    """The fixture copy's records as now (the fixture's clock)."""
    store = await MemoryStore.open(path, read_only=True, clock=fixed_clock(FIXTURE_NOW))
    try:
        return list((await store.load_memories()).memories)
    finally:
        await store.close()


def _user(eid: str, parent: str | None, text: str, n: int) -> dict[str, Any]:
    return {"type": "message", "id": eid, "parentId": parent, "timestamp": iso(T0 + n),
            "message": {"role": "user", "content": [{"type": "text", "text": text}],
                        "timestamp": T0 + n}}  # fmt: skip


def _reply(eid: str, parent: str, n: int) -> dict[str, Any]:
    return {"type": "message", "id": eid, "parentId": parent, "timestamp": iso(T0 + n),
            "message": {"role": "assistant", "content": [{"type": "text", "text": "ok"}],
                        "timestamp": T0 + n}}  # fmt: skip


def _write(folder: Path, lines: list[dict[str, Any]], sid: str = "s1") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"2026-06-01T00-00-00-000Z_{sid}.jsonl"
    header = {"type": "session", "version": 3, "id": sid, "timestamp": iso(T0), "cwd": "/p"}
    path.write_text("\n".join(json.dumps(x) for x in [header, *lines]) + "\n")
    return path


def test_recent_user_texts_are_pis_six_newest_skipping_commands_and_repeated_empties() -> None:
    said = ["the redis port?", "/model gpt", "ok", "continue", "deploy postgres", "  ", "b"]
    messages: list[dict[str, Any]] = [{"role": "user", "content": t} for t in said]
    messages.insert(3, {"role": "assistant", "content": "answer"})
    parts = [{"type": "text", "text": "c"}, {"type": "image"}, {"type": "text", "text": "d"}]
    messages.append({"role": "user", "content": parts})
    # newest first: "c\nd", "b", "deploy postgres", "continue" (topic-less), then "ok"
    # (topic-less right after another: skipped), "/model gpt" (a command: skipped)
    assert recent_user_messages(messages) == (
        "the redis port?", "continue", "deploy postgres", "b", "c\nd",
    )  # fmt: skip
    many = [{"role": "user", "content": f"topic {n} postgres"} for n in range(10)]
    assert recent_user_messages(many) == tuple(f"topic {n} postgres" for n in range(4, 10))


def test_a_branched_session_lists_each_branch_with_its_own_context(tmp_path: Path) -> None:
    folder = tmp_path / "--p--"
    lines = [
        _user("u1", None, "set up postgres for the api", 1),
        _reply("a1", "u1", 2),
        _user("u2", "a1", "what port does redis use?", 3),  # abandoned branch
        _reply("a2", "u2", 4),
        _user("u3", "a1", "and the storefront?", 5),  # the active branch, forked at a1
        _reply("a3", "u3", 6),
    ]
    path = _write(folder, lines)
    found = session_prompts(path)
    assert found.branches == 2
    by_id = {p.entry_id: p for p in found.prompts}
    assert [p.entry_id for p in found.prompts] == ["u1", "u3", "u2"]  # active branch first
    assert by_id["u3"].branch == 0 and by_id["u2"].branch == 1
    assert by_id["u3"].recent == ("set up postgres for the api",)  # not the other branch's u2
    assert by_id["u1"].recent == ()


@pytest.mark.parametrize("shape", ["retainedTail", "firstKeptEntryId"])
def test_a_compaction_keeps_only_what_pi_keeps(tmp_path: Path, shape: str) -> None:
    lines = [
        _user("u1", None, "old topic: the terraform state bucket", 1),
        _reply("a1", "u1", 2),
        _user("u2", "a1", "kept topic: the grafana port", 3),
        _reply("a2", "u2", 4),
    ]
    compaction: dict[str, Any] = {"type": "compaction", "id": "c1", "parentId": "a2",
                                  "timestamp": iso(T0 + 5), "summary": "## Goal\nx",
                                  "tokensBefore": 10}  # fmt: skip
    if shape == "retainedTail":
        compaction["retainedTail"] = [lines[2]["message"], lines[3]["message"]]
    else:
        compaction["firstKeptEntryId"] = "u2"
    lines += [compaction, _user("u3", "c1", "and then?", 6)]
    path = _write(tmp_path / "--p--", lines)
    [*_, last] = session_prompts(path).prompts
    assert last.entry_id == "u3"
    assert last.recent == ("kept topic: the grafana port",)


def test_a_corrupt_line_is_skipped_and_a_missing_folder_gives_nothing(tmp_path: Path) -> None:
    path = _write(tmp_path / "--p--", [_user("u1", None, "the redis port?", 1)])
    path.write_text(path.read_text() + "{not json\n")
    found = session_prompts(path)
    assert found.corrupt == 1 and [p.entry_id for p in found.prompts] == ["u1"]
    assert session_files(tmp_path / "nowhere") == []


async def test_every_turn_matches_the_as_of_recall_with_the_same_context(
    realistic: Path,
) -> None:
    """The replay agrees, prompt for prompt, with the past and the recall already
    checked against upstream: the store opened as of the prompt's moment, recalled for
    injection with the branch's recent user texts."""
    files = session_files(SESSIONS)
    prompts = [p for f in files for p in session_prompts(f).prompts]
    assert len(files) == 88 and len(prompts) >= 80
    store = await MemoryStore.open(realistic, read_only=True, clock=fixed_clock(FIXTURE_NOW))
    try:
        turns = await replay_turns(store, prompts)
    finally:
        await store.close()
    assert sum(1 for t in turns if t.then) >= 40
    assert any(t.dropped for t in turns) and any(t.added for t in turns)
    sample = [t for t in turns if t.then][::6] + [t for t in turns if not t.then][::20]
    for t in sample:
        p = t.prompt
        past = await MemoryStore.open(realistic, as_of=p.moment_ms,
                                      clock=fixed_clock(iso(p.moment_ms)))  # fmt: skip
        try:
            r = await past.recall(p.text, purpose="inject", recent_user_turns=p.recent)
        finally:
            await past.close()
        lines = digest(r)
        assert t.then == tuple(d.memory_id for d in lines if d.included), p.text
        assert t.then_digest == runtime_digest(lines)


def test_turns_and_blame_on_the_command_line(
    realistic: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["--db", str(realistic), "--sessions", str(SESSIONS)]
    assert main(["turns", *base, "--project", "/home/dev/projects/webshop", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["recall"] == "as pi 0.4.0 would recall"
    turns = out["turns"]
    assert turns and all(t["project"] == "/home/dev/projects/webshop" for t in turns)
    got = next(t for t in turns if t["then"])
    assert got["thenDigest"] and got["then"][0] in got["thenDigest"]
    record = got["then"][0]
    assert main(["blame", record, *base]) == 0
    captured = capsys.readouterr()
    assert got["entry"][:8] in captured.out
    assert f"{record[:8]} injected in" in captured.err
    assert main(["turns", *base, "--since", "2099-01-01"]) == 0
    assert "0 prompt(s)" in capsys.readouterr().err
    assert main(["turns", "--db", str(realistic), "--sessions", "/nonexistent"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


async def test_the_turns_view_lists_sessions_then_prompts_and_opens_recall_as_of_then(
    realistic: Path,
) -> None:
    from textual.widgets import TabbedContent

    from memevo_tui.views.turns import TurnsView
    from memevo_tui.widgets.recall_pane import RecallPane
    from memevo_tui.widgets.turn_list import SessionList, TurnDetail, TurnList, describe_turn

    from apphelpers import drawn_text, make_app, press, until, wait_loaded

    app = make_app(realistic)
    async with app.run_test(size=(160, 50)) as pilot:
        app.state.sessions = SESSIONS
        await wait_loaded(pilot)
        await press(pilot, "n")
        assert app.query_one("#tabs", TabbedContent).active == "turns"
        sessions = app.query_one(SessionList)
        await until(pilot, lambda: len(sessions.rows) == 88, "the sessions to be replayed")
        view = app.query_one(TurnsView)
        # the newest session with a prompt that got memories then
        target = next(s for s in view.sessions if s.with_memories)
        index = sessions.index_of(target.key)
        assert index is not None
        sessions.cursor = index
        await press(pilot, "enter")
        turns = app.query_one(TurnList)
        assert turns.display and not sessions.display and turns.has_focus
        assert len(turns.rows) == len(target.session.prompts)
        turn = next(t for t in target.turns if t.then)
        turns.cursor = turns.rows.index(turn)
        await until(pilot, lambda: app.query_one(TurnDetail).shown is turn, "the detail")
        detail = drawn_text(describe_turn(app.query_one(TurnDetail).shown))
        assert turn.then is not None and turn.then[0] in detail
        await press(pilot, "enter")  # the recall preview, as of the prompt's moment

        def answered() -> bool:
            result = app.query_one(RecallPane).result
            return result is not None and result.prompt == turn.prompt.text

        await until(pilot, answered, "the preview on the prompt")
        assert app.query_one("#tabs", TabbedContent).active == "recall"
        assert app.state.as_of == turn.prompt.moment_ms
        pane = app.query_one(RecallPane)
        assert pane.result is not None
        assert pane.result.turns == turn.prompt.recent
        picked = [c.memory.id for c in pane.result.selected]
        assert list(turn.then) == picked[: len(turn.then)]
        assert app.focused is app.query_one("#recall-list")  # the answer, not the box
        await press(pilot, "n", "escape")  # back from the prompts to the sessions
        assert sessions.display and not turns.display


async def test_a_warm_replay_reads_the_settled_past_from_the_cache_and_refuses_a_forged_one(
    realistic: Path,
) -> None:
    from memevo_tui.core.recallcache import TURNS, TurnCache, cache_home

    prompts = [p for f in session_files(SESSIONS) for p in session_prompts(f).prompts]

    async def replayed(memo: TurnCache) -> tuple[list[Any], int]:
        store = await MemoryStore.open(realistic, read_only=True, clock=fixed_clock(FIXTURE_NOW))
        walks = 0
        walk = store.replay

        async def counted(when: float, *, retime: bool = True) -> Any:
            nonlocal walks
            walks += 1
            return await walk(when, retime=retime)

        store.replay = counted  # type: ignore[method-assign]
        try:
            return await replay_turns(store, prompts, memo), walks
        finally:
            await store.close()

    cold, cold_walks = await replayed(TurnCache(realistic))
    warm, warm_walks = await replayed(TurnCache(realistic))
    assert cold_walks >= len(prompts) - 5
    assert warm_walks < cold_walks // 4  # only the unsettled or unknown moments again
    assert [(t.then, t.then_digest, t.now, t.changed, t.approximate) for t in warm] == [
        (t.then, t.then_digest, t.now, t.changed, t.approximate) for t in cold
    ]
    [kept] = list(cache_home().rglob(TURNS))
    data = bytearray(kept.read_bytes())
    data[-3] ^= 1  # one byte changed by hand: the digest no longer checks out
    kept.write_bytes(bytes(data))
    assert TurnCache(realistic).get("anything") is None
    _, forged_walks = await replayed(TurnCache(realistic))
    assert forged_walks == cold_walks


async def test_a_warm_open_gives_the_last_replays_answers_first_then_checks_them(
    realistic: Path,
) -> None:
    """A warm open's rows come before the replay (``early``): the last replay's answers,
    equal to what the replay then gives; a first open, or a new prompt, gives none."""
    from memevo_tui.core.recallcache import SessionIndexCache
    from memevo_tui.core.turnlog import load_turns

    def shape(sessions: list[Any]) -> list[Any]:
        return [(s.key, [(t.prompt.entry_id, t.then, t.then_digest, t.now, t.now_digest,
                          t.changed, t.note, t.approximate) for t in s.turns])
                for s in sessions]  # fmt: skip

    async def opened(root: Path) -> tuple[list[list[Any]], list[Any]]:
        early: list[list[Any]] = []
        found = await load_turns(
            realistic, fixed_clock(FIXTURE_NOW), root, SessionIndexCache(), None, early.append
        )
        return early, found

    first_early, first = await opened(SESSIONS)
    assert first_early == []  # nothing kept yet: the replay answers alone
    warm_early, warm = await opened(SESSIONS)
    assert len(warm_early) == 1
    assert shape(warm_early[0]) == shape(warm) == shape(first)
    assert sum(len(s.turns) for s in warm) >= 40
    # one prompt more than the last replay saw: no early rows, never a partial list
    root = Path(str(realistic) + "-sessions")
    import shutil

    shutil.copytree(SESSIONS, root)
    newest = max(root.rglob("*.jsonl"), key=lambda f: f.stat().st_mtime)
    lines = newest.read_text().splitlines()
    last = json.loads(lines[-1])
    extra = _user("extra-prompt", last.get("id"), "and what about the redis port?", 99)
    extra["timestamp"] = last.get("timestamp", extra["timestamp"])
    newest.write_text("\n".join([*lines, json.dumps(extra)]) + "\n")
    new_early, _ = await opened(root)
    assert new_early == []


async def test_the_turns_view_draws_the_last_replays_rows_while_the_replay_checks_them(
    realistic: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second open draws its rows from the last replay's answers, and says so, while
    the replay (held here) checks them; then it shows the replay's own."""
    import threading

    import memevo_tui.core.turnlog as turnlog
    from memevo_tui.views.turns import TurnsView
    from memevo_tui.widgets.turn_list import SessionList

    from apphelpers import make_app, until, wait_loaded

    async def opened_once() -> None:
        app = make_app(realistic)
        app.state.sessions = SESSIONS
        async with app.run_test(size=(160, 50)) as pilot:
            await wait_loaded(pilot)
            await pilot.press("n")
            view = app.query_one(TurnsView)
            await until(pilot, lambda: bool(view.sessions) and not view.busy, "the replay")

    await opened_once()  # the cold replay: its answers kept in the cache directory
    release = threading.Event()
    replay = replay_turns  # what the held one calls once released

    async def held(*args: Any) -> Any:
        release.wait(30)  # the replay's own thread: the dashboard goes on
        return await replay(*args)

    monkeypatch.setattr(turnlog, "replay_turns", held)
    app = make_app(realistic)
    app.state.sessions = SESSIONS
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_loaded(pilot)
        await pilot.press("n")
        view = app.query_one(TurnsView)
        rows = app.query_one(SessionList)
        await until(pilot, lambda: len(rows.rows) > 0, "the last replay's rows")
        summary = str(app.query_one("#turns-summary").render())
        assert view.busy and "the last replay's answers" in summary
        release.set()
        await until(pilot, lambda: not view.busy, "the replay to end")
        assert "as pi" in str(app.query_one("#turns-summary").render())


@pytest.mark.parametrize("size", [(80, 24), (160, 50)], ids=["80x24", "160x50"])
@pytest.mark.parametrize("opened", [False, True], ids=["sessions", "prompts"])
def test_turns_view_snapshot(
    snap_compare: Any, tmp_path: Path, size: tuple[int, int], opened: bool
) -> None:
    """The sessions, and a session's prompts beside one in full (an approximate turn:
    pi confirmed a record it matched with no event)."""
    from pilot_keys import open_turns

    from apphelpers import make_app, snapshot_copy, snapshot_sessions

    app = make_app(snapshot_copy("realistic.sqlite", tmp_path))
    app.state.use_sessions(snapshot_sessions())
    assert snap_compare(
        app, terminal_size=size, run_before=open_turns("0ecce04b" if opened else "")
    )


async def test_a_records_detail_gives_its_recall_log_once_the_turns_are_replayed(
    realistic: Path,
) -> None:
    from pilot_keys import open_turns

    from memevo_tui.views.turns import TurnsView
    from memevo_tui.widgets.memory_detail import MemoryDetail

    from apphelpers import drawn_text, make_app, press, until

    app = make_app(realistic)
    async with app.run_test(size=(160, 50)) as pilot:
        app.state.sessions = SESSIONS
        await open_turns()(pilot)
        turns = [t for s in app.query_one(TurnsView).sessions for t in s.turns]
        record = next(i for t in turns for i in t.then or ())
        injected = [t for t in turns if record in (t.then or ())]
        await press(pilot, "m", "slash", *record, "enter")
        detail = app.query_one(MemoryDetail)
        await until(pilot, lambda: detail.shown is not None and detail.shown.id == record,
                    "the record's detail")  # fmt: skip
        text = drawn_text(detail.part(MemoryDetail.TURNS))
        last = max(t.prompt.moment_ms for t in injected)
        assert f"injected in {len(injected)} turn(s), last on {iso(last)[:10]}" in text


async def test_review_lists_records_injected_often_while_marked_unhelpful_or_incorrect(
    realistic: Path,
) -> None:
    from memevo_tui.core.review import build

    rows = await _records(realistic)
    bad = [m for m in rows if m.status != "forgotten" and any(
        v is not None and v.verdict in ("unhelpful", "incorrect") for v in (m.utility, m.accuracy)
    )]  # fmt: skip
    good = next(m for m in rows if m.active and m.utility is None and m.accuracy is None)
    assert len(bad) >= 2
    injected = {bad[0].id: 9, bad[1].id: 1, good.id: 40}
    costly = [i for i in build(rows, {}, [], injected=injected) if i.reason == "costly"]
    assert [i.first.id for i in costly] == [bad[0].id]  # once is not often; good is fine
    assert "injected in 9 turns" in costly[0].why
    assert not [i for i in build(rows, {}, []) if i.reason == "costly"]


async def test_forget_and_correct_prove_the_fix_before_writing_and_a_pin_says_it_after(
    realistic: Path,
) -> None:
    from pilot_keys import open_turns

    from memevo_tui.dialogs.confirm import ConfirmScreen
    from memevo_tui.views.turns import TurnsView
    from memevo_tui.widgets.memory_list import MemoryList

    from apphelpers import Notes, dialog_text, make_app, press, stored, until

    app = make_app(realistic)
    async with app.run_test(size=(160, 50)) as pilot:
        app.state.sessions = SESSIONS
        await open_turns()(pilot)
        turns = [t for s in app.query_one(TurnsView).sessions for t in s.turns]
        record = next(i for t in reversed(turns) for i in t.now)  # injected now
        scope = stored(realistic, record)["scope"]
        recent = sorted((t for t in turns if t.prompt.project == scope),
                        key=lambda t: t.prompt.moment_ms)[-100:]  # fmt: skip
        losing = sum(1 for t in recent if record in t.now)
        assert losing >= 1
        await press(pilot, "m", "slash", *record, "enter")

        def on_it() -> bool:
            row = app.query_one(MemoryList).highlighted
            return row is not None and row.id == record

        await until(pilot, on_it, "the record")
        await press(pilot, "d")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the dialog")
        text = " ".join(dialog_text(app.screen).split())
        name = scope.rsplit("/", 1)[-1]
        said = f"Of the last {len(recent)} prompt(s) in {name}, {losing} would no longer get"
        assert f"{said} this record" in text
        await press(pilot, "n")
        assert stored(realistic, record)["status"] != "forgotten"
        # a correction is proved on the same prompts before it is written
        content = stored(realistic, record)["content"]
        await press(pilot, "e")
        await pilot.press("f7", *"Zebras graze quietly in the savanna at dawn.", "ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the proof")
        text = " ".join(dialog_text(app.screen).split())
        assert "Correct this memory?" in text and f"{said} this record" in text
        await press(pilot, "n")
        assert stored(realistic, record)["content"] == content  # asked, and refused
        # a pin asks nothing: what it does to the same prompts is in its toast
        notes = Notes(app)
        pinned = stored(realistic, record)["layer"] != "pinned"
        await press(pilot, "p")
        await until(pilot, lambda: "Of the last" in notes.last(), "the pin's proof")
        assert (stored(realistic, record)["layer"] == "pinned") == pinned


async def test_the_injected_filter_compares_counts_and_says_when_they_are_not_known(
    realistic: Path,
) -> None:
    from memevo_tui.core.view import NOT_REPLAYED, View, order_view, parse_filter

    assert parse_filter("injected:>2 inj:<=5").injected == ((">", 2), ("<=", 5))
    assert parse_filter("injected:many").errors
    rows = [m for m in await _records(realistic) if m.active][:3]
    a, b, c = (m.id for m in rows)
    counts = {b: 3, c: 12}  # a: never injected

    def shown(query: str) -> set[str]:
        return {r.id for r in order_view(rows, View(query=query), None, counts)[0]}

    assert shown("injected:0") == {a}
    assert shown("injected:>2") == {b, c}
    assert shown("injected:>=3 injected:<10") == {b}
    assert shown("inj:12") == {c}
    listed, f, _ = order_view(rows, View(query="injected:0"), None, None)
    assert listed == [] and NOT_REPLAYED in f.errors


async def test_the_memory_list_filters_by_how_often_pi_injected_a_record(realistic: Path) -> None:
    from pilot_keys import open_turns

    from memevo_tui.views.turns import TurnsView
    from memevo_tui.widgets.memory_list import MemoryList

    from apphelpers import make_app, press, until

    app = make_app(realistic)
    async with app.run_test(size=(160, 50)) as pilot:
        app.state.sessions = SESSIONS
        await open_turns()(pilot)
        turns = [t for s in app.query_one(TurnsView).sessions for t in s.turns]
        often = {i for t in turns for i in t.then or ()}
        hidden = {"forgotten", "conflicted"}
        visible = {m.id for m in app.state.rows if getattr(m, "status", "") not in hidden}
        await press(pilot, "m", "slash", *"injected:>0", "enter")
        rows = app.query_one(MemoryList)
        await until(pilot, lambda: {r.id for r in rows.rows} == often & visible, "the filter")
        assert 10 <= len(rows.rows) < len(visible)


async def test_the_memory_list_sorts_by_how_often_and_how_lately_pi_injected_a_record(
    realistic: Path,
) -> None:
    from pilot_keys import open_turns

    from memevo_tui.core.view import View, order_view
    from memevo_tui.views.memories import MemoriesView
    from memevo_tui.views.turns import TurnsView
    from memevo_tui.widgets.memory_list import MemoryList

    from apphelpers import Notes, make_app, press, until

    rows = [m for m in await _records(realistic) if m.active][:3]
    a, b, c = (m.id for m in rows)
    listed = order_view(rows, View(sort="injected"), None, {b: 3, c: 12}, {b: 9.0, c: 1.0})[0]
    assert [r.id for r in listed] == [c, b, a]
    listed = order_view(rows, View(sort="last_injected"), None, {b: 3, c: 12}, {b: 9.0, c: 1.0})[0]
    assert [r.id for r in listed] == [b, c, a]

    app = make_app(realistic)
    async with app.run_test(size=(160, 50)) as pilot:
        notes = Notes(app)
        app.state.sessions = SESSIONS
        view = app.query_one(MemoriesView)
        view.sort_by("injected")  # not replayed yet: said, and the sort is left as it is
        assert "known once pi's sessions are replayed" in notes.last()
        assert view.browser.view.sort == "updated"
        await open_turns()(pilot)
        turns = [t for s in app.query_one(TurnsView).sessions for t in s.turns]
        counts: dict[str, int] = {}
        for t in turns:
            for i in t.then or ():
                counts[i] = counts.get(i, 0) + 1
        await press(pilot, "m")
        view.sort_by("injected")
        memory_list = app.query_one(MemoryList)
        most = max(counts.values())
        await until(pilot, lambda: counts.get(memory_list.rows[0].id) == most, "the sort")
        shown = [counts.get(r.id, 0) for r in memory_list.rows]
        assert shown == sorted(shown, reverse=True)


async def test_dormant_soon_is_news_only_near_the_end_and_what_costs_most_comes_first(
    realistic: Path,
) -> None:
    from memevo_tui.core.review import SOON_SHARE, build

    rows = await _records(realistic)
    fresh = [m for m in rows if m.active and m.kind == "project_state"
             and (m.days_until_dormant or 0) > 7 * SOON_SHARE]  # fmt: skip
    assert fresh  # project states a week from dormancy by their kind's nature
    soon = [i for i in build(rows, {}, []) if i.reason == "dormant-soon"]
    assert len(soon) >= 2
    assert not {i.first.id for i in soon} & {m.id for m in fresh}
    last = soon[-1].first.id
    valued = [i for i in build(rows, {}, [], injected={last: 6}) if i.reason == "dormant-soon"]
    assert valued[0].first.id == last and "injected in 6 turns" in valued[0].why


async def test_slash_filters_the_sessions_and_a_sessions_prompts_by_their_words(
    realistic: Path,
) -> None:
    from pilot_keys import open_turns

    from memevo_tui.views.turns import TurnsView
    from memevo_tui.widgets.turn_list import SessionList, TurnList

    from apphelpers import make_app, press, until

    app = make_app(realistic)
    async with app.run_test(size=(160, 50)) as pilot:
        app.state.sessions = SESSIONS
        await open_turns()(pilot)
        view = app.query_one(TurnsView)
        sessions = app.query_one(SessionList)
        expected = [s for s in view.sessions
                    if any("redis" in t.prompt.text.casefold() for t in s.turns)]  # fmt: skip
        assert 0 < len(expected) < len(view.sessions)
        await press(pilot, "slash", *"redis", "enter")
        await until(pilot, lambda: len(sessions.rows) == len(expected), "the filter")
        await press(pilot, "enter")
        turns = app.query_one(TurnList)
        assert turns.rows and all("redis" in t.prompt.text.casefold() for t in turns.rows)
        await press(pilot, "escape")  # back to the sessions, still filtered
        assert sessions.display and len(sessions.rows) == len(expected)
        await press(pilot, "escape")  # the filter cleared
        await until(pilot, lambda: len(sessions.rows) == len(view.sessions), "every session")


async def test_a_cold_replay_runs_aside_and_keys_stay_live_meanwhile(
    realistic: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The replay is CPU for seconds to minutes: it runs in a thread of its own (with
    its own connection), and the dashboard takes keys while it runs."""
    import asyncio
    import threading

    from textual.widgets import TabbedContent

    import memevo_tui.core.turnlog as turnlog
    from memevo_tui.views.turns import TurnsView

    from apphelpers import press, until

    release = threading.Event()
    ran_in: list[str] = []

    async def slow(*args: Any) -> list[Any]:
        ran_in.append(threading.current_thread().name)
        args[4](0, 10)  # progress(done, total): load_turns(db, clock, root, cache, progress, early)
        release.wait(30)  # blocks this thread only: the dashboard's loop must go on
        return []

    monkeypatch.setattr(turnlog, "load_turns", slow)
    async with opened(realistic) as (app, pilot):
        await pilot.press("n")
        view = app.query_one(TurnsView)
        await until(pilot, lambda: bool(ran_in), "the replay to start")
        await pilot.press("m")  # taken while the replay runs
        await until(pilot, lambda: app.query_one("#tabs", TabbedContent).active == "memories",
                    "the memory list")  # fmt: skip
        assert view.busy and ran_in == ["memevo-turns"]
        release.set()
        await until(pilot, lambda: not view.busy, "the replay to end")
        await asyncio.sleep(0)
        await press(pilot, "n")
        assert "0 session(s)" in str(app.query_one("#turns-summary").render())


async def test_the_moving_index_recalls_exactly_as_an_index_built_at_each_moment(
    realistic: Path,
) -> None:
    """The replay carries one index from each prompt's moment to the one before
    (``MovingIndex``); at every prompt of the fixture's sessions it must give what an
    index built afresh from the store as it was then gives: the ids, pi's digest, each
    line, and every record that matched."""
    from store import Memory, NotInLog
    from store.pi.turns import injected_by
    from store.recall.index import RecallIndex
    from store.recall.moving import MovingIndex

    prompts = [p for f in session_files(SESSIONS) for p in session_prompts(f).prompts]
    async with await MemoryStore.open(realistic, clock=fixed_clock(FIXTURE_NOW)) as store:
        moving = MovingIndex()
        compared = 0
        for prompt in sorted(prompts, key=lambda p: -p.moment_ms):
            try:
                past = await store.replay(prompt.moment_ms)
                raw = await store.replay(prompt.moment_ms, retime=False)
            except NotInLog:  # before the exact past: not replayed either way
                continue
            rows = [r for r in past.rows if isinstance(r, Memory)]
            kept = [r for r in raw.rows if isinstance(r, Memory)]  # the moments they carry
            index, fresh = moving.at(kept, raw.when), RecallIndex(rows)
            assert injected_by(index, prompt) == injected_by(fresh, prompt)
            for purpose in ("search", "tool"):
                a = index.recall(prompt.text, purpose=purpose)
                b = fresh.recall(prompt.text, purpose=purpose)
                assert [(c.memory.id, c.reason, c.rank_score, c.memory.quality_at)
                        for c in (*a.selected, *a.left_out)] == [
                    (c.memory.id, c.reason, c.rank_score, c.memory.quality_at)
                    for c in (*b.selected, *b.left_out)
                ]  # fmt: skip
            compared += 1
    assert compared >= 40
