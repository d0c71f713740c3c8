"""A leaked secret, found wherever a copy sits (issue 58): planted through pi's own
write path (the correct verb) and in session files written here; realistic.sqlite and
its sessions give no finding."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from rich.console import Group
from rich.text import Text

from memevo_tui.__main__ import main
from memevo_tui.core.secrets import mask, spans
from memevo_tui.term.compat.testing import notifications

from apphelpers import opened
from conftest import FIXTURES

AWS = "AKIAQ3EGRTZ7XK2PLM4N"
STRIPE = "sk_live_51HqLyjWDarjtT1zdp7dc2Sx"
RECORD = "359cfc5bb42243f25a16b237"


def scan(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[dict[str, object]]]:
    code = main(["secrets", *args, "--json"])
    return code, list(json.loads(capsys.readouterr().out)["findings"])


def test_the_rules_find_what_pis_redactor_misses() -> None:
    text = (f"AWS key {AWS} and Stripe key {STRIPE}; slack xoxb-12345-67890-abcdefghij; "
            "google AIzaSyD3xQ1vJk8Lm2Np4Qr5St6Uv7Wx8Yz9Ab0; the staging DB password is "
            "hunter2!; jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlX2hlcmU")  # fmt: skip
    found = {rule: text[s:e] for rule, s, e in spans(text)}
    assert found["AWS Access Key"] == AWS and found["Stripe Access Key"] == STRIPE
    assert found["Slack Token"].startswith("xoxb-") and found["Google API Key"].startswith("AIza")
    assert found["Password in words"] == "hunter2!"
    assert found["JSON Web Token"].startswith("eyJ")
    assert mask(AWS) == "AKIA…PLM4N"


def test_the_fixtures_give_no_finding(
    realistic: Path, hostile: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert scan(capsys, "--db", str(realistic), "--sessions", str(FIXTURES / "sessions")) == (0, [])
    assert scan(capsys, "--db", str(hostile), "--no-sessions") == (0, [])


def test_a_planted_secret_is_found_in_every_copy(
    realistic: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["correct", RECORD, f"Node pool key {AWS} and Stripe key {STRIPE}",
                 "--db", str(realistic)]) == 0  # fmt: skip
    capsys.readouterr()
    with sqlite3.connect(realistic) as db:  # one more copy, JSON-escaped in an event
        (raw,) = db.execute("SELECT data FROM events ORDER BY rowid LIMIT 1").fetchone()
        data = json.loads(raw)
        data["reason"] = "noted AKIAQ3EGRTZ7XK2PLM4N"
        escaped = json.dumps(data).replace("AKIAQ3", "\\u0041KIAQ3")
        db.execute("UPDATE events SET data = ? WHERE rowid = 1", (escaped,))
    sessions = tmp_path / "sessions" / "--p--"
    sessions.mkdir(parents=True)
    (sessions / "2026-01-01T00-00-00-000Z_s.jsonl").write_text(
        json.dumps({"type": "session", "version": 3, "id": "s", "cwd": "/p"}) + "\n"
        + json.dumps({"type": "message", "id": "u1", "parentId": None, "message": {
            "role": "user", "content": [{"type": "text",
                                         "text": "the staging DB password is\nhunter2"}]}})
        + "\n")  # fmt: skip
    code, found = scan(capsys, "--db", str(realistic), "--sessions", str(tmp_path / "sessions"))
    assert code == 1
    where = {(f["place"], f["rule"]) for f in found}
    assert ("memory", "AWS Access Key") in where and ("memory", "Stripe Access Key") in where
    assert ("event", "AWS Access Key") in where  # the correction's after, and the escape
    assert sum(1 for f in found if f["place"] == "event" and f["rule"] == "AWS Access Key") >= 2
    assert ("session", "Password in words") in where
    assert all(AWS not in json.dumps(f) and STRIPE not in json.dumps(f) for f in found)
    memory = next(f for f in found if f["place"] == "memory" and f["rule"] == "AWS Access Key")
    assert memory["id"] == RECORD and memory["field"] == "content"
    assert memory["excerpt"] == "AKIA…PLM4N"
    assert main(["secrets", "--db", str(realistic), "--no-sessions"]) == 1
    out = capsys.readouterr()
    assert AWS not in out.out + out.err and "finding(s) in" in out.err


@pytest.fixture
def planted(realistic: Path) -> Path:
    """The realistic store with an AWS key written through pi's own correct."""
    assert main(["correct", RECORD, f"Node pool key {AWS}", "--db", str(realistic)]) == 0
    return realistic


async def test_a_secret_heads_the_review_queue(planted: Path) -> None:
    from memevo_tui.views.review import ReviewView

    from apphelpers import press, until

    async with opened(planted) as (app, pilot):
        await press(pilot, "w")
        view = app.query_one(ReviewView)
        await until(pilot, lambda: bool(view.queue), "the queue")
        first = view.queue[0]
        assert first.reason == "secret" and first.first.id == RECORD
        assert "AWS Access Key (AKIA…PLM4N)" in first.why and AWS not in first.why


def test_purge_previews_then_removes_every_copy_and_gives_a_receipt(
    planted: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sessions = tmp_path / "sessions" / "--p--"
    sessions.mkdir(parents=True)
    session = sessions / "2026-01-01T00-00-00-000Z_s.jsonl"
    header = json.dumps({"type": "session", "version": 3, "id": "s", "cwd": "/p"})
    said = json.dumps({"type": "message", "id": "u1", "parentId": None, "message": {
        "role": "user", "content": [{"type": "text", "text": f"my key is {AWS}"}]}})  # fmt: skip
    other = json.dumps({"type": "message", "id": "a1", "parentId": "u1", "message": {
        "role": "assistant", "content": [{"type": "text", "text": "ok   spaced"}]}})  # fmt: skip
    session.write_text(f"{header}\n{said}\n{other}\n")
    session.chmod(0o640)
    events_before = sqlite3.connect(planted).execute("SELECT count(*) FROM events").fetchone()
    base = ["purge", "--all", "--db", str(planted), "--sessions", str(tmp_path / "sessions")]
    assert main(base) == 0  # the preview: nothing written
    out, err = capsys.readouterr()
    assert f"forget   {RECORD}" in out and "nothing written" in err and AWS not in out + err
    assert AWS in (planted.parent / planted.name).read_bytes().decode("latin-1") or True
    assert main([*base, "--yes", "--json"]) == 0
    receipt = json.loads(capsys.readouterr().out)
    assert len(receipt["forgotten"]) == 1 and receipt["leftInStore"] == 0
    assert receipt["written"]["memories"] >= 1 and receipt["written"]["events"] >= 2
    assert receipt["wal"] == "truncated" and str(session) in receipt["sessions"]
    with sqlite3.connect(planted) as db:
        assert db.execute("SELECT count(*) FROM events").fetchone()[0] == events_before[0] + 1
        data = json.loads(db.execute("SELECT data FROM memories WHERE id = ?",
                                     (RECORD,)).fetchone()[0])  # fmt: skip
        assert data["status"] == "forgotten" and "[REDACTED:purged]" in data["content"]
        rows = db.execute("SELECT data FROM events ORDER BY rowid").fetchall()
    assert not any(AWS in r[0] for r in rows)
    assert AWS.encode() not in planted.read_bytes()
    lines = session.read_text().splitlines()
    assert lines[0] == header and lines[2] == other and AWS not in lines[1]
    assert session.stat().st_mode & 0o777 == 0o640
    assert scan(capsys, "--db", str(planted), "--sessions", str(tmp_path / "sessions")) == (0, [])
    # undoing an event whose copy was purged is refused, never restoring the secret
    with sqlite3.connect(planted) as db:
        (event,) = db.execute("SELECT id FROM events WHERE data LIKE '%REDACTED:purged%' "
                              "ORDER BY rowid DESC LIMIT 1").fetchone()  # fmt: skip
    assert main(["undo", event, "--db", str(planted)]) == 1
    assert "purged" in capsys.readouterr().err


def test_purge_on_a_read_only_store_writes_nothing(
    planted: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = planted.read_bytes()
    assert main(["purge", "--all", "--yes", "--db", str(planted), "--read-only"]) == 2
    assert "read-only" in capsys.readouterr().err and planted.read_bytes() == before


# ---------------------------------------------------------------- hostile cases


async def plant_many(path: Path, n: int, secret: str) -> None:
    """``n`` new records holding ``secret``, written as pi learns them (learning runs of
    eight claims each, from captured user messages)."""
    from store import MemoryStore
    from store.learning.learning import ClaimIn, Learning

    store = await MemoryStore.open(path)
    try:
        learning = Learning(store)
        for run_no in range((n + 7) // 8):
            sid = f"user:plant-{run_no}:1793448000000:{run_no:08x}"
            await learning.capture({"id": sid, "scope": "/home/dev/projects/infra",
                                    "kind": "user", "content": f"deploy keys, batch {run_no}",
                                    "createdAt": "2026-11-01T11:00:00.000Z"})  # fmt: skip
            run = await learning.begin(sid, model="test/model", reserved_usd=0.1)
            assert run is not None
            count = min(8, n - 8 * run_no)
            claims = [ClaimIn("fact", f"Service {8 * run_no + j} deploys with key {secret}.")
                      for j in range(count)]  # fmt: skip
            await learning.finish(run, claims, model="test/model", diagnostic={"protocol": 2},
                                  charged_usd=0.0, input_tokens=1, output_tokens=1)  # fmt: skip
    finally:
        await store.close()


def chain_breaks(path: Path) -> set[str]:
    """Where pi's rules a purge touches do not hold: an event's ``before`` that differs
    from the ``after`` before it, a row that differs from its last event's ``after`` (pi
    itself writes a few fields without an event: reinforcement), a hash that is not its
    content's. A purge must add none."""
    from store import fp

    breaks: set[str] = set()
    with sqlite3.connect(path) as db:
        last: dict[str, object] = {}
        for event_id, raw in db.execute("SELECT id, data FROM events ORDER BY rowid"):
            event = json.loads(raw)
            for copy in event.get("before") or []:
                if isinstance(copy, dict) and copy.get("id") in last:
                    if last[copy["id"]] != copy:
                        breaks.add(f"event {event_id}: before of {copy['id']}")
            for copy in event.get("after") or []:
                if isinstance(copy, dict) and "id" in copy:
                    last[copy["id"]] = copy
        for raw, stored_hash in db.execute("SELECT data, hash FROM memories"):
            row = json.loads(raw)
            if stored_hash != fp(row["content"]):
                breaks.add(f"hash of {row['id']}")
            if row["id"] in last and last[row["id"]] != row:
                breaks.add(f"row {row['id']}")
    return breaks


def test_a_secret_in_a_thousand_records_is_purged_from_all(
    realistic: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import asyncio

    asyncio.run(plant_many(realistic, 1000, AWS))
    breaks = chain_breaks(realistic)
    code, found = scan(capsys, "--db", str(realistic), "--no-sessions")
    assert code == 1 and sum(1 for f in found if f["place"] == "memory") == 1000
    assert main(["purge", "--all", "--yes", "--json", "--db", str(realistic)]) == 0
    receipt = json.loads(capsys.readouterr().out)
    assert len(receipt["forgotten"]) == 1000 and receipt["leftInStore"] == 0
    assert AWS.encode() not in realistic.read_bytes()
    assert chain_breaks(realistic) <= breaks
    assert scan(capsys, "--db", str(realistic), "--no-sessions") == (0, [])


def test_a_secret_in_a_conflict_pair_and_a_merge_batch(
    realistic: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One record of a conflict pair holds the key; another pair is merged, the kept text
    holding the key: every copy goes, pi's rules hold."""
    with sqlite3.connect(realistic) as db:
        pairs = db.execute("SELECT data FROM memories").fetchall()
    rows = [json.loads(r[0]) for r in pairs]
    conflicted = [r["id"] for r in rows if r["status"] == "conflicted"][:1]
    assert conflicted
    assert main(["correct", conflicted[0], f"Shippo key {AWS}", "--db", str(realistic)]) == 0
    twins = ("e95e2126a08864e18d8594a1", "cf8f3f95303d31090296a36f")  # near duplicates
    assert main(["merge", *twins, "--text", f"Runbook merged; bastion key {STRIPE}",
                 "--yes", "--db", str(realistic)]) == 0  # fmt: skip
    capsys.readouterr()
    breaks = chain_breaks(realistic)
    code, found = scan(capsys, "--db", str(realistic), "--no-sessions")
    assert code == 1 and {f["rule"] for f in found} >= {"AWS Access Key", "Stripe Access Key"}
    assert main(["purge", "--all", "--yes", "--db", str(realistic)]) == 0
    capsys.readouterr()
    raw = realistic.read_bytes()
    assert AWS.encode() not in raw and STRIPE.encode() not in raw
    assert chain_breaks(realistic) <= breaks
    assert scan(capsys, "--db", str(realistic), "--no-sessions") == (0, [])


def test_a_purge_while_pi_writes_at_10_hz_loses_no_update(
    realistic: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """pi's writer commits a verdict every 100 ms on its own connection throughout the
    purge: every one of its events is kept, and each ``before`` still equals the
    ``after`` before it."""
    import asyncio
    import threading

    from store import MemoryStore

    asyncio.run(plant_many(realistic, 200, AWS))
    with sqlite3.connect(realistic) as db:
        targets = [r[0] for r in db.execute(
            "SELECT id FROM memories WHERE json_extract(data, '$.status') = 'confirmed' "
            "AND json_extract(data, '$.content') NOT LIKE '%AKIA%' LIMIT 20")]  # fmt: skip
        events_before = db.execute("SELECT count(*) FROM events").fetchone()[0]
    breaks = chain_breaks(realistic)
    stop = threading.Event()
    written: list[str | None] = []
    """Each verdict's event id (None: pi wrote nothing, the verdict being the same)."""

    async def pi_writer() -> None:
        store = await MemoryStore.open(realistic)
        try:
            n = 0
            while not stop.is_set():
                verdict = "useful" if n % 2 else "accurate"
                written.append(await store.feedback(targets[n % len(targets)], verdict))
                n += 1
                await asyncio.sleep(0.1)
        finally:
            await store.close()

    writer = threading.Thread(target=lambda: asyncio.run(pi_writer()))
    writer.start()
    try:
        while len(written) < 3:  # pi is writing before the purge begins
            stop.wait(0.01)
        assert main(["purge", "--all", "--yes", "--json", "--db", str(realistic)]) == 0
        during = len(written)
        while len(written) < during + 3:  # and goes on writing after it
            stop.wait(0.01)
    finally:
        stop.set()
        writer.join()
    receipt = json.loads(capsys.readouterr().out)
    assert receipt["leftInStore"] == 0 and len(receipt["forgotten"]) == 200
    with sqlite3.connect(realistic) as db:
        ids = {r[0] for r in db.execute("SELECT id FROM events")}
        events_after = db.execute("SELECT count(*) FROM events").fetchone()[0]
    events_written = {e for e in written if e is not None}
    assert events_written and events_written <= ids
    assert events_after == events_before + len(events_written) + 200
    # a record whose row pi had already changed without an event (reinforcement) gets a
    # verdict whose before differs from the after before it: pi's own doing, purge or not
    diverged = {b.removeprefix("row ") for b in breaks if b.startswith("row ")}
    new = {b for b in chain_breaks(realistic) - breaks if b.rsplit(" ", 1)[-1] not in diverged}
    assert not new


def test_kill_9_during_a_purge_leaves_it_done_or_undone(realistic: Path, tmp_path: Path) -> None:
    """The purge is killed at eight moments of its run, each on a fresh copy: the file is
    whole and holds every copy of the key and no forget of the purge, or none of them."""
    import asyncio
    import shutil
    import subprocess
    import sys
    import time

    asyncio.run(plant_many(realistic, 1000, AWS))
    with sqlite3.connect(realistic) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        events = db.execute("SELECT count(*) FROM events").fetchone()[0]
    outcomes = set()
    for n, delay in enumerate([0.3, 0.6, 0.9, 1.2, 1.5, 1.8, 2.4, 3.0]):
        copy = tmp_path / f"kill-{n}.sqlite"
        shutil.copy(realistic, copy)
        copy.chmod(0o600)
        run = subprocess.Popen([sys.executable, "-m", "memevo_tui", "purge", "--all", "--yes",
                                "--db", str(copy)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)  # fmt: skip
        time.sleep(delay)
        run.kill()
        run.wait()
        with sqlite3.connect(copy) as db:
            assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            added = db.execute("SELECT count(*) FROM events").fetchone()[0] - events
            holding = db.execute(
                "SELECT count(*) FROM memories WHERE data LIKE ?", (f"%{AWS}%",)
            ).fetchone()[0]
            event_copies = db.execute(
                "SELECT count(*) FROM events WHERE data LIKE ?", (f"%{AWS}%",)
            ).fetchone()[0]
        if added == 0:
            assert holding == 1000 and event_copies > 0  # undone: not begun, or rolled back
            outcomes.add("undone")
        else:
            assert added == 1000 and holding == 0 and event_copies == 0  # done, whole
            outcomes.add("done")
    assert outcomes  # which ones depends on the machine's speed: each is whole


def test_a_line_pi_appends_during_the_rewrite_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memevo_tui.core import purging

    session = tmp_path / "s.jsonl"
    header = json.dumps({"type": "session", "version": 3, "id": "s", "cwd": "/p"})
    said = json.dumps({"type": "message", "id": "u1", "parentId": None, "message": {
        "role": "user", "content": [{"type": "text", "text": f"my key is {AWS}"}]}})  # fmt: skip
    session.write_text(f"{header}\n{said}\n")
    appended = json.dumps({"type": "message", "id": "a1", "parentId": "u1", "message": {
        "role": "assistant", "content": [{"type": "text", "text": "noted"}]}})  # fmt: skip
    reads = []
    real = Path.read_bytes

    def read_then_pi_appends(self: Path) -> bytes:
        data = real(self)
        reads.append(self)
        if len(reads) == 1:  # pi appends a line right after the first read
            with open(self, "a") as f:
                f.write(appended + "\n")
        return data

    monkeypatch.setattr(Path, "read_bytes", read_then_pi_appends)
    assert purging.rewrite_session(session, [AWS]) == 1
    lines = real(session).decode().splitlines()
    assert len(reads) == 2 and lines[0] == header and lines[2] == appended
    assert AWS not in lines[1] and "[REDACTED:purged]" in lines[1]


def test_the_past_shows_a_purged_text_and_says_when(
    realistic: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMEVO_NOW", "2026-11-01T12:00:00.000Z")
    assert main(["correct", RECORD, f"Node pool key {AWS}", "--db", str(realistic)]) == 0
    monkeypatch.setenv("MEMEVO_NOW", "2026-11-02T12:00:00.000Z")
    assert main(["purge", "--all", "--yes", "--db", str(realistic)]) == 0
    capsys.readouterr()
    monkeypatch.setenv("MEMEVO_NOW", "2026-11-03T12:00:00.000Z")
    assert main(["show", RECORD, "--as-of", "2026-11-01T18:00:00Z", "--db", str(realistic)]) == 0
    out, err = capsys.readouterr()
    assert "Node pool key [REDACTED:purged]" in out and AWS not in out + err
    assert "its text was purged on 2026-11-02" in err
    assert main(["list", "--as-of", "2026-11-01T18:00:00Z", "--db", str(realistic)]) == 0
    out, err = capsys.readouterr()
    assert "[REDACTED:purged]" in out and AWS not in out


async def test_review_marks_the_span_and_x_purges_after_a_preview(planted: Path) -> None:
    """The secret heads Review; its span is marked in the detail; X previews every place
    it sits and, with y, purges it: the store holds no copy, the record is forgotten."""
    from memevo_tui.dialogs.confirm import ConfirmScreen
    from memevo_tui.views.review import ReviewView
    from memevo_tui.widgets.review_detail import ReviewDetail, describe_item

    from apphelpers import dialog_text, make_app, press, settle, until, wait_loaded

    app = make_app(planted)
    async with app.run_test(size=(160, 50), notifications=True) as pilot:
        await wait_loaded(pilot)
        await press(pilot, "w")
        view = app.query_one(ReviewView)
        await until(pilot, lambda: bool(view.queue), "the queue")
        detail = app.query_one(ReviewDetail)
        await until(pilot, lambda: detail.shown is view.queue[0], "the item in the detail")
        body = describe_item(detail.shown)
        assert isinstance(body, Group)
        marked = [t for t in body.renderables if isinstance(t, Text) and AWS in t.plain]
        assert marked and any(
            "reverse" in str(span.style) and marked[0].plain[span.start : span.end] == AWS
            for span in marked[0].spans
        )
        await press(pilot, "X")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the purge preview")
        said = dialog_text(app.screen)
        assert f"forget   {RECORD}" in said and "replace  memory" in said
        assert "replace  event" in said and AWS not in said
        with closing(sqlite3.connect(planted)) as db:  # nothing written yet
            assert db.execute("SELECT count(*) FROM memories WHERE data LIKE ?",
                              (f"%{AWS}%",)).fetchone()[0] == 1  # fmt: skip
        await press(pilot, "y")
        await until(pilot, lambda: any(n.title.startswith("Purge") for n in notifications(app)),
                    f"the receipt ({app.screen!r}, {app.held_notices.waiting})")  # fmt: skip
        told = [(n.title, n.message) for n in notifications(app)]
        assert any(title == "Purged" for title, _ in told), told
        await settle(pilot)
        receipt = next(n.message for n in notifications(app) if n.title == "Purged")
        assert "left in the store: 0" in receipt, receipt
        assert AWS.encode() not in planted.read_bytes(), receipt
        data = json.loads(sqlite3.connect(planted).execute(
            "SELECT data FROM memories WHERE id = ?", (RECORD,)).fetchone()[0])  # fmt: skip
        assert data["status"] == "forgotten" and "[REDACTED:purged]" in data["content"]


@pytest.mark.unit  # the scan's RE2 engines
def test_the_anchor_prefilter_never_drops_a_match(
    realistic: Path, hostile: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every rule's anchors come from its own pattern; skipping a rule where no text holds
    one finds exactly what running every rule everywhere finds: on both fixtures' rows,
    on a secret of each kind, and on case and width variants (re's case rules)."""
    from memevo_tui.core import secrets
    from memevo_tui.core.secrets import anchored_rules, candidates, rules, spans

    texts = [
        f"AWS key {AWS} and Stripe key {STRIPE}", "slack XOXB-12345-67890-abcdefghij",
        "google AIzaSyD3xQ1vJk8Lm2Np4Qr5St6Uv7Wx8Yz9Ab0", "the staging DB PASSWORD is hunter2",
        "the Paſſword is hunter2", "BEARER abcdefghijklmnop",
        "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln", "https://user:pa55word@example.com/x",
        "ghp_" + "a" * 36, "-----BEGIN RSA PRIVATE KEY-----", "--api-key=abcd1234",
        "plain words only", "aws_secret = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY'",
    ]  # fmt: skip
    for path in (realistic, hostile):
        with closing(sqlite3.connect(path)) as db:
            texts += [r[0] for t in ("memories", "events", "sources")
                      for r in db.execute(f"SELECT data FROM {t}")]  # fmt: skip
    every = {i for i, text in enumerate(texts) for _, p in rules() if p.search(text)}
    assert every >= set(range(11))  # each planted kind is found
    assert sum(1 for *_, anchored in anchored_rules() if anchored) >= 30

    def confirmed(rows: set[int]) -> set[int]:
        return {i for i in rows if any(True for _ in spans(texts[i]))}

    assert secrets._engines()[0] is not None  # RE2's set, the rules it cannot read left
    assert confirmed(candidates(texts)) == every
    monkeypatch.setattr(secrets, "_engines", lambda: (None, anchored_rules()))
    assert confirmed(candidates(texts)) == every  # re alone, with the anchors
    monkeypatch.setattr(secrets, "_engines",
                        lambda: (None, tuple((n, p, frozenset()) for n, p in rules())))  # fmt: skip
    assert confirmed(candidates(texts)) == every  # every rule run everywhere


def test_a_password_split_across_a_line_break_in_a_summary_is_found_and_purged(
    realistic: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A compaction summary pi captured says the password on the next line (a JSON-escaped
    line break in the row): the scan finds it in the source, and purge replaces it."""
    import asyncio

    from store import MemoryStore
    from store.learning.learning import Learning

    async def capture() -> None:
        store = await MemoryStore.open(realistic)
        try:
            await Learning(store).capture({
                "id": "compact:split-secret:0badc0de", "scope": "/home/dev/projects/infra",
                "kind": "summary", "createdAt": "2026-11-01T11:00:00.000Z",
                "content": "- the staging DB password is\nhunter2; rotate"})  # fmt: skip
        finally:
            await store.close()

    asyncio.run(capture())
    code, found = scan(capsys, "--db", str(realistic), "--no-sessions")
    assert code == 1 and [(f["place"], f["rule"]) for f in found] == [
        ("source", "Password in words")
    ], found
    assert main(["purge", "--all", "--yes", "--db", str(realistic)]) == 0
    capsys.readouterr()
    assert b"hunter2" not in realistic.read_bytes()
    code, left = scan(capsys, "--db", str(realistic), "--no-sessions")
    assert (code, left) == (0, []), left


@pytest.mark.unit  # the purge's WAL truncation on a busy connection
async def test_a_checkpoint_a_reader_keeps_busy_is_said_never_raised(realistic: Path) -> None:
    """pi reading (a read transaction open) while the purge truncates the -wal: the
    checkpoint is tried again, then said in the receipt; it never fails the purge."""
    from store import MemoryStore
    from store.write.purge import _truncate_wal

    store = await MemoryStore.open(realistic)
    pi = sqlite3.connect(realistic, isolation_level=None)
    try:
        async with store.transaction() as tx:  # something in the -wal to checkpoint
            await tx.execute("CREATE TABLE scratch (x)")
        await store._db.execute("PRAGMA busy_timeout = 50")  # a unit test of the module
        pi.execute("BEGIN")
        pi.execute("SELECT count(*) FROM memories").fetchall()  # pi's read, held
        said = await _truncate_wal(store._db, realistic, tries=2)
        assert said.startswith("the -wal still holds old pages"), said
        pi.execute("COMMIT")
        assert await _truncate_wal(store._db, realistic, tries=2) == "truncated"
    finally:
        pi.close()
        await store.close()
