"""A leaked secret, found wherever a copy sits (issue 58): planted through pi's own
write path (the correct verb) and in session files written here; realistic.sqlite and
its sessions give no finding."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from memevo_tui.__main__ import main
from memevo_tui.core.secrets import mask, spans

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

    from apphelpers import make_app, press, until, wait_loaded

    app = make_app(planted)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_loaded(pilot)
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
