"""Learning runs as they appear in the store (STORE.md §5): capture, begin, finish, fail.

The dashboard never calls a model. These writes exist for the demo learner and
for tests that need pi-shaped traffic; each leaves the file valid for pi.
Candidate selection uses a plain word-containment test in place of the full
recall features of §6.3 (which only affect which records a model is shown).
"""

from __future__ import annotations

import json
from typing import Any

import aiosqlite

from ..errors import Refused
from ..js import clip_bytes, fp, iso, js_json, js_len, js_next, js_trim, parse_ms, union
from ..recall.extract import extract
from ..recall.features import document_features
from ..records.quality import may_replace
from ..records.rows import is_paused
from ..records.validate import search_terms_problem
from ..store import MemoryStore
from ..write.redact import redact
from .failures import OUTPUT_CODES, Failing
from .run import ClaimIn as ClaimIn
from .run import LearningFailure as LearningFailure
from .run import Run as Run
from .run import Staged

LEASE_GRACE_MS = 30_000
DEFAULT_TIMEOUT_MS = 120_000
BASIS_BY_KIND = {"summary": "summary", "user": "user_statement", "progress": "tool_observation"}


def _source_problem(source: object) -> str | None:
    if not isinstance(source, dict):
        return "not an object"
    for key in ("id", "scope"):
        if not isinstance(source.get(key), str) or not js_trim(source[key]):
            return f"{key} is blank"
    kind = source.get("kind")
    if kind not in BASIS_BY_KIND:
        return "kind is invalid"
    if not isinstance(source.get("content"), str) or parse_ms(source.get("createdAt")) is None:
        return "content or createdAt is invalid"
    targets = source.get("targets")
    if kind == "progress":
        if (
            not isinstance(targets, list)
            or not 1 <= len(targets) <= 8
            or len(set(targets)) != len(targets)
            or not all(isinstance(t, str) and js_trim(t) for t in targets)
        ):
            return "progress targets are invalid"
    elif "targets" in source:
        return "targets on a source that is not a progress source"
    return None


class Learning(Failing):
    """The learning-run writes of §5 over one ``MemoryStore``."""

    def __init__(self, store: MemoryStore) -> None:
        self.store = store

    async def _allowed(self, db: aiosqlite.Connection) -> None:
        row = await (
            await db.execute("SELECT value FROM metadata WHERE key='legacy_import'")
        ).fetchone()
        state = json.loads(row[0]).get("state") if row else "pending"
        if state in ("pending", "failed"):
            raise LearningFailure("unavailable", "legacy_import_failed")

    async def _claim_record(
        self,
        db: aiosqlite.Connection,
        source: dict[str, Any],
        claim: ClaimIn,
        method: str,
    ) -> dict[str, Any] | None:
        """The claim builder (§5.1 step 4.3): a new record, or None when it is dropped."""
        content = js_trim(redact(claim.content))
        terms = list(dict.fromkeys(claim.search_terms)) if claim.search_terms else None
        if (
            claim.kind not in ("fact", "preference", "decision", "project_state")
            or not 4 <= js_len(content) <= 800
            or "[REDACTED" in content
            or (terms is not None and search_terms_problem(terms) is not None)
        ):
            raise LearningFailure("invalid_output", "claim_shape")
        scope = source["scope"]
        record_id = fp(js_json([scope, claim.kind, content]))
        h = fp(content)
        exists = await (
            await db.execute(
                "SELECT 1 FROM memories WHERE id=? OR (scope=? AND hash=?) "
                "UNION SELECT 1 FROM blocked WHERE scope=? AND hash=?",
                (record_id, scope, h, scope, h),
            )
        ).fetchone()
        if exists is not None:
            return None
        record: dict[str, Any] = {
            "id": record_id,
            "kind": claim.kind,
            "content": content,
            "scope": scope,
            "sourceEntryId": source["id"],
            "createdAt": source["createdAt"],
            "updatedAt": source["createdAt"],
            "revision": 1,
            "layer": "durable",
            "status": "provisional",
            "evidence": {
                "basis": BASIS_BY_KIND[source["kind"]],
                "method": method,
                "sourceId": source["id"],
                "at": source["createdAt"],
            },
        }
        if terms:
            record["searchTerms"] = terms
        return record

    # ------------------------------------------------------------ capture

    async def capture(self, source: dict[str, Any]) -> bool:
        """§5.1: queue a source; summaries also yield locally extracted claims."""
        if _source_problem(source) is not None:
            raise Refused("Invalid memory source")
        created = parse_ms(source["createdAt"])
        assert created is not None
        source = {
            **source,
            "content": clip_bytes(redact(source["content"]), 32_000),
            "createdAt": iso(created),
        }
        async with self.store.transaction() as db:
            await self._allowed(db)
            if await (
                await db.execute("SELECT 1 FROM sources WHERE id=?", (source["id"],))
            ).fetchone():
                return False
            await db.execute(
                "INSERT INTO sources (id, data) VALUES (?, ?)", (source["id"], js_json(source))
            )
            records: list[dict[str, Any]] = []
            if source["kind"] == "summary":
                seen: set[str] = set()
                for claim in extract(source["content"], limit=16):
                    try:
                        record = await self._claim_record(
                            db, source, ClaimIn(claim.kind, claim.content), "local"
                        )
                    except LearningFailure:
                        raise Refused("Invalid or sensitive claim") from None
                    if record is not None and fp(record["content"]) not in seen:
                        seen.add(fp(record["content"]))
                        records.append(record)
            await self.store.write(db, "local", f"Capture {source['id']}", records, source["scope"])
            return True

    # ------------------------------------------------------------ begin

    async def _generation(self, db: aiosqlite.Connection, scope: str) -> int:
        # Closed on the way out: a cursor left part-read keeps its statement, and with
        # it a read snapshot, open on the connection after the transaction ends.
        async with db.execute(
            "SELECT rowid, data FROM events WHERE scope=? ORDER BY rowid DESC", (scope,)
        ) as cursor:
            async for rowid, raw in cursor:
                try:
                    if json.loads(raw).get("after"):
                        return int(rowid)
                except ValueError:
                    continue
        return 0

    async def begin(
        self,
        source_id: str,
        *,
        model: str | None = None,
        mode: str = "auto",
        timeout_ms: int = DEFAULT_TIMEOUT_MS,
        reserved_usd: float | None = None,
    ) -> Run | None:
        """§5.4: claim a job. Returns None when the source is not eligible."""
        async with self.store.transaction() as db:
            await self._allowed(db)
            now = int(self.store.now_ms())
            row = await (
                await db.execute(
                    "SELECT data, state, attempt, lease, failures, retry_at, last_error, "
                    "output_failures, calls, call_ms, call_models, corrections "
                    "FROM sources WHERE id=?",
                    (source_id,),
                )
            ).fetchone()
            if row is None:
                return None
            (raw, state, attempt, lease, failures, retry, last_error, output_failures,
             calls, call_ms, call_models, corrections) = row  # fmt: skip
            limits = self.store.policy.source_calls, self.store.policy.source_time_ms
            paused = is_paused(
                state, failures, output_failures, last_error, calls, call_ms, *limits
            )
            if mode == "manual":
                eligible = state in ("pending", "failed") or (state == "running" and lease <= now)
            else:
                eligible = state in ("pending", "failed") and not paused and retry <= now
            if not eligible:
                return None
            await db.execute("UPDATE sources SET last_checked=? WHERE id=?", (now, source_id))
            correct_output = (
                corrections == 0 and output_failures == 1 and last_error in OUTPUT_CODES
            )
            if model is not None:
                await db.execute(
                    "DELETE FROM model_calls WHERE at < ? AND outcome != 'running'",
                    (now - 86_400_000,),
                )
                await db.execute(
                    "INSERT INTO model_calls (source_id, attempt, model, provider, at, "
                    "reserved_usd) VALUES (?,?,?,?,?,?)",
                    (source_id, attempt + 1, model, model.split("/", 1)[0], now, reserved_usd),
                )
                models = union(json.loads(call_models), [model])
                await db.execute(
                    "UPDATE sources SET calls=calls+1, call_models=?, corrections=corrections+? "
                    "WHERE id=?",
                    (js_json(models), 1 if correct_output else 0, source_id),
                )
            await db.execute(
                "UPDATE sources SET state='running', attempt=attempt+1, lease=? WHERE id=?",
                (now + timeout_ms + LEASE_GRACE_MS, source_id),
            )
            source = json.loads(raw)
            generation = await self._generation(db, source["scope"])
            memories, candidates = await self._candidates(db, source)
            return Run(source, attempt + 1, generation, model, memories, candidates)

    async def _candidates(
        self, db: aiosqlite.Connection, source: dict[str, Any]
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """§5.3: the records the model may see and name for this source."""
        rows = await (
            await db.execute("SELECT data FROM memories WHERE scope=?", (source["scope"],))
        ).fetchall()
        scoped = [json.loads(r[0]) for r in rows]
        scoped = [r for r in scoped if r["status"] in ("provisional", "confirmed")]
        if source["kind"] == "progress":
            targets = set(source.get("targets") or ())
            scoped = [r for r in scoped if r["kind"] == "project_state" and r["id"] in targets]
        scoped.sort(key=lambda r: parse_ms(r["updatedAt"]) or 0.0, reverse=True)
        vocab = document_features(source["content"])
        created = parse_ms(source["createdAt"]) or 0.0

        def qualifies(record: dict[str, Any]) -> bool:
            if source["kind"] == "progress":
                return True
            words = document_features(record["content"])
            alias_words = document_features(" ".join(record.get("searchTerms") or ()))
            mention = max(
                len(words & vocab) / len(words) if words else 0.0,
                len(alias_words & vocab) / len(alias_words) if alias_words else 0.0,
            )
            return mention >= 0.4

        candidates = [
            r
            for r in scoped
            if qualifies(r)
            and r["layer"] != "pinned"
            and (parse_ms(r["updatedAt"]) or 0.0) <= created
        ][:32]
        memories = scoped[:32] + [c for c in candidates if c not in scoped[:32]]
        return memories, candidates

    # ------------------------------------------------------------ finish

    async def finish(
        self,
        run: Run,
        claims: list[ClaimIn],
        *,
        model: str,
        diagnostic: dict[str, Any] | None = None,
        charged_usd: float | None = None,
        input_tokens: int | None = None,
        output_tokens: int | None = None,
    ) -> str:
        """§5.5: apply a model's claims in one transaction, then mark the source done."""
        source = run.source
        sid = source["id"]
        basis = BASIS_BY_KIND[source["kind"]]
        created_ms = parse_ms(source["createdAt"]) or 0.0
        async with self.store.transaction() as db:
            row = await (
                await db.execute("SELECT state, attempt FROM sources WHERE id=?", (sid,))
            ).fetchone()
            if (
                row is None
                or row[0] != "running"
                or row[1] != run.attempt
                or await self._generation(db, source["scope"]) != run.generation
            ):
                raise LearningFailure("stale")
            st = await self._stage(db, run, claims, basis)
            staged, targets, reaffirmed, weaker = st.staged, st.targets, st.reaffirmed, st.weaker

            reason = f"{model}: {sid}"
            if weaker:
                reason += f"; weaker replacements withheld={weaker}"
            event_id = await self.store.write(
                db, "model", reason, list(staged.values()), source["scope"]
            )
            if source["kind"] != "progress":
                for cand in run.candidates:
                    if cand["kind"] == "project_state":
                        continue
                    if cand["id"] in targets and cand["id"] not in reaffirmed:
                        continue
                    await self._reinforce(db, cand["id"], created_ms)
            await db.execute(
                "UPDATE sources SET state='done', lease=0, failures=0, output_failures=0, "
                "retry_at=0, failed_at=0, last_error='', diagnostic=? WHERE id=?",
                (js_json(diagnostic or {}), sid),
            )
            await self.store.finish_call(
                db, sid, run.attempt, "done", "", charged_usd, input_tokens, output_tokens
            )
            return event_id

    async def _stage(
        self, db: aiosqlite.Connection, run: Run, claims: list[ClaimIn], basis: str
    ) -> Staged:
        """Each claim in turn, as pi stages it (§5.5): a new record, or a replacement of
        one it was shown (checked first: known, once, not pinned, not newer, same kind)."""
        st = Staged()
        shown = {c["id"]: c for c in run.candidates}
        for claim in claims:
            if claim.replaces is None:
                new = await self._claim_record(db, run.source, claim, "model")
                if new is not None and not any(
                    fp(s["content"]) == fp(new["content"])
                    and s["status"] in ("provisional", "confirmed")
                    for s in st.staged.values()
                ):
                    st.staged[new["id"]] = new
                elif new is None:
                    for existing in run.memories:
                        if existing["kind"] == claim.kind and fp(existing["content"]) == fp(
                            claim.content
                        ):
                            st.annotate(existing, claim.search_terms)
                continue
            old = shown.get(claim.replaces or "")
            await self._stage_replacement(db, run, claim, old, basis, st)
        return st

    async def _stage_replacement(
        self,
        db: aiosqlite.Connection,
        run: Run,
        claim: ClaimIn,
        old: dict[str, Any] | None,
        basis: str,
        st: Staged,
    ) -> None:
        """``claim`` replaces ``old``, the candidate it names (None: one it was not shown)."""
        source = run.source
        sid = source["id"]
        created_ms = parse_ms(source["createdAt"]) or 0.0
        if old is None:
            raise LearningFailure("invalid_output", "unknown_replaces")
        if old["id"] in st.targets:
            raise LearningFailure("invalid_output", "duplicate_replaces")
        if old["layer"] == "pinned":
            raise LearningFailure("write_rejected", "pinned_replaces")
        if (parse_ms(old["updatedAt"]) or 0.0) > created_ms:
            raise LearningFailure("write_rejected", "newer_replaces")
        st.targets.add(old["id"])
        if old["kind"] != claim.kind:
            raise LearningFailure("invalid_output", "replaces_kind")
        if fp(old["content"]) == fp(claim.content):
            st.reaffirmed.add(old["id"])
            if source["kind"] != "summary" and may_replace(old, basis):
                st.staged[old["id"]] = {
                    **old,
                    "sourceEntryId": sid,
                    "updatedAt": source["createdAt"],
                    "evidence": {
                        "basis": basis,
                        "method": "model",
                        "sourceId": sid,
                        "at": source["createdAt"],
                    },
                    "status": "provisional",
                    "revision": js_next(old["revision"]),
                }
            st.annotate(old, claim.search_terms)
            return
        new = await self._claim_record(db, source, claim, "model")
        if new is None:
            return
        if not may_replace(old, basis):
            await self.store.block(db, new, keep_source_id=sid)
            st.staged[new["id"]] = {**new, "status": "conflicted"}
            st.weaker += 1
            return
        await self.store.block(db, old, keep_source_id=sid)
        st.staged[old["id"]] = {
            **st.staged.get(old["id"], old),
            "status": "forgotten",
            "updatedAt": source["createdAt"],
            "revision": js_next(old["revision"]),
        }
        st.staged[new["id"]] = new

    async def _reinforce(self, db: aiosqlite.Connection, memory_id: str, stamp: float) -> None:
        """§5.6: move ``reinforcedAt`` forward; no event, nothing else changes."""
        row = await (
            await db.execute("SELECT data FROM memories WHERE id=?", (memory_id,))
        ).fetchone()
        if row is None:
            return
        record = json.loads(row[0])
        if record["status"] not in ("provisional", "confirmed") or record["layer"] == "pinned":
            return
        anchor = max(
            parse_ms(record["updatedAt"]) or 0.0, parse_ms(record.get("reinforcedAt")) or 0.0
        )
        if stamp <= anchor:
            return
        record["reinforcedAt"] = iso(stamp)
        await db.execute("UPDATE memories SET data=? WHERE id=?", (js_json(record), memory_id))
