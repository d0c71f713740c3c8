"""Notices that wait while a dialog is open.

A notice drawn over a dialog hides its text or its buttons, and one drawn over the
dashboard's status line hides the line that says where the user is. When a dialog
opens, the notices on screen wait for it to close (``suspend``), with the time they
had left; while it is open, a notice that only informs waits too, and a warning or
an error is shown at once, at the top of the screen (the stylesheet docks notices
there on a dialog's screen). On the dashboard, notices stand above the status line
and the footer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from textual.app import App
from textual.notifications import Notification, SeverityLevel
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

    @property
    def waiting(self) -> tuple[Notice, ...]:
        """The notices waiting now, oldest first."""
        return tuple(self._held)

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

    def suspend(self, app: App[object], showing: Iterable[Notification]) -> None:
        """A dialog opens: the notices ``showing`` leave the screen and wait for it to
        close, each with the time it had left."""
        for n in showing:
            if n.time_left > 0:
                self._held.append(Notice(n.message, n.title, n.severity, n.time_left))
        app.clear_notifications()

    def release(self) -> None:
        """Show the notices held so far (a dialog closed)."""
        held, self._held = self._held, []
        for notice in held:
            self._show(notice)


def dialog_opened(app: App[object]) -> None:
    """A dialog opens over the dashboard: the notices on screen wait for it to close."""
    held = getattr(app, "held_notices", None)
    if isinstance(held, HeldNotices):
        held.suspend(app, list(app._notifications))  # Textual's own list: no public door


def dialog_closed(app: App[object]) -> None:
    """The dialog closed: the notices that waited are shown."""
    held = getattr(app, "held_notices", None)
    if isinstance(held, HeldNotices):
        held.release()
