"""``memevo-tui purge (KEY… | --all) [--yes] [--sessions DIR]``: a secret out of every
copy. Without ``--yes`` it lists what it would write and writes nothing.

In one transaction with ``secure_delete`` (``store.purge``): each record holding a
chosen secret is forgotten through pi's own write (pi stops injecting it and blocks its
text), and the secret is replaced by ``[REDACTED:purged]`` in every stored copy; then the
write-ahead log is truncated where pi lets it be; the app's caches for the store are
removed (they are rebuilt); with ``--sessions``, pi's session files are rewritten, the
secret masked in place and every other line byte for byte; a scan then checks the store.
The receipt says every place written and what could not be made sure of."""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path

from store import (
    PURGED,
    Memory,
    MemoryStore,
    purge_values,
    replace_secrets,
    session_files,
    sessions_folder,
)

from ..core.appstate import AppState
from ..core.recallcache import cache_home
from ..core.secrets import Finding, Values, in_sessions, in_store
from .exits import EXIT_OK
from .ids import CannotRun
from .output import Output


async def run_purge(store: MemoryStore, args: argparse.Namespace, o: Output) -> int:
    if not args.all and not args.keys:
        raise CannotRun("name the findings to purge (their keys, as secrets prints them), or --all")
    if store.read_only:
        raise CannotRun(f"the store is read-only ({store.read_only_reason}): nothing purged")
    await store.check()
    values: Values = {}
    found = await in_store(store, values)
    root, _ = sessions_folder(args.sessions)
    files = session_files(root) if args.sessions else []
    found += in_sessions(files, values)
    chosen = [f for f in found if args.all or f.key in args.keys]
    unknown = sorted(set(args.keys) - {f.key for f in found})
    if unknown:
        raise CannotRun(f"no finding {unknown[0]} (memevo-tui secrets lists them)")
    if not chosen:
        o.note("memevo-tui: no secret found: nothing to purge")
        return EXIT_OK
    secrets = sorted({values[f.key] for f in chosen})
    holders = [m for m in (await store.load_memories()).memories
               if m.status != "forgotten" and any(s in m.content for s in secrets)]  # fmt: skip
    if not args.yes:
        _preview(o, chosen, holders, files, args.json)
        return EXIT_OK
    # pi's own write (it stops injecting each record, and blocks its text), then every
    # copy replaced: one transaction
    purged = await purge_values(store, secrets, forget=[m.id for m in holders])
    receipt: dict[str, object] = {"forgotten": purged.forgotten, "written": purged.written,
                                  "copies": purged.copies, "wal": purged.wal}  # fmt: skip
    demo = bool(getattr(args, "demo", False))
    if not demo:  # when, for the past: "purged on DATE" (the secrets are not kept)
        AppState(Path(store.path)).save_purge(store.clock(), purged.records)
    receipt["caches"] = _drop_caches(Path(store.path), demo)
    receipt["sessions"] = {str(p): n for p in files if (n := rewrite_session(p, secrets))}
    again: Values = {}
    await in_store(store, again)
    receipt["leftInStore"] = sum(1 for v in again.values() if v in secrets)
    receipt["note"] = ("exports made before the purge are outside the store and may still "
                       "hold the secret")  # fmt: skip
    _receipt(o, receipt, args.json)
    return EXIT_OK


def _preview(o: Output, chosen: list[Finding], holders: list[Memory], files: list[Path],
             as_json: bool) -> None:  # fmt: skip
    places = sorted({(f.place, f.id) for f in chosen})
    if as_json:
        o.json({"findings": [f.json() for f in chosen], "forget": [m.id for m in holders],
                "written": False})  # fmt: skip
    else:
        for m in holders:
            o.line(f"forget   {m.id}  (pi's own write: it stops injecting the record)")
        for place, ident in places:
            o.line(f"replace  {place:<8} {ident}")
        if files:
            o.line(f"rewrite  pi's session files that hold it (of {len(files)} read)")
    o.note(f"memevo-tui: nothing written; --yes purges {len(chosen)} finding(s): each copy "
           f"becomes {PURGED}, in one transaction")  # fmt: skip


def _receipt(o: Output, receipt: dict[str, object], as_json: bool) -> None:
    if as_json:
        o.json(receipt)
        return
    forgotten = receipt["forgotten"]
    assert isinstance(forgotten, list)
    o.line(f"forgotten through pi's write: {len(forgotten)} record(s)")
    written = receipt["written"]
    assert isinstance(written, dict)
    for table, n in written.items():
        o.line(f"rewritten: {n} row(s) of {table}")
    o.line(f"copies replaced by {PURGED}: {receipt['copies']}")
    o.line(f"write-ahead log: {receipt['wal']}")
    o.line(f"app caches removed (rebuilt when next needed): {receipt['caches']}")
    sessions = receipt["sessions"]
    assert isinstance(sessions, dict)
    for path, n in sessions.items():
        o.line(f"session file rewritten: {path} ({n} line(s))")
    o.line(f"left in the store: {receipt['leftInStore']}")
    o.note(f"memevo-tui: {receipt['note']}")


def _drop_caches(path: Path, demo: bool) -> int:
    """Remove the app's cache files for the store (the walk of the log, the turns, the
    recall words): they held copies, and are rebuilt from the store when next needed."""
    if demo:
        return 0
    folder = AppState(path, root=cache_home()).dir
    removed = 0
    if folder.is_dir() and not folder.is_symlink():
        for child in folder.iterdir():
            if child.is_file() and not child.is_symlink():
                child.unlink(missing_ok=True)
                removed += 1
    return removed


def rewrite_session(path: Path, secrets: list[str], tries: int = 5) -> int:
    """Mask ``secrets`` in a session file in place: each line that holds one is written
    again with its strings masked, every other line byte for byte; the mode kept; written
    atomically, and only if the file did not change since it was read (pi appending a
    line meanwhile): then read and done again. How many lines were rewritten."""
    for _ in range(tries):
        before = os.stat(path, follow_symlinks=False)
        raw = path.read_bytes()
        lines = raw.split(b"\n")
        changed = 0
        for i, line in enumerate(lines):
            text = line.decode("utf-8", "replace")
            if not any(s in text for s in secrets) and b"\\" not in line:
                continue
            try:
                value, n = replace_secrets(json.loads(text), secrets)
            except ValueError:
                value, n = replace_secrets(text, secrets)
                if n:
                    lines[i], changed = str(value).encode(), changed + 1
                continue
            if n:
                lines[i] = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
                changed += 1
        if not changed:
            return 0
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(b"\n".join(lines))
                f.flush()
                os.fsync(f.fileno())
            os.chmod(temp, before.st_mode & 0o7777)
            now = os.stat(path, follow_symlinks=False)
            if (now.st_ino, now.st_size, now.st_mtime_ns) != (
                before.st_ino, before.st_size, before.st_mtime_ns):  # fmt: skip
                os.unlink(temp)  # pi wrote meanwhile: read it again
                continue
            os.replace(temp, path)
        except BaseException:
            if os.path.exists(temp):
                os.unlink(temp)
            raise
        return changed
    raise CannotRun(f"{path} kept changing while it was rewritten: run purge again")
