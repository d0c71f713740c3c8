"""Where pi keeps its memory store (STORE.md §1.1)."""

from __future__ import annotations

import os
from pathlib import Path

AGENT_DIR_ENV = "PI_CODING_AGENT_DIR"
RELATIVE_DB = Path("agent-suite") / "memory-evolution" / "memory.sqlite"


def agent_dir(environ: dict[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    value = env.get(AGENT_DIR_ENV, "")
    if value:
        if value == "~":
            return Path.home()
        if value.startswith("~/"):
            return Path.home() / value[2:]
        return Path(value)
    return Path.home() / ".pi" / "agent"


def default_db_path(environ: dict[str, str] | None = None) -> Path:
    return agent_dir(environ) / RELATIVE_DB
