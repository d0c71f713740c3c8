"""What pi's schema has no place for, kept in memevo-tui's own state directory.

``$XDG_STATE_HOME/memevo-tui/stores/<key>/`` (``~/.local/state`` when unset), one
directory per store, keyed by its resolved path. Never the store itself:

* ``visit.json``: the last visit (the newest event seen, and when);
* ``batches.jsonl``: which events one bulk action wrote, so the history can
  show (and undo) them as one entry;
* ``review.json``: review items the user chose to keep as they are.

Every file is written whole and atomically (a temporary file, then a rename). A
file that cannot be read is treated as empty: losing it costs a convenience,
never data. No Textual here.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def state_home() -> Path:
    base = os.environ.get("XDG_STATE_HOME")
    return Path(base).expanduser() if base else Path.home() / ".local" / "state"


@dataclass(frozen=True, slots=True)
class Visit:
    """The newest event the dashboard had seen when it last closed this store, and when."""

    rowid: int
    at_ms: float


@dataclass(frozen=True, slots=True)
class Batch:
    """One bulk action: its verb, when, and the events it wrote (one per record)."""

    id: str
    verb: str
    at: str
    events: tuple[str, ...]


class AppState:
    """The state directory of one store."""

    def __init__(self, store_path: Path, root: Path | None = None) -> None:
        resolved = str(store_path.expanduser().resolve())
        key = hashlib.sha256(resolved.encode("utf-8")).hexdigest()[:16]
        self.dir = (root or state_home()) / "memevo-tui" / "stores" / key
        self.store_path = resolved

    def _read(self, name: str) -> Any:
        try:
            return json.loads((self.dir / name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def _write(self, name: str, text: str) -> bool:
        """Write atomically; False (and nothing changed) when the directory is unusable."""
        try:
            self.dir.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd, tmp = tempfile.mkstemp(dir=self.dir, prefix=f".{name}.")
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(tmp, self.dir / name)
        except OSError:
            with contextlib.suppress(OSError, UnboundLocalError):
                os.unlink(tmp)
            return False
        return True

    # ------------------------------------------------------------ the last visit

    def visit(self) -> Visit | None:
        data = self._read("visit.json")
        try:
            return Visit(int(data["rowid"]), float(data["atMs"]))
        except (TypeError, KeyError, ValueError):
            return None

    def save_visit(self, visit: Visit) -> bool:
        record = {"store": self.store_path, "rowid": visit.rowid, "atMs": visit.at_ms}
        return self._write("visit.json", json.dumps(record) + "\n")

    # ------------------------------------------------------------ batches

    def batches(self) -> list[Batch]:
        try:
            lines = (self.dir / "batches.jsonl").read_text(encoding="utf-8").splitlines()
        except OSError:
            return []
        out = []
        for line in lines:
            try:
                data = json.loads(line)
                out.append(Batch(str(data["id"]), str(data["verb"]), str(data["at"]),
                                 tuple(str(e) for e in data["events"])))  # fmt: skip
            except (ValueError, KeyError, TypeError):
                continue  # a damaged line costs its batch's grouping, nothing else
        return out

    def add_batch(self, verb: str, at: str, events: Sequence[str]) -> Batch | None:
        """Journal a bulk action of two or more events; the batch, or None if not kept."""
        if len(events) < 2:
            return None
        batch = Batch(str(uuid.uuid4()), verb, at, tuple(events))
        lines = [
            json.dumps({"id": b.id, "verb": b.verb, "at": b.at, "events": list(b.events)})
            for b in [*self.batches(), batch]
        ]
        return batch if self._write("batches.jsonl", "\n".join(lines) + "\n") else None

    # ------------------------------------------------------------ review

    def kept(self) -> set[str]:
        data = self._read("review.json")
        kept = data.get("kept") if isinstance(data, dict) else None
        return {str(k) for k in kept} if isinstance(kept, list) else set()

    def keep(self, key: str) -> bool:
        kept = sorted(self.kept() | {key})
        return self._write("review.json", json.dumps({"kept": kept}) + "\n")
