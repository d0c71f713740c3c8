"""pi's recall concepts (§6.3): the words and phrases each concept stands for, in
English and Chinese, and the literal anchors that find a text's concepts in one pass
(a concept is looked for only where one of its anchors is)."""

from __future__ import annotations

import re

_CONCEPT_SRC: tuple[tuple[str, str], ...] = (
    ("memory", r"记忆|\bmemor(?:y|ies)\b"),
    ("session", r"会话|\bsessions?\b"),
    ("project", r"项目|\bprojects?\b"),
    ("directory", r"目录|文件夹|\b(?:director(?:y|ies)|folders?|cwd)\b"),
    (
        "cross-context",
        r"跨会话|跨项目|跨目录|限定|限制|不限于?|\b(?:across|regardless|restrict(?:ed|ion|ions)?"
        r"|limit(?:ed|ation|ations)?|cross-session|cross-project|cross-directory)\b",
    ),
    ("recall", r"召回|检索|\b(?:recall|retrieval|retrieve|search)\b"),
    ("injection", r"注入|\binject(?:ion|ed|ing)?\b"),
    ("preference", r"偏好|\bprefer(?:ence|ences|red)?\b"),
    ("model", r"模型|\bmodels?\b"),
    ("auth", r"认证|鉴权|\b(?:auth|authentication|authorization)\b"),
    ("reuse", r"复用|重用|\breus(?:e|ed|ing)\b"),
    ("database", r"数据库|\bdatabases?\b"),
    ("port", r"端口|\bports?\b"),
    ("network", r"网络|\bnetwork(?:s|ing)?\b"),
    ("bluetooth", r"蓝牙|\bbluetooth\b"),
    ("audio", r"音响|音频|\b(?:audio|speakers?)\b"),
    ("review", r"审查|审阅|\breview(?:ed|ing)?\b"),
    ("commit", r"提交|\bcommit(?:s|ted|ting)?\b"),
    ("push", r"推送|\bpush(?:ed|ing)?\b"),
    ("progress", r"进度|进展|\bprogress\b"),
    ("pending", r"尚未|仍在|待完成|未完成|\b(?:pending|not yet|in progress)\b"),
    ("done", r"已完成|完成了|\b(?:completed|finished|done)\b"),
    ("test", r"测试|\btests?(?:ing|ed)?\b"),
    ("verification", r"验证|校验|\b(?:verify|verified|verification|validation|validate)\b"),
    ("timeout", r"超时|\btime[ -]?outs?\b"),
    ("version", r"版本|\bversions?\b"),
    ("price", r"价格|价钱|\b(?:prices?|pricing|costs?)\b"),
    ("status", r"状态|\bstatus\b"),
    ("path", r"路径|\bpaths?\b"),
    ("output", r"输出|\boutputs?\b"),
    ("input", r"输入|\binputs?\b"),
    ("installation", r"安装|\binstall(?:ation|ed|ing)?\b"),
    ("connection", r"连接|\bconnect(?:ion|ions|ed|ing)?\b"),
    ("performance", r"性能|\bperformance\b"),
)
CONCEPTS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (f"concept:{name}", re.compile(src, re.IGNORECASE | re.ASCII)) for name, src in _CONCEPT_SRC
)
_CONCEPT_BY_NAME = dict(CONCEPTS)

# Substrings (of the lower-cased text) without which a concept cannot match: a quick
# test before running its pattern. Every alternative of a pattern contains one.
_ANCHORS: dict[str, tuple[str, ...]] = {
    "memory": ("记忆", "memor"),
    "session": ("会话", "session"),
    "project": ("项目", "project"),
    "directory": ("目录", "文件夹", "director", "folder", "cwd"),
    "cross-context": (
        "跨会话", "跨项目", "跨目录", "限定", "限制", "不限", "across", "regardless",
        "restrict", "limit", "cross-",
    ),
    "recall": ("召回", "检索", "recall", "retriev", "search"),
    "injection": ("注入", "inject"),
    "preference": ("偏好", "prefer"),
    "model": ("模型", "model"),
    "auth": ("认证", "鉴权", "auth"),
    "reuse": ("复用", "重用", "reus"),
    "database": ("数据库", "database"),
    "port": ("端口", "port"),
    "network": ("网络", "network"),
    "bluetooth": ("蓝牙", "bluetooth"),
    "audio": ("音响", "音频", "audio", "speaker"),
    "review": ("审查", "审阅", "review"),
    "commit": ("提交", "commit"),
    "push": ("推送", "push"),
    "progress": ("进度", "进展", "progress"),
    "pending": ("尚未", "仍在", "待完成", "未完成", "pending", "not yet", "in progress"),
    "done": ("已完成", "完成了", "completed", "finished", "done"),
    "test": ("测试", "test"),
    "verification": ("验证", "校验", "verif", "validat"),
    "timeout": ("超时", "time"),
    "version": ("版本", "version"),
    "price": ("价格", "价钱", "pric", "cost"),
    "status": ("状态", "status"),
    "path": ("路径", "path"),
    "output": ("输出", "output"),
    "input": ("输入", "input"),
    "installation": ("安装", "install"),
    "connection": ("连接", "connect"),
    "performance": ("性能", "performance"),
}  # fmt: skip
# Each concept's pattern runs only where one of its anchors occurs. One pattern finds
# every anchor of every concept: it is searched again from one character after each
# match, so overlapping anchors are all found, and as the longest anchor at a place
# wins, a match stands for the concepts of every anchor it begins with.
_ANCHOR_CONCEPTS = tuple((a, i) for i, (n, _) in enumerate(CONCEPTS) for a in _ANCHORS[n[8:]])
_ANCHOR_ORDER = sorted({a for a, _ in _ANCHOR_CONCEPTS}, key=lambda a: (-len(a), a))
_ANY_ANCHOR = re.compile("|".join(map(re.escape, _ANCHOR_ORDER)))
_IMPLIED: dict[str, frozenset[int]] = {
    found: frozenset(i for a, i in _ANCHOR_CONCEPTS if found.startswith(a))
    for found in _ANCHOR_ORDER
}


def _anchored_concepts(lowered: str) -> set[int]:
    """The positions in ``CONCEPTS`` of the concepts with an anchor in ``lowered``
    (the same as testing ``anchor in lowered`` for every anchor of every concept)."""
    present: set[int] = set()
    search = _ANY_ANCHOR.search
    pos = 0
    while (found := search(lowered, pos)) is not None:
        present |= _IMPLIED[found.group()]
        pos = found.start() + 1
    return present
