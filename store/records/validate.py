"""Upstream's validators for records, evidence, feedback and events (§2.2–§2.5)."""

from __future__ import annotations

import re

from ..js import is_js_integer, js_json, js_len, js_number, js_trim, parse_ms, utf8_len
from ..write.redact import redact

_HASH24 = re.compile(r"[a-f0-9]{24}")  # JavaScript's ^…$: no newline before the end
BASIS_METHODS: dict[str, tuple[str, ...]] = {
    "manual_correction": ("manual",),
    "summary": ("local", "model"),
    "user_statement": ("model",),
    "tool_observation": ("model",),
}
_KINDS = frozenset(("fact", "preference", "decision", "project_state"))
_STATUSES = frozenset(("provisional", "confirmed", "forgotten", "conflicted"))
_LAYERS = frozenset(("durable", "pinned"))
_ACTORS = frozenset(("local", "manual", "model", "migration"))
_SLOT_VERDICTS = {"utility": ("useful", "unhelpful"), "accuracy": ("accurate", "incorrect")}


def _nonempty(value: object) -> bool:
    return isinstance(value, str) and value != ""


def _one_of(value: object, allowed: frozenset[str]) -> bool:
    """``value in allowed`` for any JSON value (a list or an object is not hashable)."""
    return isinstance(value, str) and value in allowed


_C0 = re.compile("[\x00-\x1f]")


def hash24_ok(value: object) -> bool:
    """A fingerprint as ``/^[a-f0-9]{24}$/`` tests it (Python's ``$`` would let a final
    newline through)."""
    return isinstance(value, str) and _HASH24.fullmatch(value) is not None


def valid_identifier(value: object) -> bool:
    """A source id in evidence or feedback: 1–512 UTF-16 units, no C0 controls."""
    if not isinstance(value, str) or not value or js_len(value) > 512:
        return False
    return _C0.search(value) is None


def term_problem(term: object) -> str | None:
    """Why one search term fails its own checks, or None."""
    if not isinstance(term, str) or term != js_trim(term):
        return "a search term is not a trimmed string"
    if not 2 <= js_len(term) <= 64 or "\r" in term or "\n" in term:
        return "a search term has a bad length or a line break"
    if "[REDACTED" in term or redact(term) != term:
        return "a search term would be redacted"
    return None


def search_terms_problem(terms: object) -> str | None:
    if not isinstance(terms, list):
        return "searchTerms is not an array"
    if len(terms) > 8:
        return "more than 8 searchTerms"
    for term in terms:
        problem = term_problem(term)
        if problem:
            return problem
    if utf8_len(js_json(terms)) > 1024:
        return "searchTerms exceed 1024 bytes"
    return None


def evidence_problem(evidence: object) -> str | None:
    if not isinstance(evidence, dict):
        return "evidence is not an object"
    if set(evidence) != {"basis", "method", "sourceId", "at"}:
        return "evidence has missing or extra keys"
    methods = BASIS_METHODS.get(evidence["basis"]) if isinstance(evidence["basis"], str) else None
    if methods is None or evidence["method"] not in methods:
        return "evidence basis/method pair is invalid"
    if not valid_identifier(evidence["sourceId"]):
        return "evidence sourceId is invalid"
    if parse_ms(evidence["at"]) is None:
        return "evidence time is invalid"
    return None


def feedback_problem(feedback: object) -> str | None:
    if not isinstance(feedback, dict):
        return "feedback is not an object"
    for slot, signal in feedback.items():
        verdicts = _SLOT_VERDICTS.get(slot)
        if verdicts is None:
            return f"unknown feedback slot {slot!r}"
        if not isinstance(signal, dict) or not set(signal) <= {"verdict", "at", "sourceId"}:
            return "feedback signal is not valid"
        if signal.get("verdict") not in verdicts:
            return "feedback verdict is invalid"
        if parse_ms(signal.get("at")) is None or not valid_identifier(signal.get("sourceId")):
            return "feedback signal time or source is invalid"
    return None


def record_problem(data: object) -> str | None:
    """Why a record fails §2.2.2 items 1–8, or None when it is valid."""
    if not isinstance(data, dict):
        return "record is not a JSON object"
    if not _nonempty(data.get("id")):
        return "id is missing"
    kind = data.get("kind")
    if not _one_of(kind, _KINDS):
        return "kind is invalid"
    content = data.get("content")
    if not isinstance(content, str) or not js_trim(content):
        return "content is blank"
    if not _nonempty(data.get("scope")) or not _nonempty(data.get("sourceEntryId")):
        return "scope or sourceEntryId is missing"
    if "searchTerms" in data:
        problem = search_terms_problem(data["searchTerms"])
        if problem:
            return problem
    evidence = data.get("evidence")
    if "evidence" in data:
        problem = evidence_problem(evidence)
        if problem:
            return problem
        if (
            isinstance(evidence, dict)
            and evidence["basis"] == "tool_observation"
            and (kind != "project_state")
        ):
            return "tool_observation evidence on a record that is not a project_state"
    if "feedback" in data:
        problem = feedback_problem(data["feedback"])
        if problem:
            return problem
    if "suppressedHashes" in data:
        hashes = data["suppressedHashes"]
        if not isinstance(hashes, list) or not all(map(hash24_ok, hashes)):
            return "suppressedHashes are invalid"
    if parse_ms(data.get("createdAt")) is None or parse_ms(data.get("updatedAt")) is None:
        return "createdAt or updatedAt is not a timestamp"
    if "reinforcedAt" in data and parse_ms(data["reinforcedAt"]) is None:
        return "reinforcedAt is not a timestamp"
    revision = data.get("revision")
    if not is_js_integer(revision) or (js_number(revision) or 0) <= 0:  # pi: Number.isInteger
        return "revision is not a positive integer"
    if not _one_of(data.get("layer"), _LAYERS):
        return "layer is invalid"
    if not _one_of(data.get("status"), _STATUSES):
        return "status is invalid"
    return None


def event_problem(
    data: object, row_id: str, row_scope: str, *, after_records: bool = True
) -> str | None:
    """Why an event fails §2.5, or None.

    ``after_records=False`` leaves out the record checks of the ``after`` records (each
    still needs an id): for a caller that compares every one of them, field by field,
    with a record already valid, which says more."""
    if not isinstance(data, dict):
        return "event is not a JSON object"
    if data.get("id") != row_id or not _nonempty(row_id):
        return "event id does not match its row"
    if data.get("scope") != row_scope or not _nonempty(row_scope):
        return "event scope does not match its row"
    if not _one_of(data.get("actor"), _ACTORS):
        return "event actor is invalid"
    if not isinstance(data.get("reason"), str) or parse_ms(data.get("at")) is None:
        return "event reason or time is invalid"
    before, after = data.get("before"), data.get("after")
    if not isinstance(before, list) or not isinstance(after, list) or len(before) != len(after):
        return "event before/after are not arrays of equal length"
    seen: set[str] = set()
    for b, a in zip(before, after, strict=True):
        problem = (
            record_problem(a)
            if after_records
            else None
            if isinstance(a, dict) and isinstance(a.get("id"), str)
            else "not a record with an id"
        )
        if problem:
            return f"event after-record invalid: {problem}"
        if b is not None:
            problem = record_problem(b)
            if problem:
                return f"event before-record invalid: {problem}"
            if b["id"] != a["id"]:
                return "event before/after ids differ"
        if a["id"] in seen:
            return "event after ids repeat"
        seen.add(a["id"])
    return None
