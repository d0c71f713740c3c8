"""The recall index's words, kept between processes in memevo-tui's cache directory.

``$XDG_CACHE_HOME/memevo-tui/stores/<key>/recall-words.bin`` (``~/.cache`` when
unset; ``<key>`` is the store's resolved path, hashed, as for the state
directory): every record's extracted words, keyed by its id and a fingerprint of
its text (``store.recall.wordcache``). A CLI ``search`` or the dashboard's first recall
reads it, extracts only the records that are new or whose text changed, and
writes it again (whole, 0600, by a rename) when any were. The directories are
0700, the user's own, and never followed as symbolic links (``AppState``).

Its digest is keyed by a secret kept in the store's state directory
(``cache.key``, 32 random bytes, 0600): bytes written by anyone without it, or
changed by hand, are refused. Neither file is trusted unless it, and every
directory above it up to its root, is the user's own and writable by no one else
(``AppState``); otherwise it is ignored and written again, with a warning.

It is a cache: a file that is missing, unreadable, foreign, made by other rules,
or damaged is ignored and rebuilt, and a directory that cannot be used costs the
speed, never an answer. ``turns.json`` (``TurnCache``) keeps the turns replayed
from pi's sessions, and ``past.bin`` (``PastCache``) a walk of the whole event log,
by the same rules. No Textual.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .appstate import AppState

if TYPE_CHECKING:
    from store import Memory, MemoryStore, RecallIndex

NAME = "recall-words.bin"
KEY = "cache.key"
KEY_BYTES = 32
LIMIT = 1 << 31
"""The largest cache file read (a bigger one is ignored, and rebuilt)."""


def cache_home() -> Path:
    base = os.environ.get("XDG_CACHE_HOME")
    return Path(base).expanduser() if base else Path.home() / ".cache"


def cores() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def indexed(
    store_path: Path | None,
    memories: Sequence[Memory],
    *,
    save: bool = True,
    workers: int = 1,
    progress: Callable[[int, int], None] | None = None,
    warn: Callable[[str], None] | None = None,
) -> RecallIndex:
    """A recall index of ``memories``, their words read from the store's cache where
    they are still each record's own (``store_path`` None: no cache). With ``save``,
    the cache is written again when any record was extracted or has gone. With
    ``workers`` above 1, many records to extract (a first build) are extracted in
    that many processes, ``progress(done, total)`` told as they go. ``warn`` hears, in
    one line, why a cache was not trusted or could not be kept."""
    from store import RecallIndex, WordCache

    if store_path is None:
        return RecallIndex(memories)
    key = secret(store_path)
    place = AppState(store_path, root=cache_home())
    data = place.read_bytes(NAME, LIMIT) if key else None
    if key is None:
        save = False
        if warn is not None:
            warn(
                "the recall cache is not used: no private place for its key; words are read afresh"
            )
    elif place.problem and warn is not None:
        warn(f"the recall cache {place.problem}")
    cache = WordCache.loads(data, key) if data and key else WordCache()
    if workers > 1:
        cache.fill(memories, workers, progress)
    index = RecallIndex(memories, cache)
    known = len(cache)
    cache.keep_only(m.id for m in memories)
    if save and key and (cache.misses or len(cache) != known or place.problem):
        place.write_bytes(NAME, cache.dumps(key))
    return index


def secret(store_path: Path) -> bytes | None:
    """The key of the store's cache digest, made once (None: the state directory cannot
    keep it privately, and no cache is trusted)."""
    state = AppState(store_path)
    key = state.read_bytes(KEY, KEY_BYTES)
    if key is not None and len(key) == KEY_BYTES:
        return key
    key = os.urandom(KEY_BYTES)
    return key if state.write_bytes(KEY, key) else None


SESSION_INDEX = "session-index.json"
SESSION_INDEX_LIMIT = 256 << 20


SESSIONS_KEY_OWNER = Path("/memevo-tui/pi-session-indexes")
"""The name the session indexes' key is kept under in the state directory (one key for
every session file: not a file, only a name for ``AppState``)."""


class SessionIndexCache:
    """pi's session files' line indexes, kept in the cache directory (one directory per
    session file, keyed by its resolved path, as a store's): a 200 MB session's entry
    then opens without reading the file again. Same rules as the recall cache: private,
    never followed as a link, keyed (an HMAC of the session file's path and the index,
    with a secret of the state directory), ignored when anything is off."""

    def __init__(self) -> None:
        self._key = secret(SESSIONS_KEY_OWNER)

    def _salt(self, path: Path) -> bytes:
        return str(path.expanduser().resolve()).encode("utf-8", "surrogateescape") + b"\0"

    def get(self, path: Path) -> bytes | None:
        if not self._key:
            return None
        data = AppState(path, root=cache_home()).read_bytes(SESSION_INDEX, SESSION_INDEX_LIMIT)
        salted = _unsigned(self._key, None if data is None else data[:32] + self._salt(path)
                           + data[32:])  # fmt: skip
        return None if salted is None else salted[len(self._salt(path)) :]

    def put(self, path: Path, data: bytes) -> None:
        if self._key:
            signed = _signed(self._key, self._salt(path) + data)
            body = signed[:32] + data  # the path is signed, not stored
            AppState(path, root=cache_home()).write_bytes(SESSION_INDEX, body)


TURNS = "turns.json"
TURNS_LIMIT = 256 << 20


class TurnCache:
    """Turns replayed from pi's sessions, kept in the store's cache directory: a turn of
    the settled past never changes, so a warm open replays only what is new. Keyed (an
    HMAC with the store's secret, as the recall cache): a file that does not check out
    is ignored and written again, never trusted."""

    def __init__(self, store_path: Path) -> None:
        self._place = AppState(store_path, root=cache_home())
        self._key = secret(store_path)
        self._entries: dict[str, dict[str, Any]] = {}
        self.anchor: list[list[Any]] | None = None
        """The events the kept turns were replayed from (``store.pi.turns.log_anchor``)."""
        self._dirty = False
        body = _unsigned(self._key, self._place.read_bytes(TURNS, TURNS_LIMIT))
        if body is not None:
            with contextlib.suppress(ValueError):
                loaded = json.loads(body)
                entries = loaded.get("turns") if isinstance(loaded, dict) else None
                anchor = loaded.get("anchor") if isinstance(loaded, dict) else None
                if isinstance(entries, dict) and isinstance(anchor, list):
                    self._entries, self.anchor = entries, anchor

    def clear(self) -> None:
        self._entries = {}
        self.anchor = None
        self._dirty = True

    def get(self, key: str) -> dict[str, Any] | None:
        found = self._entries.get(key)
        return found if isinstance(found, dict) else None

    def put(self, key: str, value: dict[str, Any]) -> None:
        self._entries[key] = value
        self._dirty = True

    def save(self) -> None:
        if not self._dirty or not self._key:
            return
        kept = {"anchor": self.anchor, "turns": self._entries}
        body = json.dumps(kept, separators=(",", ":"), ensure_ascii=False).encode()
        self._place.write_bytes(TURNS, _signed(self._key, body))
        self._dirty = False


def _signed(key: bytes, body: bytes) -> bytes:
    """``body`` with its HMAC (the store's secret) before it."""
    return hmac.new(key, body, hashlib.sha256).digest() + body


def _unsigned(key: bytes | None, data: bytes | None) -> bytes | None:
    """The body of ``_signed`` bytes whose HMAC checks out with ``key`` (else None:
    missing, cut short, written by anyone without the key, or changed by hand)."""
    if not key or not data or len(data) <= 32:
        return None
    mac, body = data[:32], data[32:]
    good = hmac.new(key, body, hashlib.sha256).digest()
    return body if hmac.compare_digest(mac, good) else None


PAST = "past.bin"
PAST_LIMIT = 1 << 31


class PastCache:
    """A walk of the whole event log (``store.past.pastkeep``), kept in the store's cache
    directory by the same rules: keyed with the store's secret (an HMAC before the
    bytes), private, never followed as a link; a file that does not check out is
    ignored and written again. The store itself checks that what it holds is still
    the log's before it adopts it."""

    def __init__(self, store_path: Path) -> None:
        self._path = store_path

    def load(self) -> bytes | None:
        key = secret(self._path)
        if not key:
            return None
        return _unsigned(key, AppState(self._path, root=cache_home()).read_bytes(PAST, PAST_LIMIT))

    def save(self, data: bytes) -> None:
        key = secret(self._path)
        if key:
            AppState(self._path, root=cache_home()).write_bytes(PAST, _signed(key, data))


def keeping_past(store: MemoryStore, store_path: Path) -> MemoryStore:
    """``store``, its walk of the whole event log kept in the cache directory
    (``PastCache``): what the dial, the Turns replay and ``--as-of`` each open with."""
    store.past_keep = PastCache(store_path)
    return store
