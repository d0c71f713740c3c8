"""Every binding by where it works: the groups help lists, and the scopes in which the
key map checks that no key means two things. It imports every screen whose keys it
names, so the app imports it when first asked (help, or a user's key map), never at
start-up."""

from __future__ import annotations

from textual.binding import BindingType

from ..dialogs.confirm import ConfirmScreen
from ..dialogs.correct import CorrectScreen
from ..dialogs.help import HelpScreen
from ..dialogs.inbox import InboxScreen
from ..dialogs.menu import Menu
from ..dialogs.pager import Pager
from ..dialogs.prompt import PromptScreen
from ..widgets.option_list import KeyedOptionList
from ..widgets.split import Split
from ..widgets.virtual_list import VirtualList
from .dashboard import Dashboard
from .keymap import PALETTE
from .registry import SCREENS, VIEWS


def key_groups() -> list[tuple[str, list[BindingType]]]:
    """Every binding by where it works, as the help lists them."""
    return [
        ("anywhere", [PALETTE, *Dashboard.BINDINGS]),
        ("lists", list(VirtualList.BINDINGS)),
        ("list and pane", list(Split.BINDINGS)),
        *((view.scope, (view.help or view.keys)()) for view in VIEWS if view.scope),
        *((screen.scope, screen.keys()) for screen in SCREENS),
        ("dialogs", [*ConfirmScreen.BINDINGS, *PromptScreen.BINDINGS]),
        ("editor", list(CorrectScreen.BINDINGS)),
        ("menus", list(Menu.BINDINGS)),
        ("since your last visit", list(InboxScreen.BINDINGS)),
        ("a long text, page by page", list(Pager.BINDINGS)),
    ]


def scopes() -> dict[str, list[BindingType]]:
    """Where bindings are active together: a key may mean one thing in each."""
    anywhere: list[BindingType] = [PALETTE, *Dashboard.BINDINGS]
    lists = [*VirtualList.BINDINGS, *Split.BINDINGS]
    return {
        "anywhere": anywhere,
        **{view.scope: [*anywhere, *lists, *view.keys()] for view in VIEWS if view.scope},
        **{screen.scope: [*lists, *screen.keys()] for screen in SCREENS},
        "dialogs": list(ConfirmScreen.BINDINGS),
        "editor": list(CorrectScreen.BINDINGS),
        "help": list(HelpScreen.BINDINGS),
        "menus": [*Menu.BINDINGS, *KeyedOptionList.BINDINGS],
        "prompt": list(PromptScreen.BINDINGS),
        "inbox": [*InboxScreen.BINDINGS, *KeyedOptionList.BINDINGS],
        "pager": list(Pager.BINDINGS),
    }
