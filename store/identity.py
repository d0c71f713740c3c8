"""Is the file this connection holds still the file at its path?

A connection keeps the file it opened, whatever happens to the path: after
``mv new.sqlite memory.sqlite`` or ``rm memory.sqlite`` its writes go to a file
nobody will open again, and after its ``-wal`` file is deleted they go to a log
pi no longer reads. ``FileIdentity`` remembers the device and inode of the store
and of its write-ahead log when the store was opened; ``problem`` says, in one
line, how the path no longer leads there.
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


@dataclass(frozen=True, slots=True)
class FileIdentity:
    """The store file and its write-ahead log, as they were when the store opened."""

    path: Path
    main: Inode
    wal: Inode | None
    """None when there was no log (then none is checked)."""

    @classmethod
    def of(cls, path: Path) -> FileIdentity | None:
        """What is at ``path`` now (None: nothing is)."""
        main = _inode(path)
        if main is None:
            return None
        return cls(path, main, _inode(wal_path(path)))

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
        return None
