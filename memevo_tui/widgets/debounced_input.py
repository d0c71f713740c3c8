"""A text box that says when typing pauses, so a view filters or searches once, not per key."""

from __future__ import annotations

from typing import ClassVar

from textual.actions import SkipAction
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.timer import Timer
from textual.widgets import Input

PASSED_UP = ("ctrl+e",)
"""Keys a text box takes by default that the dashboard gives a meaning of its own
(ctrl+e: export): in the box they keep that meaning (``end`` still ends the line)."""


class DebouncedInput(Input):
    """An ``Input`` that posts ``Settled`` once its value has rested for ``delay`` seconds.

    Submitting (enter) settles at once: ``Submitted`` is posted as usual and the
    pending ``Settled`` is dropped. A ``Settled`` already posted when the value
    changes again, or is submitted, is ``stale``: its handler ignores it, so a
    slow machine never applies a half-typed value after the whole one.
    """

    class Settled(Message):
        """The value stopped changing."""

        def __init__(self, box: DebouncedInput, value: str, generation: int) -> None:
            super().__init__()
            self.box = box
            self.value = value
            self.generation = generation

        @property
        def control(self) -> DebouncedInput:
            return self.box

        @property
        def stale(self) -> bool:
            """True when the box changed (or was submitted) after this was posted."""
            return self.generation != self.box.generation

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(key, "pass_up", show=False, id="input.pass_up") for key in PASSED_UP
    ]

    def action_pass_up(self) -> None:
        """The key is the dashboard's: the bindings of the view and the screen take it."""
        raise SkipAction()

    def __init__(self, *, delay: float, placeholder: str = "", id: str | None = None) -> None:
        super().__init__(placeholder=placeholder, id=id)
        self.delay = delay
        self._timer: Timer | None = None
        self.generation = 0
        """Counts changes and submissions: what makes a posted ``Settled`` stale."""

    @property
    def pending(self) -> bool:
        """True while a change waits for typing to pause."""
        return self._timer is not None

    def cancel(self) -> None:
        """Drop the pending ``Settled``, and make any already posted stale."""
        self.generation += 1
        if self._timer is not None:
            self._timer.stop()
            self._timer = None

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input is not self:
            return
        self.cancel()
        value, generation = event.value, self.generation

        def settle() -> None:
            self._timer = None
            self.post_message(self.Settled(self, value, generation))

        self._timer = self.set_timer(self.delay, settle)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input is self:
            self.cancel()
