"""Creating a fresh, empty schema-7 store exactly as upstream lays one out (§2.1)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from .errors import CannotOpen

_BASE = """
CREATE TABLE IF NOT EXISTS metadata (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS memories (id TEXT PRIMARY KEY, scope TEXT NOT NULL, hash TEXT NOT NULL, data TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS memories_scope_hash ON memories(scope,hash);
CREATE TABLE IF NOT EXISTS sources (id TEXT PRIMARY KEY, data TEXT NOT NULL, state TEXT NOT NULL DEFAULT 'pending', attempt INTEGER NOT NULL DEFAULT 0, lease INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS sources_scope_state ON sources(json_extract(data,'$.scope'),state);
CREATE TABLE IF NOT EXISTS events (id TEXT PRIMARY KEY, scope TEXT NOT NULL, data TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS events_scope ON events(scope);
CREATE INDEX IF NOT EXISTS events_scope_changes ON events(scope) WHERE json_array_length(json_extract(data,'$.after'))>0;
CREATE TABLE IF NOT EXISTS blocked (scope TEXT NOT NULL, hash TEXT NOT NULL, PRIMARY KEY(scope,hash));
"""  # noqa: E501

_MIGRATION = """
ALTER TABLE sources ADD COLUMN failures INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sources ADD COLUMN retry_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sources ADD COLUMN failed_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sources ADD COLUMN last_error TEXT NOT NULL DEFAULT '';
ALTER TABLE sources ADD COLUMN output_failures INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sources ADD COLUMN diagnostic TEXT NOT NULL DEFAULT '{}';
ALTER TABLE sources ADD COLUMN calls INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sources ADD COLUMN call_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sources ADD COLUMN call_models TEXT NOT NULL DEFAULT '[]';
ALTER TABLE sources ADD COLUMN last_checked INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sources ADD COLUMN corrections INTEGER NOT NULL DEFAULT 0;
CREATE TABLE IF NOT EXISTS model_calls (source_id TEXT NOT NULL, attempt INTEGER NOT NULL, model TEXT NOT NULL, at INTEGER NOT NULL,
  outcome TEXT NOT NULL DEFAULT 'running', finished_at INTEGER NOT NULL DEFAULT 0, PRIMARY KEY(source_id,attempt));
CREATE INDEX IF NOT EXISTS model_calls_window ON model_calls(model,at);
CREATE INDEX IF NOT EXISTS model_failures_window ON model_calls(model,finished_at) WHERE outcome='failed';
CREATE TABLE IF NOT EXISTS recovery_notices (id TEXT PRIMARY KEY, at INTEGER NOT NULL);
ALTER TABLE model_calls ADD COLUMN provider TEXT NOT NULL DEFAULT '';
ALTER TABLE model_calls ADD COLUMN code TEXT NOT NULL DEFAULT '';
ALTER TABLE model_calls ADD COLUMN reserved_usd REAL;
ALTER TABLE model_calls ADD COLUMN charged_usd REAL;
ALTER TABLE model_calls ADD COLUMN input_tokens INTEGER;
ALTER TABLE model_calls ADD COLUMN output_tokens INTEGER;
CREATE TABLE IF NOT EXISTS route_health (id TEXT PRIMARY KEY, until INTEGER NOT NULL, code TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS sources_recovery ON sources(state,retry_at);
CREATE INDEX IF NOT EXISTS sources_running_lease ON sources(lease) WHERE state='running';
CREATE TABLE IF NOT EXISTS feedback_receipts (source_id TEXT NOT NULL, memory_id TEXT NOT NULL, verdict TEXT NOT NULL, at INTEGER NOT NULL, PRIMARY KEY(source_id,memory_id));
CREATE INDEX IF NOT EXISTS feedback_recent ON feedback_receipts(memory_id,verdict,at);
INSERT INTO metadata VALUES ('legacy_import', '{"state":"not_found"}');
INSERT INTO metadata VALUES ('schema', '7') ON CONFLICT(key) DO UPDATE SET value=excluded.value;
"""  # noqa: E501


def create_store(path: str | os.PathLike[str]) -> Path:
    """Create a new, empty schema-7 store at ``path`` (which must not exist).

    The legacy import state is ``not_found``: there are no ledgers to import, so
    pi may learn into it at once. Used for the demo and for tests.
    """
    p = Path(path)
    p.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        fd = os.open(p, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:
        raise CannotOpen(f"{p} already exists; refusing to overwrite it") from None
    os.close(fd)
    con = sqlite3.connect(p, isolation_level=None)
    try:
        con.execute("PRAGMA busy_timeout=5000")
        con.execute("PRAGMA journal_mode=WAL")
        con.execute("PRAGMA synchronous=FULL")
        con.executescript(_BASE)
        con.executescript("BEGIN IMMEDIATE;" + _MIGRATION + "COMMIT;")
    finally:
        con.close()
    return p
