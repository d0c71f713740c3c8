"""A learning run as the store sees it: the claims a model returns, the run begun,
and a refusal with one of pi's failure codes (§2.8.4)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import Refused
from ..js import js_json, js_next


@dataclass(frozen=True, slots=True)
class ClaimIn:
    """One claim as a learning model returns it (already shape-checked)."""

    kind: str
    content: str
    replaces: str | None = None
    search_terms: tuple[str, ...] | None = None


@dataclass(slots=True)
class Run:
    source: dict[str, Any]
    attempt: int
    generation: int
    model: str | None
    memories: list[dict[str, Any]] = field(default_factory=list)
    candidates: list[dict[str, Any]] = field(default_factory=list)


class LearningFailure(Refused):
    """A learning run refused with one of the failure codes of §2.8.4."""

    def __init__(self, code: str, reason: str = "") -> None:
        super().__init__(f"{code}{': ' + reason if reason else ''}")
        self.code = code
        self.reason = reason


@dataclass(slots=True)
class Staged:
    """What a run's claims stage before its one write: the records, the ids replaced,
    the ids reaffirmed, and how many weaker replacements were withheld."""

    staged: dict[str, dict[str, Any]] = field(default_factory=dict)
    targets: set[str] = field(default_factory=set)
    reaffirmed: set[str] = field(default_factory=set)
    weaker: int = 0

    def annotate(self, record: dict[str, Any], terms: tuple[str, ...] | None) -> None:
        """A claim's search terms on a record it matched (not pinned, still live)."""
        if not terms or record["layer"] == "pinned":
            return
        current = self.staged.get(record["id"], record)
        wanted = list(dict.fromkeys(terms))
        if current["status"] not in ("provisional", "confirmed"):
            return
        if js_json(current.get("searchTerms")) != js_json(wanted):
            self.staged[record["id"]] = {
                **current,
                "searchTerms": wanted,
                "revision": js_next(record["revision"]),
            }
