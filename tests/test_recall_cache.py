"""The recall index's words kept between processes: the same answers as words
extracted afresh, a changed record extracted again, a damaged or foreign cache
ignored, and a cache directory that is private and never followed as a link."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from memevo_tui.core.recallcache import NAME, cache_home, indexed
from memevo_tui.term.compat.testing import notifications
from store import Memory, MemoryStore, fixed_clock
from store.recall import wordcache
from store.recall.index import RecallIndex, record_words
from store.recall.recall import Recall
from store.recall.wordcache import MAGIC, WordCache

from conftest import FIXTURE_NOW, FIXTURES, ROOT

CASES = json.loads((FIXTURES / "recall-cases.json").read_text(encoding="utf-8"))


async def memories_of(path: Path) -> list[Memory]:
    store = await MemoryStore.open(path, read_only=True, clock=fixed_clock(FIXTURE_NOW))
    try:
        return list((await store.load_memories()).memories)
    finally:
        await store.close()


def answers(index: RecallIndex) -> list[object]:
    """Every decision of every public case, for search and for injection."""

    def told(r: Recall) -> list[object]:
        return [(c.memory.id, c.score, c.rank_score, c.coverage, c.matches, c.places, c.reason)
                for c in (*r.selected, *r.left_out)]  # fmt: skip

    return [
        told(index.recall(case["query"], purpose=purpose, limit=CASES["limit"]))
        for case in CASES["cases"]
        for purpose in ("search", "inject")
    ]


def key_of(store: Path) -> bytes:
    """The key of the store's cache digest (made once, in its state directory)."""
    from memevo_tui.core.recallcache import secret

    key = secret(store)
    assert key is not None
    return key


def cache_file(store: Path) -> Path:
    found = list((cache_home() / "memevo-tui" / "stores").glob(f"*/{NAME}"))
    assert len(found) == 1, found
    return found[0]


async def test_an_index_from_cached_words_answers_as_one_extracted_afresh(
    realistic: Path,
) -> None:
    memories = await memories_of(realistic)
    fresh = answers(RecallIndex(memories))
    assert answers(indexed(realistic, memories)) == fresh  # the first: extracts, writes
    written = cache_file(realistic)
    cache = WordCache.loads(written.read_bytes(), key_of(realistic))
    assert len(cache) == len(memories)
    index = RecallIndex(memories, cache)  # the next process: reads every record's words
    assert (cache.hits, cache.misses) == (len(memories), 0)
    assert answers(index) == fresh
    assert answers(indexed(realistic, memories)) == fresh


async def test_a_record_whose_text_changed_is_extracted_again(realistic: Path) -> None:
    memories = await memories_of(realistic)
    indexed(realistic, memories)
    first = cache_file(realistic).read_bytes()
    changed = replace(memories[0], content="Deploys go through the canary cluster first")
    now = [changed, *memories[2:]]  # one changed, one gone
    cache = WordCache.loads(first, key_of(realistic))
    assert cache(changed) == record_words(changed) != record_words(memories[0])
    assert cache(memories[1]) == record_words(memories[1])
    assert (cache.hits, cache.misses) == (1, 1)
    assert answers(indexed(realistic, now)) == answers(RecallIndex(now))
    again = WordCache.loads(cache_file(realistic).read_bytes(), key_of(realistic))
    assert len(again) == len(now)  # the one gone is gone from the cache too
    RecallIndex(now, again)
    assert (again.hits, again.misses) == (len(now), 0)


async def test_a_first_build_extracts_in_worker_processes_and_keeps_the_words(
    realistic: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memories = await memories_of(realistic)
    monkeypatch.setattr(wordcache, "POOL_MIN", 10)  # the fixture is small
    told: list[tuple[int, int]] = []
    index = indexed(realistic, memories, workers=2, progress=lambda *p: told.append(p))
    assert told and told[-1] == (len(memories), len(memories))
    assert [d for d, _ in told] == sorted(d for d, _ in told)
    assert answers(index) == answers(RecallIndex(memories))
    cache = WordCache.loads(cache_file(realistic).read_bytes(), key_of(realistic))  # for next time
    assert len(cache) == len(memories)
    assert cache.fill(memories, 2) == 0  # nothing left to extract


def damaged(good: bytes) -> list[bytes]:
    """Bytes that are not a cache this code wrote: cut short, a byte changed anywhere,
    another format, nothing."""
    cuts = [good[:n] for n in (0, 1, len(MAGIC), len(MAGIC) + 20, len(good) // 2, len(good) - 1)]
    flips = []
    for at in (len(MAGIC) + 3, len(MAGIC) + 30, len(good) // 3, len(good) // 2, len(good) - 5):
        b = bytearray(good)
        b[at] ^= 0x20
        flips.append(bytes(b))
    return [*cuts, *flips, b"garbage" * 100, good + b"\x00", b"\x00" * len(good)]


async def test_a_damaged_or_foreign_cache_is_ignored_and_written_again(realistic: Path) -> None:
    memories = await memories_of(realistic)
    fresh = answers(RecallIndex(memories))
    indexed(realistic, memories)
    path = cache_file(realistic)
    good = path.read_bytes()
    for bad in damaged(good):
        assert len(WordCache.loads(bad)) == 0
        path.write_bytes(bad)
        assert answers(indexed(realistic, memories)) == fresh
        assert path.read_bytes() == good  # rebuilt, the same as before
    # made by other rules (another tag): the same bytes otherwise, never used
    header_at = good.index(b'"tag":"') + len(b'"tag":"')
    other = bytearray(good)
    other[header_at] = ord("x") if other[header_at] != ord("x") else ord("y")
    assert len(WordCache.loads(bytes(other))) == 0


async def test_the_cache_is_private_and_never_followed_as_a_link(
    realistic: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memories = await memories_of(realistic)
    indexed(realistic, memories)
    path = cache_file(realistic)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    for d in (path.parent, path.parent.parent, path.parent.parent.parent):
        assert stat.S_IMODE(d.stat().st_mode) == 0o700
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    home = tmp_path / "linked-cache"
    home.mkdir()
    (home / "memevo-tui").symlink_to(elsewhere)
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    assert answers(indexed(realistic, memories)) == answers(RecallIndex(memories))
    assert list(elsewhere.iterdir()) == []  # nothing written through the link


def cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memevo_tui", *args],
        capture_output=True, text=True, cwd=ROOT, env={**os.environ, **env}, timeout=120,
    )  # fmt: skip


def test_cli_search_keeps_the_words_and_answers_the_same_from_them(
    realistic: Path, tmp_path: Path
) -> None:
    env = {"XDG_CACHE_HOME": str(tmp_path / "cli-cache")}
    first = cli("search", "kyverno", "--db", str(realistic), "--json", env=env)
    assert first.returncode == 0, first.stderr
    written = list((tmp_path / "cli-cache").rglob(NAME))
    assert len(written) == 1
    before = written[0].stat().st_mtime_ns
    second = cli("search", "kyverno", "--db", str(realistic), "--json", env=env)
    assert second.returncode == 0 and second.stdout == first.stdout
    assert written[0].stat().st_mtime_ns == before  # every record read: nothing written
    demo = cli("search", "postgres", "--demo", "--json", env=env)
    assert demo.returncode == 0, demo.stderr
    assert len(list((tmp_path / "cli-cache").rglob(NAME))) == 1  # the demo leaves none


@pytest.mark.unit  # a word cache forged entry by entry
async def test_a_forged_cache_is_refused_without_the_key(realistic: Path) -> None:
    """Anyone who can write the file but cannot read the key: adding a word to one
    record's cached words must not make recall return it for that word."""
    from memevo_tui.core.recallcache import secret

    memories = await memories_of(realistic)
    indexed(realistic, memories)
    path = cache_file(realistic)
    key = secret(realistic)
    assert key is not None and len(WordCache.loads(path.read_bytes(), key)) == len(memories)
    assert len(WordCache.loads(path.read_bytes())) == 0  # the digest is keyed
    victim = memories[5]
    assert not indexed(realistic, memories).recall("zebrafish", limit=5).memories
    forged = WordCache.loads(path.read_bytes(), key)
    mark, (mentions, alias, body) = forged._entries[victim.id]
    forged._entries[victim.id] = (mark, ((*mentions, "zebrafish"), alias, body))
    for wrong_key in (b"", b"x" * 32):
        path.write_bytes(forged.dumps(wrong_key))
        warned: list[str] = []
        found = indexed(realistic, memories, warn=warned.append).recall("zebrafish", limit=5)
        assert [m.id for m in found.memories] == []
    assert len(WordCache.loads(path.read_bytes(), key)) == len(memories)  # written again


@pytest.mark.unit  # a word cache forged entry by entry
@pytest.mark.parametrize("how", ["mode-0666", "other-owner"])
async def test_a_cache_others_could_write_is_ignored_with_a_warning(
    realistic: Path, how: str
) -> None:
    from memevo_tui.core.recallcache import secret

    memories = await memories_of(realistic)
    indexed(realistic, memories)
    path = cache_file(realistic)
    key = secret(realistic)
    assert key is not None
    forged = WordCache.loads(path.read_bytes(), key)  # written with the real key
    mark, (mentions, alias, body) = forged._entries[memories[5].id]
    forged._entries[memories[5].id] = (mark, ((*mentions, "zebrafish"), alias, body))
    path.write_bytes(forged.dumps(key))
    os.chmod(path.parent, 0o777)
    if how == "mode-0666":
        os.chmod(path, 0o666)
    else:
        if os.geteuid() != 0:
            pytest.skip("only root can give a file to another user")
        os.chown(path, 12345, 12345)
    warned: list[str] = []
    found = indexed(realistic, memories, warn=warned.append).recall("zebrafish", limit=5)
    assert [m.id for m in found.memories] == []
    assert len(warned) == 1 and "ignored, and written again" in warned[0], warned
    st = path.stat()
    assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (os.geteuid(), 0o600)
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


async def test_a_cache_root_others_can_write_is_not_used(
    realistic: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    memories = await memories_of(realistic)
    shared = tmp_path / "shared-cache"
    shared.mkdir(mode=0o777)
    os.chmod(shared, 0o777)
    monkeypatch.setenv("XDG_CACHE_HOME", str(shared))
    warned: list[str] = []
    index = indexed(realistic, memories, warn=warned.append)
    assert answers(index) == answers(RecallIndex(memories))
    assert len(warned) == 1 and "is writable by others" in warned[0], warned
    assert list(shared.iterdir()) == []


def test_the_state_directory_trusts_only_files_the_user_alone_could_write(
    realistic: Path, tmp_path: Path
) -> None:
    from memevo_tui.core.appstate import AppState, Visit

    state = AppState(realistic, root=tmp_path / "state-root")
    assert state.save_visit(Visit(7, 1.0)) and state.visit() == Visit(7, 1.0)
    visit = state.dir / "visit.json"
    os.chmod(visit, 0o666)
    assert state.visit() is None
    assert state.problem is not None and "is writable by others" in state.problem
    os.chmod(visit, 0o600)
    assert state.visit() == Visit(7, 1.0)
    os.chmod(tmp_path / "state-root", 0o777)  # the root itself open to others: not used
    assert state.visit() is None and "is writable by others" in (state.problem or "")


async def test_the_dashboard_warns_of_a_cache_others_could_write(realistic: Path) -> None:
    from apphelpers import make_app, until, wait_loaded

    memories = await memories_of(realistic)
    indexed(realistic, memories)
    path = cache_file(realistic)
    os.chmod(path, 0o666)
    app = make_app(realistic)
    async with app.run_test(size=(160, 50), notifications=True) as pilot:
        await wait_loaded(pilot)
        await pilot.press("i", "slash", *"redis port")
        await until(pilot, lambda: any("writable by others" in n.message
                                       for n in notifications(app)), "the warning")  # fmt: skip
    assert stat.S_IMODE(path.stat().st_mode) == 0o600  # written again, privately


def same_index(a: RecallIndex, b: RecallIndex) -> None:
    """Two indexes hold the same postings and columns, value for value and type for type."""
    for name in RecallIndex.__slots__:
        x, y = getattr(a, name), getattr(b, name)
        if isinstance(x, dict) and x and isinstance(next(iter(x.values())), np.ndarray):
            assert x.keys() == y.keys(), name
            for word, found in x.items():
                assert found.dtype == y[word].dtype and np.array_equal(found, y[word]), (name, word)
        elif isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and np.array_equal(x, y), name
        else:
            assert x == y, name


@pytest.mark.unit  # the index's columns compared
@pytest.mark.parametrize("fixture", ["realistic", "hostile"])
async def test_postings_built_at_once_from_the_cache_are_those_built_record_by_record(
    fixture: str, request: pytest.FixtureRequest
) -> None:
    """A cache that holds exactly the records, in order, with their texts, gives the
    index's postings built at once (numpy): the same index as reading each record's
    words, and the same answers. Anything else (an order, a text, a record more) reads
    them one by one."""
    memories = await memories_of(request.getfixturevalue(fixture))
    quoted = replace(  # more words quoted than the 12 a record's norm counts up to
        memories[0],
        content='Asked "which scripts copy nightly database backups into offsite storage '
        'buckets every sunday before maintenance windows begin?" once',
    )
    memories = [quoted, *memories[1:]]
    slow = RecallIndex(memories)
    assert slow._quoted.any()  # a body that differs from the mentions is covered
    filled = WordCache()
    RecallIndex(memories, filled)
    data = filled.dumps(b"key")
    cache = WordCache.loads(data, b"key")
    fast = RecallIndex(memories, cache)
    assert (cache.hits, cache.misses) == (len(memories), 0)
    same_index(fast, slow)
    assert answers(fast) == answers(slow)
    for other in (memories[::-1], memories[1:], [replace(memories[1], content="other")]):
        assert WordCache.loads(data, b"key").prebuilt(other) is None


@pytest.mark.unit  # the word cache's rule modules
def test_the_words_tag_hashes_each_rule_module_it_names() -> None:
    """The tag is made from the code of every module that decides a record's words: each
    is a file where the store keeps it (none falls back to the version unnoticed)."""
    store_root = Path(wordcache.__file__).parents[1]
    assert all((store_root / name).is_file() for name in wordcache._RULES), wordcache._RULES
