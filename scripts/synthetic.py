"""Build synthetic, valid schema-7 stores of any size for benchmarks."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path
from typing import Any

from store._js import fp, iso, js_json
from store.create import create_store

KINDS = ("fact", "preference", "decision", "project_state")
WORDS = (
    "postgres redis api port cache deploy staging terraform helm ingress worker queue "
    "pnpm vite docker compose grafana loki retention backup restore token rotation "
    "migration schema index shard replica latency budget alert pager runbook"
).split()
NOW_MS = 1_793_620_800_000  # 2026-11-01T12:00:00.000Z


TAIL = (
    "checkout invoice webhook stripe kyverno argo flux vault consul nomad envoy istio "
    "kafka rabbitmq celery sidekiq nginx caddy traefik sentry datadog honeycomb "
    "数据库 端口 部署 缓存 测试 版本 超时 记忆 会话 项目"
).split()


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
        record: dict[str, Any] = {
            "id": fp(js_json([scope, kind, content])),
            "kind": kind,
            "content": content,
            "scope": scope,
            "sourceEntryId": f"compact:s{i}:e",
            "createdAt": iso(created),
            "updatedAt": iso(min(updated, NOW_MS)),
            "revision": 1,
            "layer": "pinned" if i % 97 == 0 else "durable",
            "status": "forgotten" if i % 31 == 0 else "provisional",
            "evidence": {
                "basis": "summary",
                "method": "local",
                "sourceId": f"compact:s{i}:e",
                "at": iso(created),
            },
        }
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
