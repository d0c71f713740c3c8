"""Recall features: literals, concepts and words (STORE.md §6.3 and §6.4).

A feature set is returned as a ``dict`` used as an ordered set: iteration order is
insertion order, as with a JavaScript ``Set``, because the order of query words
decides the order in which matches are listed and weights are summed.

Word segmentation uses ICU's word break iterator for locale ``zh`` (§0.3 item 12),
through PyICU. Without PyICU a simple Unicode segmenter stands in; then CJK text
is split per character and parity with pi is not promised (``ICU_AVAILABLE``).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from functools import lru_cache
from sys import intern

from ..js import _JS_WS, JS_SPACE, clip_bytes, js_len, js_trim
from ..write.redact import redact
from .concepts import _CONCEPT_BY_NAME, CONCEPTS, _anchored_concepts

try:  # pragma: no cover - exercised by whichever branch the machine has
    import icu as _icu

    ICU_AVAILABLE = True
    _COLLATOR = _icu.Collator.createInstance(_icu.Locale("en_US"))
except ImportError:  # pragma: no cover
    _icu = None
    ICU_AVAILABLE = False
    _COLLATOR = None

Features = dict[str, None]
"""An ordered set of features."""

MAX_QUERY_BYTES = 65_536
MAX_HISTORY_TURN_BYTES = 2_048

_S = JS_SPACE
_NOT_S = f"[^{_JS_WS}"  # an open class: the path pattern adds its own stop characters

# The literal pattern (§6.3): a path, a file name, or a kebab identifier. JavaScript's
# case-insensitive Unicode mode also lets ASCII classes match "ſ" (U+017F) and the
# Kelvin sign (U+212A), so they are spelt out; Python's IGNORECASE would add "İ" and "ı".
_W = "A-Za-z0-9_\u017f\u212a"
_A = "A-Za-z\u017f\u212a"
_LITERAL_SRC = (
    # 1: a path, not preceded by a letter, digit or underscore.
    rf"(?<!\w)(?:~?/|\.\.?/){_NOT_S}`\"'<>，。！？,;!?]+"
    # 2: a file name with a known extension, then an ASCII word boundary.
    rf"|(?<![{_W}./-])(?:[{_W}.-]+/)*[{_W}-]+\."
    rf"(?ai:[cm]?[jt]sx?|json|md|sqlite|toml|ya?ml|sh|py|go|rs)(?![{_W}])"
    # 3: a kebab identifier with at least three parts.
    rf"|(?<![{_A}0-9-])[{_A}][{_A}0-9]*(?:-[{_A}0-9]+){{2,}}"
)
LITERALS = re.compile(_LITERAL_SRC)

STOP_WORDS = frozenset(
    "的 了 是 在 有 没有 现在 目前 当前 这个 那个 这些 那些 什么 哪些 哪个 为什么 "
    "怎样 如何 怎么 是否 可以 需要 问题 看看 一下 我们 你们 然后 但是 以及 关于 "
    "帮我 谢谢 应该 还是 继续 之前 上次 修复 修改 检查 处理 记住 "
    "the and for with continue resume previous this that these those it its they them their "
    "we our you your i me my a an of to in on at is are was were be been do does did has have "
    "had no not without now current currently what which who how why can could should would "
    "please help check look see any there here also just again about other anything something "
    "else one problem problems issue issues wrong broken use used using work home src tmp user "
    "users fix change changes need remember discuss show describe explain tell where".split()
)

_REDACTED_MARK = re.compile(r"\[REDACTED[^\]\n]*\]")
_CAMEL = re.compile(r"([a-z])([A-Z])")
_TRAILING_DOTS = re.compile(r"[.:]+$")

# ----------------------------------------------------------------- segmentation

_local = threading.local()
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


def _icu_words(text: str) -> Iterator[str]:
    """Word-like segments (ICU rule status >= 100), as ``Intl.Segmenter`` reports them."""
    breaker = getattr(_local, "breaker", None)
    if breaker is None:
        breaker = _icu.BreakIterator.createWordInstance(_icu.Locale("zh"))
        _local.breaker = breaker
    # ICU reports offsets in UTF-16 code units; slice a UTF-16 view when they differ.
    astral = not text.isascii() and _ASTRAL.search(text) is not None
    units = text.encode("utf-16-le", "surrogatepass") if astral else b""
    breaker.setText(text)
    start = breaker.first()
    for end in breaker:
        if breaker.getRuleStatus() >= 100:
            if astral:
                yield units[start * 2 : end * 2].decode("utf-16-le", "surrogatepass")
            else:
                yield text[start:end]
        start = end


_FALLBACK_WORD = re.compile(r"[^\W_]+(?:['’.][^\W_]+)*|_+", re.UNICODE)
_HAN = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\U00020000-\U0003134f]")


def _fallback_words(text: str) -> Iterator[str]:  # pragma: no cover - only without PyICU
    for match in _FALLBACK_WORD.finditer(text):
        word = match.group(0)
        if _HAN.search(word):
            yield from (part for part in re.split(f"({_HAN.pattern})", word) if part)
        else:
            yield word


_words: Callable[[str], Iterator[str]] = _icu_words if ICU_AVAILABLE else _fallback_words


def locale_key(text: str) -> bytes | str:
    """A sort key in ``String.prototype.localeCompare`` order (ICU collation)."""
    if _COLLATOR is None:  # pragma: no cover
        return text
    key: bytes = _COLLATOR.getSortKey(text)
    return key


# ------------------------------------------------------------------- features


def literal_clean(match: str) -> str:
    """The 0.3.0 tokeniser's literal identity: trailing ``.`` and ``:`` removed."""
    return _TRAILING_DOTS.sub("", match)


def _add_literal(result: Features, match: str) -> None:
    clean = literal_clean(match)
    result[intern(f"literal:{clean}")] = None
    result[intern(f"literal:{clean.split('/')[-1]}")] = None


def features(text: str, include_single: bool = False) -> Features:
    """``features(text, includeSingle)`` (§6.3): a new ordered set each call."""
    return dict.fromkeys(_cached_features(text, include_single))


@lru_cache(maxsize=200_000)
def _cached_features(text: str, include_single: bool) -> tuple[str, ...]:
    return _features(text, include_single)


def _features(text: str, include_single: bool) -> tuple[str, ...]:
    if not text:  # a record without search terms, say
        return ()
    result: Features = {}
    prose = _REDACTED_MARK.sub(" ", redact(text))

    def literal(match: re.Match[str]) -> str:
        _add_literal(result, match.group(0))
        return " "

    prose = LITERALS.sub(literal, prose)
    masked: list[str] | None = None
    present = _anchored_concepts(prose.lower())
    for number, (name, pattern) in enumerate(CONCEPTS):
        if number not in present:
            continue
        for match in pattern.finditer(prose):
            result[name] = None
            if masked is None:
                masked = list(prose)
            masked[match.start() : match.end()] = " " * (match.end() - match.start())
    if masked is not None:
        prose = "".join(masked)
    prose = _CAMEL.sub(r"\1 \2", prose).lower()
    for word in _words(prose):
        # len() counts code points, never more than UTF-16 units: a cheap first test
        if (include_single or len(word) >= 2 or js_len(word) >= 2) and word not in STOP_WORDS:
            # interned: an index of 100,000 records holds each word once, not once a record
            result[intern(word)] = None
    return tuple(result)


def document_words(text: str) -> tuple[str, ...]:
    """Document-side features in order, not cached: the recall index keeps them as
    postings, so a cached set per record would be a second copy of every one."""
    return _features(text, False)


def document_features(text: str) -> frozenset[str]:
    """Document-side features as a set (membership only), cached by text."""
    return _document_features(text)


@lru_cache(maxsize=200_000)
def _document_features(text: str) -> frozenset[str]:
    # Not through _cached_features: its tuple would be a second copy of every set.
    return frozenset(_features(text, False))


def feature_offset(text: str, feature: str) -> int:
    """Where ``feature`` first occurs in ``text`` (-1 when it does not), for excerpts."""
    if feature.startswith("literal:"):
        return text.find(feature[8:])
    prose = LITERALS.sub(lambda m: " " * len(m.group(0)), text)
    if feature.startswith("concept:"):
        pattern = _CONCEPT_BY_NAME.get(feature)
        found = pattern.search(prose) if pattern is not None else None
        return found.start() if found is not None else -1
    return prose.lower().find(feature)


# ------------------------------------------------------------- query features

_FILLER = re.compile(
    "为什么|什么|多少|这个|那个|这些|那些|这里|那里|换个话题|新话题|从头开始|不是那个|不是这个|不对|不行|有错|错误"
    "|好的|好吧|没错|没问题|有没有|会不会|是不是|能不能|需不需要|还能|你要|我要|记得|回忆|接着|接上|未完成|未完"
    "|没完成|刚才|以后|看下|做完|开干|开始|讨论|聊聊|帮我|一下|事情|怎么说|说过|[我你它的了呢吗吧啊呀么那这]"
    r"|\b(?:go ahead|proceed|okay|ok|thanks|thank you|start over|new topic|forget that)\b",
    re.IGNORECASE | re.ASCII,
)
_RELATED_MEMORY = re.compile("(?:相关|有关)(?:的)?记忆")
_ABOUT_MEMORY = re.compile("关于(.+?)的(?:记忆|印象)", re.DOTALL)
_MEMORIES_ABOUT = re.compile(
    rf"\bmemories{_S}+(?:(?:related|relevant){_S}+to|about|of|on|regarding)\b",
    re.IGNORECASE | re.ASCII,
)
_YOU_RECALL = re.compile(
    rf"\b(?:do|can|could|would|will)?{_S}*you{_S}+(?:still{_S}+)?recall\b",
    re.IGNORECASE | re.ASCII,
)
_REMIND_ME = re.compile(rf"\bremind{_S}+me\b", re.IGNORECASE | re.ASCII)
_REMEMBER_WORDS = re.compile("记得|回忆")
_MEMORY_SYSTEM = re.compile("记忆(?:系统|库|召回|检索|注入|算法)")

DISCOURSE_WORDS = frozenset(
    "有 无 还 好 也 能 会 要 是 很 都 请 先 再 与 就 对 嗯 哦 啊 说 相关 有关 还有 "
    "其他 这里 那里 自动 不会 能够 不能 系统 具体 详细 详情 信息 内容 记录 历史 当时 "
    "previously still related relevant regarding "
    "discussion discussed conversation conversations talked talking said remind reminder "
    "reminders details detail information history historical matter matters earlier already "
    "exactly know known tell us let's lets please could would does did can you our your "
    "about".split()
)
WEAK_WORDS = frozenset(("配置", "设置", "config", "configuration", "settings", "setup"))


def clean_query(text: str, budget: int = MAX_QUERY_BYTES) -> str:
    """Redact, clip to a byte budget, trim (the planner's ``clean``)."""
    return js_trim(clip_bytes(redact(text), budget))


def _strip_framing(prose: str) -> str:
    value = _RELATED_MEMORY.sub(" ", prose)
    value = _ABOUT_MEMORY.sub(r"\1", value)
    value = _MEMORIES_ABOUT.sub(" ", value)
    value = _YOU_RECALL.sub(" ", value)
    value = _REMIND_ME.sub(" ", value)
    if _REMEMBER_WORDS.search(value) and not _MEMORY_SYSTEM.search(value):
        value = value.replace("记忆", " ")
    return _FILLER.sub(" ", value)


def transform_prose(text: str, transform: Callable[[str], str]) -> str:
    """Apply ``transform`` to the stretches between literals, keeping literals verbatim."""
    out: list[str] = []
    start = 0
    for match in LITERALS.finditer(text):
        out.append(transform(text[start : match.start()]))
        out.append(match.group(0))
        start = match.end()
    out.append(transform(text[start:]))
    return "".join(out)


def query_features(text: str) -> Features:
    """``queryFeatures(text)`` (§6.4): an ordered set, query words in order."""
    return dict.fromkeys(_query_features(text))


@lru_cache(maxsize=4_096)
def _query_features(text: str) -> tuple[str, ...]:
    normalized = transform_prose(clean_query(text), _strip_framing)
    result = features(normalized, True)
    for word in list(result):
        if word in DISCOURSE_WORDS or word in WEAK_WORDS:
            result.pop(word, None)
        if word.startswith("literal:") and "/" in word:
            result.pop(f"literal:{word.split('/')[-1]}", None)
    return tuple(result)


@lru_cache(maxsize=1)
def facets() -> frozenset[str]:
    """Attribute words that refine a subject but do not name one (§6.4)."""
    return frozenset(
        features(
            "端口 认证 进度 版本 超时 价格 状态 路径 输出 输入 安装 连接 性能 错误 "
            "port auth progress version timeout price status path output input "
            "installation connection performance error"
        )
    )


# ------------------------------------------------------------ pasted literals

_FRAME = re.compile(rf"^{_S}*at{_S}")
_DIFF_HEADER = re.compile(rf"^(?:[-+]{{3}}{_S}|@@)")
_HUNK = re.compile(r"^@@ -[0-9]+(?:,([0-9]+))? \+[0-9]+(?:,([0-9]+))? @@")
_DIFF_BODY = re.compile(r"^[-+ \\]")
_FENCE = re.compile(rf"^{_S}*(?:```|~~~)")
_LINE_REFERENCE = re.compile(r":[0-9]+(?::[0-9]+)?\)?[.:]*$")
_REFERENCE_AFTER = re.compile(r"^(?::[0-9]+){1,2}(?![A-Za-z0-9_.])")


def pasted_literals(text: str) -> frozenset[str]:
    """Literal features that occur only in pasted material (§6.6): weighted, not mandatory.

    Lines count as pasted inside a code fence, on a stack-frame line, on a diff
    header or inside a hunk (bounded by its declared counts); a literal with a
    line reference (``:N`` or ``:N:M``) is pasted wherever it is. A literal
    that also appears on an ordinary line stays typed.
    """
    pasted: set[str] = set()
    typed: set[str] = set()
    fenced = hunk = False
    old_left = new_left = float("inf")
    for line in clean_query(text).split("\n"):
        if _FENCE.match(line):
            fenced = not fenced
            hunk = False
            continue
        header = _HUNK.match(line)
        if header:
            hunk = True
            old_left = float(header.group(1) or 1)
            new_left = float(header.group(2) or 1)
        elif _DIFF_HEADER.match(line):
            hunk = True
            old_left = new_left = float("inf")
        elif hunk and (not _DIFF_BODY.match(line) or (old_left <= 0 and new_left <= 0)):
            hunk = False
        elif hunk:
            if line[0] in "- ":
                old_left -= 1
            if line[0] in "+ ":
                new_left -= 1
        quoted = fenced or hunk or _FRAME.match(line) is not None
        for match in LITERALS.finditer(line):
            referenced = bool(_LINE_REFERENCE.search(match.group(0))) or bool(
                _REFERENCE_AFTER.match(line[match.end() :])
            )
            found: Features = {}
            _add_literal(found, match.group(0))
            (pasted if quoted or referenced else typed).update(found)
    return frozenset(pasted - typed)


__all__ = [
    "CONCEPTS",
    "ICU_AVAILABLE",
    "LITERALS",
    "MAX_HISTORY_TURN_BYTES",
    "MAX_QUERY_BYTES",
    "Features",
    "clean_query",
    "document_features",
    "facets",
    "feature_offset",
    "features",
    "locale_key",
    "pasted_literals",
    "query_features",
    "transform_prose",
]
