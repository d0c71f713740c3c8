"""Textual's private names that the tests need, every one of them.

A test waits until the dashboard has handled everything (every node's message queue
empty, no layout or paint pending), reads the toasts shown, and finds the footer's
keys and a toast's widget by class. Textual offers none of these publicly; the tests
reach them through this module only, and ``tests/test_compat.py`` checks each one
against the installed Textual, so an upgrade that moves one fails there, by name.

Checked against Textual 8.2.
"""

from __future__ import annotations

from typing import Any

from textual.app import App
from textual.dom import DOMNode
from textual.notifications import Notification
from textual.screen import Screen
from textual.widgets._footer import FooterKey
from textual.widgets._toast import Toast

__all__ = ["FooterKey", "Toast", "layout_pending", "notifications", "pending_messages"]


def notifications(app: App[Any]) -> list[Notification]:
    """The toasts the app holds now, oldest first."""
    return list(app._notifications)


def pending_messages(node: DOMNode) -> int:
    """How many messages ``node`` has not handled yet."""
    return node._message_queue.qsize()


def layout_pending(screen: Screen[Any]) -> bool:
    """A layout, a scroll or a repaint of ``screen`` is still to come."""
    return bool(screen._layout_required or screen._scroll_required or screen._dirty_widgets)
