"""Typed, frozen rows of the memory store (STORE.md §2)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any, Generic, Literal, TypeVar

from .quality import POLICY, Quality, age_days, age_from, confirmed_ms, dormancy, quality_of

Kind = Literal["fact", "preference", "decision", "project_state"]
Status = Literal["provisional", "confirmed", "forgotten", "conflicted"]
Layer = Literal["durable", "pinned"]
Verdict = Literal["useful", "unhelpful", "accurate", "incorrect"]
Actor = Literal["local", "model", "manual", "migration"]
SourceState = Literal["pending", "running", "done", "failed"]

KINDS: tuple[Kind, ...] = ("fact", "preference", "decision", "project_state")
STATUSES: tuple[Status, ...] = ("provisional", "confirmed", "forgotten", "conflicted")
LAYERS: tuple[Layer, ...] = ("durable", "pinned")
VERDICTS: tuple[Verdict, ...] = ("useful", "unhelpful", "accurate", "incorrect")
ACTORS: tuple[Actor, ...] = ("local", "model", "manual", "migration")
SOURCE_STATES: tuple[SourceState, ...] = ("pending", "running", "done", "failed")
FAILURE_CODES: tuple[str, ...] = (
    "timeout",
    "cancelled",
    "output_limit",
    "invalid_output",
    "stale",
    "write_rejected",
    "unavailable",
    "provider",
    "auth",
    "request",
    "rate_limit",
    "quota",
    "context_limit",
    "safety",
    "interrupted",
    "unknown",
)


TOOL_QUERY_MAX = 512
"""The ``memory_recall`` tool's query: 1 to 512 characters (UTF-16 units)."""


@dataclass(frozen=True, slots=True)
class Evidence:
    basis: str
    method: str
    source_id: str
    at: str


@dataclass(frozen=True, slots=True)
class Signal:
    verdict: str
    source_id: str
    at: str


@dataclass(frozen=True, slots=True, eq=False)
class Memory:
    """One valid ``memories`` row, typed: what a list, a filter, a sort, quality and recall
    need. The stored JSON object itself is not kept (at 100,000 records the parsed objects
    would be most of the memory); ``StoredMemory`` carries it where a write or an export
    needs the record exactly as stored."""

    id: str
    kind: Kind
    content: str
    scope: str
    source_entry_id: str
    created_at: str
    updated_at: str
    revision: int
    layer: Layer
    status: Status
    evidence: Evidence | None
    utility: Signal | None
    accuracy: Signal | None
    search_terms: tuple[str, ...]
    suppressed_hashes: tuple[str, ...]
    reinforced_at: str | None
    quality_at: float
    """When its quality is taken (epoch ms): the moment it was read, or the time dial's."""

    @property
    def quality(self) -> Quality:
        """``memoryQuality(record, quality_at)``, computed when asked.

        Not held: at 100,000 records the tuples and their floats would be 20 MB.
        What a list needs of every row (its state, its age, its horizon) has the
        cheaper properties below, which agree with it exactly.
        """
        return quality_of(self, self.quality_at)

    @property
    def horizon(self) -> float | None:
        """Days after its confirmation when it goes dormant (None: pinned, never)."""
        return None if self.layer == "pinned" else POLICY[self.kind][2]

    @property
    def age_days(self) -> float:
        """Days since its confirmation, at ``quality_at``."""
        return age_days(self.updated_at, self.reinforced_at, self.quality_at)

    @property
    def days_until_dormant(self) -> float | None:
        """Days until it goes dormant (0 once it has; None: pinned, never)."""
        h = self.horizon
        return None if h is None else max(0.0, h - self.age_days)

    @property
    def dormant(self) -> bool:
        return self.dormant_at(self.quality_at)

    def dormant_at(self, when_ms: float) -> bool:
        """Whether it was (or will be) dormant at ``when_ms``, as its quality then says."""
        return dormancy(age_days(self.updated_at, self.reinforced_at, when_ms), self.horizon)[1]

    def went_dormant(self, since_ms: float) -> bool:
        """Dormant at ``quality_at`` and not at ``since_ms``: ``dormant`` and not
        ``dormant_at(since_ms)``, with its dates read once."""
        horizon = self.horizon
        if horizon is None:
            return False
        confirmed = confirmed_ms(self.updated_at, self.reinforced_at)
        return (
            dormancy(age_from(confirmed, self.quality_at), horizon)[1]
            and not dormancy(age_from(confirmed, since_ms), horizon)[1]
        )

    @property
    def aging(self) -> bool:
        return dormancy(self.age_days, self.horizon)[0]

    @property
    def active(self) -> bool:
        return self.status in ("provisional", "confirmed")

    @property
    def pinned(self) -> bool:
        return self.layer == "pinned"

    @property
    def disputed(self) -> bool:
        return self.accuracy is not None and self.accuracy.verdict == "incorrect"

    @property
    def state(self) -> str:
        """One word for the record's standing: the badge a list shows.

        A record marked incorrect is "disputed": upstream stores it as conflicted,
        but the user said "this is wrong", and that is what the badge says.
        """
        if self.status == "forgotten":
            return "forgotten"
        if self.disputed:
            return "disputed"
        if self.status == "conflicted":
            return "conflicted"
        if self.pinned:
            return "pinned"
        aging, dormant = dormancy(self.age_days, self.horizon)
        return "dormant" if dormant else "aging" if aging else "fresh"


@dataclass(frozen=True, slots=True, eq=False)
class StoredMemory(Memory):
    """A record with its stored JSON object (``data``), key order kept."""

    data: dict[str, Any] = field(repr=False)


M = TypeVar("M", bound=Memory, covariant=True)


@dataclass(frozen=True, slots=True)
class CorruptRow:
    """A row that fails upstream's validation: shown, never acted upon."""

    table: str
    id: str
    reason: str
    raw: str


@dataclass(frozen=True, slots=True, eq=False)
class Event:
    rowid: int
    id: str
    at: str
    actor: str
    reason: str
    scope: str
    before: tuple[dict[str, Any] | None, ...]
    after: tuple[dict[str, Any], ...]
    data: dict[str, Any] = field(repr=False)

    @property
    def record_ids(self) -> tuple[str, ...]:
        return tuple(str(a.get("id", "")) for a in self.after)


@dataclass(frozen=True, slots=True, eq=False)
class Source:
    rowid: int
    id: str
    scope: str
    kind: str
    content: str
    created_at: str
    targets: tuple[str, ...]
    state: str
    attempt: int
    lease: int
    failures: int
    retry_at: int
    failed_at: int
    last_error: str
    output_failures: int
    diagnostic: dict[str, Any]
    calls: int
    call_ms: int
    call_models: tuple[str, ...]
    last_checked: int
    corrections: int
    paused: bool
    data: dict[str, Any] = field(repr=False)


@dataclass(frozen=True, slots=True)
class ModelCall:
    source_id: str
    attempt: int
    model: str
    provider: str
    at: int
    outcome: str
    finished_at: int
    code: str
    reserved_usd: float | None
    charged_usd: float | None
    input_tokens: int | None
    output_tokens: int | None


@dataclass(frozen=True, slots=True)
class Receipt:
    source_id: str
    memory_id: str
    verdict: str
    at: int


@dataclass(frozen=True, slots=True)
class RouteHealth:
    id: str
    until: int
    code: str


@dataclass(frozen=True, slots=True)
class MemoryLoad(Generic[M]):
    """Every memory row: the valid ones as records, the others as corrupt rows."""

    memories: tuple[M, ...]
    corrupt: tuple[CorruptRow, ...]


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The stored rows as they are, read in one transaction (for a lossless export)."""

    memories: tuple[tuple[Any, ...], ...]
    """``(id, scope, hash, data)`` per memory row, in insertion order, unparsed."""
    events: tuple[tuple[Any, ...], ...]
    """``(rowid, id, scope, data)`` per event, oldest first (empty unless asked)."""
    sources: tuple[dict[str, Any], ...]
    """Every column of every source row (empty unless asked)."""
    schema: str
    now_ms: float


_RETIMERS: dict[type, Callable[[Any, float], Any]] = {}


_R = TypeVar("_R", bound=Memory)


def _retimer(cls: type) -> Callable[[Any, float], Any]:
    """A function that copies a ``cls`` with another ``quality_at``, slot by slot.

    It sets each slot through its own descriptor, as the frozen class's ``__init__``
    would through ``object.__setattr__`` (no class here has a ``__post_init__``), in a
    third of the time: the time dial retimes every record on every move."""
    env: dict[str, Any] = {"_new": object.__new__, "_cls": cls}
    lines = ["def retime(r, when):", "    n = _new(_cls)"]
    for f in fields(cls):
        env[f"_set_{f.name}"] = getattr(cls, f.name).__set__
        value = "when" if f.name == "quality_at" else f"r.{f.name}"
        lines.append(f"    _set_{f.name}(n, {value})")
    lines.append("    return n")
    exec("\n".join(lines), env)  # the dataclass module builds its __init__ the same way
    made: Callable[[Any, float], Any] = env["retime"]
    return made


def retimed(record: _R, when: float) -> _R:
    """``record`` with its quality taken at ``when``: ``dataclasses.replace(record,
    quality_at=when)``, in a seventh of the time."""
    made: _R = retimer(type(record))(record, when)
    return made


def retimer(cls: type[_R]) -> Callable[[_R, float], _R]:
    """``retimed`` for records of exactly ``cls`` (a loop over many looks it up once)."""
    retime = _RETIMERS.get(cls)
    if retime is None:
        if "__post_init__" in dir(cls):
            raise TypeError(f"{cls.__name__} has a __post_init__: retimed would skip it")
        retime = _RETIMERS[cls] = _retimer(cls)
    return retime
