"""JavaScript-compatibility primitives (STORE.md §0.3, §2.2.4, §2.2.5)."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from store.js import clip_bytes, fp, iso, js_json, js_len, js_trim, parse_ms
from store.write.redact import redact


def test_fingerprint_worked_value() -> None:
    assert fp("Database port is 5432.") == "717b35982495cb8ea2d3e7bd"
    assert fp("  Database port is 5432.\n") == "717b35982495cb8ea2d3e7bd"


def test_record_id_worked_values() -> None:
    assert fp(js_json(["/project", "fact", "Database port is 5432."])) == "3c37ee02cb038f88e375a2bf"
    atlas = ["/home/alice/atlas", "fact", "Database port is 5432."]
    assert fp(js_json(atlas)) == "8d07bdf82bdfe1e1c344bdd6"


def test_js_trim_uses_the_javascript_set() -> None:
    assert js_trim("\ufeff x \u3000") == "x"
    assert js_trim("\x1cx\x1c") == "\x1cx\x1c"  # Python's strip() would remove these


def test_length_counts_utf16_units() -> None:
    assert js_len("abc") == 3
    assert js_len("😀") == 2
    assert js_len("中文") == 2


def test_timestamps_round_trip_in_javascript_shape() -> None:
    ms = parse_ms("2026-09-01T00:00:00.000Z")
    assert ms == 1788220800000.0
    assert iso(ms) == "2026-09-01T00:00:00.000Z"
    assert parse_ms("2026-09-01") == ms
    assert parse_ms("2026-09-01T02:00:00+02:00") == ms
    assert parse_ms("2026-09-01T00:00:00") is None  # local time: never accepted
    assert parse_ms("yesterday") is None
    assert iso(parse_ms("2026-11-02T12:03:00.000Z") or 0) == "2026-11-02T12:03:00.000Z"


def test_clip_bytes_never_splits_a_code_point() -> None:
    assert clip_bytes("aé", 2) == "a"
    assert clip_bytes("abc", 5) == "abc"


def test_redactor_blocks_credentials() -> None:
    assert redact("password = 'hunter2'").startswith("[REDACTED")
    assert redact("curl -H 'Authorization: Bearer abc'") == "[REDACTED sensitive line]"
    assert redact("ghp_abcdef is my token") == "[REDACTED sensitive line]"
    assert redact("plain\r\ntext\x1b[31m") == "plain\ntext[31m"


@given(st.text())
def test_js_json_is_compact_and_round_trips(text: str) -> None:
    encoded = js_json([text, {"k": text}])
    assert json.loads(encoded) == [text, {"k": text}]
    assert ", " not in encoded.replace(text, "") and ": " not in encoded.replace(text, "")


@given(st.text())
def test_fingerprint_ignores_only_outer_white_space(text: str) -> None:
    assert fp(f" \t{text}\n") == fp(text)
    assert len(fp(text)) == 24
