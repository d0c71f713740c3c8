"""Quality, freshness and dormancy: the worked examples of STORE.md §3.5 and the fixture."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from store import MemoryStore
from store.js import parse_ms
from store.records.quality import confirmed_ms, evidence_weight, may_replace, quality, quality_of


def _record(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": "x",
        "kind": "fact",
        "content": "content",
        "scope": "/p",
        "sourceEntryId": "s",
        "createdAt": "2026-01-01T00:00:00.000Z",
        "updatedAt": "2026-01-01T00:00:00.000Z",
        "revision": 1,
        "layer": "durable",
        "status": "provisional",
    }
    base.update(fields)
    return base


def _now(value: str) -> float:
    ms = parse_ms(value)
    assert ms is not None
    return ms


def test_example_a_reinforced_fact() -> None:
    record = _record(
        updatedAt="2026-03-01T00:00:00.000Z",
        reinforcedAt="2026-05-01T00:00:00.000Z",
        evidence={
            "basis": "user_statement",
            "method": "model",
            "sourceId": "u",
            "at": "2026-03-01",
        },
        feedback={"utility": {"verdict": "useful", "sourceId": "m", "at": "2026-03-02"}},
    )
    q = quality(record, _now("2026-06-30T00:00:00.000Z"))
    assert q.confirmed_at == "2026-05-01T00:00:00.000Z"
    assert q.age_days == 60
    assert q.freshness == pytest.approx(0.75)
    assert (q.dormant, q.aging) == (False, False)
    assert q.evidence_weight == pytest.approx(1.08)
    assert (q.utility, q.accuracy) == (1.05, 1)
    assert q.factor == pytest.approx(0.8505)
    assert 3.2 * q.factor == pytest.approx(2.7216)
    without = quality(_record(**{**record, "reinforcedAt": None}), _now("2026-06-30T00:00:00Z"))
    assert without.freshness == pytest.approx(0.6236, abs=1e-4)
    assert without.aging is True


def test_example_b_project_state_observed_by_tools() -> None:
    record = _record(
        kind="project_state",
        updatedAt="2026-06-26T00:00:00.000Z",
        evidence={
            "basis": "tool_observation",
            "method": "model",
            "sourceId": "p",
            "at": "2026-06-26",
        },
    )
    q = quality(record, _now("2026-06-30T00:00:00.000Z"))
    assert q.freshness == pytest.approx(0.69843, abs=1e-5)
    assert (q.aging, q.dormant) == (True, False)
    assert q.evidence_weight == pytest.approx(1.12)
    assert q.factor == pytest.approx(0.78224, abs=1e-5)
    assert q.days_until_dormant == pytest.approx(3)
    assert quality(record, _now("2026-07-04T00:00:00.000Z")).dormant is True


def test_example_c_pinned_preference() -> None:
    record = _record(
        kind="preference",
        layer="pinned",
        updatedAt="2024-01-01T00:00:00.000Z",
        evidence={
            "basis": "user_statement",
            "method": "model",
            "sourceId": "u",
            "at": "2024-01-01",
        },
    )
    q = quality(record, _now("2026-06-19T00:00:00.000Z"))
    assert (q.freshness, q.dormant, q.aging) == (1, False, False)
    assert q.factor == pytest.approx(1.12)
    assert q.days_until_aging is None


def test_replacement_authority() -> None:
    summary = {"basis": "summary", "method": "local", "sourceId": "s", "at": "2026-01-01"}
    assert may_replace(_record(evidence=summary), "summary")
    assert not may_replace(_record(evidence=summary, status="confirmed"), "summary")
    assert may_replace(_record(evidence=summary, status="confirmed"), "user_statement")
    assert may_replace(_record(kind="project_state", status="confirmed"), "tool_observation")


async def test_realistic_freshness_table_matches_the_manifest(
    realistic: Path, fixture_clock: Callable[[], float]
) -> None:
    async with await MemoryStore.open(realistic, clock=fixture_clock) as store:
        load = await store.load_memories()
    # The manifest counts by stored status: a record marked incorrect is conflicted there
    # (the dashboard's badge says "disputed").
    counts: Counter[tuple[str, str]] = Counter(
        (m.kind, m.status if m.status in ("forgotten", "conflicted") else m.state)
        for m in load.memories
    )
    expected = {
        "project_state": (16, 5, 22, 1, 6, 0),
        "fact": (25, 10, 34, 0, 7, 3),
        "decision": (20, 11, 16, 1, 2, 1),
        "preference": (9, 8, 6, 2, 0, 0),
    }
    states = ("fresh", "aging", "dormant", "pinned", "forgotten", "conflicted")
    for kind, numbers in expected.items():
        assert tuple(counts[(kind, s)] for s in states) == numbers, kind


@pytest.mark.parametrize("days_later", [0, 1, 30, 90, 200, 400, 1000])
async def test_what_a_list_reads_of_every_row_agrees_with_the_whole_quality(
    realistic: Path, fixture_clock: Callable[[], float], days_later: int
) -> None:
    """A record computes its quality when asked; the cheap parts a list, a sort and a
    filter read of every row (age, horizon, aging, dormant, state, confirmation and
    evidence weight) are the same numbers, at the read's moment and at others."""
    async with await MemoryStore.open(realistic, clock=fixture_clock) as store:
        load = await store.load_memories()
    states: Counter[str] = Counter()
    for read in load.memories:
        m = replace(read, quality_at=read.quality_at + days_later * 86_400_000)
        q = m.quality
        assert q == quality_of(read, m.quality_at)
        assert (m.age_days, m.horizon, m.days_until_dormant, m.aging, m.dormant) == (
            q.age_days,
            q.horizon,
            q.days_until_dormant,
            q.aging,
            q.dormant,
        ), m.id
        assert read.dormant_at(m.quality_at) is q.dormant, m.id
        assert m.went_dormant(read.quality_at) is (q.dormant and not read.dormant), m.id
        assert read.went_dormant(m.quality_at) is False, m.id  # not dormant later, yet now
        assert confirmed_ms(m.updated_at, m.reinforced_at) == parse_ms(q.confirmed_at), m.id
        basis = m.evidence.basis if m.evidence else None
        assert evidence_weight(m.kind, basis) == q.evidence_weight, m.id
        if m.state in ("aging", "dormant", "fresh"):
            assert m.state == ("dormant" if q.dormant else "aging" if q.aging else "fresh")
        states[m.state] += 1
    assert len(states) >= 3  # the moments tried reach records in several states


async def test_the_index_s_factor_and_dormancy_are_the_quality_s(
    realistic: Path, hostile: Path
) -> None:
    """``factor_dormant`` (what the recall index keeps) gives exactly the factor and
    dormancy of the whole quality, for every record, at moments across its life."""
    from store.records.quality import factor_dormant

    checked = 0
    for path in (realistic, hostile):
        async with await MemoryStore.open(path, read_only=True) as store:
            load = await store.load_memories()
        for m in load.memories:
            for days in (-400, 0, 10, 45, 100, 365, 3650):
                when = (parse_ms(m.updated_at) or 0.0) + days * 86_400_000
                q = quality_of(m, when)
                assert factor_dormant(m, when) == (q.factor, q.dormant), (m.id, days)
                checked += 1
    assert checked > 1_000
