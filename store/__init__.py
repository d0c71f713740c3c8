"""The async data layer over pi-memory-evolution's schema-7 SQLite store.

It never imports Textual or ``memevo_tui``: scripts and tests use it directly. This
package is its one public face: the dashboard imports names from ``store`` and nothing
under it (``tests/test_layers.py`` checks it). What the first screen needs is imported
with the package; recall, the past, the timeline, provenance, pi's sessions and the
turns load when a name of theirs is first asked for (``__getattr__``), so start-up
never pays for them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .clock import Clock, clock_from_env, fixed_clock, system_clock
from .curation import UndoPlan, correction_refusal
from .errors import (
    Busy,
    CannotOpen,
    Changed,
    Corrupt,
    DiskFull,
    IOFailure,
    MissingStore,
    NotAStore,
    NotInLog,
    PermissionDenied,
    ReadOnly,
    Refused,
    Replaced,
    StoreError,
    StoreFault,
    UnsupportedSchema,
)
from .identity import FileIdentity
from .js import (
    LONE_SURROGATE,
    clip_bytes,
    fp,
    iso,
    js_json,
    js_len,
    js_number_text,
    js_trim,
    parse_ms,
    utf8_len,
)
from .model import (
    ACTORS,
    FAILURE_CODES,
    STATUSES,
    TOOL_QUERY_MAX,
    CorruptRow,
    Event,
    Evidence,
    Memory,
    MemoryLoad,
    ModelCall,
    Receipt,
    RouteHealth,
    Signal,
    Snapshot,
    Source,
    StoredMemory,
    retimed,
)
from .paths import default_db_path
from .quality import DAY_MS, POLICY, Quality, confirmed_ms, evidence_weight
from .redact import redact as redact_text
from .rows import parse_event_row, parse_memory_row
from .store import MemoryStore, check_store_file

if TYPE_CHECKING:
    from .demo import build_demo
    from .demo_learner import learn_forever
    from .features import ICU_AVAILABLE, MAX_QUERY_BYTES
    from .index import RecallIndex
    from .lifeline import die_with_parent
    from .past import UNLOGGED_JSON, Diff, Past, PastLog, diff
    from .provenance import NOT_STATED, Passage, Provenance, SourceLink, best_passage, searched_text
    from .purge import MARKER as PURGED
    from .purge import purge_values
    from .purge import replaced as replace_secrets
    from .recall import (
        DIGEST_HEADER_BYTES,
        DIGEST_MAX_BYTES,
        REASONS,
        STATUS_REASONS,
        TOOL_NO_MATCH,
        Candidate,
        DigestLine,
        Purpose,
        Recall,
        digest,
        label,
        tool_matches,
        tool_text,
    )
    from .sessions import session_context, sessions_folder, sessions_root
    from .status import QueueStatus, StatusReport, queue_status
    from .status import status as status_report
    from .timeline import Bucket, RunDay, Standing, activity, buckets, runs
    from .turns import (
        RECALL_VERSION,
        Prompt,
        SessionPrompts,
        Turn,
        injected_by,
        last_shown,
        replay_turns,
        session_files,
        session_prompts,
    )
    from .wordcache import WordCache

_LAZY: dict[str, tuple[str, str]] = {
    "Bucket": ("timeline", "Bucket"),
    "Candidate": ("recall", "Candidate"),
    "DIGEST_HEADER_BYTES": ("recall", "DIGEST_HEADER_BYTES"),
    "DIGEST_MAX_BYTES": ("recall", "DIGEST_MAX_BYTES"),
    "Diff": ("past", "Diff"),
    "DigestLine": ("recall", "DigestLine"),
    "ICU_AVAILABLE": ("features", "ICU_AVAILABLE"),
    "MAX_QUERY_BYTES": ("features", "MAX_QUERY_BYTES"),
    "NOT_STATED": ("provenance", "NOT_STATED"),
    "Passage": ("provenance", "Passage"),
    "Past": ("past", "Past"),
    "PastLog": ("past", "PastLog"),
    "Prompt": ("turns", "Prompt"),
    "Provenance": ("provenance", "Provenance"),
    "Purpose": ("recall", "Purpose"),
    "QueueStatus": ("status", "QueueStatus"),
    "REASONS": ("recall", "REASONS"),
    "RECALL_VERSION": ("turns", "RECALL_VERSION"),
    "Recall": ("recall", "Recall"),
    "RecallIndex": ("index", "RecallIndex"),
    "RunDay": ("timeline", "RunDay"),
    "STATUS_REASONS": ("recall", "STATUS_REASONS"),
    "SessionPrompts": ("turns", "SessionPrompts"),
    "SourceLink": ("provenance", "SourceLink"),
    "Standing": ("timeline", "Standing"),
    "StatusReport": ("status", "StatusReport"),
    "TOOL_NO_MATCH": ("recall", "TOOL_NO_MATCH"),
    "Turn": ("turns", "Turn"),
    "UNLOGGED_JSON": ("past", "UNLOGGED_JSON"),
    "WordCache": ("wordcache", "WordCache"),
    "activity": ("timeline", "activity"),
    "best_passage": ("provenance", "best_passage"),
    "buckets": ("timeline", "buckets"),
    "build_demo": ("demo", "build_demo"),
    "die_with_parent": ("lifeline", "die_with_parent"),
    "diff": ("past", "diff"),
    "digest": ("recall", "digest"),
    "injected_by": ("turns", "injected_by"),
    "label": ("recall", "label"),
    "last_shown": ("turns", "last_shown"),
    "learn_forever": ("demo_learner", "learn_forever"),
    "queue_status": ("status", "queue_status"),
    "replay_turns": ("turns", "replay_turns"),
    "runs": ("timeline", "runs"),
    "searched_text": ("provenance", "searched_text"),
    "session_context": ("sessions", "session_context"),
    "session_files": ("turns", "session_files"),
    "session_prompts": ("turns", "session_prompts"),
    "sessions_root": ("sessions", "sessions_root"),
    "purge_values": ("purge", "purge_values"),
    "replace_secrets": ("purge", "replaced"),
    "PURGED": ("purge", "MARKER"),
    "sessions_folder": ("sessions", "sessions_folder"),
    "status_report": ("status", "status"),
    "tool_matches": ("recall", "tool_matches"),
    "tool_text": ("recall", "tool_text"),
}
"""A name, its module under ``store`` and its name there: imported when first asked."""


def __getattr__(name: str) -> Any:
    where = _LAZY.get(name)
    if where is None:
        raise AttributeError(f"module 'store' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{where[0]}", __name__), where[1])
    globals()[name] = value
    return value


__all__ = [
    "ACTORS",
    "DAY_MS",
    "DIGEST_HEADER_BYTES",
    "DIGEST_MAX_BYTES",
    "FAILURE_CODES",
    "ICU_AVAILABLE",
    "LONE_SURROGATE",
    "MAX_QUERY_BYTES",
    "NOT_STATED",
    "POLICY",
    "PURGED",
    "REASONS",
    "RECALL_VERSION",
    "STATUSES",
    "STATUS_REASONS",
    "TOOL_NO_MATCH",
    "TOOL_QUERY_MAX",
    "UNLOGGED_JSON",
    "Bucket",
    "Busy",
    "Candidate",
    "CannotOpen",
    "Changed",
    "Clock",
    "Corrupt",
    "CorruptRow",
    "Diff",
    "DigestLine",
    "DiskFull",
    "Event",
    "Evidence",
    "FileIdentity",
    "IOFailure",
    "Memory",
    "MemoryLoad",
    "MemoryStore",
    "MissingStore",
    "ModelCall",
    "NotAStore",
    "NotInLog",
    "Passage",
    "Past",
    "PastLog",
    "PermissionDenied",
    "Prompt",
    "Provenance",
    "Purpose",
    "Quality",
    "QueueStatus",
    "ReadOnly",
    "Recall",
    "RecallIndex",
    "Receipt",
    "Refused",
    "Replaced",
    "RouteHealth",
    "RunDay",
    "SessionPrompts",
    "Signal",
    "Snapshot",
    "Source",
    "SourceLink",
    "Standing",
    "StatusReport",
    "StoreError",
    "StoreFault",
    "StoredMemory",
    "Turn",
    "UndoPlan",
    "UnsupportedSchema",
    "WordCache",
    "activity",
    "best_passage",
    "buckets",
    "build_demo",
    "check_store_file",
    "clip_bytes",
    "clock_from_env",
    "confirmed_ms",
    "correction_refusal",
    "default_db_path",
    "die_with_parent",
    "diff",
    "digest",
    "evidence_weight",
    "fixed_clock",
    "fp",
    "injected_by",
    "iso",
    "js_json",
    "js_len",
    "js_number_text",
    "js_trim",
    "label",
    "last_shown",
    "learn_forever",
    "parse_event_row",
    "parse_memory_row",
    "parse_ms",
    "purge_values",
    "queue_status",
    "redact_text",
    "replace_secrets",
    "replay_turns",
    "retimed",
    "runs",
    "searched_text",
    "session_context",
    "session_files",
    "session_prompts",
    "sessions_folder",
    "sessions_root",
    "status_report",
    "system_clock",
    "tool_matches",
    "tool_text",
    "utf8_len",
]
