"""The CLI as a Unix citizen, lossless export, explain, pi's memory_recall tool,
recovery.json and the budget line."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input, OptionList

from memevo_tui.__main__ import main
from memevo_tui.core.export import md_text
from memevo_tui.term.compat.testing import notifications
from store import MemoryStore, fixed_clock
from store.js import fp, iso, parse_ms
from store.learning.budget import budget_status
from store.learning.policy import InvalidPolicy, parse_policy
from store.learning.status import queue_status
from store.recall.recall import TOOL_NO_MATCH

from apphelpers import make_app, opened, press, settle, until, wait_loaded
from conftest import FIXTURE_NOW, FIXTURES, ROOT

NOW_MS = int(parse_ms(FIXTURE_NOW) or 0)
HOUR = 3_600_000
KYVERNO_DORMANT = "1ffdd011bb1a1e51f647de06"


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    """The CLI as a pipe sees it: stdout and stderr are not terminals."""
    return subprocess.run(
        [sys.executable, "-m", "memevo_tui", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "MEMEVO_NOW": FIXTURE_NOW},
    )


def rows_of(path: Path, sql: str) -> list[tuple[Any, ...]]:
    con = sqlite3.connect(path)
    try:
        return list(con.execute(sql))
    finally:
        con.close()


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# ---------------------------------------------------------------- pipes


def test_piped_lists_are_whole_lines_with_full_ids_and_the_count_on_stderr(
    realistic: Path,
) -> None:
    result = cli("list", "--all", "--db", str(realistic))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    total = rows_of(realistic, "SELECT count(*) FROM memories")[0][0]
    assert len(lines) == total  # `wc -l` counts records: no header, no footer
    assert result.stderr.strip() == f"{total} record(s)"
    ids = {r[0] for r in rows_of(realistic, "SELECT id FROM memories")}
    longest = max(ids, key=len)
    assert len(longest) == 36  # the legacy ids that a 24-column cut used to break
    fields = [line.split("\t") for line in lines]
    assert {f[0] for f in fields} == ids
    assert all(len(f) == 6 for f in fields)
    contents = {r[0]: json.loads(r[1])["content"] for r in rows_of(
        realistic, "SELECT id, data FROM memories")}  # fmt: skip
    longest_text = max(fields, key=lambda f: len(contents[f[0]]))
    assert len(contents[longest_text[0]]) > 120  # wider than the old cut
    assert longest_text[5] == contents[longest_text[0]]  # never clipped when piped
    shown = cli("show", longest, "--db", str(realistic))  # an id copied from the pipe works
    assert shown.returncode == 0 and longest in shown.stdout


def test_search_pipes_alike(realistic: Path) -> None:
    result = cli("search", "kyverno", "--db", str(realistic))
    assert result.returncode == 0
    assert [line.split("\t")[0] for line in result.stdout.splitlines()] == [
        "cd4d49e9d57a843430ffb194",
        "93f3ef48151edcce79f0a56e",
        KYVERNO_DORMANT,
        "39cc5ce9ca3d2186c8abb5da",
    ]
    assert result.stderr.strip() == "4 record(s)"


def test_history_limit_all_and_the_note_on_stderr(realistic: Path) -> None:
    total = rows_of(realistic, "SELECT count(*) FROM events")[0][0]
    ten = cli("history", "--db", str(realistic))
    assert ten.returncode == 0 and len(ten.stdout.splitlines()) == 10
    assert "more exist" in ten.stderr and "--all" in ten.stderr
    three = cli("history", "--limit", "3", "--db", str(realistic))
    assert len(three.stdout.splitlines()) == 3
    every = cli("history", "--all", "--db", str(realistic))
    assert len(every.stdout.splitlines()) == total and every.stderr == ""
    newest = rows_of(realistic, "SELECT id, data FROM events ORDER BY rowid DESC LIMIT 1")[0]
    event = json.loads(newest[1])
    line = every.stdout.splitlines()[0]
    assert line.startswith(f"{newest[0]} {event['at']} [{event['scope']}] {event['actor']}: ")
    assert line.endswith(f"({len(event['after'])} changes)")
    help_text = cli("history", "--help").stdout
    assert "default 10" in help_text and "--all" in help_text


def test_list_takes_the_dashboards_filter_tokens(realistic: Path) -> None:
    result = cli("list", "--filter", "kind:fact state:dormant", "--json", "--db", str(realistic))
    rows = json.loads(result.stdout)
    assert rows and all(r["memory"]["kind"] == "fact" and r["quality"]["dormant"] for r in rows)
    typo = cli("list", "--filter", "kind:fcat", "--db", str(realistic))
    assert typo.returncode == 2 and typo.stdout == ""
    assert typo.stderr.startswith("memevo-tui: --filter: unknown kind 'fcat'")
    hidden = cli("list", "--filter", "state:forgotten", "--json", "--db", str(realistic))
    assert json.loads(hidden.stdout)  # naming a hidden state shows it, as in the dashboard


@pytest.mark.parametrize(
    "verb",
    ["list", "show", "search", "recall", "explain", "history", "status", "export", "pin"],
)
def test_every_verb_has_help(verb: str) -> None:
    result = cli(verb, "--help")
    assert result.returncode == 0 and result.stdout.startswith("usage: memevo-tui " + verb)


# ---------------------------------------------------------------- export


def export_lines(*args: str) -> list[dict[str, Any]]:
    result = cli("export", *args)
    assert result.returncode == 0, result.stderr
    assert result.stderr.startswith("Exported ")
    return [json.loads(line) for line in result.stdout.splitlines()]


@pytest.mark.parametrize("name", ["realistic.sqlite", "hostile.sqlite"])
def test_the_jsonl_export_is_lossless(fixture_copy, name: str) -> None:  # type: ignore[no-untyped-def]
    path = fixture_copy(name)
    lines = export_lines("--with-events", "--with-sources", "--db", str(path))
    header, body = lines[0], lines[1:]
    assert header["type"] == "header" and header["store"] == str(path)
    assert header["schema"] == "7" and header["exportedAt"] == FIXTURE_NOW
    assert header["memevoTui"] and header["withEvents"] and header["withSources"]

    stored = rows_of(path, "SELECT id, scope, hash, data FROM memories ORDER BY rowid")
    records = [x for x in body if x["type"] == "memory"]
    corrupt = [x for x in body if x["type"] == "corrupt" and x["table"] == "memories"]
    assert len(records) + len(corrupt) == len(stored) == header["records"] + header["corrupt"]
    by_id = {x["id"]: x for x in [*records, *corrupt]}
    for row_id, scope, hash_, data in stored:
        line = by_id[row_id]
        assert (line["scope"], line["hash"]) == (scope, hash_)
        if line["type"] == "memory":
            assert line["memory"] == json.loads(data)  # the stored object, unchanged
            assert list(line["memory"]) == list(json.loads(data))  # key order too
            assert set(line["quality"]) >= {"freshness", "dormant", "factor"}
        else:
            assert line["data"] == data and line["reason"]  # exactly as stored, and why
    if name == "hostile.sqlite":
        assert corrupt  # the hostile store's corrupt rows come out as corrupt

    # events: every valid event that wrote a record travels with that record
    events = rows_of(path, "SELECT id, data FROM events")
    written: dict[str, dict[str, Any]] = {}
    for event_id, data in events:
        try:
            event = json.loads(data)
        except ValueError:
            continue
        for rec in event.get("after") or []:
            if isinstance(rec, dict) and rec.get("id") in by_id:
                written.setdefault(rec["id"], {})[event_id] = event
    for rec in records:
        got = {e["id"]: e for e in rec["events"]}
        want = written.get(rec["id"], {})
        assert set(got) >= set(want), rec["id"]
        for event_id, event in want.items():
            assert got[event_id] == event

    # sources: the row that gave a record its evidence travels with it, every column
    sources = {r[0]: r for r in rows_of(path, "SELECT id, data, state, attempt FROM sources")}
    checked = 0
    for rec in records:
        evidence = rec["memory"].get("evidence") or {}
        if evidence.get("sourceId") in sources:
            sid, data, state, attempt = sources[evidence["sourceId"]]
            entry = next(s for s in rec["sources"] if s["id"] == sid)
            assert (entry["data"], entry["state"], entry["attempt"]) == (
                json.loads(data),
                state,
                attempt,
            )
            checked += 1
    assert checked  # each store has records whose evidence names a stored source


def test_export_filter_and_output_file(realistic: Path, tmp_path: Path) -> None:
    target = tmp_path / "facts.jsonl"
    result = cli("export", "--filter", "kind:fact", "-o", str(target), "--db", str(realistic))
    assert result.returncode == 0 and result.stdout == ""
    assert result.stderr.strip().endswith(f"to {target}")
    lines = [json.loads(x) for x in target.read_text().splitlines()]
    assert lines[0]["filter"] == "kind:fact"
    assert lines[1:] and all(x["memory"]["kind"] == "fact" for x in lines[1:])
    assert oct(target.stat().st_mode & 0o777) == "0o600"  # memories are private
    missing = cli(
        "export", "-o", str(tmp_path / "no" / "such" / "dir.jsonl"), "--db", str(realistic)
    )
    assert missing.returncode == 2 and missing.stderr.startswith("memevo-tui: cannot write")
    assert not [p for p in tmp_path.rglob("*") if p.name.endswith(".part")]  # nothing left


def test_markdown_is_grouped_and_redacted(realistic: Path, tmp_path: Path) -> None:
    secret_id = "e665359dabc60f842b48881d"
    (data,) = rows_of(realistic, f"SELECT data FROM memories WHERE id='{secret_id}'")[0]
    record = json.loads(data)
    record["content"] = (
        "Deploy notes:\npassword: hunter2-very-secret\nuse ghp_abcdefghij1234\n*not* <b>bold</b>"
    )
    con = sqlite3.connect(realistic)
    with con:
        con.execute(
            "UPDATE memories SET data=?, hash=? WHERE id=?",
            (json.dumps(record), fp(record["content"]), secret_id),
        )
    con.close()
    target = tmp_path / "memories.md"
    result = cli("export", "-o", str(target), "--db", str(realistic))
    assert result.returncode == 0, result.stderr
    text = target.read_text()
    assert text.startswith("# What pi remembers")
    assert "redactor" in text.split("\n## ")[0]  # the header says so
    assert "hunter2" not in text and "ghp_abcdefghij1234" not in text
    assert "\\[REDACTED sensitive line\\]" in text and secret_id in text  # escaped: text
    assert "## /home/dev/projects/infra" in text and "### Facts (" in text
    assert "<b>" not in text and "\\<b\\>" in text  # markup is shown, never obeyed
    assert md_text("# not a heading\n1. nor a list") == "\\# not a heading\n1\\. nor a list"


LINKY = (
    "Login at https://evil.example/login?next=/admin. Mirror: www.evil.example, "
    "docs (https://en.wikipedia.org/wiki/Foo_(bar)). Ping @alice and @org/team, "
    "or mail bob@corp.example.com; ftp://files.evil.example/x"
)


def outside_code(markdown: str) -> str:
    """The Markdown with its inline code spans taken out."""
    import re

    return re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", markdown)


def test_markdown_makes_no_links_and_mentions_nobody(hostile: Path, tmp_path: Path) -> None:
    from markdown_it import MarkdownIt

    (memory_id,) = rows_of(hostile, "SELECT id FROM memories LIMIT 1")[0]
    result = cli("correct", memory_id, LINKY, "--db", str(hostile))
    assert result.returncode == 0, result.stderr
    target = tmp_path / "memories.md"
    result = cli("export", "-o", str(target), "--db", str(hostile))
    assert result.returncode == 0, result.stderr
    text = target.read_text()
    # a forge's autolinking, as markdown-it's linkify does it: nothing becomes a link
    html = MarkdownIt("gfm-like", {"linkify": True}).render(text)
    assert "<a " not in html, [line for line in html.splitlines() if "<a " in line][:3]
    # and no @ outside code is bare (a forge would mention that user)
    prose = outside_code(text)
    assert "@" in prose and all(prose[i - 1] == "\\" for i, c in enumerate(prose) if c == "@")
    for url in ("`https://evil.example/login?next=/admin`.", "`www.evil.example`,",
                "(`https://en.wikipedia.org/wiki/Foo_(bar)`).", "`bob@corp.example.com`;",
                "`ftp://files.evil.example/x`", "\\@alice", "\\@org/team"):  # fmt: skip
        assert url in text


# ---------------------------------------------------------------- explain and the tool


def test_explain_follows_the_public_recall_cases(
    capsys: pytest.CaptureFixture[str], realistic: Path
) -> None:
    cases = json.loads((FIXTURES / "recall-cases.json").read_text())["cases"]
    for case in cases:
        code, out, _ = run(capsys, "explain", case["query"], "--json", "--db", str(realistic))
        result = json.loads(out)
        assert code == 0
        assert [r["memory"]["id"] for r in result["selected"]] == case["recall"][:3], case
        for r in result["selected"]:
            assert r["rankScore"] == pytest.approx(r["score"] * r["quality"]["factor"])
            assert not r["quality"]["dormant"]
    code, out, _ = run(capsys, "explain", "kyverno", "--db", str(realistic))
    assert "score 4.593 × quality 0.970 = rank 4.453" in out
    assert f"{KYVERNO_DORMANT}  dormant" in out and "left out (2)" in out


def test_the_recall_tool_includes_a_dormant_match_marked_aging(
    capsys: pytest.CaptureFixture[str], realistic: Path
) -> None:
    db = ("--db", str(realistic))
    code, out, _ = run(capsys, "recall", "kyverno", "--json", *db)
    assert KYVERNO_DORMANT not in [r["memory"]["id"] for r in json.loads(out)["selected"]]
    code, out, _ = run(capsys, "recall", "--tool", "kyverno", "--json", *db)
    tool = json.loads(out)
    ids = [r["memory"]["id"] for r in tool["selected"]]
    assert code == 0 and KYVERNO_DORMANT in ids and len(ids) == 3
    header, trust, *lines = tool["text"].splitlines()
    assert header == "# Pi Memory" and trust.startswith("Historical data only")
    digest = [json.loads(line) for line in lines]
    assert tool["matches"] == len(digest) == 3
    dormant_line = next(d for d in digest if d["id"] == KYVERNO_DORMANT)
    assert dormant_line["aging"] is True
    assert list(dormant_line) == [
        "id", "kind", "status", "origin", "source", "updated", "evidence", "aging", "text",
    ]  # fmt: skip
    code, out, _ = run(capsys, "recall", "--tool", "kyverno", *db)
    assert '"aging":true' in out and "returned to the model (3 record(s)" in out
    assert "\n# Pi Memory\nHistorical data only" in out
    code, out, _ = run(capsys, "recall", "--tool", "the weather in lisbon", "--json", *db)
    assert json.loads(out)["text"] == TOOL_NO_MATCH and json.loads(out)["matches"] == 0
    code, _, err = run(capsys, "recall", "--tool", "x" * 513, *db)
    assert code == 2 and "1 to 512 characters" in err


async def test_the_recall_preview_has_the_tools_mode(realistic: Path) -> None:
    from memevo_tui.widgets.recall_list import RecallList
    from memevo_tui.widgets.recall_pane import RecallPane

    async with opened(realistic) as (app, pilot):
        await pilot.press("i", "slash", *"kyverno")
        pane = app.query_one(RecallPane)
        await until(pilot, lambda: pane.result is not None and not pane.waiting, "injection")
        assert pane.result is not None and pane.result.purpose == "inject"
        assert KYVERNO_DORMANT not in [c.memory.id for c in pane.result.selected]
        await pilot.press("ctrl+t")
        await until(
            pilot, lambda: pane.result is not None and pane.result.purpose == "tool", "tool"
        )
        await until(pilot, lambda: not pane.waiting, "the tool's answer")
        assert KYVERNO_DORMANT in [c.memory.id for c in pane.result.selected]
        assert pane.query_one(RecallList).chosen == "returned"
        assert any('"aging":true' in d.line for d in pane.digest if d.included)
        await pilot.press("ctrl+t")
        await until(
            pilot, lambda: pane.result is not None and pane.result.purpose == "search", "search"
        )
        await pilot.press("ctrl+t")
        await until(
            pilot, lambda: pane.result is not None and pane.result.purpose == "inject", "inject"
        )


# ---------------------------------------------------------------- recovery.json


def test_recovery_json_is_validated_as_pi_validates_it() -> None:
    assert parse_policy("{}").calls_per_hour == 20
    policy = parse_policy('{"callsPerHour": 3, "sourceCalls": 8, "dailyEstimatedUsd": 2.5}')
    assert (policy.calls_per_hour, policy.source_calls, policy.daily_estimated_usd) == (3, 8, 2.5)
    for bad, needle in (
        ('{"callsPerHour": 0}', "callsPerHour must be an integer 1-1000"),
        ('{"callsPerHour": 2.5}', "callsPerHour"),
        ('{"sourceCalls": true}', "sourceCalls"),
        ('{"timeoutMs": 500}', "timeoutMs"),
        ('{"dailyEstimatedUsd": 0}', "dailyEstimatedUsd"),
        ('{"fallbackModels": ["no-slash"]}', "fallbackModels"),
        ('{"retries": 3}', "unknown key 'retries'"),
        ("[1, 2]", "expected a JSON object"),
        ("{nope", "not JSON"),
        ('{"fallbackModels": []}' + " " * 8192, "larger than 8192 bytes"),
    ):
        with pytest.raises(InvalidPolicy) as caught:
            parse_policy(bad)
        assert str(caught.value).startswith("Invalid recovery.json: ") and needle in str(
            caught.value
        )


def test_recovery_json_changes_the_hourly_limit_and_the_paused_predicate(
    capsys: pytest.CaptureFixture[str], realistic: Path
) -> None:
    db = ("--db", str(realistic))
    code, out, _ = run(capsys, "status", "--json", *db)
    before = json.loads(out)
    assert before["paused"] == 5 and before["policy"]["from"] == "defaults"
    (realistic.parent / "recovery.json").write_text(
        json.dumps({"callsPerHour": 3, "sourceCalls": 8, "sourceTimeMs": 600000})
    )
    code, out, _ = run(capsys, "status", "--json", *db)
    after = json.loads(out)
    assert code == 0
    # the sources paused by 4 calls and by 363 s of calls run again under this policy
    assert after["paused"] == 3 and after["retrying"] == before["retrying"] + 2
    assert after["policy"]["callsPerHour"] == 3 and after["policy"]["from"].endswith(
        "recovery.json"
    )
    assert after["budget"]["state"] == "waiting"  # 3 calls in the last hour: the limit
    _, out, _ = run(capsys, "status", *db)
    assert "Shared calls/hour=3/3" in out
    assert "calls/source<=8; time/source<=600000ms" in out  # pi's semicolons


INVALID_REASON = "pi will not open this store: Invalid recovery.json: callsPerHour must be"


def test_an_invalid_recovery_json_refuses_cli_writes(
    capsys: pytest.CaptureFixture[str], realistic: Path
) -> None:
    (realistic.parent / "recovery.json").write_text('{"callsPerHour": 0}')
    before = rows_of(realistic, "SELECT count(*) FROM events")
    code, _, err = run(capsys, "pin", "e665359dabc60f842b48881d", "--db", str(realistic))
    assert code == 2 and INVALID_REASON in err
    assert rows_of(realistic, "SELECT count(*) FROM events") == before
    code, out, _ = run(capsys, "status", "--db", str(realistic))
    assert code == 0 and "Invalid recovery.json" in out


async def test_an_invalid_recovery_json_opens_the_dashboard_read_only(realistic: Path) -> None:
    (realistic.parent / "recovery.json").write_text('{"callsPerHour": 0}')
    reason = INVALID_REASON
    async with opened(realistic) as (app, pilot):
        assert app.state.store is not None and app.state.store.read_only
        assert reason in (app.state.store.read_only_reason or "")
        await press(pilot, "p")
        assert any(reason in str(n.message) for n in notifications(app))


# ---------------------------------------------------------------- the budget line


def add_calls(path: Path, calls: list[tuple[str, int, str, str, float | None]]) -> None:
    """Model calls as pi records them: (model, at, outcome, code, reserved_usd)."""
    con = sqlite3.connect(path)
    with con:
        for n, (model, at, outcome, code, usd) in enumerate(calls):
            con.execute(
                "INSERT INTO model_calls (source_id, attempt, model, provider, at, outcome, "
                "finished_at, code, reserved_usd, charged_usd, input_tokens, output_tokens) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, NULL)",
                (
                    f"test:{at}:{n}",
                    1,
                    model,
                    model.split("/")[0],
                    at,
                    outcome,
                    at + 1000,
                    code,
                    usd,
                ),
            )
    con.close()


async def budget_of(path: Path, policy: dict[str, Any] | None = None) -> Any:
    if policy is not None:
        (path.parent / "recovery.json").write_text(json.dumps(policy))
    store = await MemoryStore.open(path, read_only=True, clock=fixed_clock(FIXTURE_NOW))
    try:
        return await budget_status(store), await queue_status(store)
    finally:
        await store.close()


async def test_budget_available(realistic: Path) -> None:
    budget, queue = await budget_of(realistic)
    assert budget.state == "available" and budget.line == "available"
    assert queue.budget == budget


async def test_budget_waits_on_the_hourly_limit(realistic: Path) -> None:
    budget, _ = await budget_of(realistic, {"callsPerHour": 2})
    rows = rows_of(
        realistic, f"SELECT at FROM model_calls WHERE at > {NOW_MS - HOUR} ORDER BY at DESC"
    )
    assert budget.state == "waiting" and budget.until == rows[1][0] + HOUR
    assert budget.line.startswith(f"waiting until {iso(rows[1][0] + HOUR)}")
    assert "2 calls in the last hour" in budget.line


async def test_budget_waits_after_five_failures_of_the_model(realistic: Path) -> None:
    model = rows_of(realistic, "SELECT model FROM model_calls ORDER BY at DESC, rowid DESC")[0][0]
    add_calls(realistic, [(model, NOW_MS - 60_000 * (n + 1), "failed", "timeout", 0.01)
                          for n in range(5)])  # fmt: skip
    # the newest call must stay this model's, so the line is for it
    add_calls(realistic, [(model, NOW_MS - 1000, "running", "", 0.01)])
    budget, _ = await budget_of(realistic, {"callsPerHour": 100})
    fifth = NOW_MS - 5 * 60_000 + 1000
    assert budget.state == "waiting" and budget.until == fifth + 900_000
    assert f"5 failures of {model}" in budget.reason


async def test_a_daily_ceiling_blocks_pis_status_for_any_model(realistic: Path) -> None:
    """pi's /memory status prices nothing (no catalog there), so while dailyEstimatedUsd
    is set its budget line is blocked, naming the model; the line names the model of
    the last recorded call."""
    add_calls(realistic, [("local/unpriced-model", NOW_MS - 1000, "running", "", None)])
    for ceiling in (50, 1, 0.05):
        budget, _ = await budget_of(realistic, {"dailyEstimatedUsd": ceiling})
        assert budget.state == "blocked" and budget.until is None
        assert budget.pi_line == (
            "Shared model budget: blocked. dailyEstimatedUsd is set but local/unpriced-model "
            "has no catalog pricing, so the ceiling cannot be enforced and no call is made. "
            "Remove dailyEstimatedUsd from recovery.json, or use a model with known pricing."
        )


async def test_the_budget_line_in_pis_words(realistic: Path) -> None:
    budget, _ = await budget_of(realistic)
    assert budget.pi_line == "Shared model budget: available."
    budget, _ = await budget_of(realistic, {"callsPerHour": 2})
    assert budget.pi_line == (
        f"Shared model budget: waiting until {iso(budget.until or 0)} (manual evolve does not "
        "bypass shared ceilings)."
    )


def test_status_follows_pis_layout(capsys: pytest.CaptureFixture[str], realistic: Path) -> None:
    code, out, _ = run(capsys, "status", "--db", str(realistic))
    lines = out.splitlines()
    assert code == 0
    assert (
        lines[0] == "205 memories; done=97, failed=14, pending=5, running=2; SQLite ok (schema 7)"
    )
    assert lines[1] == f"State directory: {realistic.parent}"
    assert lines[2] == (
        "Automatic recovery: retrying=9, paused=5 (failure limit 5; output limit 3; "
        "non-retryable errors pause immediately)"
    )
    order = [
        "Automatic recovery:",
        "9 more failed sources.",
        "Routing: default follows Pi; cross-provider fallback=true; models/source<=2; "
        "calls/source<=4; time/source<=300000ms",
        "Shared calls/hour=3/20; last24h=",
        "Attempt ",
        "Legacy import: completed; imported=12. /memory import [directory] imports one "
        "ledger set, never replays a completed import.",
        "Legacy inactive files: none; never executed/imported. /memory archive-legacy "
        "creates a copy-only backup.",
        "Processing outcomes: done means processed/retired, not necessarily learned.",
        "Use /memory learning for the last capture/nomination decision.",
        "Shared model budget: available.",
        "memevo-tui: ",
    ]
    at = [next(i for i, line in enumerate(lines) if line.startswith(p)) for p in order]
    assert at == sorted(at)
    assert all(line.startswith("memevo-tui: ") for line in lines[at[-1] :])  # ours, after
    pause = "paused; inspect diagnostics, /memory evolve <source-id> for one extra attempt"
    detail = next(line for line in lines if line.endswith(pause))
    assert "; attempts=" in detail and "failures=" in detail and "outputFailures=" in detail
    assert "estimated daily ceiling=disabled" in out
    assert any(line.startswith("  diagnostics={") for line in lines)
    assert any(line.endswith(": changedRecords=2") for line in lines)


async def test_the_dashboard_exports_the_marked_records(realistic: Path, tmp_path: Path) -> None:
    from memevo_tui.views.memories import MemoriesView

    app = make_app(realistic)
    target = tmp_path / "two.jsonl"
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_loaded(pilot)
        view = app.query_one(MemoriesView)
        await pilot.press("space", "j", "space")
        await settle(pilot)
        marked = set(view.marks)
        assert len(marked) == 2
        await pilot.press("ctrl+e", "j", "enter")  # the backup, below the default share
        await settle(pilot)
        await pilot.press("ctrl+u", *str(target), "enter")
        await until(pilot, lambda: any(n.title == "Exported" for n in notifications(app)), "export")
        toast = next(n for n in notifications(app) if n.title == "Exported")
        assert str(target) in toast.message and "2 record(s)" in toast.message
        lines = [json.loads(x) for x in target.read_text().splitlines()]
        assert {x["id"] for x in lines[1:]} == marked
        assert sorted(marked) == lines[0]["marked"] and lines[0]["listed"] is None
        assert all("events" in x and "sources" in x for x in lines[1:])
        # nothing marked: the listed records, and the header says so (no "marked" list)
        await pilot.press("escape")  # drop the marks
        await settle(pilot)
        listed_to = tmp_path / "listed.jsonl"
        await pilot.press("ctrl+e", "j", "enter")
        await settle(pilot)
        await pilot.press("ctrl+u", *str(listed_to), "enter")
        await until(pilot, lambda: listed_to.exists(), "the listed export")
        head = json.loads(listed_to.read_text().splitlines()[0])
        assert head["marked"] is None and head["listed"] == head["records"] > 2
        # an existing file is never overwritten
        await pilot.press("ctrl+e", "j", "enter")
        await settle(pilot)
        await pilot.press("ctrl+u", *str(target), "enter")
        await until(
            pilot, lambda: any(n.title == "Not exported" for n in notifications(app)), "refusal"
        )
    assert [json.loads(x)["id"] for x in target.read_text().splitlines()[1:]] == [
        x["id"] for x in lines[1:]
    ]


async def test_ctrl_e_asks_share_or_backup_and_shares_by_default(
    realistic: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ctrl+e asks what the export is for; enter takes the default, Markdown to share,
    named for the day in the current directory, whatever its name ends with."""
    from memevo_tui.dialogs.menu import Menu
    from memevo_tui.dialogs.prompt import PromptScreen

    monkeypatch.chdir(tmp_path)
    async with opened(realistic) as (app, pilot):
        await press(pilot, "ctrl+e")
        menu = app.screen
        assert isinstance(menu, Menu) and menu.title_text == "Export 186 listed record(s) as"
        assert menu.query_one("#menu-options", OptionList).highlighted == 0
        assert [key for key, _ in menu.choices] == ["markdown", "jsonl"]
        await press(pilot, "enter")
        prompt = app.screen
        assert isinstance(prompt, PromptScreen) and prompt.title_text.startswith("Share 186")
        assert prompt.query_one(Input).value == "memevo-export-2026-11-01.md"
        await pilot.press("enter")
        await until(pilot, lambda: any(n.title == "Exported" for n in notifications(app)), "export")
        shared = (tmp_path / "memevo-export-2026-11-01.md").read_text()
        assert shared.startswith("# ") and '"events"' not in shared
        # the backup is JSONL whatever the name says
        await pilot.press("ctrl+e", "j", "enter")
        await settle(pilot)
        assert app.screen.query_one(Input).value == "memevo-export-2026-11-01.jsonl"
        await pilot.press("ctrl+u", *"backup.txt", "enter")
        await until(pilot, lambda: (tmp_path / "backup.txt").exists(), "the backup")
        await settle(pilot)
        first = json.loads((tmp_path / "backup.txt").read_text().splitlines()[1])
        assert "events" in first and "sources" in first


def test_export_never_overwrites_a_file_without_force(realistic: Path, tmp_path: Path) -> None:
    target = tmp_path / "mine.jsonl"
    target.write_text("my notes\n")
    result = cli("export", "-o", str(target), "--db", str(realistic))
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert "already exists; --force replaces it" in result.stderr
    assert target.read_text() == "my notes\n"
    result = cli("export", "-o", str(target), "--force", "--db", str(realistic))
    assert result.returncode == 0 and target.read_text().startswith('{"type": "header"')


def test_a_file_that_appears_during_an_export_is_kept(tmp_path: Path) -> None:
    from memevo_tui.core.export import atomic_file

    target = tmp_path / "late.md"
    with pytest.raises(FileExistsError), atomic_file(target) as handle:
        handle.write("the export\n")
        target.write_text("written meanwhile\n")  # another program got there first
    assert target.read_text() == "written meanwhile\n"
    assert [p.name for p in tmp_path.iterdir()] == ["late.md"]  # no half file left


def test_markdown_says_how_fresh_in_words_without_source_ids(
    realistic: Path, tmp_path: Path
) -> None:
    target = tmp_path / "share.md"
    result = cli("export", "-o", str(target), "--db", str(realistic))
    assert result.returncode == 0, result.stderr
    text = target.read_text()
    assert "freshness 0." not in text and "freshness 1." not in text  # read as a percentage
    assert re.search(r"· aging, dormant in \d+ days? *\n", text)
    assert "· pinned: never goes dormant" in text and "· never recalled" in text
    assert re.search(r"· dormant \(confirmed \d+ days ago\)", text)
    assert " from `compact:" not in text and " from `user:" not in text  # no source ids


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_scripts_name_every_verb_and_complete_in_bash(
    shell: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``completion SHELL`` is derived from the parser: every verb is in it, and bash,
    loading it, completes a verb and a flag's choices (no store is opened)."""
    import shutil
    import subprocess

    from memevo_tui.__main__ import main
    from memevo_tui.cli.parser import READ_VERBS, WRITE_VERBS

    assert main(["completion", shell]) == 0
    out = capsys.readouterr().out
    assert all(verb in out for verb in (*READ_VERBS, *WRITE_VERBS, "serve"))
    if shell != "bash" or shutil.which("bash") is None:
        return
    script = tmp_path / "memevo-tui.bash"
    script.write_text(out)

    def complete(*words: str) -> list[str]:
        line = " ".join(words)
        probe = (
            f"source {script}; COMP_WORDS=({' '.join(repr(w) for w in words)}); "
            f"COMP_CWORD={len(words) - 1}; COMP_LINE={line!r}; COMP_POINT=${{#COMP_LINE}}; "
            f'_shtab_memevo_tui memevo-tui {words[-1]!r} {words[-2]!r}; echo "${{COMPREPLY[@]}}"'
        )
        done = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, check=True)
        return done.stdout.split()

    assert complete("memevo-tui", "tu") == ["turns"]
    assert complete("memevo-tui", "export", "--format", "") == ["jsonl", "markdown"]
