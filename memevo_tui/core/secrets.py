"""Secrets a store holds, found wherever a copy can sit (no Textual): every record,
every event's ``before`` and ``after``, every source, every other row that holds text,
the app's own cache and state files for the store, and pi's session files.

The rules are detect-secrets' own (its regex detectors: AWS, Stripe, Slack, private
keys, basic auth, JWTs, GitHub, GitLab, OpenAI, npm, PyPI, SendGrid and the rest; not
its entropy and keyword guesses, which flag every hex id: ``_SKIPPED_DETECTORS``), then
pi's redactor's (``store.write.redact``: bearer tokens, ``sk-``/``ghp_`` tokens, URL credentials,
``--password VALUE``), then two that both miss: Google API keys and a password said in
words ("the staging DB password is hunter2"). Text is scanned as it reads once decoded:
a key JSON-escaped in an event (``\\u0041KIA…``) is found as what it is.

A finding never holds the secret: its excerpt is masked (``AKIA…PLM4N``). Scanning the
text of 400,000 rows rule by rule is slow, so each rule runs once over a table's rows
joined, and only the rows it matches (or that hold a JSON escape) are decoded and
scanned field by field.
"""

from __future__ import annotations

import asyncio
import bisect
import json
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path
from re import _constants as _C  # type: ignore[attr-defined]
from re import _parser  # type: ignore[attr-defined]
from typing import Any

from store import PURGED, iso

RuleSet = tuple[tuple[str, re.Pattern[str]], ...]

_SKIPPED_DETECTORS = (
    "IPPublicDetector",
    "CloudantDetector",
    "IbmCloudIamDetector",
    "IbmCosHmacDetector",
    "SoftlayerDetector",
)
"""detect-secrets' regex detectors left out: a public IP address is no credential, and
four are keyword guesses in regex form ("cl" or "sl" near "key" and a long word), as
slow (lookbehinds, over every row) as they are noisy; like its keyword detector, they
are left to a scan of source code."""

_OWN_RULES = (
    ("Google API Key", r"\bAIza[0-9A-Za-z_\-]{35}\b"),
    (
        "Password in words",
        r"(?i)\b(?:password|passwd|passphrase|pwd)\s+(?:is|was|=|:)\s+"
        r"[\"'`]?([^\s\"'`,;]{4,})",
    ),
    ("pi: bearer token", r"(?i)\bbearer\s+([A-Za-z0-9._~+/=-]{12,})"),
    ("pi: sk-/gh token", r"\b((?:gho_|ghp_|ghs_|ghu_|github_pat_|sk-)[A-Za-z0-9_-]{16,})"),
    ("pi: URL credentials", r"://[^\s/@:]+:([^\s/@]{3,})@"),
    ("pi: --password value", r"(?i)--(?:password|token|api-key|secret)[\s=]+([^\s\"']{4,})"),
)
"""pi's redactor's rules (the ones that name a value), and what both it and
detect-secrets miss."""


@lru_cache(maxsize=1)
def rules() -> RuleSet:
    """Every rule: detect-secrets' regex detectors, then pi's and ours."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins.base import RegexBasedDetector

    found: list[tuple[str, re.Pattern[str]]] = []
    mapping: dict[str, type] = get_mapping_from_secret_type_to_class()
    for name, cls in sorted(mapping.items()):
        if not issubclass(cls, RegexBasedDetector) or cls.__name__ in _SKIPPED_DETECTORS:
            continue
        found += [(name, pattern) for pattern in cls().denylist]
    found += [(name, re.compile(pattern)) for name, pattern in _OWN_RULES]
    return tuple(found)


def anchors(pattern: re.Pattern[str]) -> frozenset[str]:
    """Literal strings, casefolded, one of which every match of ``pattern`` contains
    (read from the pattern's own parse: a run of literals, each branch's, a repeated
    item's); empty when none is known. A text whose casefolded form holds none of them
    cannot match, whatever the pattern's case rules: the scan skips the pattern there."""
    found = _required(list(_parser.parse(pattern.pattern, pattern.flags)))
    return frozenset(a.casefold() for a in found) if found else frozenset()


def _required(items: list[tuple[Any, Any]]) -> set[str] | None:
    best: set[str] | None = None

    def keep(found: set[str] | None) -> None:
        nonlocal best
        if found and (best is None or min(map(len, found)) > min(map(len, best))):
            best = found

    run: list[str] = []
    for op, av in [*items, (None, None)]:
        if op is _C.LITERAL:
            run.append(chr(av))
            continue
        keep({"".join(run)} if run else None)
        run = []
        if op is _C.SUBPATTERN:
            keep(_required(list(av[-1])))
        elif op is _C.BRANCH:
            alternatives = [_required(list(b)) for b in av[1]]
            if all(alternatives):
                keep(set().union(*(a for a in alternatives if a)))
        elif op in (_C.MAX_REPEAT, _C.MIN_REPEAT) and av[0] >= 1:
            keep(_required(list(av[2])))
    return best


@lru_cache(maxsize=1)
def anchored_rules() -> tuple[tuple[str, re.Pattern[str], frozenset[str]], ...]:
    """Every rule with its anchors (``anchors``)."""
    return tuple((name, pattern, anchors(pattern)) for name, pattern in rules())


_ESCAPES = ("\\u", "\\n", "\\r", "\\t")
"""In raw JSON, what may make a text read otherwise once decoded (a key JSON-escaped,
a password split by an escaped line break): such a text is always decoded and scanned."""


def _for_re2(pattern: re.Pattern[str]) -> str:
    """``pattern`` as RE2 reads it, matching at least what it matches: lookarounds
    dropped (RE2 has none), a repetition's bound over 1,000 left open, the flags inline.
    The rows it finds are scanned again with Python's ``re``, so a superset is exact."""
    source = re.sub(r"\(\?<?[!=][^()]*\)", "", pattern.pattern)
    source = re.sub(r"\{(\d+),\d{4,}\}", r"{\1,}", source)
    return ("(?i)" if pattern.flags & re.IGNORECASE else "") + source


@lru_cache(maxsize=1)
def _engines() -> tuple[Any, tuple[tuple[str, re.Pattern[str], frozenset[str]], ...]]:
    """RE2's set of every rule it can read (one linear pass over a row finds whether any
    matches: a DFA, not a pass per rule), and the rules left to Python's ``re``. Without
    RE2 installed, every rule is left to ``re``."""
    try:
        import re2  # type: ignore[import-untyped]
    except ImportError:
        return None, anchored_rules()
    engine = re2.Set.SearchSet(re2.Options())
    left = []
    for rule in anchored_rules():
        try:
            engine.Add(_for_re2(rule[1]))
        except Exception:  # a construct RE2 does not read (noted: its message goes to stderr)
            left.append(rule)
    engine.Compile()
    return engine, tuple(left)


def _unescaped(raw: str) -> str:
    """A JSON text's escaped line breaks and tabs as the characters they stand for."""
    return raw.replace("\\n", "\n").replace("\\r", "\r").replace("\\t", "\t")


def candidates(texts: Sequence[str]) -> set[int]:
    """The indexes of ``texts`` that may hold a secret: every text with a JSON escape,
    those RE2's set of the rules matches, and for the rules RE2 cannot read, each run
    once over all the texts joined (a pass per rule, not per text), skipped where no text
    holds its anchors."""
    if not texts:
        return set()
    engine, left = _engines()
    found: set[int] = set()
    if engine is not None:
        for i, text in enumerate(texts):
            if "\\u" in text:  # a character escaped: decoded and scanned, whatever it is
                found.add(i)
                continue
            try:  # an escaped line break read as one, as the decoded text has it
                if engine.Match(_unescaped(text) if "\\" in text else text):
                    found.add(i)
            except (UnicodeError, ValueError):  # a lone surrogate: let re decide
                found.add(i)
    if not left:
        return found
    found |= {i for i, text in enumerate(texts) if any(e in text for e in _ESCAPES)}
    starts: list[int] = []
    at = 0
    for text in texts:
        starts.append(at)
        at += len(text) + 1
    joined = "\x00".join(texts)
    folded = joined.casefold()
    for _, pattern, anchored in left:
        if anchored and not any(a in folded for a in anchored):
            continue  # no text holds what every match would: the pattern cannot match
        for m in pattern.finditer(joined):
            found.add(bisect.bisect_right(starts, m.start()) - 1)
    return found


@dataclass(frozen=True, slots=True)
class Finding:
    """One secret in one place: never the secret itself."""

    place: str
    """memory, event, source, row (another table's), cache, state, session."""
    id: str
    """The memory, event or source id; ``table:key`` for another row; a file (and an
    entry id, for a session)."""
    field: str
    """Where in it ("after[0].content", "data.content", a column)."""
    rule: str
    excerpt: str
    """The secret masked: its first 4 and last 5 characters (``AKIA…PLM4N``)."""
    start: int
    end: int
    """Where the secret is in that field's text (Python characters)."""
    key: str = ""
    """The finding's name for ``purge`` (8 hex digits: its place, id, field and span)."""

    def json(self) -> dict[str, Any]:
        return asdict(self)


Values = dict[str, str]
"""Each finding's secret by its key, for ``purge`` only: never printed, never kept."""


def mask(secret: str) -> str:
    """``AKIA…PLM4N``: enough to recognise it, never enough to use it."""
    if len(secret) <= 12:
        return f"{secret[:2]}…" if len(secret) > 4 else "…"
    return f"{secret[:4]}…{secret[-5:]}"


def spans(text: str) -> Iterator[tuple[str, int, int]]:
    """Each secret in ``text``: its rule and where it is (overlaps: the first rule's)."""
    taken: list[tuple[int, int]] = []
    for name, pattern in rules():
        for m in pattern.finditer(text):
            group = next((i for i in range(1, (m.re.groups or 0) + 1) if m.group(i)), 0)
            start, end = m.span(group)
            if end - start < 4 or any(s < end and start < e for s, e in taken):
                continue
            if text.startswith("[REDACTED", start):  # pi's redaction or a purge's, no secret
                continue
            taken.append((start, end))
            yield name, start, end


def named_secrets(texts: Sequence[str]) -> dict[int, str]:
    """The secrets in each of ``texts`` in a few words ("AWS Access Key (AKIA…PLM4N)"),
    by index, for those that hold any: the review queue's lines."""
    out: dict[int, str] = {}
    for i in sorted(candidates(texts)):
        found = [f"{rule} ({mask(texts[i][s:e])})" for rule, s, e in spans(texts[i])]
        if found:
            out[i] = "; ".join(found)
    return out


def _strings(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """Every string in a decoded JSON value, with its path ("after[0].content")."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, inner in value.items():
            yield from _strings(inner, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            yield from _strings(inner, f"{path}[{i}]")


def in_text(
    place: str, ident: str, field: str, text: str, values: Values | None = None
) -> Iterator[Finding]:
    from store import fp

    for rule, start, end in spans(text):
        key = fp(f"{place}\0{ident}\0{field}\0{start}")[:8]
        if values is not None:
            values[key] = text[start:end]
        yield Finding(place, ident, field, rule, mask(text[start:end]), start, end, key)


def in_json(
    place: str, ident: str, raw: str | bytes, prefix: str = "", values: Values | None = None
) -> Iterator[Finding]:
    """The findings of a JSON text, field by field (a text that is not JSON: whole)."""
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    try:
        value = json.loads(data)
    except ValueError:
        text = data.decode("utf-8", "replace")
        yield from in_text(place, ident, prefix or "text", text, values)
        return
    for path, text in _strings(value, prefix):
        yield from in_text(place, ident, path, text, values)


# ------------------------------------------------------------------ the store

_JSON_TABLES = {"memories": "memory", "events": "event", "sources": "source"}


async def in_store(store: Any, values: Values | None = None) -> list[Finding]:
    """Every finding in the store's rows: each record, event and source field by field,
    and every text column of every other table (``blocked`` holds hashes only)."""
    found: list[Finding] = []
    for table, place in _JSON_TABLES.items():
        rows = await store.query(f"SELECT id, data FROM {table} ORDER BY rowid")
        texts = [data if isinstance(data, str) else "" for _, data in rows]
        # in a thread: a dashboard's keys stay live while 300,000 events are read
        for i in sorted(await asyncio.to_thread(candidates, texts)):
            found += in_json(place, str(rows[i][0]), texts[i], values=values)
    listed = "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
    tables = [str(r[0]) for r in await store.query(listed)]
    for table in tables:
        if table in _JSON_TABLES or table == "blocked":
            continue
        columns = [str(r[1]) for r in await store.query(f'PRAGMA table_info("{table}")')]
        rows = await store.query(f'SELECT rowid, * FROM "{table}"')
        cells = [(row, column, value) for row in rows
                 for column, value in zip(columns, row[1:], strict=False)
                 if isinstance(value, str)]  # fmt: skip
        for i in sorted(candidates([value for _, _, value in cells])):
            row, column, value = cells[i]
            key = f"{table}:{row[1] if columns and columns[0] == 'id' else row[0]}"
            found += in_text("row", key, column, value, values)
    return found


# ------------------------------------------------------------------ files


def in_files(place: str, folder: Path) -> list[Finding]:
    """Every finding in the files under ``folder`` (the app's cache or state for the
    store), each read as text; a link is never followed."""
    found: list[Finding] = []
    if not folder.is_dir() or folder.is_symlink():
        return found
    for root, dirs, files in os.walk(folder, followlinks=False):
        for name in sorted(files):
            path = Path(root) / name
            if path.is_symlink():
                continue
            try:
                raw = path.read_bytes()
            except OSError:
                continue
            text = raw.decode("utf-8", "replace")
            if candidates([text]):
                found += in_text(place, str(path), "bytes", text)
        dirs[:] = sorted(d for d in dirs if not (Path(root) / d).is_symlink())
    return found


def in_sessions(files: Iterable[Path], values: Values | None = None) -> list[Finding]:
    """Every finding in pi's session files, entry by entry (the user's raw words are
    there, unredacted: pi redacts what it stores, not what it logs)."""
    found: list[Finding] = []
    for path in files:
        try:
            raw = path.read_bytes()
        except OSError:
            continue
        lines = raw.decode("utf-8", "replace").split("\n")
        for index in sorted(candidates(lines)):
            line, n = lines[index], index + 1
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
            except ValueError:
                entry = None
            ident = entry.get("id") if isinstance(entry, dict) else None
            where = f"{path}#{ident if isinstance(ident, str) else f'line {n}'}"
            found += in_json("session", where, line, values=values)
    return found


def purged_note(
    memory_id: str, content: str, purges: Sequence[tuple[float, frozenset[str]]]
) -> str:
    """What to say of a text a purge replaced: "text purged on 2026-11-02" (the newest
    purge of this record kept here), else that it was purged elsewhere; "" when the text
    holds no ``[REDACTED:purged]``."""
    if PURGED not in content:
        return ""
    dates = [at for at, records in purges if memory_id in records]
    if not dates:
        return f"its text was purged ({PURGED}), by a purge not recorded on this machine"
    day = iso(max(dates))[:10]
    return f"its text was purged on {day} ({PURGED}): the secret it held is gone"
