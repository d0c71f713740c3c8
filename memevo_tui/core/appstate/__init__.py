"""What pi's schema has no place for, kept in memevo-tui's own state directory.

``$XDG_STATE_HOME/memevo-tui/stores/<key>/`` (``~/.local/state`` when unset), one
directory per store, keyed by its resolved path. Never the store itself:

* ``visit.json``: the last visit (the newest event seen, and when);
* ``batches.jsonl``: each bulk action, journaled before its first write and
  completed after its last, so the history shows (and undoes) its events as one
  entry, and a bulk action cut short is reconciled with the events it wrote;
* ``review.json``: review items the user chose to keep as they are.

The directories are made 0700 and must be the user's own; none of them, and no
file in them, is ever followed as a symbolic link (each is opened relative to its
parent with ``O_NOFOLLOW``). Every file is written whole and atomically: a new
file beside it, then a rename within the directory. A file that cannot be read,
or holds garbage, is treated as empty: losing it costs a convenience, never data.
When the directory cannot be used, ``problem`` says why in a few words. No Textual.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import stat
import uuid
from collections.abc import Callable, Collection, Iterator, Sequence
from pathlib import Path
from typing import Any

from .journal import (
    BEGUN_HERE,
    Batch,
    Pending,
    Visit,
    batch_line,
    kept_keys,
    parse_line,
    pending_line,
    read_json,
    reconcile,
)

__all__ = ["MAX_BYTES", "AppState", "Batch", "Pending", "Unusable", "Visit", "reconcile"]

try:
    import fcntl
except ImportError:  # Windows: one dashboard's journal is not locked against another's
    fcntl = None  # type: ignore[assignment]

MAX_BYTES = 16 << 20
"""The most of a state file ever read (its newest part): a bigger one is cut there."""
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)


def state_home() -> Path:
    base = os.environ.get("XDG_STATE_HOME")
    return Path(base).expanduser() if base else Path.home() / ".local" / "state"


def _euid(st: os.stat_result) -> int:
    return os.geteuid() if hasattr(os, "geteuid") else st.st_uid


def _not_own(st: os.stat_result) -> str:
    """Why a file or directory is not the user's alone ("": it is): another user owns
    it, or others may write to it. Nothing in such a place is trusted."""
    if st.st_uid != _euid(st):
        return f"belongs to another user (uid {st.st_uid})"
    if stat.S_IMODE(st.st_mode) & 0o022:
        return f"is writable by others (mode {stat.S_IMODE(st.st_mode):o})"
    return ""


class Unusable(Exception):
    """The state directory cannot be used; the message says why, in a few words."""


class AppState:
    """The state directory of one store."""

    def __init__(self, store_path: Path, root: Path | None = None) -> None:
        resolved = str(store_path.expanduser().resolve())
        key = hashlib.sha256(resolved.encode("utf-8")).hexdigest()[:16]
        self.root = root or state_home()
        self.parts = ("memevo-tui", "stores", key)
        self.dir = self.root.joinpath(*self.parts)
        self.store_path = resolved
        self.problem: str | None = None
        """Why the directory could not be used, the last time it was tried (None: it was)."""

    # ------------------------------------------------------------ the directory

    @contextlib.contextmanager
    def _opened(self) -> Iterator[int]:
        """The store's directory, opened (and made, 0700) without following a symlink."""
        root = self.root
        try:
            root.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(root, os.O_RDONLY | _DIRECTORY)
        except (FileExistsError, NotADirectoryError):
            raise Unusable(f"{root} is not a directory") from None
        except OSError as exc:
            raise Unusable(f"{root}: {exc.strerror or exc}") from None
        try:
            why = _not_own(os.fstat(fd))
        except OSError as exc:
            why = exc.strerror or str(exc)
        if why:
            os.close(fd)
            raise Unusable(f"{root} {why}")
        path = root
        try:
            for part in self.parts:
                path = path / part
                child = self._child(fd, part, path)
                os.close(fd)
                fd = child
            yield fd
        finally:
            os.close(fd)

    @staticmethod
    def _child(parent: int, name: str, path: Path) -> int:
        """Open (or make) one directory below ``parent``, never through a symlink, and
        only if it is the user's own (narrowed to 0700 if it was open to others)."""
        flags = os.O_RDONLY | _DIRECTORY | _NOFOLLOW
        try:
            try:
                fd = os.open(name, flags, dir_fd=parent)
            except FileNotFoundError:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, 0o700, dir_fd=parent)
                fd = os.open(name, flags, dir_fd=parent)
        except OSError as exc:
            try:
                link = stat.S_ISLNK(os.lstat(name, dir_fd=parent).st_mode)
            except OSError:
                link = False
            why = "is a symbolic link" if link else f"cannot be used: {exc.strerror or exc}"
            raise Unusable(f"{path} {why}") from None
        try:
            st = os.fstat(fd)
            if st.st_uid != _euid(st):
                raise Unusable(f"{path} belongs to another user (uid {st.st_uid})")
            if stat.S_IMODE(st.st_mode) & 0o077:
                try:
                    os.fchmod(fd, 0o700)
                except OSError:
                    raise Unusable(f"{path} is open to others and cannot be narrowed") from None
        except BaseException:
            os.close(fd)
            raise
        return fd

    def check(self) -> str | None:
        """Make sure the directory can be used; why not, or None."""
        try:
            with self._opened():
                pass
        except Unusable as exc:
            self.problem = str(exc)
        else:
            self.problem = None
        return self.problem

    @contextlib.contextmanager
    def _locked(self, fd: int) -> Iterator[None]:
        """Hold the directory's lock: one dashboard's read-and-rewrite at a time."""
        if fcntl is None:
            yield
            return
        lock = os.open(".lock", os.O_RDWR | os.O_CREAT | _NOFOLLOW, 0o600, dir_fd=fd)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)
            yield
        finally:
            os.close(lock)

    def _read_text(self, fd: int, name: str) -> str:
        """The file's text (its newest ``MAX_BYTES``), or "" if it is not a readable
        regular file."""
        try:
            f = os.open(name, os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0), dir_fd=fd)
        except OSError:
            return ""
        try:
            st = os.fstat(f)
            if not stat.S_ISREG(st.st_mode):
                return ""
            if why := _not_own(st):
                self.problem = f"{self.dir / name} {why}: ignored"
                return ""
            skip = max(0, st.st_size - MAX_BYTES)
            if skip:
                os.lseek(f, skip, os.SEEK_SET)
            chunks = []
            while data := os.read(f, 1 << 20):
                chunks.append(data)
                if sum(map(len, chunks)) >= MAX_BYTES:
                    break
            text = b"".join(chunks).decode("utf-8", "replace")
            return text.partition("\n")[2] if skip else text  # a cut first line is dropped
        except OSError:
            return ""
        finally:
            os.close(f)

    def _write_text(self, fd: int, name: str, text: str) -> None:
        """Replace the file with ``text``: a new file beside it, then a rename."""
        self._write_bytes(fd, name, text.encode("utf-8"))

    def _write_bytes(self, fd: int, name: str, data: bytes) -> None:
        """Replace the file with ``data`` (0600): a new file beside it, then a rename."""
        tmp = f".{name}.{uuid.uuid4().hex}"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW
        try:
            f = os.open(tmp, flags, 0o600, dir_fd=fd)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(f, view) :]
                os.fsync(f)
            finally:
                os.close(f)
            os.replace(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=fd)
            raise

    def read_bytes(self, name: str, limit: int) -> bytes | None:
        """The whole file, or None: missing, not a regular file, larger than ``limit``,
        unreadable, or the directory unusable (``problem`` says why)."""
        try:
            with self._opened() as fd:
                try:
                    flags = os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0)
                    f = os.open(name, flags, dir_fd=fd)
                except OSError:
                    return None
                try:
                    st = os.fstat(f)
                    if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
                        return None
                    if why := _not_own(st):
                        self.problem = f"{self.dir / name} {why}: ignored, and written again"
                        return None
                    chunks = []
                    while data := os.read(f, 1 << 24):
                        chunks.append(data)
                    return b"".join(chunks)
                except OSError:
                    return None
                finally:
                    os.close(f)
        except Unusable as exc:
            self.problem = str(exc)
            return None

    def write_bytes(self, name: str, data: bytes) -> bool:
        """Replace the file with ``data``, atomically (0600); False when it cannot be."""
        return self._write(name, lambda fd: self._write_bytes(fd, name, data), locked=False)

    def _write(self, name: str, write: Callable[[int], None], *, locked: bool) -> bool:
        """``write(the directory)``, under its lock when ``locked``; False, with
        ``problem`` saying why, when the directory or the file cannot be used."""
        try:
            with self._opened() as fd, self._locked(fd) if locked else contextlib.nullcontext():
                write(fd)
        except Unusable as exc:
            self.problem = str(exc)
            return False
        except OSError as exc:
            self.problem = f"{self.dir / name}: {exc.strerror or exc}"
            return False
        return True

    def _text(self, name: str) -> str:
        """The file's text, or "" (``problem`` says why when the directory is unusable)."""
        try:
            with self._opened() as fd:
                return self._read_text(fd, name)
        except Unusable as exc:
            self.problem = str(exc)
            return ""

    def _read(self, name: str) -> Any:
        return read_json(self._text(name))

    def _replace(self, name: str, new_text: Callable[[str], str]) -> bool:
        """Replace the file with ``new_text(its text now)``, atomically and under the
        directory's lock (one dashboard's read-and-write at a time); False, and nothing
        changed, when the directory or the file cannot be used."""

        def write(fd: int) -> None:
            self._write_text(fd, name, new_text(self._read_text(fd, name)))

        return self._write(name, write, locked=True)

    # ------------------------------------------------------------ the last visit

    def visit(self) -> Visit | None:
        data = self._read("visit.json")
        try:
            return Visit(int(data["rowid"]), float(data["atMs"]))
        except (TypeError, KeyError, ValueError, OverflowError):
            return None

    def save_visit(self, visit: Visit) -> bool:
        record = {"store": self.store_path, "rowid": visit.rowid, "atMs": visit.at_ms}
        return self._replace("visit.json", lambda _: json.dumps(record) + "\n")

    # ------------------------------------------------------------ batches

    def _journal(self, text: str | None = None) -> list[Batch | Pending]:
        text = self._text("batches.jsonl") if text is None else text
        return [entry for line in text.splitlines() if (entry := parse_line(line)) is not None]

    def batches(self) -> list[Batch]:
        """The bulk actions done (a reconciled cut-short one included), oldest first."""
        return [b for b in self._journal() if isinstance(b, Batch)]

    def pending(self) -> list[Pending]:
        """Bulk actions begun and never completed by a process that is gone."""
        return [p for p in self._journal() if isinstance(p, Pending) and not p.running]

    def _rewrite(self, change: Callable[[list[Batch | Pending]], list[Batch | Pending]]) -> bool:
        """Read the journal, ``change`` its entries, write it back: under the lock."""

        def new_text(text: str) -> str:
            lines = [
                json.dumps(pending_line(e) if isinstance(e, Pending) else batch_line(e))
                for e in change(self._journal(text))
            ]
            return "".join(f"{line}\n" for line in lines)

        return self._replace("batches.jsonl", new_text)

    def begin_batch(
        self, verb: str, op: str, at: str, targets: Sequence[str], after_rowid: int
    ) -> str | None:
        """Journal a bulk action before its first write; its id, or None if not kept."""
        pending = Pending(
            str(uuid.uuid4()), verb, op, at, after_rowid, tuple(targets), os.getpid(),
            socket.gethostname(),
        )  # fmt: skip
        if not self._rewrite(lambda entries: [*entries, pending]):
            return None
        BEGUN_HERE.add(pending.id)
        return pending.id

    def finish_batch(
        self, batch_id: str, events: Sequence[str], *, cut_short: bool = False
    ) -> Batch | None:
        """Complete a journaled bulk action with the events it wrote: the batch, or None
        when it wrote fewer than two (then there is nothing to group)."""
        found: list[Batch] = []

        def change(entries: list[Batch | Pending]) -> list[Batch | Pending]:
            out: list[Batch | Pending] = []
            for e in entries:
                if isinstance(e, Pending) and e.id == batch_id:
                    if len(events) >= 2:
                        found.append(
                            Batch(e.id, e.verb, e.at, tuple(events), len(e.targets), cut_short)
                        )
                        out.append(found[-1])
                    continue
                out.append(e)
            return out

        BEGUN_HERE.discard(batch_id)
        return found[0] if self._rewrite(change) and found else None

    # ------------------------------------------------------------ purges

    def purges(self) -> list[tuple[float, frozenset[str]]]:
        """Each purge done here: when (ms) and the records whose text it replaced (the
        secrets themselves are never kept, nor their hashes)."""
        data = self._read("purges.json")
        found = []
        for entry in data.get("purges", []) if isinstance(data, dict) else []:
            try:
                found.append((float(entry["atMs"]), frozenset(map(str, entry["records"]))))
            except (TypeError, KeyError, ValueError):
                continue
        return found

    def save_purge(self, at_ms: float, records: Collection[str]) -> bool:
        def new_text(text: str) -> str:
            data = read_json(text)
            kept = data.get("purges", []) if isinstance(data, dict) else []
            kept = [*kept, {"atMs": at_ms, "records": sorted(records)}]
            return json.dumps({"store": self.store_path, "purges": kept}) + "\n"

        return self._replace("purges.json", new_text)

    # ------------------------------------------------------------ review

    def kept(self) -> set[str]:
        return kept_keys(self._read("review.json"))

    def keep(self, key: str) -> bool:
        def new_text(text: str) -> str:
            return json.dumps({"kept": sorted(kept_keys(read_json(text)) | {key})}) + "\n"

        return self._replace("review.json", new_text)
