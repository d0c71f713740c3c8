"""A scrollable pane of Rich renderables, drawn with Textual's line API.

A pane of stacked ``Static`` widgets has the screen measure each Static's text
for its height whenever the text changes, then render it again to paint it. This
pane renders its parts once per change and width, into lines; the layout that
follows reads their count. A record's detail pane redraws in half the time.
"""

from __future__ import annotations

from rich.console import RenderableType
from textual.geometry import Region, Size
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.visual import Visual, visualize


class TextPane(ScrollView):
    """Parts (any Rich renderables) one under the other, scrolled as one text."""

    DEFAULT_CSS = """
    TextPane {
        overflow-x: hidden;
        overflow-y: auto;
    }
    """

    def __init__(self, parts: int, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._parts: list[RenderableType] = [""] * parts
        self._lines: list[Strip] = []
        self._width = -1  # the width the lines were rendered at (-1: render again)

    def set_part(self, index: int, content: RenderableType) -> None:
        """Replace one part; the pane is drawn again, where it is scrolled to."""
        self._parts[index] = content
        self._width = -1
        self.refresh()

    @property
    def plain(self) -> str:
        """What the pane shows, as plain text (every line, scrolled out of sight or not)."""
        self._render_lines()
        return "\n".join(strip.text.rstrip() for strip in self._lines)

    def _render_lines(self) -> None:
        width = max(1, self.scrollable_content_region.width)
        if width == self._width:
            return
        self._width = width
        # Each part as a Static would render it (Textual's own visuals: a Rich Text
        # wraps as Textual's Content does), one under the other.
        style = self.visual_style
        lines: list[Strip] = []
        for part in self._parts:
            if part != "":
                visual = visualize(self, part, markup=False)
                lines.extend(Visual.to_strips(self, visual, width, None, style))
        self._lines = lines
        self.virtual_size = Size(width, len(lines))

    def render_lines(self, crop: Region) -> list[Strip]:
        self._render_lines()  # once per paint, not once per line
        return super().render_lines(crop)

    def render_line(self, y: int) -> Strip:
        if self._width < 0:
            self._render_lines()
        index = round(self.scroll_offset.y) + y
        if 0 <= index < len(self._lines):
            return self._lines[index]
        return Strip.blank(self._width, self.rich_style)

    def on_resize(self) -> None:
        self._width = -1
