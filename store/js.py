"""JavaScript-compatible primitives (STORE.md §0.3).

Upstream runs on Node; every string length, trim, timestamp, JSON text and
fingerprint the store writes must be the one JavaScript would produce.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import uuid
from collections.abc import Sequence
from datetime import UTC, date, datetime
from typing import Any

# §0.3 item 6: the JavaScript white-space set used by String.prototype.trim.
_JS_WS = (
    "\u0009\u000a\u000b\u000c\u000d\u0020\u00a0\u1680"
    "\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)


JS_SPACE = f"[{_JS_WS}]"
"""A regex class for JavaScript's ``\\s`` (Unicode white space, U+FEFF included)."""
JS_NON_SPACE = f"[^{_JS_WS}]"


def js_trim(text: str) -> str:
    """Trim with JavaScript's white-space set (not Python's)."""
    return text.strip(_JS_WS)


LONE_SURROGATE = re.compile("[\ud800-\udfff]")
"""A surrogate code point on its own: a valid JavaScript string may hold one (JSON's
``"\\ud83d"``), and Python keeps it as one character that UTF-8 cannot encode."""


def js_len(text: str) -> int:
    """Length in UTF-16 code units, as JavaScript's ``.length`` (a lone surrogate is 1)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def js_utf8(text: str) -> bytes:
    """UTF-8 as Node encodes a string (``Buffer.from``, hashes, byte lengths): a lone
    surrogate becomes U+FFFD."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return LONE_SURROGATE.sub("\ufffd", text).encode("utf-8")


def _escape_lone(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group(0)):04x}"


MAX_SAFE_INTEGER = 2**53 - 1

JS_LINE_END = "\n\r\u2028\u2029"
"""What JavaScript's ``.`` never matches (its line terminators)."""
JS_DOT = f"[^{JS_LINE_END}]"
"""A regex class for JavaScript's ``.`` (Python's matches "\\r", "\\u2028" and "\\u2029")."""


def js_number(value: object) -> float | None:
    """The JavaScript number a parsed JSON value is (JSON.parse reads every number as a
    double: ``20.0`` and ``1e2`` are whole numbers, a long integer is rounded, past the
    largest double it is Infinity), or None when it is no number (a bool is none)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        return float(value)
    except OverflowError:  # an integer of more than 308 digits
        return math.inf if value > 0 else -math.inf


def is_js_integer(value: object) -> bool:
    """``Number.isInteger(value)`` for a parsed JSON value."""
    x = js_number(value)
    return x is not None and math.isfinite(x) and x == math.floor(x)


def js_whole(value: int | float) -> int:
    """A whole number as JavaScript reads it (a valid revision): ``2.0`` and ``2e0`` are
    2, and an integer past 2**53 is the double JSON.parse makes of it."""
    return value if type(value) is int and abs(value) <= MAX_SAFE_INTEGER else int(float(value))


def is_safe_integer(value: object) -> bool:
    """``Number.isSafeInteger(value)`` for a parsed JSON value."""
    return is_js_integer(value) and abs(js_number(value) or 0.0) <= MAX_SAFE_INTEGER


def js_next(value: Any) -> int | float:
    """``value + 1`` as JavaScript computes it for a stored revision: exact for a safe
    integer; otherwise on doubles (``2.0`` gives 3, written ``3``)."""
    if type(value) is int and abs(value) < MAX_SAFE_INTEGER:
        return value + 1
    return (js_number(value) or 0.0) + 1.0


def js_number_text(x: float) -> str:
    """``String(x)`` for a finite double: the shortest digits that read back as ``x``
    (Python's ``repr`` has the same), spelled as JavaScript spells them: plain from
    1e-7 up to 1e21, ``1e+21`` and ``1e-7`` beyond, never ``.0`` or ``e-07``."""
    if x == 0:
        return "0"  # -0 too: String(-0) and JSON.stringify(-0) are "0"
    sign = "-" if x < 0 else ""
    mantissa, _, exp_text = repr(abs(x)).partition("e")
    whole, _, frac = mantissa.partition(".")
    digits = (whole + frac).lstrip("0")
    exponent = int(exp_text or 0) + len(whole) - (len(whole + frac) - len(digits)) - 1
    if frac.rstrip("0") == "" and not exp_text:
        exponent = len(whole) - 1  # a whole number written plainly
    digits = digits.rstrip("0") or "0"
    n = exponent + 1  # where the decimal point goes, counted from the first digit
    if len(digits) <= n <= 21:
        return sign + digits + "0" * (n - len(digits))
    if 0 < n <= 21:
        return f"{sign}{digits[:n]}.{digits[n:]}"
    if -6 < n <= 0:
        return f"{sign}0.{'0' * -n}{digits}"
    rest = f".{digits[1:]}" if len(digits) > 1 else ""
    return f"{sign}{digits[0]}{rest}e{'+' if n - 1 > 0 else '-'}{abs(n - 1)}"


def _has_float(value: Any) -> bool:
    if isinstance(value, float):
        return True
    if isinstance(value, dict):
        return any(_has_float(v) for v in value.values())
    if isinstance(value, list | tuple):
        return any(_has_float(v) for v in value)
    return False


def js_json(value: Any) -> str:
    """Compact JSON as ``JSON.stringify`` writes it: keys in insertion order, a number
    as ``String(number)`` (``100`` for a stored ``1E+2``, ``0`` for ``-0``), a lone
    surrogate as its ``\\uXXXX`` escape, as well-formed ``JSON.stringify`` writes it."""
    if _has_float(value):
        return _js_json_numbers(value)
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    if text.isascii() or LONE_SURROGATE.search(text) is None:
        return text
    return LONE_SURROGATE.sub(_escape_lone, text)  # only ever inside a JSON string


def _js_json_numbers(value: Any) -> str:
    """``js_json`` of a value holding doubles: each is written as JavaScript writes it
    (a non-finite one as ``null``, as ``JSON.stringify`` does)."""
    texts: list[str] = []
    mark = f"\x00{uuid.uuid4().hex}:"

    def swap(v: Any) -> Any:
        if isinstance(v, float):
            texts.append(js_number_text(v) if math.isfinite(v) else "null")
            return f"{mark}{len(texts) - 1}\x00"
        if isinstance(v, dict):
            return {k: swap(x) for k, x in v.items()}
        if isinstance(v, list | tuple):
            return [swap(x) for x in v]
        return v

    text = js_json(swap(value))
    escaped = json.dumps(mark, ensure_ascii=False)[1:-1]
    return re.sub(f'"{re.escape(escaped)}(\\d+)\\\\u0000"', lambda m: texts[int(m.group(1))], text)


def fp(text: str) -> str:
    """Content fingerprint (§2.2.4): 24 hex chars of sha256 over the JS-trimmed text."""
    return hashlib.sha256(js_utf8(js_trim(text))).hexdigest()[:24]


def iso(ms: int | float) -> str:
    """``Date.prototype.toISOString()`` for an epoch-millisecond value."""
    ms_int = math.floor(ms)
    seconds, millis = divmod(ms_int, 1000)
    dt = datetime.fromtimestamp(seconds, tz=UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S") + f".{millis:03d}Z"


_DATE_ONLY = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$", re.ASCII)
_DATE_TIME = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?"
    r"(Z|z|[+-]\d{2}:?\d{2})$",
    re.ASCII,
)
_CANONICAL = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$", re.ASCII)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_EPOCH_ORDINAL = date(1970, 1, 1).toordinal()
_parse_cache: dict[str, float | None] = {}


def parse_ms(value: object) -> float | None:
    """Epoch milliseconds of an ISO timestamp, or None when JavaScript would give NaN.

    Accepts what a JavaScript ``Date.parse`` accepts in practice for this store:
    ISO date-time with ``Z`` or a numeric offset, and date-only ``YYYY-MM-DD``
    (UTC midnight). A date-time without an offset is local time in JavaScript,
    which no writer may produce; it is treated as invalid here.
    """
    if not isinstance(value, str):
        return None
    try:
        return _parse_cache[value]  # one lookup when seen, nearly every call
    except KeyError:
        pass
    result = _parse_uncached(value)
    if len(_parse_cache) > 200_000:
        _parse_cache.clear()
    _parse_cache[value] = result
    return result


def _parse_uncached(value: str) -> float | None:
    if len(value) == 24 and _CANONICAL.match(value):
        # toISOString()'s own shape, nearly every stored time: plain arithmetic on the
        # day number gives the same milliseconds as the general path below.
        try:
            days = date(int(value[:4]), int(value[5:7]), int(value[8:10])).toordinal()
        except ValueError:
            return None
        h, mi, sec = int(value[11:13]), int(value[14:16]), int(value[17:19])
        if h < 24 and mi < 60 and sec < 60:
            return float(
                (days - _EPOCH_ORDINAL) * 86_400_000
                + h * 3_600_000
                + mi * 60_000
                + sec * 1000
                + int(value[20:23])
            )
    m = _DATE_ONLY.match(value)
    try:
        if m:
            y, mo, d = (int(g) for g in m.groups())
            dt = datetime(y, mo, d, tzinfo=UTC)
            return (dt - _EPOCH).total_seconds() * 1000.0
        m = _DATE_TIME.match(value)
        if not m:
            return None
        y, mo, d, h, mi = (int(g) for g in m.groups()[:5])
        sec = int(m.group(6) or 0)
        frac = m.group(7) or ""
        millis = int((frac + "000")[:3]) if frac else 0
        if h == 24 and mi == 0 and sec == 0 and millis == 0:
            h = 0
            extra_day = 86_400_000.0
        else:
            extra_day = 0.0
        dt = datetime(y, mo, d, h, mi, sec, tzinfo=UTC)
        ms = (dt - _EPOCH).total_seconds() * 1000.0 + millis + extra_day
        tz = m.group(8)
        if tz not in ("Z", "z"):
            sign = 1 if tz[0] == "+" else -1
            digits = tz[1:].replace(":", "")
            offset_min = int(digits[:2]) * 60 + int(digits[2:])
            ms -= sign * offset_min * 60_000
        return ms
    except ValueError:
        return None


def is_canonical_iso(value: str) -> bool:
    """True when ``value`` is already exactly what ``toISOString()`` writes."""
    return len(value) == 24 and _CANONICAL.match(value) is not None


def utf8_len(text: str) -> int:
    """``Buffer.byteLength(text)``: a lone surrogate counts as U+FFFD's 3 bytes."""
    return len(js_utf8(text))


def clip_bytes(text: str, budget: int) -> str:
    """Clip to a UTF-8 byte budget without splitting a code point (§0.3 item 5)."""
    if budget <= 0:
        return ""
    encoded = js_utf8(text)
    if len(encoded) <= budget:
        return text
    return encoded[:budget].decode("utf-8", errors="ignore")


def union(*lists: Sequence[str] | None) -> list[str]:
    """Concatenate string lists, keeping the first occurrence of each item."""
    out: list[str] = []
    for items in lists:
        for item in items or ():
            if item not in out:
                out.append(item)
    return out
