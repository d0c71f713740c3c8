"""Filter boxes: free words and ``key:value`` tokens, parsed alike in every view.

Words must all match (case-insensitively). ``key:a,b`` narrows a field to any of
its values; a field with a known set of values also takes an unambiguous prefix
(``kind:dec``). A value a field does not know is an error, said in words under
the box, and the filter then matches nothing: a typo never silently shows
everything. Unknown keys are words.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Field:
    """One ``key:`` a filter box knows."""

    name: str
    aliases: tuple[str, ...]
    values: Mapping[str, str] | None = None
    """Accepted spellings -> the value they mean; None takes any text."""
    whole: bool = False
    """Keep the value as typed (case, commas): for ids."""


@dataclass(frozen=True, slots=True)
class Query:
    words: tuple[str, ...] = ()
    fields: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    errors: tuple[str, ...] = ()

    def get(self, name: str) -> frozenset[str]:
        return frozenset(self.fields.get(name, ()))

    def values(self, name: str) -> tuple[str, ...]:
        return self.fields.get(name, ())

    @property
    def matches_nothing(self) -> bool:
        return bool(self.errors)


def _resolve(spec: Field, value: str) -> str | None:
    assert spec.values is not None
    if value in spec.values:
        return spec.values[value]
    found = {canon for spelling, canon in spec.values.items() if spelling.startswith(value)}
    return found.pop() if len(found) == 1 else None


def parse(text: str, fields: Sequence[Field]) -> Query:
    by_alias = {alias: spec for spec in fields for alias in (spec.name, *spec.aliases)}
    words: list[str] = []
    found: dict[str, list[str]] = {}
    errors: list[str] = []
    for token in text.split():
        key, sep, value = token.partition(":")
        spec = by_alias.get(key.casefold()) if sep else None
        if spec is None:
            words.append(token.casefold())
            continue
        values = [value] if spec.whole else [v for v in value.casefold().split(",") if v]
        if not values or not values[0]:
            errors.append(f"{key}: needs a value")
            continue
        for v in values:
            canon = v if spec.values is None else _resolve(spec, v)
            if canon is None:
                known = ", ".join(dict.fromkeys((spec.values or {}).values()))
                errors.append(f"unknown {spec.name} {v!r} (one of: {known})")
            else:
                found.setdefault(spec.name, []).append(canon)
    return Query(tuple(words), {k: tuple(v) for k, v in found.items()}, tuple(errors))


def say(errors: Sequence[str]) -> str:
    """The errors as the line under a filter box."""
    return "⚠ " + "; ".join(errors) + ": nothing matches" if errors else ""
