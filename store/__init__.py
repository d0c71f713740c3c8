"""The async data layer over pi-memory-evolution's schema-7 SQLite store.

It never imports Textual or ``memevo_tui``: scripts and tests use it directly.
"""

from .clock import Clock, clock_from_env, fixed_clock, system_clock
from .errors import (
    Busy,
    CannotOpen,
    Changed,
    MissingStore,
    ReadOnly,
    Refused,
    StoreError,
    UnsupportedSchema,
)
from .model import (
    CorruptRow,
    Event,
    Evidence,
    Memory,
    MemoryLoad,
    ModelCall,
    Quality,
    Receipt,
    RouteHealth,
    Signal,
    Source,
)
from .paths import default_db_path
from .store import MemoryStore, check_store_file

__all__ = [
    "Busy",
    "CannotOpen",
    "Changed",
    "Clock",
    "CorruptRow",
    "Event",
    "Evidence",
    "Memory",
    "MemoryLoad",
    "MemoryStore",
    "MissingStore",
    "ModelCall",
    "Quality",
    "ReadOnly",
    "Receipt",
    "Refused",
    "RouteHealth",
    "Signal",
    "Source",
    "StoreError",
    "UnsupportedSchema",
    "check_store_file",
    "clock_from_env",
    "default_db_path",
    "fixed_clock",
    "system_clock",
]
