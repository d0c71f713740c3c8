"""Where each memory came from: the passage of its source that states it, the plain
"not stated" line when none does, and pi's session around the source's entry."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memevo_tui.__main__ import main
from store import MemoryStore, fixed_clock
from store.pi.folders import find_session, parse_source_id
from store.pi.provenance import GROUNDED, NOT_STATED, best_passage, passages
from store.pi.sessions import branch, locate, read_session

from apphelpers import make_app, opened, press, select, settle, until, wait_loaded
from conftest import FIXTURE_NOW, FIXTURES

SESSIONS = FIXTURES / "sessions"
SUMMARY = (
    "## Goal\nBootstrap the shop.\n\n## Key Decisions\n"
    "- Postgres is the system of record; Redis holds only sessions.\n"
    "## Critical Context\n- The API listens on port 4000. It starts with pnpm dev.\n"
)


def test_the_passage_is_the_sentence_that_covers_the_claim_with_its_section() -> None:
    p = best_passage("The API dev server listens on port 4000.", SUMMARY)
    assert p is not None and p.text == "- The API listens on port 4000."
    assert p.section == "Critical Context" and p.grounded
    assert SUMMARY[p.start : p.end] == p.text
    claim = best_passage("Keep pull requests under 400 changed lines.", SUMMARY)
    assert claim is not None and not claim.grounded and claim.coverage < GROUNDED
    text = "a. b\n\n## H\nc"
    assert [(text[s:e], h) for s, e, h in passages(text)] == [("a.", ""), ("b", ""), ("c", "H")]


def test_offsets_in_json_count_as_javascript_does() -> None:
    text = "😀 first line\nThe port is 4000.\n"
    p = best_passage("port 4000", text)
    assert p is not None and (p.start, p.js_start) == (13, 14)


def test_a_source_id_finds_its_session_and_entry_on_its_branch() -> None:
    ref = parse_source_id("compact:fabd4d8d-3fa7-4ba6-be34-b79c284e3dff:e56f34cb")
    assert ref is not None and ref.entry_id == "e56f34cb"
    path = find_session(SESSIONS, ref.session_id, "/home/dev/projects/webshop")
    assert path is not None
    entry = locate(read_session(path), ref)
    assert entry is not None and entry.type == "compaction"
    user = parse_source_id("user:5dbfd434-9a6e-4048-8330-e5511aa637da:1743483600000:ddf6")
    assert user is not None and user.moment_ms == 1743483600000
    [branched] = list(SESSIONS.glob("*/*_2d87f054-*.jsonl"))
    s = read_session(branched)
    line = branch(s, s.order[-1])
    on_file = [s.places[i] for i in s.order if s.places[i].role == "user"]
    on_branch = [e for e in line if e.role == "user"]
    assert len(on_branch) < len(on_file)  # the abandoned turns are not on it
    [cut] = list(SESSIONS.glob("*/*_795dcd22-*.jsonl"))
    assert read_session(cut).corrupt == 1


def test_every_memory_with_a_source_shows_its_text_with_a_passage_or_not_stated(
    realistic: Path,
) -> None:
    import asyncio

    async def check() -> tuple[int, int, int, int]:
        store = await MemoryStore.open(realistic, read_only=True, clock=fixed_clock(FIXTURE_NOW))
        try:
            with_source = grounded = not_stated = by_hand = 0
            for m in (await store.load_memories()).memories:
                p = await store.provenance(m.id)
                texts = [s for s in p.sources if s.passage is not None]
                if not texts:
                    continue
                with_source += 1
                grounded += p.grounded is True
                not_stated += p.grounded is False
                by_hand += p.corrected is not None  # the user is the evidence: no verdict
            return with_source, grounded, not_stated, by_hand
        finally:
            await store.close()

    with_source, grounded, not_stated, by_hand = asyncio.run(check())
    assert with_source == 193 and grounded + not_stated + by_hand == 193 and by_hand == 3
    assert 0 < not_stated < 20


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


COPIED = "807775ca"  # a claim nearly copied from the user's words
INVENTED = "73f58dd4"  # a claim whose words its summary never says


def full_id(path: Path, prefix: str) -> str:
    import sqlite3

    con = sqlite3.connect(path)
    try:
        return str(con.execute("SELECT id FROM memories WHERE id LIKE ?", (prefix + "%",))
                   .fetchone()[0])  # fmt: skip
    finally:
        con.close()


def test_source_verb_marks_the_passage_when_piped_and_says_not_stated(
    realistic: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copied, invented = full_id(realistic, COPIED), full_id(realistic, INVENTED)
    code, out, err = run(capsys, "source", copied, "--db", str(realistic),
                         "--sessions", str(SESSIONS), "--context", "1")  # fmt: skip
    assert code == 0, err
    assert "[[Remember I prefer Grafana alert silences" in out and "]]" in out
    assert "entry " in out and "> user: Remember I prefer Grafana" in out
    code, out, err = run(capsys, "source", invented, "--db", str(realistic),
                         "--sessions", str(SESSIONS))  # fmt: skip
    assert code == 0 and NOT_STATED in out and "[[" not in out
    code, out, _ = run(capsys, "source", invented, "--db", str(realistic), "--json",
                       "--sessions", str(SESSIONS))  # fmt: skip
    data = json.loads(out)
    assert data["grounded"] is False
    [source] = data["sources"]
    assert source["kind"] == "compact" and source["passage"]["coverage"] == 0
    assert source["models"] and all("/" in m for m in source["models"])  # the run's model
    assert source["session"]["entry"] == source["id"].rsplit(":", 1)[1]


def test_a_missing_session_folder_still_shows_the_source_text(
    realistic: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "source", full_id(realistic, COPIED), "--db", str(realistic),
                       "--sessions", str(tmp_path / "none"))  # fmt: skip
    assert code == 0 and "session file not found" in out and "[[" in out


async def test_enter_enter_opens_the_provenance_pane_with_the_passage_and_the_session(
    realistic: Path,
) -> None:
    from memevo_tui.dialogs.menu import Menu
    from memevo_tui.views.provenance import ProvenanceScreen

    async with opened(realistic) as (app, pilot):
        app.state.sessions = SESSIONS
        await select(pilot, full_id(realistic, COPIED))
        await press(pilot, "enter")  # the record menu: where it came from is its first line
        assert isinstance(app.screen, Menu)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ProvenanceScreen)
                    and app.screen.loaded is not None, "the pane")  # fmt: skip
        screen = app.screen
        assert isinstance(screen, ProvenanceScreen)
        shown = screen.plain
        assert "Remember I prefer Grafana alert silences" in shown
        assert "✓ " in shown and "of the claim's words" in shown
        assert "▶ user: Remember I prefer Grafana" in shown
        await pilot.press("y")
        await settle(pilot)
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(app.screen, ProvenanceScreen)
        await select(pilot, full_id(realistic, INVENTED))
        await pilot.press("P")
        await until(pilot, lambda: isinstance(app.screen, ProvenanceScreen)
                    and app.screen.loaded is not None, "the pane again")  # fmt: skip
        assert NOT_STATED in app.screen.plain  # type: ignore[attr-defined]


async def test_the_hostile_store_s_panes_show_text_as_text(hostile: Path) -> None:
    from memevo_tui.views.provenance import ProvenanceScreen

    app = make_app(hostile)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_loaded(pilot)
        for memory_id in ("7042e72354913d256b6571ab", "00935da45ffdf0161938e323"):
            await select(pilot, memory_id)
            await pilot.press("P")
            await until(pilot, lambda: isinstance(app.screen, ProvenanceScreen)
                        and app.screen.loaded is not None, "the pane")  # fmt: skip
            shown = app.screen.plain  # type: ignore[attr-defined]
            assert "\x1b" not in shown and app.is_running
            await pilot.press("escape")
            await settle(pilot)


def test_a_claim_its_source_never_states_joins_the_review_queue(realistic: Path) -> None:
    import asyncio

    from memevo_tui.core.review import build
    from store import Source

    async def queue() -> list[object]:
        store = await MemoryStore.open(realistic, read_only=True, clock=fixed_clock(FIXTURE_NOW))
        try:
            load = await store.load_memories()
            sources = {s.id: s for s in await store.sources() if isinstance(s, Source)}
            return list(build(list(load.memories), sources, []))
        finally:
            await store.close()

    items = asyncio.run(queue())
    flagged = {i.first.id[:8]: i for i in items if i.reason == "not-grounded"}  # type: ignore[attr-defined]
    assert INVENTED in flagged and COPIED not in flagged
    assert NOT_STATED in flagged[INVENTED].why  # type: ignore[attr-defined]
    assert "0% of the claim's words" in flagged[INVENTED].why  # type: ignore[attr-defined]
    assert all(i.first.evidence.method == "model" for i in flagged.values())  # type: ignore[attr-defined]


async def test_p_opens_it_from_review_and_from_the_detail_pane(realistic: Path) -> None:
    from memevo_tui.views.provenance import ProvenanceScreen
    from memevo_tui.widgets.review_list import ReviewList

    async with opened(realistic) as (app, pilot):
        app.state.sessions = SESSIONS
        await pilot.press("w")
        review = app.screen.query_one(ReviewList)
        await until(pilot, lambda: any(i.reason == "not-grounded" for i in review.rows),
                    "the review queue")  # fmt: skip
        at = next(i for i, item in enumerate(review.rows) if item.reason == "not-grounded")
        review.focus()
        for _ in range(at):
            await pilot.press("j")
        await settle(pilot)
        wanted = review.rows[at].first.id
        await pilot.press("P")
        await until(pilot, lambda: isinstance(app.screen, ProvenanceScreen)
                    and app.screen.loaded is not None, "the pane from review")  # fmt: skip
        assert app.screen.memory_id == wanted  # type: ignore[attr-defined]
        assert NOT_STATED in app.screen.plain  # type: ignore[attr-defined]
        await pilot.press("escape")
        await pilot.press("m")
        await select(pilot, full_id(realistic, COPIED))
        await pilot.press("tab")  # the detail pane
        await settle(pilot)
        await pilot.press("P")
        await until(pilot, lambda: isinstance(app.screen, ProvenanceScreen)
                    and app.screen.loaded is not None, "the pane from the detail")  # fmt: skip
        assert app.screen.memory_id == full_id(realistic, COPIED)  # type: ignore[attr-defined]
        await pilot.press("escape")
        await pilot.press("h")  # the history: the selected event's record
        from memevo_tui.widgets.event_list import EventList

        events = app.screen.query_one(EventList)
        await until(pilot, lambda: bool(events.rows), "the history")
        events.focus()
        await settle(pilot)
        await pilot.press("P")
        await until(pilot, lambda: isinstance(app.screen, ProvenanceScreen)
                    and app.screen.loaded is not None, "the pane from history")  # fmt: skip


def write_session(path: Path, turns: int, pad: int = 0) -> list[str]:
    """A linear session of ``turns`` messages (``pad`` bytes of tool output each third)."""
    ids = []
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps({"type": "session", "version": 3, "id": "s1", "cwd": "/x",
                            "timestamp": "2026-01-01T00:00:00.000Z"}) + "\n")  # fmt: skip
        parent = None
        for i in range(turns):
            eid = f"{i:08x}"
            role = ("user", "assistant", "toolResult")[i % 3]
            text = f"turn {i}" + ("x" * pad if role == "toolResult" else "")
            f.write(json.dumps({"type": "message", "id": eid, "parentId": parent,
                                "timestamp": "2026-01-01T00:00:00.000Z",
                                "message": {"role": role, "timestamp": 1_700_000_000_000 + i,
                                            "content": [{"type": "text", "text": text}]}})
                    + "\n")  # fmt: skip
            parent = eid
            ids.append(eid)
    return ids


@pytest.mark.unit  # a session file's scan, counted
def test_a_session_s_index_is_kept_and_used_while_the_file_is_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import store.pi.sessions as sessions

    path = tmp_path / "s.jsonl"
    ids = write_session(path, 300, pad=2000)

    class Kept:
        def __init__(self) -> None:
            self.data: dict[Path, bytes] = {}

        def get(self, p: Path) -> bytes | None:
            return self.data.get(p)

        def put(self, p: Path, data: bytes) -> None:
            self.data[p] = data

    cache = Kept()
    first = sessions.read_session(path, cache)
    assert path in cache.data and len(first.order) == 300

    def no_scan(p: Path) -> object:
        raise AssertionError("the file was read again")

    real_scan = sessions._scan
    monkeypatch.setattr(sessions, "_scan", no_scan)
    again = sessions.read_session(path, cache)
    assert again.places == first.places
    before, after = sessions.turns_around(again, ids[150], 2)
    assert [e.text[:8] for e in before] == ["turn 148", "turn 149"]
    assert [e.text[:8] for e in after] == ["turn 151", "turn 152"]
    with open(path, "a", encoding="utf-8") as f:  # pi appends: the index is stale
        f.write("{not json\n")
    monkeypatch.setattr(sessions, "_scan", real_scan)
    changed = sessions.read_session(path, cache)
    assert changed.corrupt == 1
    cache.data[path] = b"garbage"
    assert sessions.read_session(path, cache).corrupt == 1  # a damaged index: read afresh
