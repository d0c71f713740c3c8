"""A list's columns and how one line of it is drawn: the columns that fit a width, the
header with its sort arrow, a row's cells clipped to their widths, and a component
class's style resolved as Textual resolves widget text."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip
from textual.widget import Widget


@dataclass(frozen=True, slots=True)
class Column:
    key: str
    title: str
    width: int  # 0: takes the rest of the line
    sort: str | None = None
    """The sort key a click on the title picks (default: ``key``)."""

    @property
    def sort_key(self) -> str:
        return self.sort or self.key


def fit(text: str, width: int) -> str:
    """Exactly ``width`` cells: clipped with an ellipsis, or padded."""
    if width <= 0:
        return ""
    if cell_len(text) > width:
        return set_cell_size(text, width - 1) + "…"
    return set_cell_size(text, width)


def fitting(
    columns: Sequence[Column], drop_order: Sequence[str], width: int, min_flex: int
) -> tuple[Column, ...]:
    """The columns that fit ``width``, dropping ``drop_order`` first to keep ``min_flex``
    cells for the column that takes the rest."""
    kept = list(columns)
    for key in drop_order:
        fixed = sum(c.width + 1 for c in kept if c.width)
        if width - fixed >= min_flex:
            break
        kept = [c for c in kept if c.key != key]
    return tuple(kept)


def header_strip(
    columns: Sequence[Column], width: int, style: Style, sort_key: str | None, descending: bool
) -> Strip:
    """The header line: each title, the sorted column's with its arrow."""
    segments = []
    used = 0
    for col in columns:
        w = col.width or max(0, width - used)
        title = fit(col.title, w)
        if col.sort_key == sort_key and w:
            arrow = "▼" if descending else "▲"
            # The arrow follows the whole title when it fits, else takes its last cell.
            title = fit(col.title[: min(len(col.title), w - 1)] + arrow, w)
        segments.append(Segment(title, style))
        if col.width:
            segments.append(Segment(" ", style))
        used += w + 1
    return Strip(segments).adjust_cell_length(width, style)


def row_strip(
    columns: Sequence[Column],
    text: Mapping[str, str],
    width: int,
    base: Style,
    classes: Mapping[str, str | None],
    style_of: Callable[[str], Style],
) -> Strip:
    """One row: each column's text clipped to its width, styled ``base`` plus its
    component class's style (``classes``, by column key)."""
    segments: list[Segment] = []
    used = 0
    for col in columns:
        w = col.width or max(0, width - used)
        cls = classes.get(col.key)
        style = base + style_of(cls) if cls else base
        segments.append(Segment(fit(text.get(col.key, ""), w), style))
        if col.width:
            segments.append(Segment(" ", base))
        used += w + 1
    return Strip(segments).simplify().adjust_cell_length(width, base)


def column_at(columns: Sequence[Column], x: int) -> str | None:
    """The sort key of the column drawn at ``x`` (None: none is)."""
    used = 0
    for col in columns:
        width = col.width or 10_000
        if used <= x < used + width + 1:
            return col.sort_key
        used += width + 1
    return None


def resolved_style(widget: Widget, name: str) -> Style:
    """Component class ``name``'s style, its colour resolved as Textual resolves widget
    text: ``auto`` colours contrast with the background and translucent ones are
    blended onto it (a Rich style can do neither)."""
    style = widget.get_component_rich_style(name, partial=True)
    styles = widget.get_component_styles(name)
    color = styles.color
    background = widget.background_colors[1]
    if styles.background.a > 0:  # e.g. the cursor: contrast with its own background
        background = background + styles.background
    if styles.auto_color:  # "auto 60%": contrast with the background, as Textual does
        color = background.get_contrast_text(color.a)
    if color.a < 1:
        style = style + Style(color=(background + color).rich_color)
    return style
