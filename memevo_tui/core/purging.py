"""A purge, planned and carried out: the one flow the CLI's ``purge`` and the
dashboard's Purge action share (no Textual here).

``plan`` finds what to purge (chosen findings, the records pi must forget, the session
files read) and never writes; ``carry_out`` writes it: in one transaction with
``secure_delete`` (``store.purge_values``), each record holding a chosen secret is
forgotten through pi's own write (pi stops injecting it and blocks its text) and the
secret is replaced by ``[REDACTED:purged]`` in every stored copy; then the write-ahead
log is truncated where pi lets it be, the app's caches for the store are removed (they
are rebuilt), the purge is noted in the state directory (when, and which records: never
the secret), pi's session files are rewritten when asked, and the store scanned again.
The receipt says every place written and what could not be made sure of."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from store import PURGED, Memory, MemoryStore, purge_values, replace_secrets

from .appstate import AppState
from .recallcache import cache_home
from .secrets import Finding, Values, in_sessions, in_store

EXPORTS_NOTE = "exports made before the purge are outside the store and may still hold the secret"


class CannotPurge(Exception):
    """The purge cannot be planned or written (one line: what and why)."""


@dataclass
class PurgePlan:
    """What a purge will write. ``secrets`` are the values themselves: never printed,
    never kept."""

    chosen: list[Finding]
    secrets: list[str]
    holders: list[Memory]
    files: list[Path] = field(default_factory=list)
    """pi's session files read (rewritten only when the purge is told to)."""

    def lines(self) -> list[str]:
        """Every place the secret sits and what will be written there, a line each."""
        out = [f"forget   {m.id}  (pi's own write: it stops injecting the record)"
               for m in self.holders]  # fmt: skip
        out += [f"replace  {place:<8} {ident}  → {PURGED}"
                for place, ident in sorted({(f.place, f.id) for f in self.chosen})]  # fmt: skip
        return out


async def plan(
    store: MemoryStore,
    *,
    keys: Collection[str] = (),
    every: bool = False,
    records: Collection[str] = (),
    files: Sequence[Path] = (),
) -> PurgePlan:
    """The findings to purge: those named by ``keys``, ``every`` one, or every copy of
    each secret found in ``records``; with every place each chosen secret sits."""
    values: Values = {}
    found = await in_store(store, values) + in_sessions(files, values)
    unknown = sorted(set(keys) - {f.key for f in found})
    if unknown:
        raise CannotPurge(f"no finding {unknown[0]} (memevo-tui secrets lists them)")
    named = {values[f.key] for f in found
             if every or f.key in keys or (f.place == "memory" and f.id in records)}  # fmt: skip
    chosen = [f for f in found if values[f.key] in named]
    secrets = sorted(named)
    holders = [m for m in (await store.load_memories()).memories
               if m.status != "forgotten" and any(s in m.content for s in secrets)]  # fmt: skip
    return PurgePlan(chosen, secrets, holders, list(files))


async def carry_out(store: MemoryStore, plan: PurgePlan, *, sessions: bool, demo: bool
                    ) -> dict[str, Any]:  # fmt: skip
    """Write the purge (see the module's docstring); its receipt, as ``--json`` gives it.
    Raises ``StoreError`` with nothing written in the store."""
    purged = await purge_values(store, plan.secrets, forget=[m.id for m in plan.holders])
    receipt: dict[str, Any] = {"forgotten": purged.forgotten, "written": purged.written,
                               "copies": purged.copies, "wal": purged.wal}  # fmt: skip
    path = Path(store.path)
    if not demo:  # when, for the past: "purged on DATE" (the secrets are not kept)
        AppState(path).save_purge(store.clock(), purged.records)
    receipt["caches"] = 0 if demo else drop_caches(path)
    receipt["sessions"] = {str(p): n for p in plan.files
                           if sessions and (n := rewrite_session(p, plan.secrets))}  # fmt: skip
    again: Values = {}
    await in_store(store, again)
    receipt["leftInStore"] = sum(1 for v in again.values() if v in plan.secrets)
    receipt["note"] = EXPORTS_NOTE
    return receipt


def drop_caches(path: Path) -> int:
    """Remove the app's cache files for the store (the walk of the log, the turns, the
    recall words): they held copies, and are rebuilt from the store when next needed."""
    folder = AppState(path, root=cache_home()).dir
    removed = 0
    if folder.is_dir() and not folder.is_symlink():
        for child in folder.iterdir():
            if child.is_file() and not child.is_symlink():
                child.unlink(missing_ok=True)
                removed += 1
    return removed


def _masked_lines(raw: bytes, secrets: list[str]) -> tuple[list[bytes], int]:
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
    return lines, changed


def rewrite_session(path: Path, secrets: list[str], tries: int = 5) -> int:
    """Mask ``secrets`` in a session file in place: each line that holds one is written
    again with its strings masked, every other line byte for byte; the mode kept; written
    atomically, and only if the file did not change since it was read (pi appending a
    line meanwhile): then read and done again. How many lines were rewritten."""
    for _ in range(tries):
        before = os.stat(path, follow_symlinks=False)
        lines, changed = _masked_lines(path.read_bytes(), secrets)
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
    raise CannotPurge(f"{path} kept changing while it was rewritten: run purge again")
