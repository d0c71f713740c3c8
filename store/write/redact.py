"""The upstream redactor (STORE.md §6.2).

Used on edited content: a correction that still contains ``[REDACTED`` after
redaction is refused, exactly as upstream refuses it.
"""

from __future__ import annotations

import re

from ..js import _JS_WS, JS_NON_SPACE, JS_SPACE, js_trim

_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_PEM = re.compile(
    r"-----BEGIN [^\n-]*PRIVATE KEY(?: BLOCK)?-----"
    r"(?:.*?-----END [^\n-]*PRIVATE KEY(?: BLOCK)?-----|.*\Z)",
    re.DOTALL,
)
_KEY_WORDS = (
    r"api[_\- ]?key|access[_\- ]?token|refresh[_\- ]?token|token|password|passwd|secret"
    r"|credentials|credential|authorization|密码|口令|密钥"
)
_CRED_KEY = rf"[\"']?(?:{_KEY_WORDS})[\"']?[{_JS_WS}]*[:=：]"
_CRED_KEY_RE = re.compile(_CRED_KEY, re.IGNORECASE)
_CRED_QUOTED = re.compile(
    _CRED_KEY + rf"[{_JS_WS}]*(?:\"(?:\\.|[^\"\\])*(?:\"|\Z)|'(?:\\.|[^'\\])*(?:'|\Z))",
    re.IGNORECASE | re.DOTALL,
)
_SECRET = re.compile(
    rf"\bbearer{JS_SPACE}+{JS_NON_SPACE}"
    r"|\b(?:gho_|ghp_|ghs_|ghu_|github_pat_|sk-)[A-Za-z0-9_-]"
    rf"|://[^{_JS_WS}/@]+:[^{_JS_WS}/@]+@"
    rf"|--(?:password|token|api-key|secret){JS_SPACE}+{JS_NON_SPACE}",
    re.IGNORECASE | re.ASCII,
)
_INDENT = re.compile(rf"^{JS_SPACE}*")


def _indent(line: str) -> int:
    m = _INDENT.match(line)
    return len(m.group(0)) if m else 0


# Substrings (after casefold) without which the credential or secret patterns cannot
# match anywhere in a text: most texts contain none, and skip the line-by-line pass.
_CRED_ANCHORS = (
    "key", "token", "password", "passwd", "secret", "credential", "authorization",
    "密码", "口令", "密钥",
)  # fmt: skip
_SECRET_ANCHORS = ("bearer", "gho_", "ghp_", "ghs_", "ghu_", "github_pat_", "sk-", "://", "--")


def redact(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _CONTROL.sub("", text)
    if "-----BEGIN " in text:
        text = _PEM.sub("[REDACTED PRIVATE KEY]", text)
    folded = text.casefold()
    credentials = any(anchor in folded for anchor in _CRED_ANCHORS)
    if not credentials and not any(anchor in folded for anchor in _SECRET_ANCHORS):
        return text
    if credentials:
        text = _CRED_QUOTED.sub("[REDACTED sensitive value]", text)
    out: list[str] = []
    hidden_indent: int | None = None
    drop_next = False
    for line in text.split("\n"):
        if hidden_indent is not None:
            if not js_trim(line):
                continue
            if drop_next:
                drop_next = False
                continue
            if _indent(line) > hidden_indent:
                continue
            hidden_indent = None
        key = _CRED_KEY_RE.search(line)
        if key or _SECRET.search(line):
            out.append("[REDACTED sensitive line]")
            if key:
                hidden_indent = _indent(line)
                drop_next = not js_trim(line[key.end() :])
            continue
        out.append(line)
    return "\n".join(out)
