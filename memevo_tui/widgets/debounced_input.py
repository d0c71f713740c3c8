"""A text box that says when typing pauses, so a view filters or searches once, not per key."""

from __future__ import annotations

from textual.message import Message
from textual.timer import Timer
from textual.widgets import Input


class DebouncedInput(Input):
    """An ``Input`` that posts ``Settled`` once its value has rested for ``delay`` seconds.

    Submitting (enter) settles at once: ``Submitted`` is posted as usual and the
    pending ``Settled`` is dropped.
    """

    class Settled(Message):
        """The value stopped changing."""

        def __init__(self, box: DebouncedInput, value: str) -> None:
            super().__init__()
            self.box = box
            self.value = value

        @property
        def control(self) -> DebouncedInput:
            return self.box

    def __init__(self, *, delay: float, placeholder: str = "", id: str | None = None) -> None:
        super().__init__(placeholder=placeholder, id=id)
        self.delay = delay
        self._timer: Timer | None = None

    @property
    def pending(self) -> bool:
        """True while a change waits for typing to pause."""
        return self._timer is not None

    def cancel(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input is not self:
            return
        self.cancel()
        value = event.value

        def settle() -> None:
            self._timer = None
            self.post_message(self.Settled(self, value))

        self._timer = self.set_timer(self.delay, settle)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input is self:
            self.cancel()
