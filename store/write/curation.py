"""The curation verbs (§4.3 to §4.9), each one ``BEGIN IMMEDIATE`` transaction with
upstream's refusals and messages."""

from __future__ import annotations

import json
import os
from typing import Any

import aiosqlite

from ..errors import Refused
from ..js import fp, js_json, js_len, js_next, js_trim, parse_ms, union
from ..records.model import VERDICTS, CorruptRow
from ..records.rows import parse_event_row
from ..records.validate import valid_identifier
from .purge import MARKER as PURGED
from .redact import redact
from .writer import Writer

UndoPlan = list[tuple[dict[str, Any], dict[str, Any]]]
"""(current record, record after the undo) pairs."""


def _without(record: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k != key}


class Curation(Writer):
    """pin, unpin, feedback, forget, correct, conflict, resolve, adopt and undo."""

    async def pin(self, memory_id: str, *, expected_revision: int | None = None) -> str:
        """§4.6: pin an active record."""
        async with self.transaction() as db:
            record = await self._require(db, memory_id, expected_revision)
            if record["status"] not in ("provisional", "confirmed"):
                raise Refused("Resolve/correct the memory first")
            new = {**record, "revision": js_next(record["revision"]), "layer": "pinned"}
            return await self.write(db, "manual", "pin", [new], record["scope"])

    async def unpin(self, memory_id: str, *, expected_revision: int | None = None) -> str:
        """§4.6: unpin (no status check)."""
        async with self.transaction() as db:
            record = await self._require(db, memory_id, expected_revision)
            new = {**record, "revision": js_next(record["revision"]), "layer": "durable"}
            return await self.write(db, "manual", "unpin", [new], record["scope"])

    async def feedback(
        self,
        memory_id: str,
        verdict: str,
        *,
        source_id: str | None = None,
        at: str | None = None,
        expected_revision: int | None = None,
    ) -> str | None:
        """§4.3. Returns the event id, or None when upstream accepts but changes nothing."""
        if verdict not in VERDICTS:
            raise Refused("Invalid feedback verdict")
        slot = "utility" if verdict in ("useful", "unhelpful") else "accuracy"
        sid = source_id if source_id is not None else f"manual:{self._new_id()}"
        when = at if at is not None else self.now_iso()
        when_ms = parse_ms(when)
        if not valid_identifier(sid) or when_ms is None:
            raise Refused("Invalid feedback source")
        signal = {"verdict": verdict, "sourceId": sid, "at": when}
        async with self.transaction() as db:
            record = await self._require(db, memory_id, expected_revision)
            receipt = await (
                await db.execute(
                    "SELECT 1 FROM feedback_receipts WHERE source_id=? AND memory_id=?",
                    (sid, memory_id),
                )
            ).fetchone()
            if receipt is not None:
                return None
            if record["status"] not in ("provisional", "confirmed"):
                raise Refused("Resolve/correct the memory first")
            pair = ("useful", "unhelpful") if slot == "utility" else ("accurate", "incorrect")
            row = await (
                await db.execute(
                    "SELECT max(at) FROM feedback_receipts WHERE memory_id=? AND verdict IN (?,?)",
                    (memory_id, *pair),
                )
            ).fetchone()
            last = row[0] if row else None
            await db.execute(
                "INSERT INTO feedback_receipts VALUES (?,?,?,?)",
                (sid, memory_id, verdict, int(when_ms)),
            )
            feedback = record.get("feedback") if isinstance(record.get("feedback"), dict) else {}
            current = feedback.get(slot) if feedback else None
            current_ms = parse_ms(current.get("at")) if isinstance(current, dict) else None
            if (
                when_ms < (parse_ms(record["updatedAt"]) or 0.0)
                or (last is not None and last > when_ms)
                or (current_ms is not None and current_ms > when_ms)
                or (isinstance(current, dict) and current.get("verdict") == verdict)
            ):
                return None
            new = {
                **record,
                "revision": js_next(record["revision"]),
                "feedback": {**(feedback or {}), slot: signal},
            }
            changes = [new]
            if verdict == "incorrect":
                await self.block(db, record)
                new["status"] = "conflicted"
                for dup in await self._same_hash(db, record):
                    if dup["status"] not in ("provisional", "confirmed"):
                        continue
                    await self.block(db, dup)
                    dup_feedback = (
                        dup.get("feedback") if isinstance(dup.get("feedback"), dict) else {}
                    )
                    changes.append(
                        {
                            **dup,
                            "revision": js_next(dup["revision"]),
                            "status": "conflicted",
                            "feedback": {**(dup_feedback or {}), "accuracy": signal},
                        }
                    )
            return await self.write(
                db, "manual", f"Feedback {verdict}: {sid}", changes, record["scope"]
            )

    async def _retire_text(
        self, db: aiosqlite.Connection, record: dict[str, Any], at: str
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """The correct/forget prologue (§4.4 step 4): block, suppress, forget duplicates."""
        await self.block(db, record)
        new = {
            **record,
            "revision": js_next(record["revision"]),
            "updatedAt": at,
            "suppressedHashes": union(record.get("suppressedHashes"), [fp(record["content"])]),
        }
        dups = [
            {**dup, "status": "forgotten", "updatedAt": at, "revision": js_next(dup["revision"])}
            for dup in await self._same_hash(db, record)
        ]
        return new, dups

    async def forget(self, memory_id: str, *, expected_revision: int | None = None) -> str:
        """§4.5: tombstone the record (any status, any layer) and its same-text twins."""
        async with self.transaction() as db:
            return await self.forget_in(db, memory_id, expected_revision)

    async def forget_in(
        self, db: aiosqlite.Connection, memory_id: str, expected_revision: int | None = None
    ) -> str:
        """``forget`` inside a transaction already begun (a purge's): its event's id."""
        record = await self._require(db, memory_id, expected_revision)
        new, dups = await self._retire_text(db, record, self.now_iso())
        new["status"] = "forgotten"
        return await self.write(db, "manual", "forget", [*dups, new], record["scope"])

    async def correct(
        self, memory_id: str, text: str, *, expected_revision: int | None = None
    ) -> str:
        """§4.4: replace the content; the record becomes a confirmed manual correction."""
        why = correction_refusal(text)
        if why is not None:
            raise Refused(why)
        content = js_trim(redact(text))
        async with self.transaction() as db:
            record = await self._require(db, memory_id, expected_revision)
            at = self.now_iso()
            new, dups = await self._retire_text(db, record, at)
            new.pop("searchTerms", None)
            new.pop("feedback", None)
            new["content"] = content
            new["status"] = "confirmed"
            new["evidence"] = {
                "basis": "manual_correction",
                "method": "manual",
                "sourceId": f"manual:{self._new_id()}",
                "at": at,
            }
            return await self.write(db, "manual", "correct", [*dups, new], record["scope"])

    async def conflict(
        self, memory_id: str, other_id: str, *, expected_revision: int | None = None
    ) -> str:
        """§4.7: quarantine two contradicting active records of one scope."""
        async with self.transaction() as db:
            record = await self._require(db, memory_id, expected_revision)
            other = await self._load(db, other_id)
            active = ("provisional", "confirmed")
            if (
                other is None
                or other["id"] == record["id"]
                or other["scope"] != record["scope"]
                or record["status"] not in active
                or other["status"] not in active
            ):
                raise Refused("Conflict needs two active memories in the same scope")
            await self.block(db, record)
            await self.block(db, other)
            changes = [
                {**other, "revision": js_next(other["revision"]), "status": "conflicted"},
                {**record, "revision": js_next(record["revision"]), "status": "conflicted"},
            ]
            return await self.write(db, "manual", "conflict", changes, record["scope"])

    async def resolve(self, memory_id: str, *, expected_revision: int | None = None) -> str:
        """§4.8: keep a conflicted record as confirmed and accurate."""
        async with self.transaction() as db:
            record = await self._require(db, memory_id, expected_revision)
            if record["status"] != "conflicted":
                raise Refused("Memory is not conflicted")
            at = self.now_iso()
            feedback = record.get("feedback") if isinstance(record.get("feedback"), dict) else {}
            signal = {"verdict": "accurate", "at": at, "sourceId": f"manual:{self._new_id()}"}
            new = {
                **record,
                "revision": js_next(record["revision"]),
                "status": "confirmed",
                "feedback": {**(feedback or {}), "accuracy": signal},
            }
            return await self.write(db, "manual", "resolve", [new], record["scope"])

    async def adopt(
        self, memory_id: str, origin: str, *, expected_revision: int | None = None
    ) -> str:
        """§4.8: attach an unscoped legacy record to an origin (an absolute path)."""
        async with self.transaction() as db:
            record = await self._require(db, memory_id, expected_revision)
            if record["scope"] != "legacy" or not origin.strip():
                raise Refused("Only unscoped legacy memories can be adopted")
            scope = os.path.abspath(origin)
            new = {**record, "revision": js_next(record["revision"]), "scope": scope}
            return await self.write(db, "manual", "adopt", [new], scope)

    async def undo_preview(self, event_id: str) -> UndoPlan:
        """What ``undo`` would write, as (current, restored) pairs, or the refusal it raises."""
        async with self._reading() as db:
            return await self._undo_plan(db, event_id)

    async def _undo_plan(self, db: aiosqlite.Connection, event_id: str) -> UndoPlan:
        row = await (
            await db.execute("SELECT rowid, id, scope, data FROM events WHERE id=?", (event_id,))
        ).fetchone()
        if row is None:
            raise Refused("Unknown event id")
        event = parse_event_row(row[0], row[1], row[2], row[3])
        if isinstance(event, CorruptRow):
            raise Refused("Invalid history record")
        if not event.after:
            raise Refused("Event has no memory changes")
        plan: UndoPlan = []
        for before, after in zip(event.before, event.after, strict=True):
            current = await self._load(db, after["id"])
            if current is None or js_json(_without(current, "reinforcedAt")) != js_json(
                _without(after, "reinforcedAt")
            ):
                raise Refused("Memory changed since this event; undo refused")
            base = dict(before) if before is not None else {**after, "status": "forgotten"}
            base["revision"] = js_next(after["revision"])
            if "reinforcedAt" in current:
                base["reinforcedAt"] = current["reinforcedAt"]
            base["suppressedHashes"] = union(
                before.get("suppressedHashes") if before is not None else None,
                after.get("suppressedHashes"),
                [fp(after["content"])],
            )
            plan.append((current, base))
        return plan

    async def undo(self, event_id: str) -> str:
        """§4.9: restore what an event changed, if nothing changed since. An event a purge
        rewrote is refused: what it would restore is no longer what was there."""
        async with self.transaction() as db:
            plan = await self._undo_plan(db, event_id)
            row = await (
                await db.execute("SELECT scope, data FROM events WHERE id=?", (event_id,))
            ).fetchone()
            assert row is not None
            if PURGED in str(row[1]):
                raise Refused(
                    "A secret was purged from this event: undoing it cannot restore "
                    "what was there, and would never restore the secret"
                )
            event = json.loads(row[1])
            for after in event["after"]:
                await self.block(db, after)
            restored = [r for _, r in plan]
            return await self.write(db, "manual", f"Undo {event_id}", restored, str(row[0]))


def correction_refusal(text: str) -> str | None:
    """Upstream's refusal of ``text`` as a correction (§4.4), in its words; None: taken."""
    content = js_trim(redact(text))
    if not 4 <= js_len(content) <= 800 or "[REDACTED" in content:
        return "Correction must be 4\u2013800 characters without credentials"
    return None
