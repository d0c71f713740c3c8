"""Every failure path: one clear line (CLI and start-up) or a clear toast or state (TUI),
the exit codes the README gives, a usable terminal, and nothing lost.

Faults are real where the machine allows (a corrupt page, a full tmpfs, another
user, a read-only directory, an exclusive lock); where it cannot, a connection
wrapper raises exactly what SQLite raises.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import pwd
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from ptyrun import MOUSE_OFF, RESTORE, PtyRun

from memevo_tui.core.text import INVISIBLE, UNSAFE
from memevo_tui.term.compat.testing import notifications
from store import Busy, DiskFull, MemoryStore, fixed_clock
from store.js import fp, js_json

from apphelpers import make_app, opened, press, settle, until, wait_loaded
from conftest import FIXTURE_NOW, FIXTURES, ROOT

DURABLE = "e665359dabc60f842b48881d"
MEMORIES_LEAF_PAGE = 30  # a leaf page of the memories table in realistic.sqlite
ALT_SCREEN = b"\x1b[?1049h"


def cli(*args: str, stdin: int | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memevo_tui", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        stdin=stdin if stdin is not None else subprocess.DEVNULL,
        env={**os.environ, "MEMEVO_NOW": FIXTURE_NOW},
    )


def one_line_error(result: subprocess.CompletedProcess[str], code: int, needle: str) -> None:
    assert result.returncode == code, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr + result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("memevo-tui: "), result.stderr
    assert needle in lines[0], lines[0]


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def integrity_ok(path: Path) -> bool:
    con = sqlite3.connect(path)
    try:
        return bool(con.execute("PRAGMA integrity_check").fetchone() == ("ok",))
    finally:
        con.close()


def count(path: Path, table: str) -> int:
    con = sqlite3.connect(path)
    try:
        return int(con.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
    finally:
        con.close()


def corrupt_page(path: Path, page: int = MEMORIES_LEAF_PAGE) -> None:
    """4 KB of garbage over one data page, as a failing disk or a stray write leaves it."""
    with path.open("r+b") as f:
        f.seek(4096 * (page - 1))
        f.write(bytes((i * 37 + 11) % 256 for i in range(4096)))


# ---------------------------------------------------------------- a corrupt page


@pytest.mark.parametrize(
    "verb", [["list"], ["status"], ["pin", DURABLE], ["search", "kyverno"], ["recall", "x"]]
)
def test_a_corrupt_page_gives_one_line_and_exit_2(realistic: Path, verb: list[str]) -> None:
    corrupt_page(realistic)
    before = file_digest(realistic)
    one_line_error(cli(*verb, "--db", str(realistic)), 2, "is corrupt")
    assert file_digest(realistic) == before  # not even the pin touched the damaged file


def test_a_corrupt_page_with_json_prints_the_error_as_json(realistic: Path) -> None:
    corrupt_page(realistic)
    result = cli("list", "--json", "--db", str(realistic))
    assert result.returncode == 2 and result.stderr == ""
    assert "is corrupt" in json.loads(result.stdout)["error"]


def test_the_dashboard_refuses_a_corrupt_file_before_it_starts(realistic: Path) -> None:
    corrupt_page(realistic)
    run = PtyRun("--db", str(realistic))
    assert run.finish() == 2
    assert ALT_SCREEN not in run.output  # the full-screen UI never started
    assert "is corrupt" in run.text and "Traceback" not in run.text


async def test_a_store_turning_corrupt_under_the_dashboard_says_so(realistic: Path) -> None:
    async with opened(realistic) as (app, pilot):
        shown = len(app.query_one("#memory-list").rows)  # type: ignore[attr-defined]
        corrupt_page(realistic)
        con = sqlite3.connect(realistic, isolation_level=None)  # another writer commits,
        con.execute("INSERT INTO blocked VALUES ('/elsewhere', 'x')")  # so the poller reads
        con.close()
        await until(pilot, lambda: app.state.problem == "corrupt file", "the corrupt state")
        await settle(pilot)
        status = str(app.screen.query_one("#status-line").render())
        assert "✗ store error: corrupt file" in status and "● live" not in status
        assert any("is corrupt" in n.message for n in notifications(app))
        assert len(app.query_one("#memory-list").rows) == shown  # type: ignore[attr-defined]
        assert app.is_running


# ---------------------------------------------------------------- a full disk


def commit_fails_as_on_a_full_disk(store: MemoryStore) -> None:
    """Make COMMIT fail exactly as SQLite fails it when the disk is full."""
    db: Any = store._db
    execute = db.execute

    async def failing(sql: str, *args: Any) -> Any:
        if sql == "COMMIT":
            exc = sqlite3.OperationalError("database or disk is full")
            exc.sqlite_errorcode = sqlite3.SQLITE_FULL
            raise exc
        return await execute(sql, *args)

    db.execute = failing


@pytest.mark.unit  # a commit failing inside the store's connection
async def test_a_failed_commit_reports_its_own_cause_and_writes_nothing(
    realistic: Path, fixture_clock: Callable[[], float]
) -> None:
    events = count(realistic, "events")
    async with await MemoryStore.open(realistic, clock=fixture_clock) as store:
        before = (await store.memory(DURABLE)).data
        commit_fails_as_on_a_full_disk(store)
        with pytest.raises(DiskFull, match="full; nothing was written") as caught:
            await store.correct(DURABLE, "A corrected text that never lands")
        assert "rollback" not in str(caught.value)
        del store._db.execute  # the disk has room again
        assert (await store.memory(DURABLE)).data == before
        await store.pin(DURABLE)  # the connection is still usable
    assert count(realistic, "events") == events + 1 and integrity_ok(realistic)


@pytest.fixture
def tiny_disk() -> Iterator[Path]:
    """A 900 KB tmpfs (root only): a real disk that fills up."""
    mount = Path(tempfile.mkdtemp(prefix="memevo-tiny-"))
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=900k", "tmpfs", str(mount)],
                          capture_output=True)  # fmt: skip
    if done.returncode != 0:
        mount.rmdir()
        pytest.skip("mounting a tmpfs needs root and mount rights (the wrapper test covers it)")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=False)
        mount.rmdir()


def fill(disk: Path, leave: int) -> None:
    free = shutil.disk_usage(disk).free
    (disk / "filler").write_bytes(b"\0" * max(0, free - leave))


def test_correct_on_a_full_disk_gives_one_line_and_loses_nothing(tiny_disk: Path) -> None:
    store = tiny_disk / "memory.sqlite"
    shutil.copyfile(FIXTURES / "realistic.sqlite", store)
    store.chmod(0o600)
    fill(tiny_disk, 40_000)  # room for the -shm file, not for the write
    events = count(store, "events")
    result = cli("correct", DURABLE, "A corrected text for a full disk", "--db", str(store))
    one_line_error(result, 2, "is full; nothing was written")
    assert count(store, "events") == events and integrity_ok(store)


def test_no_room_for_the_shared_memory_file_says_so(tiny_disk: Path) -> None:
    store = tiny_disk / "memory.sqlite"
    shutil.copyfile(FIXTURES / "realistic.sqlite", store)
    store.chmod(0o600)
    fill(tiny_disk, 0)
    one_line_error(cli("status", "--db", str(store)), 2, "memory.sqlite-shm")


async def test_a_full_disk_during_p_toasts_the_cause(realistic: Path) -> None:
    async with opened(realistic) as (app, pilot):
        await pilot.press("slash", *DURABLE, "enter")
        await settle(pilot)
        assert app.state.store is not None
        commit_fails_as_on_a_full_disk(app.state.store)
        events = count(realistic, "events")
        await press(pilot, "p")
        toast = notifications(app)[-1]
        assert toast.title == "Not written: disk full"
        assert "is full; nothing was written" in toast.message
        assert count(realistic, "events") == events


# ---------------------------------------------------------------- who may open it


def as_nobody(work: Callable[[], object]) -> Any:
    """Run ``work`` in a child process as the user nobody; its result (or its error)."""
    if os.geteuid() != 0:
        pytest.skip("switching to another user needs root")
    nobody = pwd.getpwnam("nobody")
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(read)
        try:
            os.setgid(nobody.pw_gid)
            os.setuid(nobody.pw_uid)
            result: object = ("ok", work())
        except BaseException as exc:
            result = ("error", f"{type(exc).__name__}: {exc}")
        os.write(write, json.dumps(result).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        outcome = json.loads(pipe.read() or '["error", "the child wrote nothing"]')
    os.waitpid(pid, 0)
    return outcome


def open_report(path: Path, **kwargs: Any) -> dict[str, Any]:
    async def run() -> dict[str, Any]:
        async with await MemoryStore.open(path, clock=fixed_clock(FIXTURE_NOW), **kwargs) as s:
            load = await s.load_memories()
            blocked = (await s.query("SELECT count(*) FROM blocked"))[0][0]
            return {"ro": s.read_only, "why": s.read_only_reason, "n": len(load.memories),
                    "blocked": blocked}  # fmt: skip

    return asyncio.run(run())


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A directory another user can reach (pytest's own are private to this user)."""
    path = Path(tempfile.mkdtemp(prefix="memevo-shared-"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        path.chmod(0o755)
        shutil.rmtree(path)


def test_a_store_of_another_user_open_to_all_opens_read_only(shared_dir: Path) -> None:
    store = shared_dir / "memory.sqlite"
    shutil.copyfile(FIXTURES / "realistic.sqlite", store)
    store.chmod(0o666)
    shared_dir.chmod(0o777)
    status, report = as_nobody(lambda: open_report(store))
    assert status == "ok", report
    assert report["ro"] and "belongs to another user" in report["why"] and report["n"] == 205
    assert store.stat().st_mode & 0o777 == 0o666  # not ours to change


def test_a_read_only_directory_without_shm_still_reads(shared_dir: Path) -> None:
    store = shared_dir / "memory.sqlite"
    shutil.copyfile(FIXTURES / "realistic.sqlite", store)
    store.chmod(0o666)  # writable: only the directory stands in the way
    before = file_digest(store)
    shared_dir.chmod(0o555)
    if os.geteuid() == 0:
        status, report = as_nobody(lambda: open_report(store))
        assert status == "ok", report
        status, asked = as_nobody(lambda: open_report(store, read_only=True))
        assert status == "ok", asked
    else:
        report, asked = open_report(store), open_report(store, read_only=True)
    assert report["ro"] and report["n"] == 205
    assert "its directory is not writable" in report["why"] and "as it is on disk" in report["why"]
    assert asked["ro"] and asked["n"] == 205 and "--read-only" in asked["why"]
    shared_dir.chmod(0o755)
    assert file_digest(store) == before and not store.with_name("memory.sqlite-shm").exists()


def test_a_read_only_directory_with_only_a_wal_reads_its_log(shared_dir: Path) -> None:
    store = shared_dir / "memory.sqlite"
    shutil.copyfile(FIXTURES / "realistic.sqlite", store)
    store.chmod(0o644)
    # Commit one row to the log and leave it unapplied, as a crashed writer leaves it.
    code = (
        "import os, sqlite3, sys; c = sqlite3.connect(sys.argv[1], isolation_level=None); "
        "c.execute('PRAGMA wal_autocheckpoint=0'); "
        "c.execute(\"INSERT INTO blocked VALUES ('/x', 'wal-only')\"); os._exit(0)"
    )
    subprocess.run([sys.executable, "-c", code, str(store)], check=True)
    store.with_name("memory.sqlite-shm").unlink()
    for side in shared_dir.iterdir():
        side.chmod(0o644)
    shared_dir.chmod(0o555)
    if os.geteuid() == 0:
        status, report = as_nobody(lambda: open_report(store))
        assert status == "ok", report
    else:
        report = open_report(store)
    assert report["ro"] and "private snapshot" in report["why"]
    assert report["blocked"] == count_blocked(FIXTURES / "realistic.sqlite") + 1  # the log's row
    assert sorted(p.name for p in shared_dir.iterdir()) == ["memory.sqlite", "memory.sqlite-wal"]


def count_blocked(path: Path) -> int:
    con = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    try:
        return int(con.execute("SELECT count(*) FROM blocked").fetchone()[0])
    finally:
        con.close()


async def test_an_exclusive_lock_held_elsewhere_is_named(
    realistic: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import store.opening as opening

    monkeypatch.setattr(opening, "BUSY_TIMEOUT_MS", 200)
    holder = sqlite3.connect(realistic, isolation_level=None)
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("BEGIN IMMEDIATE")
    holder.execute("UPDATE metadata SET value=value WHERE key='schema'")
    holder.execute("COMMIT")  # the exclusive lock stays held until the connection closes
    try:
        with pytest.raises(Busy, match="holds it exclusively"):
            await MemoryStore.open(realistic)
    finally:
        holder.close()


# ---------------------------------------------------------------- files that are not stores


def not_stores(tmp: Path) -> dict[str, tuple[Path, str]]:
    text = tmp / "notes.sqlite"
    text.write_text("these are my notes, not a database\n" * 40)
    empty = tmp / "empty.sqlite"
    empty.write_bytes(b"")
    bare = tmp / "bare.sqlite"
    sqlite3.connect(bare).execute("CREATE TABLE t (x)").connection.close()
    future = tmp / "future-schema.sqlite"
    shutil.copyfile(FIXTURES / "future-schema.sqlite", future)
    future.chmod(0o600)
    return {
        "text": (text, "is not an SQLite database"),
        "empty": (empty, "is an empty SQLite database, not a pi memory store"),
        "no tables": (bare, "not a pi memory store (no metadata"),
        "future schema": (future, "Unsupported memory database version"),
    }


@pytest.mark.parametrize("kind", ["text", "empty", "no tables", "future schema"])
def test_files_that_are_not_stores_are_refused_by_cli_and_dashboard(
    tmp_path: Path, kind: str
) -> None:
    path, needle = not_stores(tmp_path)[kind]
    before = file_digest(path)
    one_line_error(cli("status", "--db", str(path)), 2, needle)
    run = PtyRun("--db", str(path))
    assert run.finish() == 2
    assert ALT_SCREEN not in run.output and needle in run.text and "Traceback" not in run.text
    assert file_digest(path) == before


# ---------------------------------------------------------------- terminals and signals


def test_no_terminal_no_dashboard(realistic: Path) -> None:
    with subprocess.Popen(
        [sys.executable, "-m", "memevo_tui", "--db", str(realistic)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    ) as proc:
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2 and out == b""
    assert err.decode().count("\n") == 1 and "--json" in err.decode()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_signal_leaves_the_terminal_usable(realistic: Path, sig: signal.Signals) -> None:
    run = PtyRun("--db", str(realistic), env={"MEMEVO_NOW": FIXTURE_NOW})
    assert run.read_until(b"shown of"), run.text[-2000:]
    entered = len(run.output)
    run.signal(sig)
    assert run.finish() == 128 + sig
    after = run.output[entered:]
    for sequence in (*RESTORE, MOUSE_OFF):
        assert sequence in after, (sequence, after[-400:])


def test_a_paste_holding_an_escape_arrives_whole_and_in_order(realistic: Path) -> None:
    run = PtyRun("--db", str(realistic), env={"MEMEVO_NOW": FIXTURE_NOW})
    assert run.read_until(b"shown of")
    run.send(b"i")
    assert run.read_until(b"a prompt: what would pi inject")
    run.send(b"\x1b[200~abc\x1b[31mkyverno\x1b[201~")
    assert run.read_until("abc␛[31mkyverno".encode()), run.text[-3000:]
    run.signal(signal.SIGTERM)
    run.finish()


async def test_the_paste_guard_is_what_the_driver_parses_with(realistic: Path) -> None:
    from memevo_tui.app import MemevoApp
    from memevo_tui.term import terminal

    driver_class = terminal.driver()
    assert driver_class is not None
    before = {s: signal.getsignal(s) for s in (signal.SIGTSTP, signal.SIGCONT)}
    read, write = os.pipe()
    try:
        driver = driver_class(MemevoApp(realistic))
        driver.fileno = read  # type: ignore[attr-defined]
        events: list[object] = []
        driver.process_message = events.append  # type: ignore[method-assign,assignment]
        lost: list[int] = []
        driver.lose = lambda: lost.append(1)  # type: ignore[attr-defined]
        for chunk in ("x\x1b[200~abc\x1b[3", "1mdef\x1b[2", "01~y"):  # split anywhere
            os.write(write, chunk.encode())
        os.close(write)  # then the end of file: the input thread ends
        await asyncio.to_thread(driver.run_input_thread)  # type: ignore[attr-defined]
    finally:
        os.close(read)
        for sig, handler in before.items():
            signal.signal(sig, handler)
    assert [type(e).__name__ for e in events] == ["Key", "Paste", "Key"]
    assert events[1].text == "abc␛[31mdef"  # type: ignore[attr-defined]
    assert lost == [1]  # the end of file is the terminal gone


# ---------------------------------------------------------------- the key map


async def test_a_bad_key_map_is_named_once_and_a_clash_is_not_applied(realistic: Path) -> None:
    keymap = {"memory.forget": "p", "no.such.binding": "x", "memory.useful": "ctrl+zz"}
    async with opened(realistic, keymap=keymap) as (app, pilot):
        warnings = [n for n in notifications(app) if n.severity == "warning"]
        assert len(warnings) == 1 and warnings[0].title == "Key map: 3 problem(s)"
        text = warnings[0].message
        assert "memory.forget: 'p' is already memory.pin's key" in text
        assert "no.such.binding: no such binding id" in text
        assert "memory.useful: 'ctrl+zz' is not a key" in text
        await pilot.press("slash", *DURABLE, "enter")
        await settle(pilot)
        await pilot.press("p")  # still pins: the typo never turned p into forget
        await settle(pilot)
        row = (
            sqlite3.connect(realistic)
            .execute("SELECT data FROM memories WHERE id=?", (DURABLE,))
            .fetchone()
        )
        assert json.loads(row[0])["layer"] == "pinned"
        assert app.screen.__class__.__name__ == "Dashboard"  # no forget dialog


# ---------------------------------------------------------------- what reaches the terminal


def with_a_c1_record(hostile: Path) -> str:
    """A valid record whose text holds U+009B (CSI), written as raw SQL would write it."""
    con = sqlite3.connect(hostile)
    raw = con.execute("SELECT data FROM memories WHERE id='raw-escape-0001'").fetchone()[0]
    record = json.loads(raw)
    record.update(id="c1-control-0001", content="Price \x9b31m in the \u200bcart total")
    con.execute(
        "INSERT INTO memories VALUES (?,?,?,?)",
        (record["id"], record["scope"], fp(record["content"]), js_json(record)),
    )
    con.commit()
    con.close()
    return str(record["id"])


def test_json_escapes_every_unsafe_character_and_stays_lossless(hostile: Path) -> None:
    with_a_c1_record(hostile)
    result = cli("list", "--all", "--json", "--db", str(hostile))
    assert result.returncode == 0, result.stderr
    assert UNSAFE.search(result.stdout.rstrip("\n")) is None
    stored = {
        row[0]: json.loads(row[1])
        for row in sqlite3.connect(hostile).execute("SELECT id, data FROM memories")
        if row[0] not in ("corrupt-json-0001", "corrupt-hash-0001")
    }
    printed = json.loads(result.stdout)
    assert {r["memory"]["id"]: r["memory"] for r in printed} == stored
    assert "\u202e" in json.dumps(stored, ensure_ascii=False)  # there was something to escape


def test_the_table_shows_invisible_characters(hostile: Path) -> None:
    with_a_c1_record(hostile)
    result = cli("list", "--all", "--db", str(hostile))
    assert result.returncode == 0
    assert "Price ‹U+009B›31m in the ‹U+200B›cart" in result.stdout
    assert UNSAFE.search(result.stdout.replace("\n", "").replace("\t", "")) is None


async def test_the_dashboard_shows_invisible_characters(hostile: Path) -> None:
    memory_id = with_a_c1_record(hostile)
    app = make_app(hostile)
    async with app.run_test(size=(200, 50)) as pilot:
        await wait_loaded(pilot)
        await press(pilot, "a")
        memory_list: Any = app.query_one("#memory-list")
        cells = [memory_list.cells(r)["content"] for r in memory_list.rows]
        assert not [c for c in cells if UNSAFE.search(c)]
        assert any("‹U+200B›cart" in c for c in cells)
        assert any(r.id == memory_id for r in memory_list.rows)
        screen = app.export_screenshot()
        assert not any(ch in screen for ch in "\u200b\u202e\ufeff\x9b\x1b")


def test_every_format_character_is_shown() -> None:
    import unicodedata

    from memevo_tui.core.text import visible

    missed = [
        f"U+{cp:04X}"
        for cp in range(0x110000)
        if unicodedata.category(chr(cp)) in ("Cc", "Cf", "Zl", "Zp")
        and chr(cp) not in "\n\t"
        and visible(chr(cp)) == chr(cp)
    ]
    assert missed == []
    assert INVISIBLE  # one character class serves the TUI, the table and --json


# ---------------------------------------------------------------- pipes


@pytest.mark.parametrize(
    "verb",
    [
        ["list"],
        ["show", DURABLE],
        ["search", "kyverno"],
        ["recall", "kyverno"],
        ["history"],
        ["status"],
        ["list", "--json"],
    ],
)
def test_a_reader_closing_early_stops_a_verb_quietly(realistic: Path, verb: list[str]) -> None:
    with subprocess.Popen(
        [sys.executable, "-m", "memevo_tui", *verb, "--db", str(realistic)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        env={**os.environ, "MEMEVO_NOW": FIXTURE_NOW},
    ) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.close()  # `| head -0`: the reader is gone before the first line
        err = proc.stderr.read()
        proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGPIPE, err  # as other Unix tools: status 141
    assert err == b""


def test_the_dashboard_and_the_server_are_never_killed_by_sigpipe(
    realistic: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only a CLI verb takes SIGPIPE's default. The dashboard shutting down on SIGHUP
    was once killed by it (status -13, not 129): a wake-up written to asyncio's
    self-pipe after its reading end had closed."""
    import memevo_tui.__main__ as entry
    import memevo_tui.launch as launch
    import memevo_tui.webserver as webserver

    seen: list[object] = []

    def record(*args: object, **kwargs: object) -> int:
        seen.append(signal.getsignal(signal.SIGPIPE))
        return 0

    monkeypatch.setattr(launch, "run_app", record)
    monkeypatch.setattr(webserver, "serve_forever", record)
    monkeypatch.setattr(entry, "execute", record)
    before = signal.getsignal(signal.SIGPIPE)
    assert entry.main(["--db", str(realistic)]) == 0
    assert entry.main(["serve", "--db", str(realistic)]) == 0
    assert entry.main(["list", "--db", str(realistic)]) == 0
    assert seen == [signal.SIG_IGN, signal.SIG_IGN, signal.SIG_DFL]
    assert signal.getsignal(signal.SIGPIPE) == before
