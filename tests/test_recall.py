"""Recall parity (STORE.md §6): upstream's selections, every rule, and the explanations."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from store import Memory, MemoryLoad, MemoryStore, StoredMemory, fixed_clock
from store.js import fp, js_json, parse_ms
from store.recall import features as features_module
from store.recall import index as index_module
from store.recall.features import (
    CONCEPTS,
    ICU_AVAILABLE,
    LITERALS,
    features,
    pasted_literals,
    query_features,
)
from store.recall.index import RecallIndex
from store.recall.recall import (
    DIGEST_HEADER_BYTES,
    REASONS,
    Purpose,
    Recall,
    digest,
    excerpt,
    resolve_plan,
)
from store.records.rows import parse_memory_row

from conftest import FIXTURE_NOW, FIXTURES, ROOT, copy_fixture

NOW_MS = fixed_clock(FIXTURE_NOW)()
PURPOSES: tuple[Purpose, ...] = ("search", "inject")
CASES = json.loads((FIXTURES / "recall-cases.json").read_text(encoding="utf-8"))


def mem(memory_id: str, content: str, **extra: Any) -> Memory:
    """A valid record built in memory (no store needed)."""
    data: dict[str, Any] = {
        "id": memory_id,
        "kind": extra.pop("kind", "fact"),
        "content": content,
        "scope": extra.pop("scope", "/home/me/shop"),
        "sourceEntryId": "s1",
        "createdAt": "2026-10-20T00:00:00.000Z",
        "updatedAt": extra.pop("updatedAt", "2026-10-20T00:00:00.000Z"),
        "revision": 1,
        "layer": extra.pop("layer", "durable"),
        "status": extra.pop("status", "provisional"),
        **extra,
    }
    row = parse_memory_row(memory_id, data["scope"], fp(content), js_json(data), NOW_MS)
    assert isinstance(row, Memory), row
    return row


def ids(result: Recall) -> list[str]:
    return [c.memory.id for c in result.selected]


def reason_of(result: Recall, memory_id: str) -> str | None:
    for c in (*result.selected, *result.left_out):
        if c.memory.id == memory_id:
            return c.reason
    raise AssertionError(f"{memory_id} was not matched at all")


@pytest.fixture(scope="module")
def realistic_index(tmp_path_factory: pytest.TempPathFactory) -> RecallIndex:
    path = copy_fixture("realistic.sqlite", tmp_path_factory.mktemp("recall"))

    async def load() -> MemoryLoad[StoredMemory]:
        store = await MemoryStore.open(path, read_only=True, clock=fixed_clock(CASES["now"]))
        try:
            return await store.load_stored()
        finally:
            await store.close()

    return RecallIndex(asyncio.run(load()).memories)


# ------------------------------------------------------------------ parity


def test_icu_is_used() -> None:
    assert ICU_AVAILABLE, "PyICU is a dependency: word segmentation must be ICU's"


@pytest.mark.parametrize("case", CASES["cases"], ids=lambda c: c["query"])
async def test_public_cases_search(realistic_index: RecallIndex, case: dict[str, Any]) -> None:
    result = realistic_index.recall(case["query"], purpose="search", limit=CASES["limit"])
    assert ids(result) == case["search"]


@pytest.mark.parametrize("case", CASES["cases"], ids=lambda c: c["query"])
async def test_public_cases_recall(realistic_index: RecallIndex, case: dict[str, Any]) -> None:
    result = realistic_index.recall(case["query"], purpose="inject", limit=CASES["limit"])
    assert ids(result) == case["recall"]


async def test_store_search_and_recall_use_the_pipeline(realistic: Path) -> None:
    store = await MemoryStore.open(realistic, read_only=True, clock=fixed_clock(FIXTURE_NOW))
    try:
        found = await store.search("kyverno", limit=3)
        recalled = await store.recall("kyverno", purpose="inject")
    finally:
        await store.close()
    assert [m.id for m in found] == CASES["cases"][9]["search"][:3]
    assert ids(recalled) == CASES["cases"][9]["recall"]
    assert recalled.limit == 3


async def test_dormant_records_are_marked_out_of_injection(realistic_index: RecallIndex) -> None:
    result = realistic_index.recall("kyverno", purpose="inject", limit=10)
    dormant = [c for c in result.left_out if c.reason == "dormant"]
    assert [c.memory.id for c in dormant] == [
        "1ffdd011bb1a1e51f647de06",
        "39cc5ce9ca3d2186c8abb5da",
    ]
    assert all(c.memory.quality.dormant and c.would_fail is None for c in dormant)


# ------------------------------------------------------------------ features


def test_literals_paths_files_and_kebab_identifiers() -> None:
    f = features("Edit apps/web/lib/flags.ts in pi-memory-evolution, see ~/notes/todo.md.")
    assert "literal:apps/web/lib/flags.ts" in f and "literal:flags.ts" in f
    assert "literal:pi-memory-evolution" in f
    assert "literal:~/notes/todo.md" in f  # trailing "." dropped
    assert "concept:memory" not in f  # the repository name is one literal


def test_concepts_mask_synonyms_and_chinese() -> None:
    f = features("The databases listen on ports; 数据库端口")
    assert {"concept:database", "concept:port"} <= f.keys()
    assert "databases" not in f and "ports" not in f


@pytest.mark.parametrize(
    "text",
    [
        "work in progress",  # one anchor inside another: pending and progress
        "a cross-session restriction",  # cross-context twice over, and session
        "Timeouts and TIME-OUT; runtime",  # anchors found where the pattern is not
        "not yet reported: import the sessions' ports",
        "ſession, Kelvin \u212a, İnstall",  # ASCII-only case folding
        "记忆会话项目 跨会话 限定 不限于 尚未完成 已完成了",
        "no concept at all",
    ],
)
def test_every_concept_whose_pattern_matches_is_found(text: str) -> None:
    """Concepts are tested only where an anchor occurs; the anchors are found with one
    pattern, overlaps included, so the result is each concept's own pattern's."""
    prose = LITERALS.sub(" ", text)
    expected = [name for name, pattern in CONCEPTS if pattern.search(prose)]
    assert [f for f in features(text) if f.startswith("concept:")] == expected


def test_words_camel_case_stop_words_and_single_characters() -> None:
    f = features("getPaymentIntent is the helper for x")
    assert list(f) == ["get", "payment", "intent", "helper"]
    assert "x" in query_features("helper for x")  # single characters kept on the query side


def test_query_framing_is_removed() -> None:
    assert list(query_features("do you remember memories about loki retention?")) == [
        "loki",
        "retention",
    ]
    assert list(query_features("Thanks! ok go ahead")) == []


def test_qualified_path_drops_its_bare_basename_on_the_query_side() -> None:
    q = query_features("apps/web/lib/flags.ts")
    assert list(q) == ["literal:apps/web/lib/flags.ts"]


def test_pasted_literals_are_not_mandatory() -> None:
    text = "```\nat run (/srv/app/src/export.ts:3:1)\n```\nwhy does export fail in src/cart.ts"
    pasted = pasted_literals(text)
    assert "literal:/srv/app/src/export.ts:3:1)" in pasted
    assert "literal:src/cart.ts" not in pasted


def test_redaction_happens_before_features() -> None:
    f = features("password: hunter2\nkeep this line")
    assert "hunter2" not in f and "keep" in f


# ------------------------------------------------------------------ plan


def test_plan_modes() -> None:
    assert resolve_plan("loki retention").mode == "direct"
    assert resolve_plan("thanks").mode == "empty"
    assert resolve_plan("new topic: kyverno").mode == "reset"
    follow = resolve_plan("what about its port?", ["dev postgres"])
    assert (follow.mode, follow.query, follow.context) == (
        "followup",
        "what about its port?",
        "dev postgres",
    )


# ------------------------------------------------------------------ gates


def test_every_status_reason() -> None:
    index = RecallIndex(
        [
            mem("a1", "Loki retention is 30 days.", status="forgotten"),
            mem("a2", "Loki retention is 31 days.", status="conflicted"),
            mem(
                "a3",
                "Loki retention is 32 days.",
                feedback={"accuracy": {"verdict": "incorrect", "sourceId": "m", "at": FIXTURE_NOW}},
            ),
            mem("a4", "Loki retention is 33 days.", updatedAt="2026-01-01T00:00:00.000Z"),
            mem("a5", "Loki retention is 34 days."),
        ]
    )
    result = index.recall("loki retention", purpose="inject")
    assert ids(result) == ["a5"]
    assert [reason_of(result, x) for x in ("a1", "a2", "a3", "a4")] == [
        "forgotten",
        "conflicted",
        "disputed",
        "dormant",
    ]
    assert "a4" in ids(index.recall("loki retention", purpose="search"))


def test_resource_mismatch_and_thin_match() -> None:
    index = RecallIndex(
        [
            mem("b1", "Flags live in apps/web/lib/flags.ts and are typed."),
            mem("b2", "Flags are read at build time from the web app."),
            mem("b3", "Cart totals include tax and shipping."),
            mem("b4", "Cart badge counts items."),
        ]
    )
    result = index.recall("apps/web/lib/flags.ts flags")
    assert ids(result) == ["b1"]
    assert reason_of(result, "b2") == "resource-mismatch"
    thin = index.recall("badge colour theme")
    assert reason_of(thin, "b4") == "thin-match"
    assert reason_of(index.recall("cart badge colour theme"), "b3") == "incidental-overlap"


def test_question_only_and_relative_cutoff() -> None:
    index = RecallIndex(
        [
            mem("c1", 'Someone asked "is redis persistent?" in standup.'),
            mem("c2", "Redis persistence uses AOF every second."),
            mem("c3", "Redis persistence uses AOF every second on the cache nodes in staging"),
            mem("c4", "Redis runs as a sidecar in staging with persistence disabled on the cache"),
        ]
    )
    assert reason_of(index.recall("redis persistent"), "c1") == "question-only"
    weak = index.recall("redis persistence aof")
    assert ids(weak) == ["c2"]
    assert reason_of(weak, "c3") == "redundant"  # same scope and kind, nothing new matched
    assert reason_of(weak, "c4") == "relative-cutoff"
    assert all(REASONS[c.reason] for c in weak.left_out if c.reason)


def test_subject_attribute_mismatch() -> None:
    index = RecallIndex(
        [
            mem("d1", "Postgres listens on port 5432."),
            mem("d2", "Redis listens on port 6379."),
            mem("d3", "Postgres runs version 16."),
        ]
    )
    result = index.recall("postgres port")
    assert ids(result) == ["d1"]
    assert reason_of(result, "d3") == "subject-attribute-mismatch"


def test_selection_skips_duplicates_and_honours_the_limit() -> None:
    index = RecallIndex(
        [
            mem("e1", "Stripe webhooks are forwarded with stripe listen."),
            mem("e2", "Stripe webhooks are forwarded with stripe listen.", kind="decision"),
            mem("e3", "Stripe webhooks are forwarded with the stripe CLI locally."),
            mem("e4", "Stripe webhooks are forwarded by ngrok in staging."),
        ]
    )
    result = index.recall("stripe webhooks forwarded", limit=2)
    assert len(result.selected) == 2
    reasons = {c.memory.id: c.reason for c in result.left_out}
    assert "duplicate" in reasons.values() and "limit" in reasons.values()


def test_pinning_changes_the_outcome() -> None:
    text = "Grafana lives on the ops dashboard host."
    old = mem("f1", text, updatedAt="2026-01-01T00:00:00.000Z")
    before = RecallIndex([old]).recall("grafana dashboard", purpose="inject")
    assert ids(before) == [] and reason_of(before, "f1") == "dormant"
    pinned = mem("f1", text, updatedAt="2026-01-01T00:00:00.000Z", layer="pinned")
    index = RecallIndex([old]).updated([pinned])
    assert ids(index.recall("grafana dashboard", purpose="inject")) == ["f1"]


def test_order_is_rank_then_pinned_then_updated_then_id() -> None:
    index = RecallIndex(
        [
            mem("g2", "Vault unseal keys live in 1Password."),
            mem("g1", "Vault unseal keys live in 1Password!", scope="/home/me/other"),
        ]
    )
    assert ids(index.recall("vault unseal keys")) == ["g1", "g2"]


def test_empty_query_selects_nothing() -> None:
    index = RecallIndex([mem("h1", "Anything at all.")])
    result = index.recall("   ")
    assert result.selected == () and result.plan.mode == "empty"


# ------------------------------------------------------------------ excerpt


def test_excerpt_keeps_short_text_and_picks_the_matching_sentence() -> None:
    plan = resolve_plan("loki retention")
    assert excerpt("Short text.", plan) == "Short text."
    long = "Unrelated opening sentence. " * 20 + "Loki retention is 30 days. " + "Tail. " * 20
    assert excerpt(long, plan) == "Loki retention is 30 days.…"


def test_explain_cap_keeps_pis_order(realistic_index: RecallIndex) -> None:
    full = realistic_index.recall("cart api", purpose="inject", explain=None)
    assert full.left_out_total == len(full.left_out) > 4
    capped = realistic_index.recall("cart api", purpose="inject", explain=3)
    assert capped.left_out_total == full.left_out_total
    assert [c.memory.id for c in capped.left_out] == [c.memory.id for c in full.left_out[:3]]
    assert capped.selected == full.selected  # the cap trims only what is left out


def test_digest_lines_follow_pis_format_and_byte_budget() -> None:
    scope = "/home/me/" + "very-long-project-directory-name/" * 4
    filler = " ".join(f"window{n}" for n in range(90))  # one 700-byte sentence
    texts = [f"Zeppelin cluster {n} {filler}" for n in range(3)]
    records = [mem(f"k{n}", text, scope=scope + str(n)) for n, text in enumerate(texts)]
    result = RecallIndex(records).recall("zeppelin cluster", purpose="inject")
    assert len(result.selected) == 3
    lines = digest(result)
    first = json.loads(lines[0].line)
    assert list(first) == [
        "id", "kind", "status", "origin", "source", "updated", "evidence", "aging", "text",
    ]  # fmt: skip
    assert first["origin"].endswith("…#" + fp(scope + first["id"][1]))  # clipped label
    assert first["text"].startswith("Zeppelin cluster") and first["text"].endswith("…")
    assert [d.included for d in lines] == [True, True, False]  # 2,048 bytes in all
    assert DIGEST_HEADER_BYTES + sum(len(d.line.encode()) for d in lines[:2]) <= 2048


async def test_learning_candidates_use_recall_features(
    realistic: Path, fixture_clock: Callable[[], float]
) -> None:
    """§5.3: a record qualifies when 40% of its features occur in the source's features."""
    from store.learning.learning import Learning
    from store.recall.features import document_features

    source_id = "compact:37bdb62e-2230-432c-a615-9683203855a7:c7201be0"
    store = await MemoryStore.open(realistic, clock=fixture_clock)
    try:
        source = json.loads(
            (await store.query("SELECT data FROM sources WHERE id=?", (source_id,)))[0][0]
        )
        run = await Learning(store).begin(source_id, model="test/model")
        load = await store.load_memories()
    finally:
        await store.close()
    assert run is not None
    vocab = document_features(source["content"])

    def share(words: frozenset[str]) -> float:
        return len(words & vocab) / len(words) if words else 0.0

    created = parse_ms(source["createdAt"]) or 0.0
    scoped = sorted(
        (m for m in load.memories if m.scope == source["scope"] and m.active),
        key=lambda m: -(parse_ms(m.updated_at) or 0.0),
    )
    expected = [
        m.id
        for m in scoped
        if max(
            share(document_features(m.content)),
            share(document_features(" ".join(m.search_terms))),
        )
        >= 0.4
        and not m.pinned
        and (parse_ms(m.updated_at) or 0.0) <= created
    ][:32]
    got = [c["id"] for c in run.candidates]
    assert sorted(got) == sorted(expected) and len(expected) >= 2
    stamps = [parse_ms(c["updatedAt"]) or 0.0 for c in run.candidates]
    assert stamps == sorted(stamps, reverse=True)  # recency order (ties as stored)


def test_an_updated_index_answers_as_one_built_from_scratch(
    realistic_index: RecallIndex,
) -> None:
    memories = [
        c.memory for c in realistic_index.recall("cart api loki kyverno", explain=None).left_out
    ]
    assert len(memories) >= 8
    changed: list[Memory] = []
    for n, m in enumerate(memories[:8]):
        assert isinstance(m, StoredMemory)  # the index was built from stored records
        data = dict(m.data)
        if n % 3 == 0:
            data["content"] = m.content + " Kyverno guards it."
        elif n % 3 == 1:
            data["status"] = "forgotten"
        else:
            data["layer"] = "pinned"
        row = parse_memory_row(m.id, m.scope, fp(data["content"]), js_json(data), NOW_MS)
        assert isinstance(row, StoredMemory)
        changed.append(row)
    changed.append(mem("new1", "Kyverno audits the cart API nightly.", scope=memories[0].scope))
    incremental = realistic_index.updated(changed)
    everything = {m.id: m for m in _all(realistic_index)}
    everything.update({m.id: m for m in changed})
    rebuilt = RecallIndex(everything.values())
    for query in ("kyverno", "cart api", "loki retention", "guards", "cart totals", "nightly"):
        for purpose in PURPOSES:
            a = incremental.recall(query, purpose=purpose, explain=None)
            b = rebuilt.recall(query, purpose=purpose, explain=None)
            assert [(c.memory.id, c.reason, c.score) for c in (*a.selected, *a.left_out)] == [
                (c.memory.id, c.reason, c.score) for c in (*b.selected, *b.left_out)
            ]
            assert (a.eligible, a.excluded) == (b.eligible, b.excluded)
    # the original index is untouched
    assert ids(realistic_index.recall("kyverno", purpose="inject")) == CASES["cases"][9]["recall"]


def _all(index: RecallIndex) -> list[Memory]:
    return index.memories()


def test_a_change_that_keeps_the_words_reuses_the_postings(
    realistic_index: RecallIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pin, feedback or the time dial changes columns only: no feature is extracted
    again, and the answers are those of an index built from scratch."""
    memories = _all(realistic_index)
    later = NOW_MS + 60 * 86_400_000
    dialed = [replace(m, quality_at=later) for m in memories]
    assert sum(m.quality.dormant for m in dialed) > sum(m.quality.dormant for m in memories)
    extracted: list[str] = []
    real = features_module.document_words

    def counted(text: str) -> tuple[str, ...]:
        extracted.append(text)
        return real(text)

    monkeypatch.setattr(index_module, "document_words", counted)
    incremental = realistic_index.updated(dialed)
    assert extracted == []
    assert len(incremental) == len(realistic_index)
    rebuilt = RecallIndex(dialed)
    for query in ("kyverno", "cart api", "loki retention", "grafana dashboard", "nightly"):
        for purpose in PURPOSES:
            a = incremental.recall(query, purpose=purpose, explain=None)
            b = rebuilt.recall(query, purpose=purpose, explain=None)
            assert [
                (c.memory.id, c.reason, c.score, c.where) for c in (*a.selected, *a.left_out)
            ] == [(c.memory.id, c.reason, c.score, c.where) for c in (*b.selected, *b.left_out)]


def test_the_dashboard_starts_without_numpy() -> None:
    """The recall index's numpy (over 100 ms to import) is paid at the first recall only."""
    probe = "import sys, memevo_tui.app, memevo_tui.__main__; print('numpy' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.strip() == "False"
