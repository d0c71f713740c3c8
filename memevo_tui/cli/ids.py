"""Ids as the command line takes them: a unique prefix of a record's or an event's id,
as git takes a short commit; and the refusal of a request that cannot run (exit 2)."""

from __future__ import annotations

from store import MemoryStore


class CannotRun(Exception):
    """The request itself cannot be carried out (exit 2), before the store is asked."""


async def unique_prefix(store: MemoryStore, table: str, given: str) -> str:
    """The id ``given`` is a unique prefix of, as git takes a short commit (the id
    itself when it is whole, or when none starts so: pi's own refusal then says it);
    two or more are refused, with the candidates."""
    if not given:
        return given
    assert table in ("memories", "events")
    found = [str(r[0]) for r in await store.query(
        f"SELECT id FROM {table} WHERE substr(id, 1, ?) = ? ORDER BY id LIMIT 11",
        (len(given), given),
    )]  # fmt: skip
    if given in found or len(found) <= 1:
        return found[0] if found else given
    shown = ", ".join(found[:10]) + (", …" if len(found) > 10 else "")
    many = f"{len(found)}{'+' if len(found) > 10 else ''}"
    what = "records" if table == "memories" else "events"
    raise CannotRun(f"{given} is ambiguous: {many} {what} start so ({shown})")
