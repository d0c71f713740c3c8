"""Hostile session files and project paths (issue 55): nothing they hold reaches the
terminal as an escape sequence or as markup; a deep, looping, badly encoded or
unreadable session is read as pi reads it, and said when it is not; a project path
means one project everywhere."""

from __future__ import annotations

import json
import os
import random
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from ptyrun import PtyRun

from memevo_tui.__main__ import main
from store import iso, session_prompts
from store.pi.prompts import context_messages, recent_user_messages, user_text
from store.pi.sessions import Session, read_session

from conftest import FIXTURES

SESSIONS = FIXTURES / "sessions"
T0 = 1_780_000_000_000
TITLE = "\x1b]0;PWNED\x07"
CLEAR = "\x1b[2J"
CLIP = "\x1b]52;c;cm0gLXJmIH4K\x07"
WEBSHOP = "/home/dev/projects/webshop"
SOURCED = "b88d145711c98801541a4e62"  # its source: session fabd4d8d's compaction e56f34cb


def _user(eid: str, parent: str | None, text: str, n: int) -> dict[str, Any]:
    return {"type": "message", "id": eid, "parentId": parent, "timestamp": iso(T0 + n),
            "message": {"role": "user", "content": [{"type": "text", "text": text}],
                        "timestamp": T0 + n}}  # fmt: skip


def _reply(eid: str, parent: str | None, n: int, text: str = "ok") -> dict[str, Any]:
    return {"type": "message", "id": eid, "parentId": parent, "timestamp": iso(T0 + n),
            "message": {"role": "assistant", "content": [{"type": "text", "text": text}],
                        "timestamp": T0 + n}}  # fmt: skip


def _write(path: Path, lines: list[dict[str, Any]], sid: str = "s1", cwd: str = "/p") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    header = {"type": "session", "version": 3, "id": sid, "timestamp": iso(T0), "cwd": cwd}
    path.write_text("\n".join(json.dumps(x) for x in [header, *lines]) + "\n")
    return path


def hostile_sessions(tmp_path: Path) -> Path:
    """The fixture's sessions, plus one whose folder, file name, id, entry ids and cwd
    hold escapes, and a neighbour of a record's source whose role is one."""
    root = tmp_path / "sessions"
    shutil.copytree(SESSIONS, root)
    folder = root / f"--home-dev-{TITLE}--"
    sid = f"{TITLE}{CLEAR}0199"
    later = 100_000_000_000  # 2029: the newest session, listed first
    lines = [_user(f"{TITLE}u1", None, f"deploy the {CLIP} redis port", later),
             _reply(f"{CLEAR}a1", f"{TITLE}u1", later + 2)]  # fmt: skip
    _write(folder / f"2029-06-01T00-00-00-000Z_{TITLE}.jsonl", lines, sid,
           f"/home/dev/{CLEAR}{TITLE}")  # fmt: skip
    source = next((root / "--home-dev-projects-webshop--").glob("*fabd4d8d*"))
    rows = [json.loads(x) for x in source.read_text().splitlines()]
    for row in rows:
        if row.get("type") == "message" and row["message"].get("role") == "assistant":
            row["message"]["role"] = f"{TITLE}assistant"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


def _no_escape(output: bytes) -> None:
    """A verb's whole output on a terminal holds no escape but its own bold passage."""
    rest = output.replace(b"\x1b[1m", b"").replace(b"\x1b[0m", b"")
    assert b"\x1b" not in rest and b"\x07" not in rest, output[:2000]
    assert b"\xe2\x90\x9b" in output  # the visible ESC, U+241B


@pytest.mark.parametrize("verb", ["turns", "source"])
def test_no_escape_from_a_session_file_reaches_the_terminal(
    realistic: Path, tmp_path: Path, verb: str
) -> None:
    root = hostile_sessions(tmp_path)
    args = ["turns"] if verb == "turns" else ["source", SOURCED, "--context", "2"]
    run = PtyRun(*args, "--db", str(realistic), "--sessions", str(root))
    assert run.finish() == 0, run.text[-2000:]
    _no_escape(run.output)


def test_a_hostile_origin_never_reaches_the_terminal_from_the_status_line(
    hostile: Path, tmp_path: Path
) -> None:
    """``--project`` naming an origin with OSC 52 and a bidi override: the dashboard
    draws it visibly, and the terminal never gets the clipboard write or the override."""
    origin = f"/home/dev/projects/{CLIP}clip"
    agent = tmp_path / "agent"
    hostile_sessions(agent)
    env = {"PI_CODING_AGENT_DIR": str(agent), "XDG_STATE_HOME": str(tmp_path)}
    run = PtyRun("--db", str(hostile), "--read-only", "--project", origin, env=env)
    assert run.read_until(b"clip"), run.text[-2000:]
    run.send(b"@")  # the next scope, then the picker
    run.pump(1.0)
    run.send(b"\x1b")
    run.send(b"n")  # the Turns view: the hostile session's id, cwd and file name
    assert run.read_until(b"2029-"), run.text[-3000:]
    run.send(b"g\r")  # its prompts, the first one's pane
    assert run.read_until(b"redis port"), run.text[-3000:]
    run.pump(1.0)
    run.send(b"q")
    run.finish()
    assert b"\x1b]52;" not in run.output
    assert "\u202e".encode() not in run.output
    assert b"\x1b]0;PWNED" not in run.output and b"\x1b[2J0199" not in run.output
    assert "␛]0;PWNED".encode() in run.output  # drawn, visibly


async def test_markup_in_an_origin_is_shown_as_written_in_the_project_menu(
    realistic: Path,
) -> None:
    from textual.widgets import OptionList

    from apphelpers import make_app

    origins = ["/x/[/]", "/y/[@click=app.quit]QUIT[/]", "/z/[b]BOLD[/b]"]
    with sqlite3.connect(realistic) as db:
        ids = [r[0] for r in db.execute("SELECT id FROM memories WHERE scope = ? LIMIT 3",
                                        (WEBSHOP,))]  # fmt: skip
        for record, origin in zip(ids, origins, strict=True):
            db.execute("UPDATE memories SET scope = ?, data = json_set(data, '$.scope', ?) "
                       "WHERE id = ?", (origin, origin, record))  # fmt: skip
    app = make_app(realistic)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.press("@")  # scoped to all: the picker opens
        await pilot.pause()
        options = app.screen.query_one(OptionList)
        shown = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        for origin in origins:
            assert any(origin in line for line in shown), shown
        await pilot.press("escape")
        assert app.is_running


# ------------------------------------------------------------------ reading sessions


def _old_recent(session: Session) -> dict[str, tuple[str, ...]]:
    """Each prompt's recent user texts the way they were first computed: the branch
    walked from the root for every prompt (quadratic, kept here as the oracle)."""
    leaves = [e for e in session.order if not session.children.get(e)]
    active = session.last
    ordered = ([active] if active in leaves else []) + [e for e in leaves if e != active]
    out: dict[str, tuple[str, ...]] = {}
    for leaf in ordered:
        line = session.path_to(leaf)
        for i, entry_id in enumerate(line):
            place = session.places[entry_id]
            if entry_id in out or place.role != "user" or place.moment_ms is None:
                continue
            out[entry_id] = recent_user_messages(context_messages(session, line[:i]))
    return out


def test_the_one_walk_gives_every_fixture_prompt_the_recent_texts_of_its_branch() -> None:
    files = sorted(SESSIONS.rglob("*.jsonl"))
    assert len(files) > 80
    for path in files:
        session = read_session(path)
        found = session_prompts(path)
        assert {p.entry_id: p.recent for p in found.prompts} == _old_recent(session), path


def test_the_one_walk_agrees_on_random_trees_with_compactions(tmp_path: Path) -> None:
    rng = random.Random(55)
    words = ["redis port", "postgres", "ok", "continue", "/model x", "deploy api", "  "]
    for case in range(40):
        lines: list[dict[str, Any]] = []
        ids: list[str] = []
        for n in range(rng.randint(5, 60)):
            parent = rng.choice(ids[-5:]) if ids and rng.random() < 0.9 else (
                ids[-1] if ids else None)  # fmt: skip
            eid = f"e{n}"
            roll = rng.random()
            if roll < 0.45:
                lines.append(_user(eid, parent, rng.choice(words), n))
            elif roll < 0.9:
                lines.append(_reply(eid, parent, n))
            else:
                kept = rng.choice(ids) if ids else None
                lines.append({"type": "compaction", "id": eid, "parentId": parent,
                              "timestamp": iso(T0 + n), "summary": "s",
                              "firstKeptEntryId": kept})  # fmt: skip
            ids.append(eid)
        path = _write(tmp_path / f"c{case}" / "2026-06-01T00-00-00-000Z_s.jsonl", lines)
        found = session_prompts(path)
        assert {p.entry_id: p.recent for p in found.prompts} == _old_recent(read_session(path)), (
            case
        )


def test_a_deep_session_is_read_once_per_line_and_a_cycle_is_noted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 12,000-entry chain (past the 4,096 lines a reader keeps) reads each line at
    most once or twice, not once per prompt below it; entries in a parentId cycle and a
    self-parent are counted and said."""
    lines: list[dict[str, Any]] = []
    parent = None
    for n in range(12_000):
        eid = f"e{n}"
        lines.append(_user(eid, parent, f"topic {n} redis", n) if n % 2 == 0
                     else _reply(eid, parent, n))  # fmt: skip
        parent = eid
    lines += [_user("c1", "c2", "loop", 1), _user("c2", "c1", "loop", 2),
              _user("self", "self", "me", 3)]  # fmt: skip
    path = _write(tmp_path / "deep" / "2026-06-01T00-00-00-000Z_s.jsonl", lines)
    reads = 0
    real = Session.data

    def counted(self: Session, entry_id: str, opened: Any = None) -> dict[str, Any]:
        nonlocal reads
        reads += 1
        return real(self, entry_id, opened)

    monkeypatch.setattr(Session, "data", counted)
    found = session_prompts(path)
    assert len(found.prompts) == 6_000
    assert reads <= 2 * 12_000
    assert found.prompts[-1].recent == tuple(f"topic {n} redis" for n in range(11_986, 11_998, 2))
    assert found.note == "3 entries in a parentId cycle, skipped" and found.corrupt == 3


def test_invalid_utf8_in_a_prompt_is_read_as_node_reads_it(tmp_path: Path) -> None:
    path = _write(tmp_path / "u" / "2026-06-01T00-00-00-000Z_s.jsonl",
                  [_user("u1", None, "the redis port PLACEHOLDER", 1), _reply("a1", "u1", 2),
                   _user("u2", "a1", "and postgres", 3)])  # fmt: skip
    path.write_bytes(path.read_bytes().replace(b"PLACEHOLDER", b"caf\xe9 \xff\xfe"))
    found = session_prompts(path)
    assert not found.problem and found.corrupt == 0
    assert [p.text for p in found.prompts] == ["the redis port caf\ufffd \ufffd\ufffd",
                                               "and postgres"]  # fmt: skip
    assert found.prompts[1].recent == ("the redis port caf\ufffd \ufffd\ufffd",)
    assert user_text(read_session(path).data("u1")["message"]).startswith("the redis")


def _refusing(bad: Path) -> Any:
    """``Path.iterdir`` refusing ``bad`` as a folder of another user's at 0700 does (the
    tests run as root in CI, where chmod refuses nothing)."""
    real = Path.iterdir

    def iterdir(self: Path) -> Any:
        if self == bad:
            raise PermissionError(13, "Permission denied")
        return real(self)

    return iterdir


def test_a_folder_that_cannot_be_read_makes_blame_say_its_count_is_partial(
    realistic: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    root = tmp_path / "sessions"
    shutil.copytree(SESSIONS, root)
    monkeypatch.setattr(Path, "iterdir", _refusing(root / "--home-dev-projects-infra--"))
    assert main(["blame", SOURCED, "--db", str(realistic), "--sessions", str(root)]) == 0
    err = capsys.readouterr().err
    assert "--home-dev-projects-infra--: folder unreadable" in err
    assert "partial: 1 file(s) or folder(s) could not be read" in err


def test_an_unreadable_folder_is_listed_as_a_problem(tmp_path: Path) -> None:
    """(As root too:) ``session_files`` says a folder it cannot list, never skips it."""
    from store import session_files

    root = tmp_path / "sessions"
    (root / "--a--").mkdir(parents=True)
    (root / "--b--").write_text("")  # not a folder: nothing to say
    bad = root / "--a--"
    problems: list[tuple[Path, str]] = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Path, "iterdir", _refusing(bad))
        assert session_files(root, problems=problems) == []
    why = "folder unreadable (Permission denied); its sessions are not counted"
    assert problems == [(bad, why)]


# ------------------------------------------------------------------ project paths


def test_a_project_path_is_resolved_one_way(tmp_path: Path) -> None:
    from memevo_tui.core.scope import resolve_project

    project = tmp_path / "projects" / "webshop"
    (project / "apps" / "api").mkdir(parents=True)
    (tmp_path / "projects" / "infra").mkdir()
    link = tmp_path / "link"
    link.symlink_to(project)
    origins = [str(project), str(tmp_path / "projects" / "infra"), "legacy"]
    for asked in (str(link), f"{tmp_path}/projects/infra/../webshop", f"{project}/apps/api",
                  f"{project}/", "."):  # fmt: skip
        assert resolve_project(asked, origins, cwd=str(project)) == str(project), asked


def test_turns_and_list_take_every_spelling_of_a_project(
    realistic: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """The fixture's projects live under /home/dev/projects; a symlink, a ``..``, a
    folder inside, a trailing slash and ``.`` all name webshop, for turns and list."""
    if not Path("/home/dev/projects").exists():
        base = tmp_path / "home"
        (base / "webshop" / "apps" / "api").mkdir(parents=True)
        (base / "infra").mkdir()
        with sqlite3.connect(realistic) as db:
            for table in ("memories",):
                db.execute(f"UPDATE {table} SET scope = replace(scope, '/home/dev/projects', ?),"
                           " data = json_set(data, '$.scope', replace(scope, "
                           "'/home/dev/projects', ?))", (str(base), str(base)))  # fmt: skip
        sessions = tmp_path / "sessions"
        for path in SESSIONS.rglob("*.jsonl"):
            rows = path.read_text().replace("/home/dev/projects", str(base))
            folder = sessions / path.parent.name.replace(
                "home-dev-projects", str(base).lstrip("/").replace("/", "-"))  # fmt: skip
            folder.mkdir(parents=True, exist_ok=True)
            (folder / path.name).write_text(rows)
    else:  # pragma: no cover - a machine with the fixture's own home
        base, sessions = Path("/home/dev/projects"), SESSIONS
    (tmp_path / "link").symlink_to(base / "webshop")
    monkeypatch.chdir(base / "webshop")
    spellings = [str(tmp_path / "link"), f"{base}/infra/../webshop", f"{base}/webshop/apps/api",
                 f"{base}/webshop/", "."]  # fmt: skip
    counts = set()
    for asked in spellings:
        assert main(["turns", "--db", str(realistic), "--sessions", str(sessions),
                     "--project", asked, "--json"]) == 0, asked  # fmt: skip
        turns = json.loads(capsys.readouterr().out)["turns"]
        assert turns and all(t["project"] == f"{base}/webshop" for t in turns), asked
        assert main(["list", "--db", str(realistic), "--project", asked, "--json"]) == 0
        listed = json.loads(capsys.readouterr().out)
        counts.add((len(turns), len(listed)))
    assert len(counts) == 1 and next(iter(counts))[1] > 50, counts


# ------------------------------------------------------------------ the caches


def test_a_forged_session_index_with_the_files_fingerprint_is_not_trusted(
    tmp_path: Path,
) -> None:
    """A session index written by anyone without the state directory's key, carrying the
    file's real stat fingerprint, would show one prompt's text for another: it is
    ignored, and the file read again."""
    from memevo_tui.core.appstate import AppState
    from memevo_tui.core.recallcache import SESSION_INDEX, SessionIndexCache, cache_home
    from store.pi.sessions import dump_index

    path = _write(tmp_path / "f" / "2026-06-01T00-00-00-000Z_s.jsonl",
                  [_user("u1", None, "the redis port", 1), _reply("a1", "u1", 2),
                   _user("u2", "a1", "and postgres", 3)])  # fmt: skip
    cache = SessionIndexCache()
    honest = session_prompts(path, cache)
    assert [p.text for p in honest.prompts] == ["the redis port", "and postgres"]
    assert [p.text for p in session_prompts(path, SessionIndexCache()).prompts] == [
        "the redis port", "and postgres"]  # fmt: skip
    session = read_session(path)
    a, b = session.places["u1"], session.places["u2"]  # u1's line where u2's was
    session.places["u2"] = type(b)(a.offset, a.length, "u2", b.parent_id, b.type, b.role,
                                   b.moment_ms)  # fmt: skip
    forged = dump_index(session, os.stat(path))
    place = AppState(path, root=cache_home())
    kept = place.read_bytes(SESSION_INDEX, 1 << 20)
    assert kept is not None
    assert place.write_bytes(SESSION_INDEX, kept[:32] + forged)  # an old MAC, a new index
    again = session_prompts(path, SessionIndexCache())
    assert [p.text for p in again.prompts] == ["the redis port", "and postgres"]
    assert place.write_bytes(SESSION_INDEX, forged)  # no MAC at all
    assert [p.text for p in session_prompts(path, SessionIndexCache()).prompts][1] == (
        "and postgres")  # fmt: skip


def test_kept_turns_are_not_trusted_for_another_store_at_the_same_path(
    realistic: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``turns`` keeps its answers; the store at the same path replaced by another:
    the next ``turns`` answers as a replay with nothing kept does."""
    base = ["turns", "--db", str(realistic), "--sessions", str(SESSIONS), "--json"]
    assert main(base) == 0
    first = json.loads(capsys.readouterr().out)["turns"]
    other = FIXTURES / "hostile.sqlite"
    realistic.write_bytes(other.read_bytes())
    for suffix in ("-wal", "-shm"):
        Path(f"{realistic}{suffix}").unlink(missing_ok=True)
    assert main(base) == 0
    warm = json.loads(capsys.readouterr().out)["turns"]
    os.environ["XDG_CACHE_HOME"] = str(tmp_path / "fresh-cache")
    assert main(base) == 0
    fresh = json.loads(capsys.readouterr().out)["turns"]
    assert [t["then"] for t in warm] == [t["then"] for t in fresh]
    assert [t["then"] for t in first] != [t["then"] for t in fresh]


# ------------------------------------------------------------------ the store under the replay


def _plain(renderable: Any) -> str:
    import io

    from rich.console import Console

    console = Console(width=100, record=True, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


async def test_the_replay_ends_with_the_reason_when_its_store_is_replaced_under_it(
    realistic: Path,
) -> None:
    """The file replaced after the replay began (at its first step): the replay ends
    with ``Replaced`` and says where it was, rather than replay another store."""
    from memevo_tui.core.turnlog import load_turns
    from store import FileIdentity, Replaced, fixed_clock

    from conftest import FIXTURE_NOW

    held = FileIdentity.of(realistic)
    steps: list[int] = []

    def replace_once(done: int, total: int) -> None:
        steps.append(done)
        if len(steps) == 1:
            other = realistic.with_name("other.sqlite")
            other.write_bytes((FIXTURES / "hostile.sqlite").read_bytes())
            os.replace(other, realistic)

    clock = fixed_clock(FIXTURE_NOW)
    with pytest.raises(Replaced, match="was replaced on disk while pi's sessions were replayed"):
        await load_turns(realistic, clock, SESSIONS, progress=replace_once, held=held)
    assert steps == [0]
    with pytest.raises(Replaced):  # replaced before it opened: refused at once
        await load_turns(realistic, clock, SESSIONS, held=held)


async def test_a_replay_that_fails_says_so_in_the_turns_view(
    realistic: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store cut short under the replay: the summary says the replay stopped and why,
    never "replaying… N of M" for good."""
    from textual.widgets import Static

    import memevo_tui.core.turnlog as turnlog
    from store import Corrupt

    from apphelpers import make_app, press, until, wait_loaded

    async def failing(*args: Any, **kwargs: Any) -> Any:
        raise Corrupt("database disk image is malformed")

    monkeypatch.setattr(turnlog, "load_turns_aside", failing)
    app = make_app(realistic)
    async with app.run_test(size=(160, 50)) as pilot:
        app.state.sessions = SESSIONS
        await wait_loaded(pilot)
        await press(pilot, "n")
        summary = app.query_one("#turns-summary", Static)
        await until(pilot, lambda: "the replay stopped" in str(summary.render()), "the reason")
        assert "corrupt file: database disk image is malformed" in str(summary.render())


async def test_a_huge_prompt_shows_its_start_and_the_whole_page_by_page(
    realistic: Path, tmp_path: Path
) -> None:
    """A session whose prompt is one 8 MB line: the list and the pane lay out only its
    start ("… 7.9 MB more"); ``f`` pages through the whole; keys stay live."""
    from textual.widgets import Static

    from memevo_tui.dialogs.pager import Pager
    from memevo_tui.views.turns import TurnsView
    from memevo_tui.widgets.turn_list import SessionList, TurnList, describe_turn

    from apphelpers import make_app, press, until, wait_loaded

    root = tmp_path / "sessions"
    huge = "redis port " + "x" * (8 << 20) + " THE END"
    _write(root / "--p--" / "2026-06-01T00-00-00-000Z_big.jsonl",
           [_user("u1", None, huge, 1), _reply("a1", "u1", 2)], "big")  # fmt: skip
    app = make_app(realistic)
    async with app.run_test(size=(120, 40)) as pilot:
        app.state.sessions = root
        await wait_loaded(pilot)
        await press(pilot, "n")
        sessions = app.query_one(SessionList)
        await until(pilot, lambda: len(sessions.rows) == 1, "the session")
        await press(pilot, "enter")
        turns = app.query_one(TurnList)
        await until(pilot, lambda: turns.highlighted is not None, "its prompt")
        pane = _plain(describe_turn(turns.highlighted))
        assert "… 8.0 MB more (f: the whole prompt, page by page)" in pane
        assert len(pane) < 40_000
        await press(pilot, "f")
        pager = app.screen
        assert isinstance(pager, Pager) and pager.pages == 525
        await press(pilot, "G")
        assert "THE END" in str(pager.query_one("#pager-text", Static).render())
        assert "page 525 of 525 (8.0 MB)" in str(pager.query_one("#dialog-title", Static).render())
        await press(pilot, "escape")
        assert isinstance(app.query_one(TurnsView), TurnsView) and not isinstance(app.screen, Pager)
