"""Session files as the real pi writes them (issue 56), written here from pi's own
``session-manager`` (0.73 and 1.6): a fork's and a clone's copied entries, a flat
``--session-dir`` folder, UUIDv7 ids from one minute; and the command line taking ids
and options as git and Unix users expect."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from memevo_tui.__main__ import main
from store import iso, session_prompts, sessions_folder

T0 = 1_780_000_000_000  # 2026-05-28
WEBSHOP = "/home/dev/projects/webshop"


def _entry(eid: str, parent: str | None, ms: int, **fields: Any) -> dict[str, Any]:
    # real files: the entry is stamped 0-60 ms after its message
    return {"type": "message", "id": eid, "parentId": parent, "timestamp": iso(ms + 17),
            **fields}  # fmt: skip


def user(eid: str, parent: str | None, text: str, ms: int) -> dict[str, Any]:
    return _entry(eid, parent, ms, message={
        "role": "user", "content": [{"type": "text", "text": text}], "timestamp": ms})  # fmt: skip


def reply(eid: str, parent: str, ms: int) -> dict[str, Any]:
    return _entry(eid, parent, ms, message={
        "role": "assistant", "content": [{"type": "text", "text": "done"}], "timestamp": ms,
        "api": "openai-completions", "provider": "fake", "model": "fake-1",
        "usage": {"input": 10, "output": 2}, "stopReason": "stop"})  # fmt: skip


def write(folder: Path, sid: str, started: int, lines: list[dict[str, Any]],
          cwd: str = WEBSHOP, parent: str | None = None) -> Path:  # fmt: skip
    folder.mkdir(parents=True, exist_ok=True)
    stamp = iso(started)
    path = folder / f"{stamp.replace(':', '-').replace('.', '-')}_{sid}.jsonl"
    header: dict[str, Any] = {"type": "session", "version": 3, "id": sid, "timestamp": stamp,
                              "cwd": cwd}  # fmt: skip
    if parent is not None:
        header["parentSession"] = parent
    path.write_text("".join(json.dumps(x) + "\n" for x in [header, *lines]))
    return path


def uuid7(minute_ms: int, n: int) -> str:
    """A UUIDv7 of a moment within one minute: the first 8 hex digits are the clock's."""
    ms = minute_ms + n * 1000
    head = f"{ms:012x}"
    return f"{head[:8]}-{head[8:]}-7{n:03x}-8{n:03x}-{n:012x}"


def parent_and_forks(folder: Path) -> tuple[Path, Path, Path]:
    """A session of three prompts; pi's ``fork`` at its second (the branch up to it
    copied, then a prompt of its own), and ``--fork`` (every entry copied, then one)."""
    lines: list[dict[str, Any]] = [
        {"type": "model_change", "id": "m0", "parentId": None, "timestamp": iso(T0),
         "provider": "fake", "modelId": "fake-1"},
        {"type": "thinking_level_change", "id": "t0", "parentId": "m0", "timestamp": iso(T0),
         "thinkingLevel": "off"},
        user("u1", "t0", "where is the redis port configured", T0 + 1000),
        reply("a1", "u1", T0 + 2000),
        user("u2", "a1", "deploy postgres to staging", T0 + 3000),
        reply("a2", "u2", T0 + 4000),
        user("u3", "a2", "and the celery broker", T0 + 5000),
        reply("a3", "u3", T0 + 6000),
    ]  # fmt: skip
    parent = write(folder, uuid7(T0, 0), T0, lines)
    fork_at = T0 + 60_000
    copied = lines[:5]  # the branch up to u2, ids and times as they were
    fork = write(folder, uuid7(fork_at, 1), fork_at,
                 [*copied, user("f1", "u2", "use pgbouncer for postgres", fork_at + 5000),
                  reply("fa1", "f1", fork_at + 6000)], parent=str(parent))  # fmt: skip
    clone_at = T0 + 120_000
    clone = write(folder, uuid7(clone_at, 2), clone_at,
                  [*lines, user("c1", "a3", "redis port again", clone_at + 5000)],
                  parent=str(parent))  # fmt: skip
    return parent, fork, clone


def test_a_forks_copied_prompts_are_its_context_not_its_turns(tmp_path: Path) -> None:
    parent, fork, clone = parent_and_forks(tmp_path / "s")
    assert [p.entry_id for p in session_prompts(parent).prompts] == ["u1", "u2", "u3"]
    forked = session_prompts(fork)
    assert [p.entry_id for p in forked.prompts] == ["f1"]
    assert forked.carried == 2 and forked.parent == str(parent)
    # the copies still feed the recent user texts pi folds into the fork's own prompt
    assert forked.prompts[0].recent == ("where is the redis port configured",
                                        "deploy postgres to staging")  # fmt: skip
    cloned = session_prompts(clone)
    assert [p.entry_id for p in cloned.prompts] == ["c1"] and cloned.carried == 3


def test_turns_counts_each_prompt_once_across_forks(
    realistic: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "s"
    parent_and_forks(root)
    assert main(["turns", "--db", str(realistic), "--sessions", str(root), "--json"]) == 0
    turns = json.loads(capsys.readouterr().out)["turns"]
    assert sorted(t["entry"] for t in turns) == ["c1", "f1", "u1", "u2", "u3"]


def test_sessions_are_read_where_pi_writes_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pi's precedence: --session-dir, $PI_CODING_AGENT_SESSION_DIR, sessionDir in the
    project's .pi/settings.json, then the global one, else the default folder."""
    agent = tmp_path / "agent"
    project = tmp_path / "project"
    (project / ".pi").mkdir(parents=True)
    agent.mkdir()
    env = {"PI_CODING_AGENT_DIR": str(agent)}
    assert sessions_folder(None, env, str(project)) == (agent / "sessions", "pi's default")
    (agent / "settings.json").write_text(json.dumps({"sessionDir": str(tmp_path / "global")}))
    assert sessions_folder(None, env, str(project)) == (
        tmp_path / "global", f"sessionDir in {agent}/settings.json")  # fmt: skip
    (project / ".pi" / "settings.json").write_text(json.dumps({"sessionDir": "~/flat"}))
    assert sessions_folder(None, env, str(project)) == (
        Path.home() / "flat", "sessionDir in ./.pi/settings.json")  # fmt: skip
    env["PI_CODING_AGENT_SESSION_DIR"] = str(tmp_path / "env")
    assert sessions_folder(None, env, str(project))[1] == "$PI_CODING_AGENT_SESSION_DIR"
    assert sessions_folder(str(tmp_path / "x"), env, str(project)) == (tmp_path / "x",
                                                                       "--sessions")  # fmt: skip


def test_a_flat_session_folder_is_read_and_named(
    realistic: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    flat = tmp_path / "flat"
    parent_and_forks(flat)  # every project's sessions in one folder, no subfolders
    write(flat, uuid7(T0 + 300_000, 3), T0 + 300_000,
          [user("i1", None, "terraform state bucket", T0 + 301_000)],
          cwd="/home/dev/projects/infra")  # fmt: skip
    monkeypatch.setenv("PI_CODING_AGENT_SESSION_DIR", str(flat))
    assert main(["turns", "--db", str(realistic)]) == 0
    captured = capsys.readouterr()
    assert len(captured.out.strip().splitlines()) == 6
    assert f"under {flat} ($PI_CODING_AGENT_SESSION_DIR)" in captured.err
    assert main(["turns", "--db", str(realistic), "--project", "/home/dev/projects/infra"]) == 0
    assert len(capsys.readouterr().out.strip().splitlines()) == 1


def test_uuid7_sessions_of_one_minute_are_told_apart(
    realistic: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "s"
    parent_and_forks(root)
    ids = [uuid7(T0 + 200_000 + n * 1000, 10 + n) for n in range(3)]
    assert len({i[:8] for i in ids}) == 1  # the same minute: the same 8 hex digits
    for n, sid in enumerate(ids):
        write(root / "same-minute", sid, T0 + n * 1000,
              [user(f"x{n}", None, f"redis port {n}", T0 + 10_000 + n)])  # fmt: skip
    base = ["turns", "--db", str(realistic), "--sessions", str(root)]
    assert main(base) == 0
    shown = [line.split()[1] for line in capsys.readouterr().out.splitlines()]
    assert len(shown) == 8 and len(set(shown)) == 6  # the parent's three prompts: one
    mine = [s for s in shown if any(i.startswith(s) for i in ids)]
    assert len(mine) == 3 and all(len(s) > 8 for s in mine), shown
    assert main([*base, "--session", ids[0][:8]]) == 2
    err = capsys.readouterr().err
    assert "is ambiguous" in err and ids[1] in err and err.count("\n") == 1
    unique = next(s for s in shown if ids[2].startswith(s))
    assert main([*base, "--session", unique, "--json"]) == 0
    assert [t["entry"] for t in json.loads(capsys.readouterr().out)["turns"]] == ["x2"]


def test_every_verb_takes_a_unique_prefix_of_a_records_id(
    realistic: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = "11d4affeff0df48eb3df258f"  # shares "11d" with 11da40a0…
    assert main(["show", record[:8], "--db", str(realistic), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["memory"]["id"] == record
    assert main(["pin", record[:6], "--db", str(realistic)]) == 0
    capsys.readouterr()
    assert main(["show", "11d", "--db", str(realistic)]) == 2
    err = capsys.readouterr().err
    assert "11d is ambiguous: 2 records start so" in err and "11da40a06301a7c955a073e5" in err
    assert main(["show", "ffffffff", "--db", str(realistic)]) == 1  # pi's own refusal


def test_options_before_the_verb_are_the_verbs_or_refused(
    realistic: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "s"
    parent_and_forks(root)
    assert main(["--sessions", str(root), "turns", "--db", str(realistic), "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["turns"]) == 5
    assert main(["--project", "/home/dev/projects/infra", "list", "--db", str(realistic),
                 "--json"]) == 0  # fmt: skip
    listed = json.loads(capsys.readouterr().out)
    assert listed and all(i["memory"]["scope"] == "/home/dev/projects/infra" for i in listed)
    assert main(["--live", "list", "--db", str(realistic)]) == 2
    assert "--live does not apply to list" in capsys.readouterr().err
    assert main(["--sessions", str(root), "list", "--db", str(realistic)]) == 2
    assert main(["--sessions", "/a", "turns", "--sessions", "/b", "--db", str(realistic)]) == 2
    assert "given twice" in capsys.readouterr().err.splitlines()[-1]
    os.environ.pop("PI_CODING_AGENT_SESSION_DIR", None)


def test_status_as_of_says_when_pi_pruned_the_calls_it_counts(
    realistic: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """pi prunes model calls 24 h older than each call it reserves: as of a moment whose
    24 h reach before that line, the counts are a lower bound, and status says so."""
    assert main(["status", "--db", str(realistic), "--as-of", "2026-10-31T20:00:00Z"]) == 0
    out = capsys.readouterr().out
    assert "has pruned those before 2026-10-31T11:59:07.000Z" in out and "lower bound" in out
    assert main(["status", "--db", str(realistic), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["modelCallsPrunedBefore"] is None
    assert main(["status", "--db", str(realistic)]) == 0
    assert "lower bound" not in capsys.readouterr().out


def test_merge_on_the_command_line_previews_then_writes_one_batch(
    realistic: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import sqlite3

    from memevo_tui.core.appstate import AppState

    with sqlite3.connect(realistic) as db:
        a, b = [r[0] for r in db.execute(
            "SELECT id FROM memories WHERE scope = ? AND json_extract(data, '$.status') = "
            "'provisional' ORDER BY id LIMIT 2", (WEBSHOP,))]  # fmt: skip
        before = db.execute("SELECT count(*) FROM events").fetchone()[0]
    base = ["merge", a[:8], b[:8], "--db", str(realistic)]
    assert main([*base, "--keep", b, "--text", "Merged text about redis"]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[0].startswith(f"correct  {b[:8]}") and "forget" in out
    assert "nothing written; --yes writes these 2 write(s) as one batch" in err
    with sqlite3.connect(realistic) as db:
        assert db.execute("SELECT count(*) FROM events").fetchone()[0] == before
    assert main([*base, "--keep", b, "--text", "Merged text about redis", "--yes", "--json"]) == 0
    written = json.loads(capsys.readouterr().out)
    assert written["written"] and len(written["events"]) == 2 and written["batch"]
    [batch] = AppState(realistic).batches()
    assert list(batch.events) == written["events"]
    assert main(["show", b, "--db", str(realistic), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["memory"]["content"] == "Merged text about redis"
    assert main(["merge", a, "--db", str(realistic)]) == 2  # one record: nothing to merge
    assert main([*base, "--keep", "ffff"]) == 2  # not one of the records merged


def _turns(path: Path, capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    from conftest import FIXTURES

    sessions = str(FIXTURES / "sessions")
    assert main(["turns", "--db", str(path), "--sessions", sessions, "--json"]) == 0
    turns: list[dict[str, Any]] = json.loads(capsys.readouterr().out)["turns"]
    return turns


def _stamp(path: Path, record: str, stamp: str) -> None:
    """What pi's confirmation writes (§5.6): the stamp moved, with no event."""
    import sqlite3

    with sqlite3.connect(path) as db:
        db.execute("UPDATE memories SET data = json_set(data, '$.reinforcedAt', ?) WHERE id = ?",
                   (stamp, record))  # fmt: skip


@pytest.mark.parametrize("when", ["before", "after"])
def test_a_confirmation_with_no_event_is_used_when_known_and_marked_when_not(
    realistic: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], when: str
) -> None:
    """A record injected into a prompt at T, then confirmed by pi with no event. Dated
    before T, the stamp was in force then: the turn is exact and its digest names it.
    Dated after T, it replaced what was there (an earlier confirmation, or none): the
    turn is marked approximate, its note naming the record."""
    from store import parse_ms

    turns = _turns(realistic, capsys)
    turn = next(t for t in turns if t["then"] and not t["approximate"]
                and t["at"] > "2026-06-01")  # fmt: skip
    record = turn["then"][0]
    at = parse_ms(turn["at"]) or 0
    stamp = iso(at - 3 * 86_400_000 if when == "before" else at + 3 * 86_400_000)
    _stamp(realistic, record, stamp)
    (tmp_path / "cache").mkdir(exist_ok=True)
    again = next(t for t in _turns(realistic, capsys) if t["entry"] == turn["entry"])
    if when == "before":
        assert not again["approximate"], again["note"]
        assert f'"confirmed":"{stamp[:10]}"' in again["thenDigest"]
    else:
        assert again["approximate"] and record[:8] in again["note"]
        assert "not known" in again["note"]


def test_a_progress_source_is_grounded_in_its_tool_output(
    realistic: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """ "3 passed (41.2s)" is the tool output that states the claim: it is looked in."""
    assert main(["source", "4dc3a11b", "--db", str(realistic), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["grounded"] is True
    assert "output: 3 passed (41.2s)" in out["sources"][0]["text"]


def test_a_record_corrected_by_hand_has_the_user_as_its_evidence(
    realistic: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["source", "359cfc5b", "--db", str(realistic), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["grounded"] is None
    assert out["correctedByHand"] == {
        "at": "2026-08-29T22:00:20.000Z",
        "earlierText": "Node pool workers-cx31 has 4 nodes and the cluster autoscaler may grow "
        + out["correctedByHand"]["earlierText"].split("may grow ", 1)[1],
    }
    assert out["verdict"].startswith("corrected by hand on 2026-08-29: the evidence is the user")
    passage = out["sources"][0]["passage"]
    assert passage["grounded"] and "4" in out["sources"][0]["text"][
        passage["start"] : passage["end"]]  # fmt: skip
    assert main(["source", "359cfc5b", "--db", str(realistic)]) == 0
    text = capsys.readouterr().out
    assert "corrected by hand on 2026-08-29" in text and "passage of the earlier text" in text


def test_a_context_edit_is_shown_while_recall_reads_the_original(tmp_path: Path) -> None:
    """pi 1.6's context_edit replaces or hides an earlier entry in what the model sees;
    pi-memory-evolution 0.4.0 reads the raw entries, so recall still folds in the
    original, and the prompt says which texts the model saw otherwise."""
    lines = [
        user("u1", None, "the redis port is 6380", T0 + 1000),
        reply("a1", "u1", T0 + 2000),
        user("u2", "a1", "deploy postgres to staging", T0 + 3000),
        reply("a2", "u2", T0 + 4000),
        {"type": "context_edit", "id": "e1", "parentId": "a2", "timestamp": iso(T0 + 4500),
         "targetId": "u1", "replacement": None},
        {"type": "context_edit", "id": "e2", "parentId": "e1", "timestamp": iso(T0 + 4600),
         "targetId": "u2", "replacement": {"content": [{"type": "text", "text": "deploy"}]}},
        user("u3", "e2", "and the celery broker", T0 + 5000),
    ]  # fmt: skip
    found = session_prompts(write(tmp_path / "s", uuid7(T0, 5), T0, lines))
    last = found.prompts[-1]
    assert last.recent == ("the redis port is 6380", "deploy postgres to staging")
    assert last.seen == ("omitted", "edited")
    assert found.prompts[0].seen == ()


def test_every_entry_type_real_pi_writes_is_read_as_pi_reads_it(tmp_path: Path) -> None:
    """model_change, thinking_level_change, session_info, label, custom, custom_message,
    branch_summary, a bashExecution message and a compaction with systemMessage and
    usage: only user messages are prompts, and only they feed the recent user texts;
    the compaction keeps its retainedTail."""
    t = T0
    lines: list[dict[str, Any]] = [
        {"type": "model_change", "id": "m0", "parentId": None, "timestamp": iso(t),
         "provider": "fake", "modelId": "fake-1"},
        {"type": "thinking_level_change", "id": "t0", "parentId": "m0", "timestamp": iso(t),
         "thinkingLevel": "off"},
        {"type": "session_info", "id": "si", "parentId": "t0", "timestamp": iso(t),
         "name": "redis work"},
        user("u1", "si", "where is the redis port configured", t + 1000),
        reply("a1", "u1", t + 2000),
        _entry("b1", "a1", t + 2500, message={"role": "bashExecution",
               "command": "docker compose ps", "output": "redis up", "exitCode": 0,
               "timestamp": t + 2500}),
        {"type": "label", "id": "l1", "parentId": "b1", "timestamp": iso(t + 2600),
         "targetId": "u1", "label": "important"},
        {"type": "custom", "id": "c1", "parentId": "l1", "timestamp": iso(t + 2700),
         "customType": "memory-evolution", "data": {"k": 1}},
        {"type": "custom_message", "id": "cm1", "parentId": "c1", "timestamp": iso(t + 2800),
         "customType": "note", "content": "deploy the kafka cluster", "display": True},
        user("u2", "cm1", "deploy postgres to staging", t + 3000),
        reply("a2", "u2", t + 4000),
        {"type": "branch_summary", "id": "bs1", "parentId": "a2", "timestamp": iso(t + 4500),
         "fromId": "a1", "summary": "tried the celery broker elsewhere"},
        {"type": "compaction", "id": "k1", "parentId": "bs1", "timestamp": iso(t + 4600),
         "summary": "## Goal\nredis", "firstKeptEntryId": "u2", "tokensBefore": 1200,
         "systemMessage": "compacted", "usage": {"input": 900, "output": 100},
         "retainedTail": [{"role": "user", "content": [{"type": "text",
                                                        "text": "deploy postgres to staging"}],
                           "timestamp": t + 3000}]},
        user("u3", "k1", "and the celery broker", t + 5000),
    ]  # fmt: skip
    found = session_prompts(write(tmp_path / "s", uuid7(T0, 6), T0, lines))
    assert found.corrupt == 0 and not found.problem
    assert [(p.entry_id, p.recent) for p in found.prompts] == [
        ("u1", ()),
        ("u2", ("where is the redis port configured",)),
        ("u3", ("deploy postgres to staging",)),
    ]
