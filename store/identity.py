"""Is the file this connection holds still the file at its path?

A connection keeps the file it opened, whatever happens to the path: after
``mv new.sqlite memory.sqlite`` or ``rm memory.sqlite`` its writes go to a file
nobody will open again, and after its ``-wal`` file is deleted they go to a log
pi no longer reads. After its ``-shm`` file (the log's shared index) is deleted, pi's
next connection makes a new one and commits into the log through it, unseen by this
connection, whose checkpoint on close would then throw those commits away.
``FileIdentity`` remembers the device and inode of the store, of its write-ahead log
and of its shared index when the store was opened; ``problem`` says, in one line, how
the path no longer leads there (and the store then closes without a checkpoint).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

Inode = tuple[int, int]


def _inode(path: Path) -> Inode | None:
    """The device and inode at ``path`` (never following a symlink), or None."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if stat.S_ISLNK(st.st_mode):
        return (-1, -1)  # a symlink is never the regular file that was opened
    return st.st_dev, st.st_ino


def wal_path(path: Path) -> Path:
    return path.with_name(path.name + "-wal")


def shm_path(path: Path) -> Path:
    return path.with_name(path.name + "-shm")


@dataclass(frozen=True, slots=True)
class FileIdentity:
    """The store file and its write-ahead log, as they were when the store opened."""

    path: Path
    main: Inode
    wal: Inode | None
    """None when there was no log (then none is checked)."""
    shm: Inode | None = None
    """The log's shared index; None when there was none (then none is checked)."""

    @classmethod
    def of(cls, path: Path) -> FileIdentity | None:
        """What is at ``path`` now (None: nothing is)."""
        main = _inode(path)
        if main is None:
            return None
        return cls(path, main, _inode(wal_path(path)), _inode(shm_path(path)))

    def problem(self) -> str | None:
        """How the path no longer leads to what was opened, in words, or None."""
        main = _inode(self.path)
        if main is None:
            return f"{self.path} was deleted on disk"
        if main != self.main:
            return f"{self.path} was replaced on disk"
        if self.wal is not None:
            wal = _inode(wal_path(self.path))
            name = wal_path(self.path).name
            if wal is None:
                return f"{name}, the store's write-ahead log, was deleted on disk"
            if wal != self.wal:
                return f"{name}, the store's write-ahead log, was replaced on disk"
        return self.index_problem()

    def index_problem(self) -> str | None:
        """How the log's shared index at the path is no longer the one opened, or None.
        Then pi commits through an index this connection does not see, and a checkpoint
        of this connection's would lose those commits."""
        if self.shm is None:
            return None
        shm = _inode(shm_path(self.path))
        name = shm_path(self.path).name
        if shm is None:
            return f"{name}, the index of the store's write-ahead log, was deleted on disk"
        if shm != self.shm:
            return f"{name}, the index of the store's write-ahead log, was replaced on disk"
        return None
