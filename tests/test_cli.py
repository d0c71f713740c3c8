"""The command-line verbs: output contract, exit codes, and never creating a store."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memevo_tui import __version__
from memevo_tui.__main__ import main

PINNED = "3968293cbac7923e0e4edb5e"
QUALITY_KEYS = [
    "basis", "method", "ageDays", "freshness", "dormant", "aging", "confirmedAt",
    "evidenceWeight", "utility", "accuracy", "factor",
]  # fmt: skip


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_version_and_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"memevo-tui {__version__}"
    result = subprocess.run(
        [sys.executable, "-m", "memevo_tui", "--help"], capture_output=True, text=True
    )
    assert result.returncode == 0 and "--read-only" in result.stdout and "--demo" in result.stdout


def test_list_json_is_the_stored_object_plus_quality(
    capsys: pytest.CaptureFixture[str], realistic: Path
) -> None:
    code, out, _ = run(capsys, "list", "--db", str(realistic), "--json")
    assert code == 0
    items = json.loads(out)
    assert len(items) == 205 - 15 - 4
    assert list(items[0]) == ["memory", "quality"]
    assert list(items[0]["quality"]) == QUALITY_KEYS
    code, out, _ = run(capsys, "list", "--all", "--db", str(realistic), "--json")
    assert len(json.loads(out)) == 205
    code, out, _ = run(capsys, "list", "--dormant", "--db", str(realistic), "--json")
    dormant = json.loads(out)
    assert len(dormant) == 22 + 34 + 16 + 6
    assert all(item["quality"]["dormant"] for item in dormant)


def test_show_prints_the_record_unchanged(
    capsys: pytest.CaptureFixture[str], realistic: Path
) -> None:
    import sqlite3

    raw = (
        sqlite3.connect(realistic)
        .execute("SELECT data FROM memories WHERE id=?", (PINNED,))
        .fetchone()[0]
    )
    code, out, _ = run(capsys, "show", PINNED, "--db", str(realistic), "--json")
    assert code == 0
    shown = json.loads(out)
    assert json.dumps(shown["memory"], ensure_ascii=False, separators=(",", ":")) == raw
    assert shown["quality"]["freshness"] == 1
    code, out, _ = run(capsys, "show", PINNED, "--db", str(realistic))
    assert "terraform plan" in out and "pinned" in out


def test_search_history_status(capsys: pytest.CaptureFixture[str], realistic: Path) -> None:
    code, out, _ = run(capsys, "search", "postgres", "--db", str(realistic), "--json")
    hits = json.loads(out)
    assert code == 0 and 0 < len(hits) <= 10
    assert all(
        "postgres" in h["memory"]["content"].lower() or h["memory"].get("searchTerms") for h in hits
    )
    code, out, _ = run(capsys, "history", "--db", str(realistic), "--json")
    assert code == 0 and len(json.loads(out)) == 10
    code, out, _ = run(capsys, "history", "e770102c650f925453bff652", "--db", str(realistic))
    assert "Undo 5b662d35" in out
    code, out, _ = run(capsys, "status", "--db", str(realistic), "--json")
    report = json.loads(out)
    assert report["memories"] == 205 and report["paused"] == 5


def test_search_and_recall_json_follow_the_public_cases(
    capsys: pytest.CaptureFixture[str], realistic: Path
) -> None:
    db = ("--db", str(realistic))
    code, out, _ = run(capsys, "search", "kyverno", *db, "--json")
    hits = json.loads(out)
    assert code == 0
    assert [h["memory"]["id"] for h in hits] == [
        "cd4d49e9d57a843430ffb194",
        "93f3ef48151edcce79f0a56e",
        "1ffdd011bb1a1e51f647de06",
        "39cc5ce9ca3d2186c8abb5da",
    ]
    assert list(hits[0]) == ["memory", "quality"]
    code, out, _ = run(capsys, "search", "kyverno", "--limit", "1", *db, "--json")
    assert [h["memory"]["id"] for h in json.loads(out)] == ["cd4d49e9d57a843430ffb194"]

    code, out, _ = run(capsys, "recall", "kyverno", *db, "--json")
    result = json.loads(out)
    assert code == 0 and list(result) == ["selected", "excluded"]
    assert [r["memory"]["id"] for r in result["selected"]] == [
        "cd4d49e9d57a843430ffb194",
        "93f3ef48151edcce79f0a56e",
    ]
    first = result["selected"][0]
    assert list(first) == ["memory", "quality", "score", "rankScore"]
    assert first["rankScore"] == pytest.approx(first["score"] * first["quality"]["factor"])
    assert result["excluded"] == [
        {"id": "1ffdd011bb1a1e51f647de06", "reason": "dormant"},
        {"id": "39cc5ce9ca3d2186c8abb5da", "reason": "dormant"},
    ]
    code, out, _ = run(capsys, "recall", "kyverno", "--limit", "1", *db, "--json")
    limited = json.loads(out)
    assert len(limited["selected"]) == 1
    assert {"id": "93f3ef48151edcce79f0a56e", "reason": "limit"} in limited["excluded"]

    code, out, _ = run(capsys, "recall", "cart", "totals", *db)
    assert code == 0 and "nothing would be injected" in out and "thin-match" in out
    with pytest.raises(SystemExit):
        main(["recall", "x", "--limit", "-1", *db])


def test_write_verbs_and_exit_codes(capsys: pytest.CaptureFixture[str], realistic: Path) -> None:
    db = ("--db", str(realistic), "--json")
    code, out, _ = run(capsys, "unpin", PINNED, *db)
    event = json.loads(out)["event"]
    assert code == 0 and len(event) == 36
    code, out, _ = run(capsys, "pin", PINNED, *db)
    assert code == 0
    code, out, _ = run(capsys, "feedback", PINNED, "useful", *db)
    assert code == 0 and json.loads(out)["event"]
    code, out, _ = run(capsys, "resolve", PINNED, *db)
    assert (code, json.loads(out)) == (1, {"error": "Memory is not conflicted"})
    code, out, _ = run(capsys, "undo", event, *db)
    assert code == 1 and "undo refused" in json.loads(out)["error"]
    code, out, err = run(
        capsys,
        "correct",
        PINNED,
        "Always",
        "apply",
        "saved",
        "terraform",
        "plans.",
        "--db",
        str(realistic),
    )
    assert code == 0 and out.startswith("Update recorded: ")
    code, out, err = run(capsys, "forget", "nope", "--db", str(realistic))
    assert code == 1 and err.strip() == "memevo-tui: Unknown memory id"
    code, out, err = run(capsys, "pin", PINNED, "--db", str(realistic), "--read-only")
    assert code == 2 and "read-only" in err


@pytest.mark.parametrize(
    "kind", ["missing", "directory", "symlink", "not-a-directory", "unreadable"]
)
def test_bad_store_paths_fail_with_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "memory.sqlite"
    if kind == "directory":
        path.mkdir()
    elif kind == "symlink":
        (tmp_path / "real.sqlite").write_bytes(b"")
        path.symlink_to(tmp_path / "real.sqlite")
    elif kind == "not-a-directory":
        (tmp_path / "file").write_text("x")
        path = tmp_path / "file" / "memory.sqlite"
    elif kind == "unreadable":
        path.write_bytes(b"")
        real_access = os.access
        monkeypatch.setattr(
            os, "access", lambda p, mode: False if Path(p) == path else real_access(p, mode)
        )
    before = sorted(os.listdir(tmp_path))
    for argv in (["--db", str(path)], ["list", "--db", str(path)]):
        code, out, err = run(capsys, *argv)
        assert code == 2
        assert out == ""
        lines = err.strip().splitlines()
        assert len(lines) == 1 and str(path) in lines[0]
    assert sorted(os.listdir(tmp_path)) == before


def test_default_path_comes_from_the_agent_dir(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    code, _, err = run(capsys, "list")
    expected = tmp_path / "agent" / "agent-suite" / "memory-evolution" / "memory.sqlite"
    assert code == 2
    assert (
        err.strip() == f"memevo-tui: no memory store at {expected}; pass --db PATH, or try --demo"
    )
    assert not (tmp_path / "agent").exists()


def test_future_schema_cannot_run(capsys: pytest.CaptureFixture[str], fixture_copy) -> None:  # type: ignore[no-untyped-def]
    path = fixture_copy("future-schema.sqlite")
    code, out, _ = run(capsys, "list", "--db", str(path), "--json")
    assert code == 2 and "Unsupported memory database version" in json.loads(out)["error"]


def test_hostile_output_never_carries_control_characters(
    capsys: pytest.CaptureFixture[str], hostile: Path
) -> None:
    code, out, err = run(capsys, "list", "--all", "--db", str(hostile))
    assert code == 0 and "2 corrupt row(s) left out" in err
    assert "\x1b" not in out and "\x07" not in out and "\r" not in out
    assert "␛" in out


def test_demo_verb(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "status", "--demo", "--json")
    assert code == 0
    report = json.loads(out)
    assert report["problems"] == [] and set(report["sources"]) == {
        "done",
        "failed",
        "pending",
        "running",
    }


def test_as_of_as_users_type_it(realistic: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--as-of -30d`` is the same as ``--as-of=-30d``; an empty moment is an error."""
    code, spaced, _ = run(capsys, "list", "--json", "--db", str(realistic), "--as-of", "-30d")
    assert code == 0
    code, joined, _ = run(capsys, "list", "--json", "--db", str(realistic), "--as-of=-30d")
    assert code == 0 and spaced == joined
    code, now, _ = run(capsys, "list", "--json", "--db", str(realistic))
    assert now != spaced  # a month earlier, the ages differ
    for empty in ("", "   "):
        code, out, err = run(capsys, "list", "--db", str(realistic), "--as-of", empty)
        assert (code, out) == (2, "")
        assert err.startswith("memevo-tui: --as-of: an empty moment") and err.count("\n") == 1


def test_a_usage_mistake_is_one_line(realistic: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = {
        ("list", "--db", str(realistic), "--as-of", "-x"): "--as-of=-30d",
        ("list", "--db", str(realistic), "--as-of"): "--as-of=-30d",
        ("list", "--bogus"): "unrecognized arguments: --bogus",
        ("feedback", "abc", "great"): "invalid choice: 'great'",
    }
    for argv, needle in cases.items():
        with pytest.raises(SystemExit) as exc:
            main(list(argv))
        assert exc.value.code == 2
        out, err = capsys.readouterr()
        assert out == "" and err.count("\n") == 1 and needle in err, err
        assert not err.startswith("usage:")


@pytest.mark.unit  # the CLI's read-back of a changed record (cli.run._stored)
async def test_a_search_prints_a_record_pi_changed_after_the_load_as_it_is_now(
    realistic: Path,
) -> None:
    """A search keeps no stored objects while it loads; the few it prints are read
    again, and one pi changed or removed meanwhile is printed as it is now (or left
    out), with a note."""
    import io

    from memevo_tui.cli.output import Output
    from memevo_tui.cli.run import _stored
    from store import MemoryStore

    async with await MemoryStore.open(realistic) as store:
        load = await store.load_memories()
        first, second = load.memories[0], load.memories[1]
        async with await MemoryStore.open(realistic) as pi:  # pi, writing meanwhile
            await pi.pin(first.id) if first.layer != "pinned" else await pi.unpin(first.id)
        err = io.StringIO()
        stored = await _stored(store, [first, second], Output(io.StringIO(), err))
    assert stored[first.id].revision == first.revision + 1
    assert (
        stored[second.id].data["id"] == second.id and stored[second.id].revision == second.revision
    )
    assert err.getvalue() == (
        "memevo-tui: 1 record(s) changed while this ran: printed as they are now, "
        "or left out if gone\n"
    )


@pytest.mark.parametrize("kind", ["symlink", "fifo", "device", "directory"])
def test_export_force_replaces_only_a_regular_file(
    realistic: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    import stat as st

    target = tmp_path / f"out-{kind}.jsonl"
    aimed = tmp_path / "precious.txt"
    aimed.write_text("keep me\n")
    if kind == "symlink":
        target.symlink_to(aimed)
    elif kind == "fifo":
        os.mkfifo(target)
    elif kind == "directory":
        target.mkdir()
    else:
        if os.geteuid() != 0:
            pytest.skip("only root makes a device node")
        os.mknod(target, 0o600 | st.S_IFCHR, os.makedev(1, 3))  # as /dev/null
    before = os.lstat(target)
    code = main(["export", "--db", str(realistic), "-o", str(target), "--force"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert "an export writes only to a regular file or a new path" in err
    after = os.lstat(target)
    assert (after.st_ino, after.st_mode) == (before.st_ino, before.st_mode)
    assert aimed.read_text() == "keep me\n"
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".part")] == []
    regular = tmp_path / "regular.jsonl"
    regular.write_text("old\n")
    assert main(["export", "--db", str(realistic), "-o", str(regular), "--force"]) == 0
    assert regular.read_text() != "old\n"


def test_a_limit_beyond_any_count_means_all(
    realistic: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["history", "--db", str(realistic), "--limit", str(10**23)])
    out, err = capsys.readouterr()
    assert code == 0 and err == "", err
    assert len(out.splitlines()) == 246  # every event


def test_a_damaged_page_is_reported_on_one_line(realistic: Path) -> None:
    with open(realistic, "r+b") as f:  # a run of pages overwritten
        f.seek(300_000)
        f.write(b"\xff" * 20_000)
    result = subprocess.run(
        [sys.executable, "-m", "memevo_tui", "--db", str(realistic), "--smoke"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 2
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert "is corrupt (SQLite's quick check: " in result.stderr


def test_a_backup_keeps_the_stored_spelling_and_counts_each_source_once(
    realistic: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import sqlite3

    con = sqlite3.connect(realistic)
    odd = [r[0] for r in con.execute(
        "SELECT id FROM memories WHERE data LIKE '%\"revision\":1,%' LIMIT 3")]  # fmt: skip
    con.executemany(
        "UPDATE memories SET data = replace(data, '\"revision\":1,', '\"revision\":1E0,') "
        "WHERE id = ?", [(i,) for i in odd])  # fmt: skip
    con.commit()
    raw = dict(con.execute("SELECT id, data FROM memories"))
    con.close()
    out = tmp_path / "backup.jsonl"
    assert main(["export", "--db", str(realistic), "-o", str(out), "--with-sources"]) == 0
    note = capsys.readouterr().err
    seen: set[str] = set()
    for line in out.read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        if item["type"] != "memory":
            continue
        seen.update(s["id"] for s in item.get("sources", []))
        assert item["data"] == raw[item["id"]]
        if item["id"] in odd:  # the stored text itself, numbers as spelt
            assert f'"memory": {raw[item["id"]]}' in line and '"revision":1E0' in line
    assert f"{len(seen)} source(s)" in note and len(odd) == 3


def test_synthetic_stores_are_made_at_the_fixtures_now() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
    from synthetic import NOW_MS

    from store.js import parse_ms

    from conftest import FIXTURE_NOW

    assert parse_ms(FIXTURE_NOW) == NOW_MS  # "2026-11-01T12:00:00.000Z", as it says


def test_the_fixtures_kept_in_the_repository_are_upstream_s() -> None:
    """tests/fixtures is a copy of the upstream-written stores (MANIFEST.md's hashes)."""
    import hashlib
    import re

    kept = Path(__file__).resolve().parent / "fixtures"
    manifest = (kept / "MANIFEST.md").read_text(encoding="utf-8")
    listed = re.findall(r"^\| (\S+\.sqlite) \| \d+ \| ([0-9a-f]{64}) \|$", manifest, re.M)
    assert {name for name, _ in listed} == {
        "realistic.sqlite",
        "hostile.sqlite",
        "future-schema.sqlite",
    }
    for name, digest in listed:
        assert hashlib.sha256((kept / name).read_bytes()).hexdigest() == digest, name
    assert len(list((kept / "sessions").glob("*/*.jsonl"))) == 88
