"""A view's filter box, with what is wrong with the filter said in words under it."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from .debounced_input import DebouncedInput


class FilterBox(Vertical):
    """A text box that settles after a typing pause, and an error line (hidden when empty).

    Its ``DebouncedInput.Settled`` and ``Input.Submitted`` reach the view as usual.
    """

    def __init__(self, *, delay: float, placeholder: str, id: str) -> None:
        super().__init__(id=f"{id}-box")
        self._box = DebouncedInput(delay=delay, placeholder=placeholder, id=id)

    def compose(self) -> ComposeResult:
        yield self._box
        yield Static(classes="filter-error", markup=False)

    @property
    def box(self) -> DebouncedInput:
        return self._box

    @property
    def value(self) -> str:
        return self._box.value

    def show_error(self, text: str) -> None:
        line = self.query_one(".filter-error", Static)
        line.update(text)
        line.set_class(bool(text), "-shown")

    @property
    def error(self) -> str:
        line = self.query_one(".filter-error", Static)
        return str(line.render()) if line.has_class("-shown") else ""
