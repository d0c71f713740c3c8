"""The footer: Textual's, rebuilt only when what it shows changes, and fitted to
the width it has.

Textual's footer rebuilds all its keys after every focus change, and each key is
styled twice as it mounts: about 40 ms for a dozen keys. Moving between panes
whose keys are the same, and the five focus moves while the dashboard starts,
then cost a rebuild each for nothing. This footer remembers what it last showed
and skips a rebuild that would show the same thing.

Textual's footer also lets keys run under the palette key at the right edge: at 80
columns, Quit and Help were cut to ``q▏``. This one leaves out the keys that do not
fit, the last ones first (those farthest from the focused widget), and never the
keys that quit and open help: every key is still in help and in the palette.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable

from rich.cells import cell_len
from textual.app import ComposeResult
from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

KEPT_IDS = frozenset({"app.quit", "app.help"})
"""The binding ids whose keys the footer always shows."""


def key_width(key: FooterKey) -> int:
    """The columns a key takes, as Textual's footer draws it (not compact): the key
    with a space either side, then its description and a space."""
    width = cell_len(key.key_display) + 2
    return width + cell_len(key.description) + 1 if key.description else width


def fitted(keys: list[FooterKey], room: int, kept: Iterable[str]) -> list[FooterKey]:
    """The keys that fit in ``room`` columns: the last ones leave first, never those
    whose action is in ``kept``."""
    kept = set(kept)
    shown = list(keys)
    spare = [k for k in reversed(shown) if k.action not in kept]
    while spare and sum(key_width(k) for k in shown) > room:
        shown.remove(spare.pop(0))
    return shown


class AppFooter(Footer):
    """The dashboard's footer."""

    _shown: Hashable | None = None
    """What the last compose showed (None: nothing yet)."""

    def _showing(self) -> Hashable:
        """Everything the footer's keys are built from."""
        app = self.app
        palette = app.COMMAND_PALETTE_BINDING
        keys = tuple(
            (
                key,
                binding.action,
                binding.description,
                app.get_key_display(binding),
                binding.group,
                enabled,
                tooltip,
            )
            for key, (_, binding, enabled, tooltip) in self.screen.active_bindings.items()
            if binding.show or key == palette
        )
        shown = (self.show_command_palette, self.compact, app.ENABLE_COMMAND_PALETTE)
        return keys, shown, self._width()

    def _width(self) -> int:
        return self.size.width or self.app.size.width

    def compose(self) -> ComposeResult:
        showing = self._showing() if self.is_attached else None
        widgets = list(super().compose())
        keys = [w for w in widgets if isinstance(w, FooterKey)]
        if self.is_attached and not self.compact and len(keys) == len(widgets):
            widgets = self._fit(keys)
        yield from widgets
        self._shown = showing if widgets else None

    def _fit(self, keys: list[FooterKey]) -> list[Widget]:
        palette = [k for k in keys if k.has_class("-command-palette")]
        room = self._width() - sum(key_width(k) + 2 for k in palette)  # its border, padding
        kept = {
            binding.action
            for _, binding, _, _ in self.screen.active_bindings.values()
            if binding.id in KEPT_IDS
        }
        return [*fitted([k for k in keys if k not in palette], room, kept), *palette]

    def on_resize(self) -> None:
        self.call_later(self.recompose)

    async def recompose(self) -> None:
        if self._shown is not None and self.is_attached and self._showing() == self._shown:
            return
        await super().recompose()
