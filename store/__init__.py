"""The async data layer over pi-memory-evolution's schema-7 SQLite store.

It never imports Textual or ``memevo_tui``: scripts and tests use it directly.
"""

from .clock import Clock, clock_from_env, fixed_clock, system_clock
from .curation import correction_refusal
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
from .model import (
    CorruptRow,
    Event,
    Evidence,
    Memory,
    MemoryLoad,
    ModelCall,
    Receipt,
    RouteHealth,
    Signal,
    Source,
    StoredMemory,
)
from .paths import default_db_path
from .quality import Quality
from .store import MemoryStore, check_store_file

__all__ = [
    "Busy",
    "CannotOpen",
    "Changed",
    "Clock",
    "Corrupt",
    "CorruptRow",
    "DiskFull",
    "Event",
    "Evidence",
    "IOFailure",
    "Memory",
    "MemoryLoad",
    "MemoryStore",
    "MissingStore",
    "ModelCall",
    "NotAStore",
    "NotInLog",
    "PermissionDenied",
    "Quality",
    "ReadOnly",
    "Receipt",
    "Refused",
    "Replaced",
    "RouteHealth",
    "Signal",
    "Source",
    "StoreError",
    "StoreFault",
    "StoredMemory",
    "UnsupportedSchema",
    "check_store_file",
    "clock_from_env",
    "correction_refusal",
    "default_db_path",
    "fixed_clock",
    "system_clock",
]
