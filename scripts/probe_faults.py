"""Fault probes: each one damages a fresh copy of a fixture (or the process around
memevo-tui) the way a user's machine might, and says whether memevo-tui held.

    python scripts/probe_faults.py [--shared ../shared]

One line per probe: ``held`` or ``NOT HELD``, the probe, and what was seen. Exit 0
when every probe held. Uses the fixtures in ../shared (else tests/fixtures); the serve probe needs
``.[serve]`` (and is skipped without it), the device probe root.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import select
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "scripts")]
NOW = "2026-11-01T12:00:00.000Z"

Result = tuple[bool | None, str]
"""Held (None: skipped), and what was seen."""


class Probe:
    def __init__(self, shared: Path) -> None:
        self.fixtures = shared / "fixtures"
        self.work = Path(tempfile.mkdtemp(prefix="memevo-probe-"))
        self.env = {**os.environ, "MEMEVO_NOW": NOW,
                    "XDG_CACHE_HOME": str(self.work / "cache"),
                    "XDG_STATE_HOME": str(self.work / "state")}  # fmt: skip

    def copy(self, name: str) -> Path:
        d = Path(tempfile.mkdtemp(dir=self.work))
        path = d / name
        shutil.copyfile(self.fixtures / name, path)
        path.chmod(0o600)
        return path

    def cli(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, "-m", "memevo_tui", *args]
        return subprocess.run(
            argv, cwd=ROOT, env=self.env, capture_output=True, text=True, timeout=timeout
        )


def one_line_refusal(r: subprocess.CompletedProcess[str], *words: str) -> bool:
    return (r.returncode == 2 and r.stdout == "" and len(r.stderr.splitlines()) == 1
            and "Traceback" not in r.stderr and all(w in r.stderr for w in words))  # fmt: skip


def damaged_log(p: Probe) -> Result:
    hostile = p.copy("hostile.sqlite")
    r = p.cli("list", "--db", str(hostile), "--as-of", "2026-09-22")
    s = p.cli("show", "raw-escape-0001", "--db", str(hostile))
    held = one_line_refusal(r, "exact only as it is now") and "not in the event log" in s.stdout
    return held, f"list --as-of 2026-09-22 exit {r.returncode}; {r.stderr.strip()[:90]}"


def clock_set_back(p: Probe) -> Result:
    path = p.copy("realistic.sqlite")
    con = sqlite3.connect(path)
    con.execute("UPDATE events SET data = json_set(data, '$.at', '2026-03-01T00:00:00.000Z') "
                "WHERE rowid = 144")  # fmt: skip
    con.commit()
    con.close()
    r = p.cli("show", "359cfc5bb42243f25a16b237", "--db", str(path), "--as-of", "2026-08-01",
              "--json")  # fmt: skip
    revision = json.loads(r.stdout)["memory"]["revision"] if r.returncode == 0 else None
    d = p.cli("diff", "2026-08-01", "--db", str(path))
    lines = d.stderr.strip().splitlines()
    counts = next((x for x in lines if " added, " in x), d.stderr)
    said = any("out of the order they were written" in x for x in lines)
    held = revision == 1 and counts.startswith("82 added, 12 changed") and said
    return held, f"revision {revision} as of 2026-08-01 (truth 1); diff: {counts}; said: {said}"


def forged_cache(p: Probe) -> Result:
    from memevo_tui.core.recallcache import NAME
    from store.recall.wordcache import WordCache

    path = p.copy("realistic.sqlite")
    first = p.cli("search", "postgres", "--db", str(path), "--json")
    [cache] = list((p.work / "cache").rglob(NAME))
    data = cache.read_bytes()
    forged = WordCache.loads(data, b"")  # no key: a forger cannot read it
    seen = []
    if len(forged) == 0:  # keyed: forge a fresh file with a word added, unkeyed
        store_ids = json.loads(first.stdout)
        victim = store_ids[0]["memory"]["id"] if store_ids else ""
        fake = WordCache({victim: ("x", (("zebrafish",), (), None))})
        cache.write_bytes(fake.dumps())
        r = p.cli("search", "zebrafish", "--db", str(path), "--json")
        seen.append(f"forged file: {len(json.loads(r.stdout or '[]'))} result(s)")
        held = r.returncode == 0 and json.loads(r.stdout) == []
    else:
        held = False
        seen.append("the cache reads without a key")
    cache.chmod(0o666)
    cache.parent.chmod(0o777)
    r = p.cli("search", "zebrafish", "--db", str(path), "--json")
    warned = "writable by others" in r.stderr
    mode = stat.S_IMODE(cache.stat().st_mode)
    held = held and warned and json.loads(r.stdout) == [] and mode == 0o600
    seen.append(f"0666 file in a 0777 directory: warned={warned}, rewritten {mode:o}")
    return held, "; ".join(seen)


PI_WRITES = textwrap.dedent(
    """
    import json, sqlite3, sys, uuid
    con = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=10)
    scope, data = con.execute("SELECT scope, data FROM memories LIMIT 1").fetchone()
    for i in range(59):
        r = json.loads(data); r["id"] = uuid.uuid4().hex[:24]; r["content"] = f"probe {i}"
        con.execute("BEGIN IMMEDIATE")
        con.execute("INSERT INTO memories (id, scope, hash, data) VALUES (?,?,?,?)",
                    (r["id"], scope, "x" * 64, json.dumps(r)))
        e = {"id": str(uuid.uuid4()), "at": r["updatedAt"], "actor": "model", "reason": "probe",
             "before": [None], "after": [r]}
        con.execute("INSERT INTO events (id, scope, data) VALUES (?,?,?)",
                    (e["id"], scope, json.dumps(e)))
        con.execute("COMMIT")
    """
)


def deleted_shm(p: Probe) -> Result:
    from store import MemoryStore, fixed_clock

    path = p.copy("realistic.sqlite")

    async def run() -> tuple[int, int, str]:
        store = await MemoryStore.open(path, clock=fixed_clock(NOW))
        before = len((await store.load_memories()).memories)
        path.with_name(path.name + "-shm").unlink()
        subprocess.run([sys.executable, "-c", PI_WRITES, str(path)], check=True, timeout=60)
        problem = store.file_problem() or ""
        await store.close()
        con = sqlite3.connect(path)
        after = int(con.execute("SELECT count(*) FROM memories").fetchone()[0])
        con.close()
        return before, after, problem

    before, after, problem = asyncio.run(run())
    held = after == before + 59 and "-shm" in problem
    return held, f"{after - before} of 59 of pi's commits kept; noticed: {bool(problem)}"


def export_targets(p: Probe) -> Result:
    path = p.copy("realistic.sqlite")
    seen, held = [], True
    targets: list[tuple[str, Callable[[Path], None]]] = [
        ("symlink", lambda t: t.symlink_to(p.work / "victim")),
        ("fifo", lambda t: os.mkfifo(t)),
    ]
    if os.geteuid() == 0:
        targets.append(("device", lambda t: os.mknod(t, 0o600 | stat.S_IFCHR, os.makedev(1, 3))))
    (p.work / "victim").write_text("keep\n")
    for name, make in targets:
        target = p.work / f"target-{name}"
        make(target)
        mode = os.lstat(target).st_mode
        r = p.cli("export", "--db", str(path), "-o", str(target), "--force")
        kept = os.lstat(target).st_mode == mode and (p.work / "victim").read_text() == "keep\n"
        ok = one_line_refusal(r, "regular file") and kept
        held &= ok
        seen.append(f"{name}: exit {r.returncode}{'' if ok else ' (replaced!)'}")
    return held, "; ".join(seen)


def editor_on_signal(p: Probe) -> Result:
    from benchpty import on_pty

    path = p.copy("realistic.sqlite")
    pidfile = p.work / "editor.pid"
    script = p.work / "editor.py"
    script.write_text(
        "import os,signal,sys,time\nsignal.signal(signal.SIGHUP, signal.SIG_IGN)\n"
        "open(sys.argv[1],'w').write(str(os.getpid()))\ntime.sleep(120)\n"
    )
    env = {**p.env, "VISUAL": f"{sys.executable} {script} {pidfile}"}
    seen = []
    with on_pty([sys.executable, "-m", "memevo_tui", "--db", str(path)], env) as (app, master):
        deadline = time.monotonic() + 60
        while not (pidfile.exists() and pidfile.read_text()) and time.monotonic() < deadline:
            os.write(master, b"e")
            end = time.monotonic() + 3
            while time.monotonic() < end and not pidfile.exists():
                if select.select([master], [], [], 0.1)[0]:
                    try:
                        os.read(master, 65536)
                    except OSError:
                        break
        if not pidfile.exists():
            return False, "the editor never started"
        editor = int(pidfile.read_text())
        started = time.monotonic()
        app.send_signal(signal.SIGTERM)
        while app.poll() is None and time.monotonic() - started < 30:
            if select.select([master], [], [], 0.1)[0]:
                try:
                    os.read(master, 65536)
                except OSError:
                    pass
        took = time.monotonic() - started
        seen.append(f"SIGTERM with the editor open: exit {app.poll()} after {took:.1f} s")
    time.sleep(0.5)
    try:
        os.kill(editor, 0)
        gone = Path(f"/proc/{editor}/stat").read_text().split()[2] == "Z"
    except (ProcessLookupError, OSError):
        gone = True
    seen.append(f"editor gone: {gone}")
    return app.returncode == 128 + signal.SIGTERM and gone and took < 10, "; ".join(seen)


def session_alive(sid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                text = (entry / "stat").read_text()
            except OSError:
                continue
            fields = text[text.rindex(")") + 2 :].split()
            if int(fields[3]) == sid and fields[0] != "Z":
                found.append(int(entry.name))
    return found


def search_workers(p: Probe) -> Result:
    from synthetic import build_synthetic

    path = build_synthetic(p.work / "big.sqlite", 12_000)
    proc = subprocess.Popen([sys.executable, "-m", "memevo_tui", "search", "postgres", "--db",
                             str(path)], cwd=ROOT, env=p.env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True)  # fmt: skip
    deadline = time.monotonic() + 60
    while len(session_alive(proc.pid)) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    time.sleep(1)
    left = session_alive(proc.pid)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    held = proc.returncode == 143 and not left and b"Traceback" not in err
    return held, f"exit {proc.returncode}; {len(left)} process(es) left"


def serve_killed(p: Probe) -> Result:
    try:
        import aiohttp
    except ImportError:
        return None, "skipped: pip install -e '.[serve]'"
    path = p.copy("realistic.sqlite")
    server = subprocess.Popen([sys.executable, "-m", "memevo_tui", "serve", "--db", str(path),
                               "--port", "0"], cwd=ROOT, env=p.env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)  # fmt: skip
    assert server.stdout is not None
    url = server.stdout.readline().split(" at ", 1)[1].split(" ", 1)[0]
    base, token = url.split("/?token=")
    ws_url = base.replace("http://", "ws://") + f"/ws/{token}?width=100&height=30"

    def tabs() -> list[int]:
        out = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    argv = (entry / "cmdline").read_bytes().split(b"\0")
                except OSError:
                    continue
                if b"--served" in argv and any(str(path).encode() in a for a in argv):
                    out.append(int(entry.name))
        return out

    async def run() -> tuple[int, list[int]]:
        async with aiohttp.ClientSession() as session:
            ws = await session.ws_connect(ws_url)
            drawn = b""
            while b"shown of" not in drawn:
                message = await asyncio.wait_for(ws.receive(), 60)
                if message.type == aiohttp.WSMsgType.BINARY:
                    drawn += message.data
            opened = len(tabs())
            server.kill()
            server.wait()
            for _ in range(100):
                if not tabs():
                    break
                await asyncio.sleep(0.1)
            await ws.close()
            return opened, tabs()

    opened, left = asyncio.run(run())
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    return opened == 1 and not left, f"kill -9 of serve with 1 tab: {len(left)} tab(s) left"


def extreme_offsets(p: Probe) -> Result:
    path = p.copy("realistic.sqlite")
    seen, held = [], True
    for argv in (["list", "--as-of=+9999999d"], ["list", "--as-of=-999999999999999999999d"],
                 ["diff", "-99999999999999d"]):  # fmt: skip
        r = p.cli(*argv, "--db", str(path))
        ok = one_line_refusal(r, "out of range")
        held &= ok
        seen.append(f"{' '.join(argv)}: exit {r.returncode}")
    return held, "; ".join(seen)


PROBES: list[tuple[str, str, Callable[[Probe], Result]]] = [
    ("1", "the past on a damaged log", damaged_log),
    ("2", "a clock set back in the log", clock_set_back),
    ("6", "a forged or open recall cache", forged_cache),
    ("7", "-shm deleted while open, pi commits", deleted_shm),
    ("8", "export --force onto a link, FIFO, device", export_targets),
    ("9", "SIGTERM while $EDITOR runs", editor_on_signal),
    ("10a", "kill -9 of serve with a tab open", serve_killed),
    ("10b", "SIGTERM to search while workers read", search_workers),
    ("11", "extreme offsets", extreme_offsets),
]


def _second_round() -> list[tuple[str, str, Callable[[Probe], Result]]]:
    from probe_sessions import PROBES as SESSIONS  # issue 55: sessions, paths, caches

    return SESSIONS


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    beside = ROOT.parent / "shared"
    kept = ROOT / "tests"  # tests/fixtures: the copy kept in the repository
    parser.add_argument("--shared", type=Path,
                        default=beside if (beside / "fixtures").is_dir() else kept)  # fmt: skip
    args = parser.parse_args()
    probe = Probe(args.shared)
    failed = 0
    try:
        for number, title, run in [*PROBES, *_second_round()]:
            try:
                held, seen = run(probe)
            except Exception as exc:  # a probe that breaks is a probe that did not hold
                held, seen = False, f"the probe broke: {type(exc).__name__}: {exc}"
            word = "skipped" if held is None else "held" if held else "NOT HELD"
            failed += held is False
            print(f"{word:>8}  {number:>3} {title}: {seen}", flush=True)
    finally:
        shutil.rmtree(probe.work, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
