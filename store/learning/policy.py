"""``recovery.json``: the routing and budget policy beside the store (STORE.md §2.8.8).

Read and validated as pi reads it: missing means the defaults; anything pi would
reject (over 8,192 bytes, not a JSON object, an unknown key, a wrong type or an
out-of-range value) makes pi refuse to open the store (``Invalid recovery.json``).
A dashboard can still read such a store, read-only, and says why.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..js import _JS_WS, JS_DOT, is_safe_integer, js_len, js_number, utf8_len

MAX_BYTES = 8192
_MODEL = re.compile(f"[^{_JS_WS}/]+/{JS_DOT}+")
"""pi's ``/^[^\\s/]+\\/.+$/u``, matched whole (``fullmatch``: JavaScript's ``$`` is the
end of the text, never before a final newline), with JavaScript's ``\\s`` and ``.``."""


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def js_parse(text: str) -> Any:
    """``JSON.parse``: NaN and Infinity are no JSON; the numbers are read as Python
    reads them and judged as JavaScript does (``js_number``)."""
    return json.loads(text, parse_constant=_no_constant)


class InvalidPolicy(ValueError):
    """pi would refuse the store; the message starts with upstream's ``Invalid recovery.json``."""


@dataclass(frozen=True, slots=True)
class Policy:
    cross_provider_fallback: bool = True
    fallback_models: tuple[str, ...] = ()
    calls_per_hour: int = 20
    source_calls: int = 4
    source_models: int = 2
    timeout_ms: int = 120_000
    source_time_ms: int = 300_000
    daily_estimated_usd: float | None = None
    origin: str = "defaults"
    """Where it came from: ``defaults``, or the ``recovery.json`` path."""
    problem: str | None = None
    """Why pi refuses the ``recovery.json`` beside the store (the defaults stand in)."""

    @property
    def line(self) -> str:
        """The routing report's policy line (§5.9)."""
        fallback = "true" if self.cross_provider_fallback else "false"
        return (
            f"cross-provider fallback={fallback}, models/source<={self.source_models}, "
            f"calls/source<={self.source_calls}, time/source<={self.source_time_ms}ms"
        )


DEFAULT = Policy()


def _integer(key: str, value: Any, low: int, high: int) -> int:
    """``Number.isSafeInteger(value)`` within the bounds: ``20.0`` and ``2e1`` are 20."""
    x = js_number(value)
    if not is_safe_integer(value) or x is None or not low <= x <= high:
        raise InvalidPolicy(f"Invalid recovery.json: {key} must be an integer {low}-{high}")
    return int(x)


def parse_policy(text: str) -> Policy:
    """The policy a ``recovery.json`` text gives (raises ``InvalidPolicy``), judged as
    pi's ``loadRoutingPolicy`` judges it."""
    if utf8_len(text) > MAX_BYTES:
        raise InvalidPolicy(f"Invalid recovery.json: larger than {MAX_BYTES} bytes")
    try:
        data = js_parse(text)
    except (ValueError, RecursionError) as exc:
        raise InvalidPolicy(f"Invalid recovery.json: not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise InvalidPolicy("Invalid recovery.json: expected a JSON object")
    known = {
        "crossProviderFallback", "fallbackModels", "callsPerHour", "sourceCalls",
        "sourceModels", "timeoutMs", "sourceTimeMs", "dailyEstimatedUsd",
    }  # fmt: skip
    unknown = sorted(set(data) - known)
    if unknown:
        raise InvalidPolicy(f"Invalid recovery.json: unknown key {unknown[0]!r}")
    values: dict[str, Any] = {}
    if "crossProviderFallback" in data:
        if not isinstance(data["crossProviderFallback"], bool):
            raise InvalidPolicy("Invalid recovery.json: crossProviderFallback must be a boolean")
        values["cross_provider_fallback"] = data["crossProviderFallback"]
    if "fallbackModels" in data:
        models = data["fallbackModels"]
        if (
            not isinstance(models, list)
            or len(models) > 16
            or not all(
                isinstance(m, str) and js_len(m) <= 200 and _MODEL.fullmatch(m) for m in models
            )
        ):
            raise InvalidPolicy(
                "Invalid recovery.json: fallbackModels must be at most 16 provider/model-id "
                "strings of at most 200 characters"
            )
        values["fallback_models"] = tuple(models)
    for key, field, low, high in (
        ("callsPerHour", "calls_per_hour", 1, 1000),
        ("sourceCalls", "source_calls", 1, 8),
        ("sourceModels", "source_models", 1, 3),
        ("timeoutMs", "timeout_ms", 1000, 120_000),
        ("sourceTimeMs", "source_time_ms", 1000, 600_000),
    ):
        if key in data:
            values[field] = _integer(key, data[key], low, high)
    if "dailyEstimatedUsd" in data:
        usd = js_number(data["dailyEstimatedUsd"])
        if data["dailyEstimatedUsd"] is not None and (
            usd is None or not math.isfinite(usd) or not 0 < usd <= 1000
        ):
            raise InvalidPolicy(
                "Invalid recovery.json: dailyEstimatedUsd must be null or a number in (0, 1000]"
            )
        values["daily_estimated_usd"] = usd
    return Policy(**values)


def read_policy(state_dir: Path) -> Policy:
    """The policy in ``state_dir/recovery.json``; the defaults when there is none."""
    path = state_dir / "recovery.json"
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return DEFAULT
    except OSError as exc:
        raise InvalidPolicy(f"Invalid recovery.json: cannot be read ({exc.strerror})") from None
    text = raw.decode("utf-8", "replace")  # as Node's readFileSync(…, "utf8"): U+FFFD
    return replace(parse_policy(text), origin=str(path))
