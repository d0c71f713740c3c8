"""Command-line verbs: a scriptable mirror of pi's ``/memory`` command.

Exit codes: 0 done, 1 refused by the store's rules, 2 could not run.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
from collections.abc import Awaitable, Callable
from typing import Any, TextIO

from store import CorruptRow, Event, Memory, MemoryStore, Refused, StoreError
from store._js import iso, parse_ms
from store.features import ICU_AVAILABLE
from store.recall import REASONS, STATUS_REASONS, Candidate, Recall, RecallIndex
from store.status import status as status_report

from .text import iso_day, one_line, safe_json, visible

EXIT_OK, EXIT_REFUSED, EXIT_CANNOT_RUN = 0, 1, 2
VERBS = (
    "list",
    "show",
    "search",
    "recall",
    "history",
    "status",
    "pin",
    "unpin",
    "feedback",
    "forget",
    "correct",
    "conflict",
    "resolve",
    "adopt",
    "undo",
)
WRITE_VERBS = frozenset(
    ("pin", "unpin", "feedback", "forget", "correct", "conflict", "resolve", "adopt", "undo")
)


def add_verbs(parser: argparse.ArgumentParser, common: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="verb", metavar="VERB")

    def verb(name: str, help_: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=help_, description=help_, parents=[common])

    def as_of(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--as-of",
            metavar="WHEN",
            help="show the store as of another moment: a date (2026-12-15), an instant, or "
            "an offset (+30d, -1w); decay and dormancy are computed for it",
        )

    p = verb("list", "list memories (not forgotten or conflicted), newest evidence first")
    as_of(p)
    p.add_argument("--all", action="store_true", help="include forgotten and conflicted records")
    p.add_argument("--dormant", action="store_true", help="only dormant records")
    p = verb("show", "one memory with its quality")
    p.add_argument("id")
    as_of(p)
    p = verb("search", "search as pi's /memory search does (dormant records included)")
    p.add_argument("query", nargs="+")
    as_of(p)
    p.add_argument("--limit", type=_limit, default=10, help="at most N records (default 10)")
    p = verb(
        "recall",
        "what pi would inject for a prompt (dormant excluded), and why the rest was left out",
    )
    p.add_argument("query", nargs="+")
    as_of(p)
    p.add_argument("--limit", type=_limit, default=10, help="at most N records (default 10)")
    p = verb("history", "events, newest first (all, or one memory's)")
    p.add_argument("id", nargs="?")
    p.add_argument("--limit", type=int, default=10)
    as_of(verb("status", "store and learning-queue figures"))
    for name, what in (
        ("pin", "pin an active memory"),
        ("unpin", "unpin a memory"),
        ("forget", "forget a memory (it stays in history)"),
        ("resolve", "resolve a conflicted memory as confirmed"),
    ):
        verb(name, what).add_argument("id")
    p = verb("feedback", "record a verdict on a memory")
    p.add_argument("id")
    p.add_argument("verdict", choices=("useful", "unhelpful", "accurate", "incorrect"))
    p = verb("correct", "replace a memory's text (it becomes a confirmed manual correction)")
    p.add_argument("id")
    p.add_argument("text", nargs="+")
    p = verb("conflict", "mark two active memories of one origin as contradicting")
    p.add_argument("id")
    p.add_argument("other_id")
    p = verb("adopt", "attach an unscoped legacy memory to an origin")
    p.add_argument("id")
    p.add_argument("origin")
    verb("undo", "undo an event, if nothing changed since").add_argument("event_id")


def _limit(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return value


def record_json(memory: Memory) -> dict[str, Any]:
    return {"memory": memory.data, "quality": memory.quality.as_json()}


def _print_table(memories: list[Memory], out: TextIO) -> None:
    width = shutil.get_terminal_size((120, 24)).columns
    head = f"{'ID':<24} {'KIND':<13} {'STATUS':<11} {'STATE':<9} {'UPDATED':<10} "
    out.write(head + "CONTENT\n")
    for m in memories:
        pin = "*" if m.pinned else " "
        row = (
            f"{one_line(m.id, 24):<24} {m.kind:<13} {m.status:<11} {m.state:<9} "
            f"{iso_day(m.updated_at):<10}{pin}"
        )
        out.write(row + one_line(m.content, max(20, width - len(row) - 1)) + "\n")
    out.write(f"{len(memories)} record(s)\n")


def _print_memory(m: Memory, out: TextIO) -> None:
    q = m.quality
    lines = [
        ("id", m.id),
        ("kind", m.kind),
        ("status", m.status),
        ("layer", m.layer),
        ("state", m.state),
        ("origin", m.scope),
        ("revision", str(m.revision)),
        ("created", m.created_at),
        ("updated", m.updated_at),
        ("confirmed", q.confirmed_at),
        ("evidence", f"{q.basis}/{q.method}"),
        ("evidence from", m.evidence.source_id if m.evidence else "-"),
        ("freshness", f"{q.freshness:.3f}  (age {q.age_days:.1f} days)"),
        ("factor", f"{q.factor:.4f} = freshness × evidence {q.evidence_weight:.2f} × "
                   f"utility {q.utility:g} × accuracy {q.accuracy:g}"),
        ("utility", m.utility.verdict if m.utility else "-"),
        ("accuracy", m.accuracy.verdict if m.accuracy else "-"),
        ("search terms", ", ".join(m.search_terms) or "-"),
        ("suppressed", str(len(m.suppressed_hashes))),
    ]  # fmt: skip
    for key, value in lines:
        out.write(f"{key:>13}: {one_line(value)}\n")
    out.write(f"{'content':>13}:\n{visible(m.content, keep_newlines=True)}\n")


def recall_json(result: Recall) -> dict[str, Any]:
    """``{"selected": [...records with score and rankScore...], "excluded": [{id, reason}]}``."""
    return {
        "selected": [
            {**record_json(c.memory), "score": c.score, "rankScore": c.rank_score}
            for c in result.selected
        ],
        "excluded": [{"id": c.memory.id, "reason": c.reason} for c in result.left_out],
    }


def _print_recall(result: Recall, out: TextIO) -> None:
    width = shutil.get_terminal_size((120, 24)).columns
    plan = result.plan
    out.write(
        f"plan: {plan.mode}; query words: {', '.join(result.query) or '-'}; "
        f"{result.eligible} eligible, {result.excluded} excluded by status\n"
    )

    def line(c: Candidate, lead: str) -> str:
        row = (
            f"{lead:<4}{one_line(c.memory.id, 24):<24} {c.score:7.3f} {c.factor:6.3f} "
            f"{c.rank_score:7.3f}  "
        )
        return row + one_line(c.memory.content, max(20, width - len(row) - 1))

    out.write(f"{'#':<4}{'ID':<24} {'SCORE':>7} {'FACTOR':>6} {'RANK':>7}  CONTENT\n")
    for n, c in enumerate(result.selected, 1):
        out.write(line(c, str(n)) + "\n")
    if not result.selected:
        out.write("nothing would be injected\n")
    if not ICU_AVAILABLE:
        out.write("note: PyICU is not installed; words are split differently from pi\n")
    if result.left_out:
        out.write(f"left out ({len(result.left_out)}):\n")
        for c in result.left_out:
            reason = c.reason or ""
            out.write(line(c, "-") + "\n")
            why = f"    {reason}: {REASONS.get(reason, reason)}"
            if reason in STATUS_REASONS:
                why += f" (otherwise: {c.would_fail or 'it passes every gate'})"
            out.write(why + "\n")


def list_order(memories: list[Memory]) -> list[Memory]:
    """pi's list order: evidence date descending, then id."""
    by_id = sorted(memories, key=lambda m: m.id)
    return sorted(by_id, key=lambda m: -(parse_ms(m.updated_at) or 0.0))


def _event_line(e: Event | CorruptRow) -> str:
    if isinstance(e, CorruptRow):
        return f"{one_line(e.id)} CORRUPT: {e.reason}"
    return (
        f"{e.id} {e.at} [{one_line(e.scope, 60)}] {e.actor}: {one_line(e.reason, 90)} "
        f"({len(e.after)} changes)"
    )


async def run_verb(store: MemoryStore, args: argparse.Namespace, out: TextIO) -> int:
    as_json: bool = args.json
    verb: str = args.verb

    def emit(value: Any) -> None:
        out.write(safe_json(value) + "\n")

    if verb in ("list", "search", "recall"):
        load = await store.load_memories()
        if load.corrupt:
            sys.stderr.write(f"memevo-tui: {len(load.corrupt)} corrupt row(s) left out\n")
        if verb == "recall":
            result = RecallIndex(load.memories).recall(
                " ".join(args.query), purpose="inject", limit=args.limit, explain=None
            )
            if as_json:
                emit(recall_json(result))
            else:
                _print_recall(result, out)
            return EXIT_OK
        if verb == "list":
            rows = [m for m in load.memories if args.all or m.active]
            if args.dormant:
                rows = [m for m in rows if m.quality.dormant]
            rows = list_order(rows)
        else:
            query = " ".join(args.query)
            rows = RecallIndex(load.memories).recall(query, limit=args.limit).memories
        if as_json:
            emit([record_json(m) for m in rows])
        else:
            _print_table(rows, out)
        return EXIT_OK
    if verb == "show":
        m = await store.memory(args.id)
        if as_json:
            emit(record_json(m))
        else:
            _print_memory(m, out)
        return EXIT_OK
    if verb == "history":
        events = await store.events(memory_id=args.id, limit=args.limit)
        if as_json:
            emit([e.data if isinstance(e, Event) else {"corrupt": e.id, "reason": e.reason}
                  for e in events])  # fmt: skip
        else:
            for e in events:
                out.write(_event_line(e) + "\n")
        return EXIT_OK
    if verb == "status":
        r = await status_report(store)
        if as_json:
            emit(
                {
                    "memories": r.memory_rows,
                    "byStatus": r.memories_by_status,
                    "sources": r.queue.sources_by_state,
                    "schema": r.schema,
                    "legacyImport": r.legacy_import,
                    "retrying": r.queue.retrying,
                    "paused": r.queue.paused,
                    "failureClasses": r.queue.failure_classes,
                    "callsLastHour": r.queue.calls_last_hour,
                    "callsLast24h": r.queue.calls_last_24h,
                    "usdLast24h": round(r.queue.usd_last_24h, 4),
                    "unknownCostCalls": r.queue.unknown_cost_calls,
                    "inputTokens24h": r.queue.input_tokens_24h,
                    "outputTokens24h": r.queue.output_tokens_24h,
                    "coolingRoutes": [list(c) for c in r.queue.cooling_routes],
                    "problems": list(r.problems),
                }
            )
        else:
            states = (
                ", ".join(f"{k}={v}" for k, v in r.queue.sources_by_state.items()) or "no sources"
            )
            out.write(f"{r.memory_rows} memories; {states}; schema {r.schema}\n")
            out.write(f"Legacy import: {r.legacy_import}\n")
            out.write(f"Recovery: retrying={r.queue.retrying} paused={r.queue.paused}\n")
            for s in r.queue.failing:
                out.write(f"  {one_line(s.id, 80)}: {s.last_error or 'unknown'}; "
                          f"attempts={s.attempt}; failures={s.failures}/5\n")  # fmt: skip
            out.write(
                f"Shared calls/hour={r.queue.calls_last_hour}/{r.queue.calls_per_hour_limit} "
                f"last24h={r.queue.calls_last_24h} USD={r.queue.usd_last_24h:.4f} "
                f"unknown-cost calls={r.queue.unknown_cost_calls} tokens in/out="
                f"{r.queue.input_tokens_24h}/{r.queue.output_tokens_24h}\n"
            )
            for route, code, until in r.queue.cooling_routes:
                out.write(f"  {one_line(route)}: {code}; availableAfter={iso(until)}\n")
            for problem in r.problems:
                out.write(f"PROBLEM: {one_line(problem)}\n")
        return EXIT_OK
    return await _write_verb(store, args, out, emit)


async def _write_verb(
    store: MemoryStore, args: argparse.Namespace, out: TextIO, emit: Callable[[Any], None]
) -> int:
    verb: str = args.verb
    await store.check()  # never write into a damaged file: it could spread the damage
    actions: dict[str, Callable[[], Awaitable[str | None]]] = {
        "pin": lambda: store.pin(args.id),
        "unpin": lambda: store.unpin(args.id),
        "forget": lambda: store.forget(args.id),
        "resolve": lambda: store.resolve(args.id),
        "feedback": lambda: store.feedback(args.id, args.verdict),
        "correct": lambda: store.correct(args.id, " ".join(args.text)),
        "conflict": lambda: store.conflict(args.id, args.other_id),
        "adopt": lambda: store.adopt(args.id, args.origin),
        "undo": lambda: store.undo(args.event_id),
    }
    event_id = await actions[verb]()
    if args.json:
        emit({"event": event_id})
    elif event_id is None:
        out.write("Feedback unchanged (nothing to record)\n")
    else:
        label = "Undo recorded" if verb == "undo" else "Update recorded"
        out.write(f"{label}: {event_id}\n")
    return EXIT_OK


def execute(store_opener: Callable[[], Awaitable[MemoryStore]], args: argparse.Namespace) -> int:
    """Open the store, run one verb, and map errors to exit codes."""
    out = sys.stdout

    def fail(message: str, code: int) -> int:
        if args.json:
            out.write(safe_json({"error": message}) + "\n")
        else:
            sys.stderr.write(f"memevo-tui: {one_line(message)}\n")
        return code

    async def main() -> int:
        try:
            store = await store_opener()
        except StoreError as exc:
            return fail(str(exc), EXIT_CANNOT_RUN)
        try:
            return await run_verb(store, args, out)
        except Refused as exc:
            return fail(str(exc), EXIT_REFUSED)
        except StoreError as exc:  # read-only, busy, corrupt, disk full: could not run
            return fail(str(exc), EXIT_CANNOT_RUN)
        finally:
            await store.close()

    return asyncio.run(main())
