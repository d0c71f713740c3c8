"""The footer: Textual's, rebuilt only when what it shows changes.

Textual's footer rebuilds all its keys after every focus change, and each key is
styled twice as it mounts: about 40 ms for a dozen keys. Moving between panes
whose keys are the same, and the five focus moves while the dashboard starts,
then cost a rebuild each for nothing. This footer remembers what it last showed
and skips a rebuild that would show the same thing.
"""

from __future__ import annotations

from collections.abc import Hashable

from textual.app import ComposeResult
from textual.widgets import Footer


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
        return keys, self.show_command_palette, self.compact, app.ENABLE_COMMAND_PALETTE

    def compose(self) -> ComposeResult:
        showing = self._showing() if self.is_attached else None
        composed = False
        for widget in super().compose():
            composed = True
            yield widget
        self._shown = showing if composed else None

    async def recompose(self) -> None:
        if self._shown is not None and self.is_attached and self._showing() == self._shown:
            return
        await super().recompose()
