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

    def __init__(self, parts: int, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._parts: list[RenderableType] = [""] * parts
        self._rendered: list[tuple[int, list[Strip]] | None] = [None] * parts
        """Each part's lines and the width they were rendered at (None: not yet)."""
        self._lines: list[Strip] = []
        self._width = -1  # the width the lines were joined at (-1: join again)

    def part(self, index: int) -> RenderableType:
        """What part ``index`` holds now."""
        return self._parts[index]

    def set_part(self, index: int, content: RenderableType) -> None:
        """Replace one part; the pane is drawn again, where it is scrolled to. The other
        parts are not rendered again."""
        self._parts[index] = content
        self._rendered[index] = None
        self._width = -1
        self.refresh()
        if self.is_mounted and self.size:
            # Now, not when painted: the new height is known before the next screen
            # update, which then lays the pane out and paints it at once.
            self._render_lines()

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
        for index, part in enumerate(self._parts):
            rendered = self._rendered[index]
            if rendered is None or rendered[0] != width:
                strips: list[Strip] = []
                if part != "":
                    visual = visualize(self, part, markup=False)
                    strips = Visual.to_strips(self, visual, width, None, style)
                rendered = self._rendered[index] = (width, strips)
            lines.extend(rendered[1])
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

    def notify_style_update(self) -> None:
        super().notify_style_update()  # a new theme or focus style: render every part again
        self._rendered = [None] * len(self._parts)
        self._width = -1

    def on_resize(self) -> None:
        self._width = -1
