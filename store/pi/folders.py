"""Where pi keeps its session files, as pi decides it (flag, variable, settings), and
how a memory's source id names its session and entry: the folders, never read here
beyond a listing (``sessions.py`` reads the files). No Textual.

pi keeps each session as JSONL under ``$PI_CODING_AGENT_DIR/sessions`` (default
``~/.pi/agent/sessions``), in a folder per working directory (``--`` + the cwd
without its leading ``/``, each ``/`` as ``-``, + ``--``), one file per session named
``<timestamp>_<session id>.jsonl``."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

SESSION_DIR_ENV = "PI_CODING_AGENT_SESSION_DIR"


def _tilde(path: str) -> str:
    """pi's ``expandTildePath``: ``~`` and ``~/…`` only."""
    if path == "~":
        return str(Path.home())
    return str(Path.home()) + path[1:] if path.startswith("~/") else path


def _agent_dir(env: Mapping[str, str]) -> Path:
    agent = env.get("PI_CODING_AGENT_DIR", "").strip()
    return Path(_tilde(agent)) if agent else Path.home() / ".pi" / "agent"


def _setting(path: Path) -> str | None:
    """``sessionDir`` of a pi settings file (None: not set, or the file unreadable)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    value = data.get("sessionDir") if isinstance(data, dict) else None
    return value if isinstance(value, str) and value else None


def sessions_folder(
    asked: str | None = None, environ: Mapping[str, str] | None = None, cwd: str | None = None
) -> tuple[Path, str]:
    """Where pi keeps its session files, and why, in pi's own precedence (its
    ``main.ts`` and ``settings-manager``): ``asked`` (``--sessions``, pi's
    ``--session-dir``), then ``$PI_CODING_AGENT_SESSION_DIR``, then ``sessionDir`` in the
    project's ``.pi/settings.json`` (``cwd``'s), then in pi's global ``settings.json``;
    else ``sessions`` under pi's agent folder, one subfolder per project. A custom
    folder holds every project's sessions flat."""
    env = os.environ if environ is None else environ
    if asked:
        return Path(_tilde(asked)), "--sessions"
    if value := env.get(SESSION_DIR_ENV, ""):
        return Path(_tilde(value)), f"${SESSION_DIR_ENV}"
    here = Path(os.getcwd() if cwd is None else cwd)
    agent = _agent_dir(env)
    for settings, named in ((here / ".pi" / "settings.json", "./.pi/settings.json"),
                            (agent / "settings.json", f"{agent}/settings.json")):  # fmt: skip
        if found := _setting(settings):
            return Path(_tilde(found)), f"sessionDir in {named}"
    return agent / "sessions", "pi's default"


def sessions_root(environ: Mapping[str, str] | None = None) -> Path:
    """Where pi keeps its session files (``sessions_folder``, nothing asked)."""
    return sessions_folder(None, environ)[0]


def cwd_folder(cwd: str) -> str:
    """The folder pi keeps a working directory's sessions in."""
    return "--" + cwd.lstrip("/").replace("/", "-") + "--"


@dataclass(frozen=True, slots=True)
class SourceRef:
    """What a source id says of where it was taken from."""

    kind: str
    session_id: str
    entry_id: str | None
    moment_ms: int | None


def parse_source_id(source_id: str) -> SourceRef | None:
    """The session and entry a source id names (None: not a session's source)."""
    parts = source_id.split(":")
    if len(parts) < 3 or parts[0] not in ("compact", "user", "progress") or not parts[1]:
        return None
    kind, session, third = parts[0], parts[1], parts[2]
    if kind == "compact":
        return SourceRef(kind, session, third, None)
    if third.isdigit() and len(third) >= 10:
        return SourceRef(kind, session, None, int(third))
    return SourceRef(kind, session, third, None)


def find_session(root: Path, session_id: str, cwd: str = "") -> Path | None:
    """The file of session ``session_id``: in ``cwd``'s folder first, then any."""
    if not session_id or "/" in session_id or session_id.startswith("."):
        return None
    suffix = f"_{session_id}.jsonl"
    folders = []
    if cwd:
        folders.append(root / cwd_folder(cwd))
    folders.append(root)  # a custom session folder: every project's sessions, flat
    try:
        folders += sorted(p for p in root.iterdir() if p.is_dir() and p not in folders)
    except OSError:
        pass
    for folder in folders:
        try:
            for name in sorted(os.listdir(folder)):
                if name.endswith(suffix):
                    return folder / name
        except OSError:
            continue
    return None
