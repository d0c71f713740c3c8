"""Where an export goes: a new file, or a regular one replaced whole, never through a
symbolic link and never half-written. No Textual here."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO


class NotARegularFile(OSError):
    """The export's target is there and is not a regular file (a symbolic link, a
    device, a FIFO, a directory): an export replaces only a regular file."""


_KINDS = (
    (stat.S_ISLNK, "a symbolic link"),
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISCHR, "a device"),
    (stat.S_ISBLK, "a device"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
)


def _regular_or_new(target: Path) -> None:
    """Raise ``NotARegularFile`` unless nothing, or a regular file, is at ``target``
    (never following a symbolic link)."""
    try:
        mode = os.lstat(target).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISREG(mode):
        return
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    raise NotARegularFile(
        errno.EEXIST,
        f"it is {kind}; an export writes only to a regular file or a new path",
        str(target),
    )


@contextlib.contextmanager
def atomic_file(path: Path, *, replace: bool = False) -> Iterator[TextIO]:
    """A file written beside ``path`` (mode 0600: memories are private) and moved into
    place once complete: an interrupted export never leaves half a file. Unless
    ``replace``, a file already at ``path`` is never overwritten, not even one that
    appeared meanwhile (``FileExistsError``): the new file is linked in, not renamed."""
    target = path.expanduser()
    if not replace and os.path.lexists(target):
        raise FileExistsError(errno.EEXIST, "it already exists", str(target))
    _regular_or_new(target)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        if replace:
            _regular_or_new(target)  # again: something else may have been put there
            os.replace(tmp, target)
            return
        try:
            os.link(tmp, target)  # fails, atomically, if anything is there now
        except FileExistsError:
            raise
        except OSError:  # no hard links here (some network and FAT file systems)
            if os.path.lexists(target):
                raise FileExistsError(errno.EEXIST, "it already exists", str(target)) from None
            os.replace(tmp, target)
            return
        os.unlink(tmp)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
