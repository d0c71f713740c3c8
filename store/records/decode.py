"""One-pass decode and validation of a ``memories`` row with msgspec (the load's fast path).

msgspec parses the JSON text and checks its shape in one pass: the keys a record must
have, the words of its small vocabularies, the exact keys of its evidence and feedback.
What msgspec cannot say as pi says it runs afterwards, on the decoded record: blank
content by JavaScript's trim, UTF-16 lengths, timestamps by ``Date.parse``, whole
numbers by ``Number.isInteger``, the search-term and identifier rules, the pairs of
evidence basis and method, and the row's own columns.

It only ever says yes. A text it refuses, or whose decoded record fails a later check,
is decided by the full reading in ``rows`` (the json module and ``record_problem``),
which gives upstream's reason. So a row is valid here only when it is valid there, and
the typed record is the same: the equality over every test text is pinned by
``tests/test_record_checks.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from sys import intern
from typing import Any, Literal

import msgspec
from msgspec import UNSET, Struct, UnsetType

from ..js import MAX_SAFE_INTEGER, fp, is_js_integer, js_number, js_trim, js_whole, parse_ms
from .model import Evidence, Memory, Signal
from .validate import BASIS_METHODS, hash24_ok, search_terms_problem, term_problem, valid_identifier

Basis = Literal["manual_correction", "summary", "user_statement", "tool_observation"]
Method = Literal["manual", "local", "model"]


class _Evidence(Struct, forbid_unknown_fields=True, rename="camel", gc=False):
    basis: Basis
    method: Method
    source_id: str
    at: str


class _Utility(Struct, forbid_unknown_fields=True, rename="camel", gc=False):
    verdict: Literal["useful", "unhelpful"]
    source_id: str
    at: str


class _Accuracy(Struct, forbid_unknown_fields=True, rename="camel", gc=False):
    verdict: Literal["accurate", "incorrect"]
    source_id: str
    at: str


class _Feedback(Struct, forbid_unknown_fields=True, gc=False):
    utility: _Utility | UnsetType = UNSET
    accuracy: _Accuracy | UnsetType = UNSET


class _Record(Struct, rename="camel", gc=False):
    """A record's keys as pi writes them; any other key is allowed and skipped (§2.2.2)."""

    id: str
    kind: Literal["fact", "preference", "decision", "project_state"]
    content: str
    scope: str
    source_entry_id: str
    created_at: str
    updated_at: str
    revision: int | float
    layer: Literal["durable", "pinned"]
    status: Literal["provisional", "confirmed", "forgotten", "conflicted"]
    search_terms: list[str] | UnsetType = UNSET
    evidence: _Evidence | UnsetType = UNSET
    feedback: _Feedback | UnsetType = UNSET
    suppressed_hashes: list[str] | UnsetType = UNSET
    reinforced_at: str | UnsetType = UNSET


_decoder = msgspec.json.Decoder(_Record)

# The times and source ids of a store repeat (a learning run stamps many records with
# one time; evidence names the record's own source entry): each is checked once, and
# the record keeps one shared string for it. Bounded: cleared when full, between two
# records (a record's own values are looked up again once it is checked).
_CACHE_LIMIT = 200_000
_times: dict[str, str] = {}
_identifiers: dict[str, str] = {}
_terms: dict[str, bool] = {}


def forget() -> None:
    """Let the checked times, source ids and terms go (after a whole load: at 100,000
    records they hold about 8 MB, and a live refresh reads a few rows)."""
    _times.clear()
    _identifiers.clear()
    _terms.clear()


def _valid_time(value: str) -> bool:
    return parse_ms(value) is not None


def _shared(table: dict[str, str], value: str, valid: Callable[[str], bool]) -> str | None:
    """The one shared string of ``value`` if ``valid`` says yes (asked once per value
    in ``table``), else None."""
    shared = table.get(value)
    if shared is None and valid(value):
        shared = table[value] = intern(value)
    return shared


def _term_ok(term: str) -> bool:
    ok = _terms.get(term)
    if ok is None:
        ok = _terms[term] = term_problem(term) is None
    return ok


def _terms_ok(terms: list[str]) -> bool:
    """``search_terms_problem(terms) is None``, each term's own checks made once."""
    if len(terms) > 8 or not all(map(_term_ok, terms)):
        return False
    # A term's JSON takes at most 6 bytes per UTF-16 unit (``\\uXXXX``) and its quotes
    # and comma 3 more: under the 1024-byte cap, the exact count is not needed.
    if sum(len(t) for t in terms) * 12 + 3 * len(terms) + 2 <= 1024:
        return True
    return search_terms_problem(terms) is None


def _signal(s: _Utility | _Accuracy | UnsetType) -> tuple[bool, Signal | None]:
    """Whether a feedback slot is valid, and its signal (None: the slot is empty)."""
    if s is UNSET:
        return True, None
    source_id = _shared(_identifiers, s.source_id, valid_identifier)
    at = _shared(_times, s.at, _valid_time)
    if source_id is None or at is None:
        return False, None
    return True, Signal(s.verdict, source_id, at)


def _bounded() -> None:
    """Clear the shared strings when they are full (between two records)."""
    if len(_times) > _CACHE_LIMIT or len(_identifiers) > _CACHE_LIMIT:
        _times.clear()
        _identifiers.clear()
    if len(_terms) > _CACHE_LIMIT:
        _terms.clear()


def listed_fast(row_id: str, scope: str, hash_: str, raw: object, now_ms: float) -> Memory | None:
    """The typed record of a row that is valid, or None: the full reading decides.

    The checks are those of ``record_problem`` and of the row's columns that the
    decoder's types do not already make."""
    _bounded()
    try:
        r = _decoder.decode(raw)  # type: ignore[arg-type]
    except (msgspec.DecodeError, TypeError, RecursionError):
        return None
    if r.id != row_id or r.scope != scope or fp(r.content) != hash_:
        return None
    return _typed(r, now_ms)


def _typed(r: _Record, now_ms: float) -> Memory | None:
    """The typed record of a decoded one that ``record_problem`` finds valid, or None
    (the checks the decoder's types do not already make)."""
    times, identifiers = _times, _identifiers
    content = r.content
    if not r.id or not r.scope or not r.source_entry_id or not js_trim(content):
        return None
    created = _shared(times, r.created_at, _valid_time)
    updated = _shared(times, r.updated_at, _valid_time)
    if created is None or updated is None:
        return None
    reinforced = None
    if r.reinforced_at is not UNSET:
        reinforced = _shared(times, r.reinforced_at, _valid_time)
        if reinforced is None:
            return None
    evidence = None
    ev = r.evidence
    if ev is not UNSET:
        if ev.method not in BASIS_METHODS[ev.basis] or (
            ev.basis == "tool_observation" and r.kind != "project_state"
        ):
            return None
        source_id = _shared(identifiers, ev.source_id, valid_identifier)
        at = _shared(times, ev.at, _valid_time)
        if source_id is None or at is None:
            return None
        evidence = Evidence(ev.basis, ev.method, source_id, at)
    utility = accuracy = None
    fb = r.feedback
    if fb is not UNSET:
        utility_ok, utility = _signal(fb.utility)
        accuracy_ok, accuracy = _signal(fb.accuracy)
        if not (utility_ok and accuracy_ok):
            return None
    terms = r.search_terms
    if terms is not UNSET and not _terms_ok(terms):
        return None
    hashes = r.suppressed_hashes
    if hashes is not UNSET and not all(map(hash24_ok, hashes)):
        return None
    rev = r.revision
    if not (type(rev) is int and 0 < rev <= MAX_SAFE_INTEGER):
        if not (is_js_integer(rev) and (js_number(rev) or 0) > 0):
            return None
        rev = js_whole(rev)
    return Memory(
        r.id,
        r.kind,
        content,
        intern(r.scope),
        intern(r.source_entry_id),
        created,
        updated,
        rev,
        r.layer,
        r.status,
        evidence,
        utility,
        accuracy,
        () if terms is UNSET else tuple(terms),
        () if hashes is UNSET else tuple(hashes),
        reinforced,
        now_ms,
    )


class _Event(Struct, gc=False):
    """An event's keys as pi writes them (§2.5); any other key is allowed and skipped."""

    id: str
    scope: str
    actor: Literal["local", "manual", "model", "migration"]
    reason: str
    at: str
    before: list[_Record | None]
    after: list[dict[str, Any]]


_event_decoder = msgspec.json.Decoder(_Event)


def befores_fast(
    raw: object, row_id: str, scope: str, now_ms: float
) -> tuple[list[Memory | None], list[dict[str, Any]]] | None:
    """An event that ``event_problem`` (with ``after_records=False``) finds valid: each
    ``before`` typed as a list keeps it (None: null), and each ``after`` as stored; or
    None, and the full reading decides."""
    _bounded()
    try:
        e = _event_decoder.decode(raw)  # type: ignore[arg-type]
    except (msgspec.DecodeError, TypeError, RecursionError):
        return None
    if not row_id or e.id != row_id or not scope or e.scope != scope:
        return None
    if _shared(_times, e.at, _valid_time) is None or len(e.before) != len(e.after):
        return None
    seen: set[str] = set()
    befores: list[Memory | None] = []
    for b, a in zip(e.before, e.after, strict=True):
        after_id = a.get("id")
        if type(after_id) is not str or after_id in seen:
            return None
        seen.add(after_id)
        if b is None:
            befores.append(None)
            continue
        if b.id != after_id:
            return None
        typed = _typed(b, now_ms)
        if typed is None:
            return None
        befores.append(typed)
    return befores, e.after
