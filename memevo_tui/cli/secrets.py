"""``memevo-tui secrets``: every place a secret sits, found and named, never shown.

Exit 1 when something is found and 0 when nothing is, as secret scanners do (2: the
scan could not run)."""

from __future__ import annotations

import argparse
from pathlib import Path

from store import MemoryStore, session_files, sessions_folder

from ..core.appstate import AppState
from ..core.recallcache import cache_home
from ..core.secrets import Finding, in_files, in_sessions, in_store
from .exits import EXIT_OK, EXIT_REFUSED
from .output import Output


async def run_secrets(store: MemoryStore, args: argparse.Namespace, o: Output) -> int:
    found = await in_store(store)
    demo = bool(getattr(args, "demo", False))
    if not demo:
        path = Path(store.path)
        found += in_files("state", AppState(path).dir)
        found += in_files("cache", AppState(path, root=cache_home()).dir)
    root, why = sessions_folder(args.sessions)
    read = 0
    if not args.no_sessions:
        files = session_files(root)
        read = len(files)
        found += in_sessions(files)
    if args.json:
        o.json({"findings": [f.json() for f in found], "sessionsRead": read,
                "sessions": None if args.no_sessions else f"{root} ({why})"})  # fmt: skip
    else:
        for f in found:
            o.row([f.key, f.place, f.id, f.field, f.rule], [8, 8, 26, 22, 22], f.excerpt)
    where = "not read (--no-sessions)" if args.no_sessions else f"{read} under {root} ({why})"
    o.note(f"memevo-tui: {len(found)} finding(s) in {_places(found)}; session files: {where}"
           + ("; memevo-tui purge KEY… (or --all) removes them" if found else ""))  # fmt: skip
    return EXIT_REFUSED if found else EXIT_OK


def _places(found: list[Finding]) -> str:
    counts: dict[str, int] = {}
    for f in found:
        counts[f.place] = counts.get(f.place, 0) + 1
    return ", ".join(f"{n} {place}" for place, n in counts.items()) or "no place"
