"""The second round of fault probes (issue 55): pi's session files, project paths, the
turn and session caches, and the store changing under the Turns replay. Each takes a
fresh copy, as ``probe_faults.Probe`` gives it, and says whether memevo-tui held;
``probe_faults.py`` runs them after the first round's."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sqlite3
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from probe_faults import Probe, Result

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests")]  # ptyrun: the program on a pseudo-terminal
ESC, BEL = "\x1b", "\x07"
TITLE = f"{ESC}]0;PWNED{BEL}"
CLIP = f"{ESC}]52;c;cm0gLXJmIH4K{BEL}"
T0 = 1_780_000_000_000
SOURCED = "b88d145711c98801541a4e62"


def _iso(ms: int) -> str:
    from store import iso

    return iso(ms)


def _user(eid: str, parent: str | None, text: str, ms: int) -> dict[str, Any]:
    return {"type": "message", "id": eid, "parentId": parent, "timestamp": _iso(ms),
            "message": {"role": "user", "content": [{"type": "text", "text": text}],
                        "timestamp": ms}}  # fmt: skip


def _reply(eid: str, parent: str, ms: int) -> dict[str, Any]:
    return {"type": "message", "id": eid, "parentId": parent, "timestamp": _iso(ms),
            "message": {"role": "assistant", "content": [{"type": "text", "text": "ok"}],
                        "timestamp": ms}}  # fmt: skip


def _session(path: Path, lines: list[dict[str, Any]], sid: str, cwd: str = "/p") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    header = {"type": "session", "version": 3, "id": sid, "timestamp": _iso(T0), "cwd": cwd}
    path.write_text("".join(json.dumps(x) + "\n" for x in [header, *lines]))
    return path


def _sessions(p: Probe) -> Path:
    root = p.work / f"sessions-{time.monotonic_ns()}"
    shutil.copytree(p.fixtures / "sessions", root)
    return root


def _hostile_sessions(p: Probe) -> Path:
    root = _sessions(p)
    folder = root / f"--home-dev-{TITLE}--"
    lines = [_user(f"{TITLE}u1", None, f"deploy the {CLIP} redis port", T0 + 1),
             _reply(f"{ESC}[2Ja1", f"{TITLE}u1", T0 + 2)]  # fmt: skip
    _session(folder / f"2026-06-01T00-00-00-000Z_{TITLE}.jsonl", lines,
             f"{TITLE}{ESC}[2J0199", f"/home/dev/{ESC}[2J{TITLE}")  # fmt: skip
    source = next((root / "--home-dev-projects-webshop--").glob("*fabd4d8d*"))
    rows = [json.loads(x) for x in source.read_text().splitlines()]
    for row in rows:
        if row.get("type") == "message" and row["message"].get("role") == "assistant":
            row["message"]["role"] = f"{TITLE}assistant"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


def _pty(p: Probe, *args: str, keys: list[bytes], wait: bytes, env: dict[str, str]) -> Any:
    from ptyrun import PtyRun

    run = PtyRun(*args, env={**p.env, **env})
    run.read_until(wait, 60)
    for key in keys:
        run.send(key)
        run.pump(1.0)
    run.send(b"q")
    code = run.finish(60)
    return run, code


def escapes_from_sessions(p: Probe) -> Result:
    db = p.copy("realistic.sqlite")
    root = _hostile_sessions(p)
    seen, held = [], True
    for argv in (["turns"], ["source", SOURCED, "--context", "2"]):
        from ptyrun import PtyRun

        run = PtyRun(*argv, "--db", str(db), "--sessions", str(root), env=p.env)
        code = run.finish(120)
        rest = run.output.replace(b"\x1b[1m", b"").replace(b"\x1b[0m", b"")
        ok = code == 0 and b"\x1b" not in rest and b"\x07" not in rest
        held &= ok
        seen.append(f"{argv[0]}: exit {code}, {'no' if ok else 'an'} escape from the file")
    return held, "; ".join(seen)


def escapes_from_an_origin(p: Probe) -> Result:
    db = p.copy("hostile.sqlite")
    agent = p.work / "agent-origin"
    agent.mkdir()
    (agent / "sessions").symlink_to(_hostile_sessions(p))
    run, code = _pty(p, "--db", str(db), "--read-only", "--project",
                     f"/home/dev/projects/{CLIP}clip", keys=[b"@", b"\x1b", b"n"],
                     wait=b"clip", env={"PI_CODING_AGENT_DIR": str(agent)})  # fmt: skip
    out = run.output
    sent = b"\x1b]52;" in out
    held = code == 0 and not sent and b"\x1b]0;PWNED" not in out
    held &= "\u202e".encode() not in out
    return held, f"exit {code}; OSC 52 {'sent' if sent else 'never sent'}, no raw U+202E"


def markup_in_an_origin(p: Probe) -> Result:
    db = p.copy("realistic.sqlite")
    with sqlite3.connect(db) as con:
        ids = [r[0] for r in con.execute("SELECT id FROM memories LIMIT 3")]
        for record, origin in zip(ids, ["/x/[/]", "/y/[@click=app.quit]QUIT[/]", "/z/[b]B[/b]"],
                                  strict=True):  # fmt: skip
            con.execute("UPDATE memories SET scope = ?, data = json_set(data, '$.scope', ?) "
                        "WHERE id = ?", (origin, origin, record))  # fmt: skip
    run, code = _pty(p, "--db", str(db), "--read-only", "--all-projects",
                     keys=[b"@", b"j", b"\x1b"],
                     wait=b"help", env={})  # fmt: skip
    held = code == 0 and b"Traceback" not in run.output and b"MarkupError" not in run.output
    return held, f"@ opened the picker, exit {code}; {'no ' if held else ''}traceback"


def event_dated_forward(p: Probe) -> Result:
    db = p.copy("realistic.sqlite")
    truth = p.cli("list", "--db", str(db), "--as-of", "2026-10-31", "--all", "--json")
    with sqlite3.connect(db) as con:
        con.execute("UPDATE events SET data = json_set(data, '$.at', "
                    "'2031-01-01T00:00:00.000Z') WHERE rowid = 144")  # fmt: skip
    r = p.cli("list", "--db", str(db), "--as-of", "2026-10-31", "--all", "--json")
    d = p.cli("diff", "2026-05-25", "2026-10-31", "--db", str(db), "--json")
    want, got = len(json.loads(truth.stdout)), len(json.loads(r.stdout or "[]"))
    said = "out of the order they were written" in r.stderr
    added = len(json.loads(d.stdout or "{}").get("added", []))
    return (
        want == got and said,
        f"list --as-of 2026-10-31: {got} records (truth {want}); diff: {added} added; said: {said}",
    )


def forged_session_index(p: Probe) -> Result:
    os.environ.update(XDG_CACHE_HOME=p.env["XDG_CACHE_HOME"],
                      XDG_STATE_HOME=p.env["XDG_STATE_HOME"])  # fmt: skip
    from memevo_tui.core.appstate import AppState
    from memevo_tui.core.recallcache import SESSION_INDEX, SessionIndexCache, cache_home
    from store import session_prompts
    from store.pi.sessions import dump_index, read_session

    path = _session(p.work / "forged" / "2026-06-01T00-00-00-000Z_s.jsonl",
                    [_user("u1", None, "the redis port", T0 + 1), _reply("a1", "u1", T0 + 2),
                     _user("u2", "a1", "and postgres", T0 + 3)], "s")  # fmt: skip
    session_prompts(path, SessionIndexCache())
    session = read_session(path)
    a, b = session.places["u1"], session.places["u2"]
    session.places["u2"] = type(b)(a.offset, a.length, "u2", b.parent_id, b.type, b.role,
                                   b.moment_ms)  # fmt: skip
    AppState(path, root=cache_home()).write_bytes(SESSION_INDEX, dump_index(session, os.stat(path)))
    texts = [x.text for x in session_prompts(path, SessionIndexCache()).prompts]
    return texts == ["the redis port", "and postgres"], f"prompts read: {texts}"


def turns_cache_other_store(p: Probe) -> Result:
    db = p.copy("realistic.sqlite")
    root = str(p.fixtures / "sessions")
    p.cli("turns", "--db", str(db), "--sessions", root, "--json")
    shutil.copyfile(p.fixtures / "hostile.sqlite", db)
    warm = p.cli("turns", "--db", str(db), "--sessions", root, "--json")
    fresh_env = {**p.env, "XDG_CACHE_HOME": str(p.work / "cache-fresh")}
    import subprocess

    fresh = subprocess.run([sys.executable, "-m", "memevo_tui", "turns", "--db", str(db),
                            "--sessions", root, "--json"], cwd=ROOT, env=fresh_env,
                           capture_output=True, text=True, timeout=300)  # fmt: skip
    then = [t["then"] for t in json.loads(warm.stdout)["turns"]]
    truth = [t["then"] for t in json.loads(fresh.stdout)["turns"]]
    differ = sum(a != b for a, b in zip(then, truth, strict=True))
    return differ == 0, f"{differ} of {len(then)} turns differ from a replay with nothing kept"


def replay_store_replaced(p: Probe) -> Result:
    from memevo_tui.core.turnlog import load_turns
    from store import FileIdentity, Replaced, fixed_clock

    db = p.copy("realistic.sqlite")
    held = FileIdentity.of(db)

    def replace(done: int, total: int) -> None:
        if done == 0:
            other = db.with_name("other.sqlite")
            shutil.copyfile(p.fixtures / "hostile.sqlite", other)
            os.replace(other, db)

    try:
        asyncio.run(load_turns(db, fixed_clock("2026-11-01T12:00:00.000Z"),
                               p.fixtures / "sessions", progress=replace, held=held))  # fmt: skip
    except Replaced as exc:
        return True, f"ended: {exc}"[:120]
    return False, "replayed the other store to the end"


def huge_prompt(p: Probe) -> Result:
    db = p.copy("realistic.sqlite")
    root = p.work / "huge-sessions"
    _session(root / "--p--" / "2026-06-01T00-00-00-000Z_big.jsonl",
             [_user("u1", None, "x" * (50 << 20), T0 + 1), _reply("a1", "u1", T0 + 2)],
             "big")  # fmt: skip
    from ptyrun import PtyRun

    run = PtyRun("--db", str(db), "--read-only", "--sessions", str(root), env=p.env)
    run.read_until(b"help", 60)
    run.send(b"n")
    run.read_until(b"2026-06-01", 120)
    run.send(b"\r")
    run.pump(2.0)
    started = time.monotonic()
    run.send(b"q")
    code = run.finish(60)
    took = time.monotonic() - started
    return code == 0 and took < 30, f"q answered in {took:.1f} s with a 50 MB prompt open"


def deep_session(p: Probe) -> Result:
    db = p.copy("realistic.sqlite")
    root = p.work / "deep-sessions"
    lines: list[dict[str, Any]] = []
    parent: str | None = None
    for n in range(6_000):
        eid = f"e{n}"
        lines.append(_user(eid, parent, f"topic {n}", T0 + n) if n % 2 == 0
                     else _reply(eid, str(parent), T0 + n))  # fmt: skip
        parent = eid
    lines.append(_user("loop", "loop", "me", T0))
    _session(root / "--p--" / "2026-06-01T00-00-00-000Z_deep.jsonl", lines, "deep")
    _session(root / "--p--" / "2026-06-02T00-00-00-000Z_other.jsonl",
             [_user("u1", None, "hi", T0)], "other")  # fmt: skip
    started = time.monotonic()
    r = p.cli("turns", "--db", str(db), "--sessions", str(root), "--session", "other")
    took = time.monotonic() - started
    d = p.cli("turns", "--db", str(db), "--sessions", str(root), "--session", "deep")
    noted = "1 entry in a parentId cycle" in d.stderr
    return (
        r.returncode == 0 and took < 60 and noted,
        f"turns --session other: {took:.1f} s beside a 6,000-deep session; cycle noted: {noted}",
    )


def invalid_utf8(p: Probe) -> Result:
    from store import session_prompts

    path = _session(p.work / "utf8" / "2026-06-01T00-00-00-000Z_s.jsonl",
                    [_user("u1", None, "caf PLACE", T0 + 1)], "s")  # fmt: skip
    path.write_bytes(path.read_bytes().replace(b"PLACE", b"\xe9\xff"))
    found = session_prompts(path)
    texts = [x.text for x in found.prompts]
    return texts == ["caf \ufffd\ufffd"] and not found.problem, f"prompts {texts!r}"


def unreadable_folder(p: Probe) -> Result:
    from store import session_files

    root = _sessions(p)
    locked = root / "--home-dev-projects-infra--"
    problems: list[tuple[Path, str]] = []
    real = Path.iterdir

    def refuse(self: Path) -> Any:  # another user's folder at 0700 (as root, chmod can't)
        if self == locked:
            raise PermissionError(13, "Permission denied")
        return real(self)

    Path.iterdir = refuse  # type: ignore[method-assign]
    try:
        files = session_files(root, problems=problems)
    finally:
        Path.iterdir = real  # type: ignore[method-assign]
    said = [why for _, why in problems]
    return bool(said) and len(files) == 47, f"{len(files)} files; said: {said[:1]}"


def project_paths(p: Probe) -> Result:
    from memevo_tui.core.scope import resolve_project

    db = p.copy("realistic.sqlite")
    base = "/home/dev/projects"
    link = p.work / "link"
    target = p.work / "webshop"
    (target / "apps").mkdir(parents=True)
    link.symlink_to(target)
    seen, held = [], resolve_project(str(link), [str(target)]) == str(target)
    seen.append(f"a symlink: {'resolved' if held else 'not resolved'}")
    for asked in (f"{base}/infra/../webshop", f"{base}/webshop/apps/api", f"{base}/webshop/"):
        r = p.cli("turns", "--db", str(db), "--sessions", str(p.fixtures / "sessions"),
                  "--project", asked, "--json")  # fmt: skip
        count = len(json.loads(r.stdout)["turns"]) if r.returncode == 0 else 0
        held &= r.returncode == 0 and count > 0
        seen.append(f"{asked.removeprefix(base)}: {count} turns")
    return held, "; ".join(seen)


PROBES: list[tuple[str, str, Callable[[Probe], Result]]] = [
    ("55.1", "escapes in a session file (turns, source)", escapes_from_sessions),
    ("55.2", "an origin with OSC 52 and a bidi override", escapes_from_an_origin),
    ("55.3", "markup in an origin, the @ menu", markup_in_an_origin),
    ("55.4", "an event re-dated forward to 2031", event_dated_forward),
    ("55.5", "a forged session-index.json", forged_session_index),
    ("55.6", "turns.json after another store at the path", turns_cache_other_store),
    ("55.7", "the store replaced under the Turns replay", replay_store_replaced),
    ("55.8", "a 50 MB prompt opened", huge_prompt),
    ("55.9", "a 6,000-deep session and a parentId cycle", deep_session),
    ("55.10", "invalid UTF-8 in a prompt", invalid_utf8),
    ("55.11", "a session folder that cannot be read", unreadable_folder),
    ("55.12", "--project through .., a folder inside, a slash, a link", project_paths),
]
