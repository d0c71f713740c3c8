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
from .paths import default_db_path
from .records.model import (
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
from .records.quality import DAY_MS, POLICY, Quality, confirmed_ms, evidence_weight
from .records.rows import parse_event_row, parse_memory_row
from .store import MemoryStore, check_store_file
from .write.curation import UndoPlan, correction_refusal
from .write.redact import redact as redact_text

if TYPE_CHECKING:
    from .demo.demo import build_demo
    from .demo.demo_learner import learn_forever
    from .learning.status import QueueStatus, StatusReport, queue_status
    from .learning.status import status as status_report
    from .lifeline import die_with_parent
    from .past import timeline as timeline
    from .past.diff import Diff, diff
    from .past.events import UNLOGGED_JSON
    from .past.past import Past, PastLog
    from .past.timeline import Bucket, RunDay, Standing, activity, buckets, runs
    from .pi.folders import sessions_folder, sessions_root
    from .pi.prompts import Prompt, SessionPrompts, session_files, session_prompts
    from .pi.provenance import (
        NOT_STATED,
        Passage,
        Provenance,
        SourceLink,
        best_passage,
        searched_text,
    )
    from .pi.sessions import session_context
    from .pi.turns import RECALL_VERSION, Turn, injected_by, last_shown, replay_turns
    from .recall.features import ICU_AVAILABLE, MAX_QUERY_BYTES
    from .recall.index import RecallIndex
    from .recall.recall import (
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
    from .recall.wordcache import WordCache
    from .write.purge import MARKER as PURGED
    from .write.purge import purge_values
    from .write.purge import replaced as replace_secrets

_LAZY: dict[str, tuple[str, str | None]] = {
    "timeline": ("past.timeline", None),  # a module: the walk's standings in one pass
    "Bucket": ("past.timeline", "Bucket"),
    "Candidate": ("recall.recall", "Candidate"),
    "DIGEST_HEADER_BYTES": ("recall.recall", "DIGEST_HEADER_BYTES"),
    "DIGEST_MAX_BYTES": ("recall.recall", "DIGEST_MAX_BYTES"),
    "Diff": ("past.diff", "Diff"),
    "DigestLine": ("recall.recall", "DigestLine"),
    "ICU_AVAILABLE": ("recall.features", "ICU_AVAILABLE"),
    "MAX_QUERY_BYTES": ("recall.features", "MAX_QUERY_BYTES"),
    "NOT_STATED": ("pi.provenance", "NOT_STATED"),
    "Passage": ("pi.provenance", "Passage"),
    "Past": ("past.past", "Past"),
    "PastLog": ("past.past", "PastLog"),
    "Prompt": ("pi.prompts", "Prompt"),
    "Provenance": ("pi.provenance", "Provenance"),
    "Purpose": ("recall.recall", "Purpose"),
    "QueueStatus": ("learning.status", "QueueStatus"),
    "REASONS": ("recall.recall", "REASONS"),
    "RECALL_VERSION": ("pi.turns", "RECALL_VERSION"),
    "Recall": ("recall.recall", "Recall"),
    "RecallIndex": ("recall.index", "RecallIndex"),
    "RunDay": ("past.timeline", "RunDay"),
    "STATUS_REASONS": ("recall.recall", "STATUS_REASONS"),
    "SessionPrompts": ("pi.prompts", "SessionPrompts"),
    "SourceLink": ("pi.provenance", "SourceLink"),
    "Standing": ("past.timeline", "Standing"),
    "StatusReport": ("learning.status", "StatusReport"),
    "TOOL_NO_MATCH": ("recall.recall", "TOOL_NO_MATCH"),
    "Turn": ("pi.turns", "Turn"),
    "UNLOGGED_JSON": ("past.events", "UNLOGGED_JSON"),
    "WordCache": ("recall.wordcache", "WordCache"),
    "activity": ("past.timeline", "activity"),
    "best_passage": ("pi.provenance", "best_passage"),
    "buckets": ("past.timeline", "buckets"),
    "build_demo": ("demo.demo", "build_demo"),
    "die_with_parent": ("lifeline", "die_with_parent"),
    "diff": ("past.diff", "diff"),
    "digest": ("recall.recall", "digest"),
    "injected_by": ("pi.turns", "injected_by"),
    "label": ("recall.recall", "label"),
    "last_shown": ("pi.turns", "last_shown"),
    "learn_forever": ("demo.demo_learner", "learn_forever"),
    "queue_status": ("learning.status", "queue_status"),
    "replay_turns": ("pi.turns", "replay_turns"),
    "runs": ("past.timeline", "runs"),
    "searched_text": ("pi.provenance", "searched_text"),
    "session_context": ("pi.sessions", "session_context"),
    "session_files": ("pi.prompts", "session_files"),
    "session_prompts": ("pi.prompts", "session_prompts"),
    "sessions_root": ("pi.folders", "sessions_root"),
    "purge_values": ("write.purge", "purge_values"),
    "replace_secrets": ("write.purge", "replaced"),
    "PURGED": ("write.purge", "MARKER"),
    "sessions_folder": ("pi.folders", "sessions_folder"),
    "status_report": ("learning.status", "status"),
    "tool_matches": ("recall.recall", "tool_matches"),
    "tool_text": ("recall.recall", "tool_text"),
}
"""A name, its module under ``store`` and its name there: imported when first asked."""


def __getattr__(name: str) -> Any:
    where = _LAZY.get(name)
    if where is None:
        raise AttributeError(f"module 'store' has no attribute {name!r}")
    module = importlib.import_module(f".{where[0]}", __name__)
    value = module if where[1] is None else getattr(module, where[1])
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
