"""Build synthetic, valid schema-7 stores of any size for benchmarks."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path
from typing import Any

from store.create import create_store
from store.js import fp, iso, js_json

KINDS = ("fact", "preference", "decision", "project_state")
WORDS = (
    "postgres redis api port cache deploy staging terraform helm ingress worker queue "
    "pnpm vite docker compose grafana loki retention backup restore token rotation "
    "migration schema index shard replica latency budget alert pager runbook"
).split()
NOW_MS = 1_793_534_400_000  # 2026-11-01T12:00:00.000Z


TAIL = (
    "checkout invoice webhook stripe kyverno argo flux vault consul nomad envoy istio "
    "kafka rabbitmq celery sidekiq nginx caddy traefik sentry datadog honeycomb "
    "数据库 端口 部署 缓存 测试 版本 超时 记忆 会话 项目"
).split()


def new_record(
    i: int,
    kind: str,
    scope: str,
    content: str,
    created: float,
    updated: float,
    *,
    layer: str = "durable",
    status: str = "provisional",
) -> dict[str, Any]:
    """Record ``i`` as a capture writes it: revision 1, summary evidence from its source."""
    return {
        "id": fp(js_json([scope, kind, content])),
        "kind": kind,
        "content": content,
        "scope": scope,
        "sourceEntryId": f"compact:s{i}:e",
        "createdAt": iso(created),
        "updatedAt": iso(updated),
        "revision": 1,
        "layer": layer,
        "status": status,
        "evidence": {
            "basis": "summary",
            "method": "local",
            "sourceId": f"compact:s{i}:e",
            "at": iso(created),
        },
    }


def build_synthetic(path: Path, count: int, *, seed: int = 7, rich: bool = False) -> Path:
    """A store with ``count`` valid memories over 800 days in 8 origins.

    ``rich`` adds a long tail to the vocabulary (rarer words, file names, kebab
    identifiers, Chinese words, aliases) so recall's rarity and literal rules work.
    """
    rng = random.Random(seed)
    create_store(path)
    con = sqlite3.connect(path)
    rows = []
    for i in range(count):
        kind = KINDS[i % 4]
        scope = f"/home/dev/projects/p{i % 8}"
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 18)))
        content = f"Record {i}: {words}."
        if rich:
            tail = " ".join(rng.choice(TAIL) for _ in range(rng.randint(1, 4)))
            content = (
                f"Record {i}: {words} {tail}; see svc-{i % 400}-api and "
                f"src/mod{i % 250}/file{i % 1000}.ts."
            )
        created = NOW_MS - rng.randint(0, 800) * 86_400_000
        updated = created + rng.randint(0, 30) * 3_600_000
        record = new_record(
            i, kind, scope, content, created, min(updated, NOW_MS),
            layer="pinned" if i % 97 == 0 else "durable",
            status="forgotten" if i % 31 == 0 else "provisional",
        )  # fmt: skip
        if i % 5 == 0:
            record["reinforcedAt"] = iso(min(updated + 86_400_000 * 20, NOW_MS))
        if i % 7 == 0:
            record["searchTerms"] = [rng.choice(WORDS), rng.choice(WORDS) + "s"]
            if rich:
                record["searchTerms"].append(rng.choice(TAIL))
        if i % 11 == 0:
            record["feedback"] = {
                "utility": {"verdict": "useful", "sourceId": f"manual:{i}", "at": iso(updated)}
            }
        rows.append((record["id"], scope, fp(content), js_json(record)))
    con.executemany("INSERT OR IGNORE INTO memories VALUES (?,?,?,?)", rows)
    con.commit()
    con.close()
    return path


def build_with_history(path: Path, count: int, events: int, *, seed: int = 11) -> Path:
    """A store with ``count`` memories whose every change is an event, ``events`` in all:
    each record is created by one event, then changed (pinned, unpinned, marked useful,
    forgotten, given aliases) by the rest, at moments spread over 800 days. The current
    rows are each record's last version, so the log undoes exactly back to empty."""
    rng = random.Random(seed)
    create_store(path)
    changes = max(0, events - count)
    per = [0] * count
    for _ in range(changes):
        per[rng.randrange(count)] += 1
    log: list[tuple[float, int, dict[str, Any] | None, dict[str, Any]]] = []
    final: dict[str, dict[str, Any]] = {}
    for i in range(count):
        kind = KINDS[i % 4]
        scope = f"/home/dev/projects/p{i % 8}"
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 18)))
        content = f"Record {i}: {words}."
        created = NOW_MS - rng.randint(1, 800) * 86_400_000 + rng.randint(0, 86_399_999)
        record = new_record(i, kind, scope, content, created, created)
        log.append((created, i, None, record))
        moments = sorted(rng.uniform(created + 1, NOW_MS - 1) for _ in range(per[i]))
        for at in moments:
            before, record = record, dict(record)
            step = rng.randrange(4)
            if step == 0:
                record["layer"] = "durable" if record["layer"] == "pinned" else "pinned"
            elif step == 1:
                verdict = rng.choice(("useful", "unhelpful"))
                signal = {"verdict": verdict, "sourceId": f"manual:{i}", "at": iso(at)}
                record["feedback"] = {"utility": signal}
            elif step == 2:
                record["searchTerms"] = [rng.choice(WORDS), rng.choice(WORDS) + "s"]
            else:
                record["status"] = "forgotten" if record["status"] != "forgotten" else "confirmed"
            record["revision"] = before["revision"] + 1
            record["updatedAt"] = iso(at)
            log.append((at, i, before, record))
        final[record["id"]] = record
    log.sort(key=lambda e: e[0])
    con = sqlite3.connect(path)
    rows = []
    for n, (at, _, was, after) in enumerate(log):
        event_id = f"{n:08x}-0000-4000-8000-{n:012x}"
        data = {"id": event_id, "at": iso(at), "actor": "manual" if was else "local",
                "reason": "pin" if was else f"Capture compact:s{n}", "scope": after["scope"],
                "before": [was], "after": [after]}  # fmt: skip
        rows.append((event_id, after["scope"], js_json(data)))
    con.executemany("INSERT INTO events (id, scope, data) VALUES (?,?,?)", rows)
    con.executemany(
        "INSERT OR IGNORE INTO memories VALUES (?,?,?,?)",
        [(r["id"], r["scope"], fp(r["content"]), js_json(r)) for r in final.values()],
    )
    con.commit()
    con.close()
    return path
