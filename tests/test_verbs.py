"""One declaration per curation verb (``memevo_tui.core.verbs``), read by the keys, the palette,
the help, the bulk planner and the command line."""

from __future__ import annotations

from pathlib import Path

import pytest

from memevo_tui.__main__ import build_parser
from memevo_tui.app.commands import all_commands
from memevo_tui.app.keygroups import key_groups
from memevo_tui.cli.parser import WRITE_VERBS
from memevo_tui.core.verbs import BULK_VERBS, CLI_VERBS, KEYED, VERBS, named
from memevo_tui.dialogs.confirm import ConfirmScreen
from memevo_tui.widgets.memory_list import MemoryList

from apphelpers import dialog_text, opened, press, settle, stored


@pytest.mark.parametrize("verb", KEYED, ids=lambda v: v.name)
def test_a_keyed_verb_is_a_key_a_palette_entry_and_a_help_line(verb) -> None:  # type: ignore[no-untyped-def]
    bindings = {b.id: b for b in MemoryList.BINDINGS if not isinstance(b, tuple)}
    binding = bindings[verb.binding_id]
    assert (binding.key, binding.action, binding.description) == (verb.key, verb.action, verb.label)
    assert (verb.palette, verb.binding_id, f"screen.curate({verb.name!r})") in all_commands()
    helped = {b.id for _, group in key_groups() for b in group if not isinstance(b, tuple)}
    assert verb.binding_id in helped


def test_every_cli_write_verb_comes_from_the_registry() -> None:
    assert set(WRITE_VERBS) == {v.cli for v in VERBS if v.cli}
    parser = build_parser()
    for name, first in CLI_VERBS.items():
        sample = {"text": "new text", "verdict": "useful"}
        args = parser.parse_args([name, *(sample.get(a, "x") for a in first.cli_args)])
        assert args.verb == name
    for v in VERBS:
        if v.bulk:
            assert v.name in BULK_VERBS and v.words and "{n}" in v.did


def test_the_words_of_a_verb() -> None:
    assert named("resolve").words == "resolve as confirmed"
    assert named("forget").did.format(n=3) == "Forgot 3"


async def test_bulk_adopt_names_the_origin_once_and_adopts(realistic: Path) -> None:
    async with opened(realistic) as (app, pilot):
        await pilot.press("slash", *"origin:legacy", "enter")
        await settle(pilot)
        await press(pilot, "ctrl+a", "A")
        await pilot.press(*"/home/me/app", "enter")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        text = dialog_text(app.screen)
        assert "Adopt into /home/me/app: " in text and "into into" not in text
        marked = sorted(app.query_one("#memory-list", MemoryList).marked)
        await press(pilot, "y")
        adopted = [m for m in marked if stored(realistic, m)["scope"] == "/home/me/app"]
        assert adopted  # the legacy records joined the origin (pi's refusals aside)


async def test_each_view_is_a_tab_a_key_a_palette_entry_and_a_scope(realistic: Path) -> None:
    from textual.widgets import TabbedContent

    from memevo_tui.app.dashboard import Dashboard
    from memevo_tui.app.keygroups import scopes
    from memevo_tui.app.registry import VIEWS

    ids = {b.id for b in Dashboard.BINDINGS if not isinstance(b, tuple)}
    named_scopes = scopes()
    async with opened(realistic) as (app, pilot):
        tabs = app.query_one("#tabs", TabbedContent)
        for view in reversed(VIEWS):  # memories last: its key is pressed from another tab
            assert f"app.{view.id}" in ids
            entry = (view.palette, view.binding.id, f"screen.show_tab({view.id!r})")
            assert entry in all_commands()
            assert not view.scope or view.scope in named_scopes
            await press(pilot, "escape", view.key)  # out of a prompt box first
            assert tabs.active == view.id
            assert isinstance(app.screen.query_one(f"#{view.id}").query_one(view.cls), view.cls)


def test_every_palette_entry_names_an_action_that_is_there() -> None:
    """A palette entry names an action of the app or the dashboard; ``ask`` names a view
    of the registry and a method of its class; ``open_screen`` a screen of it. A renamed
    method breaks this test, not a user's palette (Textual ignores an unknown action)."""
    import ast

    from memevo_tui.app import MemevoApp
    from memevo_tui.app.dashboard import Dashboard
    from memevo_tui.app.registry import SCREENS, VIEWS

    views = {v.id: v.cls for v in VIEWS}
    seen = set()
    for title, _, action in all_commands():
        target, _, rest = action.partition(".")
        owner = Dashboard if target == "screen" else MemevoApp
        name, _, args = (rest if target == "screen" else action).partition("(")
        assert hasattr(owner, f"action_{name}"), title
        seen.add(name)
        inside = args.rstrip(")")
        values = [str(v) for v in ast.literal_eval(f"({inside},)")] if inside else []
        if name == "ask":
            assert callable(getattr(views[values[0]], values[1], None)), title
        if name == "open_screen":
            assert values[0] in {s.id for s in SCREENS}, title
    assert {"ask", "open_screen", "show_tab", "curate"} <= seen


async def test_history_filters_by_every_verb_the_registry_declares(realistic: Path) -> None:
    """History's ``verb:`` filter is read from the registry, never a copied list: every
    curation verb and every verb an event of the fixture's log shows is a value of it."""
    from memevo_tui.core.verbs import LOGGED, PI_WRITES
    from memevo_tui.views.history import FIELDS
    from memevo_tui.widgets.event_list import verb
    from store import Event, MemoryStore

    known = next(f for f in FIELDS if f.name == "verb").values
    assert known is not None
    assert set(known) == set(PI_WRITES) | {v.name for v in VERBS if not v.parts} == set(LOGGED)
    store = await MemoryStore.open(realistic, read_only=True)
    try:
        shown = {verb(e) for e in await store.events(limit=None) if isinstance(e, Event)}
    finally:
        await store.close()
    assert len(shown) >= 10 and shown <= set(known)


def test_no_module_but_the_registry_handles_a_verb_by_its_name() -> None:
    """What differs between verbs is a field of ``verbs.Verb``: a comparison with a
    verb's name (``verb == "conflict"``, ``op in ("adopt", ...)``) anywhere else fails."""
    import ast

    from memevo_tui.core.verbs import BY_NAME

    package = Path(__file__).resolve().parent.parent / "memevo_tui"
    found = []
    for path in sorted(package.rglob("*.py")):
        if path.parent == package / "core" / "verbs":  # the registry itself
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            sides: list[ast.AST]
            if isinstance(node, ast.Compare):
                sides, line = [node.left, *node.comparators], node.lineno
            elif isinstance(node, ast.match_case):
                sides, line = [node.pattern], node.pattern.lineno
            else:
                continue
            if any(isinstance(n, ast.Attribute) and n.attr == "verdict" for n in sides):
                continue  # a stored verdict (pi's data), not the verb that writes one
            names = {
                n.value
                for side in sides
                for n in ast.walk(side)
                if isinstance(n, ast.Constant) and isinstance(n.value, str)
            }
            for name in names & BY_NAME.keys():
                found.append(f"{path.relative_to(package.parent)}:{line}: {name!r}")
    assert not found, "a verb handled by name outside memevo_tui/core/verbs/:\n" + "\n".join(found)
