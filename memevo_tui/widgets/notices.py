"""Notices that wait while a dialog is open.

A notice drawn over a dialog hides its text or its buttons, and one drawn over the
dashboard's status line hides the line that says where the user is. While a dialog
is open, a notice that only informs waits, and is shown, with its full time on
screen, once the dialog closes; a warning or an error is shown at once, at the top
of the screen (the stylesheet docks notices there on a dialog's screen). On the
dashboard, notices stand above the status line and the footer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from textual.notifications import SeverityLevel
from textual.screen import ModalScreen, Screen


@dataclass(frozen=True, slots=True)
class Notice:
    """A notice as the app shows it: its text already made safe to draw."""

    message: str
    title: str
    severity: SeverityLevel
    timeout: float | None


class HeldNotices:
    """The notices that wait for a dialog to close, oldest first."""

    def __init__(self, show: Callable[[Notice], None]) -> None:
        self._held: list[Notice] = []
        self._show = show

    def hold(self, screen: Screen[object], notice: Notice) -> bool:
        """True: ``notice`` waits (an information over a dialog); False: show it now."""
        if notice.severity == "information" and isinstance(screen, ModalScreen):
            self._held.append(notice)
            return True
        return False

    def offer(self, screen: Screen[object], notice: Notice) -> None:
        """Show ``notice`` now, or once the dialog on ``screen`` closes."""
        if not self.hold(screen, notice):
            self._show(notice)

    def release(self) -> None:
        """Show the notices held so far (a dialog closed)."""
        held, self._held = self._held, []
        for notice in held:
            self._show(notice)
