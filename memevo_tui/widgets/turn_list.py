"""pi's sessions and their turns: one list of sessions, one of a session's prompts, and
the highlighted prompt in full (what pi injected then, what it would inject now)."""

from __future__ import annotations

from typing import ClassVar

from rich.console import Group, RenderableType
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.message import Message

from store import RECALL_VERSION, Turn, iso

from ..core.text import capped, one_line, visible
from ..core.turnlog import SessionTurns
from ..core.view import origin_name
from .text_pane import TextPane
from .virtual_list import Column, VirtualList

AS_PI = f"as pi {RECALL_VERSION} would recall"


def _ids(ids: tuple[str, ...] | None) -> str:
    if ids is None:
        return "?"
    return " ".join(i[:8] for i in ids) or "–"


def turn_mark(t: Turn) -> str:
    """One character: ? not known then, ~ approximate, ≠ differs now, blank the same."""
    if t.then is None:
        return "?"
    if t.approximate:
        return "~"
    return "≠" if t.differs else " "


class SessionList(VirtualList[SessionTurns]):
    """pi's sessions, newest first: when, project, prompts and how many got memories."""

    COLUMNS = (
        Column("started", "STARTED", 16),
        Column("project", "PROJECT", 12),
        Column("prompts", "PROMPTS", 7),
        Column("memories", "GOT", 4),
        Column("differ", "≠NOW", 4),
        Column("file", "SESSION", 0),
    )
    DROP_ORDER = ("differ", "project")
    CLASS_PREFIX = "session-list"
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "session-list--header",
        "session-list--cursor",
        "session-list--empty",
        "session-list--problem",
    }
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "enter",
            "open",
            "Its prompts",
            id="turns.open",
            tooltip="List the session's prompts with what pi injected then and now",
        ),
    ]

    class Highlighted(VirtualList.Highlighted):
        """The highlighted session changed."""

    class Opened(Message):
        def __init__(self, session_list: SessionList, row: SessionTurns) -> None:
            super().__init__()
            self.session_list = session_list
            self.row = row

        @property
        def control(self) -> SessionList:
            return self.session_list

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.empty_text = "Reading pi's sessions…"

    def make_highlighted(self, row: SessionTurns | None) -> SessionList.Highlighted:
        return self.Highlighted(self, row)

    def row_key(self, row: SessionTurns) -> str:
        return row.key

    def cells(self, row: SessionTurns) -> dict[str, str]:
        s = row.session
        problem = f"  ({s.problem})" if s.problem else ""
        corrupt = f"  ({s.corrupt} corrupt line(s) skipped)" if s.corrupt else ""
        corrupt += f"  ({s.note})" if s.note else ""
        branches = f"  {s.branches} branches" if s.branches > 1 else ""
        return {
            "started": s.started[:16].replace("T", " "),
            "project": one_line(origin_name(s.project)),
            "prompts": str(len(s.prompts)),
            "memories": str(row.with_memories),
            "differ": str(row.differing),
            "file": one_line(f"{s.session_id or s.file.name}{branches}{corrupt}{problem}"),
        }

    def cell_class(self, row: SessionTurns, column: str) -> str | None:
        return "problem" if row.session.problem else None

    def yank_text(self, row: SessionTurns, long: bool) -> tuple[str, str] | None:
        return str(row.session.file), "the session file's path"

    def action_open(self) -> None:
        row = self.highlighted
        if row is not None:
            self.post_message(self.Opened(self, row))


class TurnList(VirtualList[Turn]):
    """One session's prompts in branch order (the active branch first)."""

    COLUMNS = (
        Column("at", "TIME (UTC)", 16),
        Column("mark", "", 1),
        Column("branch", "BR", 2),
        Column("then", "THEN", 13),
        Column("now", "NOW", 13),
        Column("prompt", "PROMPT", 0),
    )
    DROP_ORDER = ("branch", "at", "now")
    CLASS_PREFIX = "turn-list"
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "turn-list--header",
        "turn-list--cursor",
        "turn-list--empty",
        "turn-list--unknown",
        "turn-list--differs",
    }
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "enter",
            "open",
            "Recall then",
            id="turns.recall",
            tooltip="The recall preview on this prompt, with its earlier turns, "
            "the time dial at its moment",
        ),
    ]

    class Highlighted(VirtualList.Highlighted):
        """The highlighted prompt changed."""

    class Opened(Message):
        def __init__(self, turn_list: TurnList, row: Turn) -> None:
            super().__init__()
            self.turn_list = turn_list
            self.row = row

        @property
        def control(self) -> TurnList:
            return self.turn_list

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.empty_text = "No prompts in this session."

    def make_highlighted(self, row: Turn | None) -> TurnList.Highlighted:
        return self.Highlighted(self, row)

    def row_key(self, row: Turn) -> str:
        return row.prompt.entry_id

    def cells(self, row: Turn) -> dict[str, str]:
        p = row.prompt
        return {
            "at": iso(p.moment_ms)[:16].replace("T", " "),
            "mark": turn_mark(row),
            "branch": str(p.branch) if p.branch else "",
            "then": _ids(row.then),
            "now": _ids(row.now),
            "prompt": one_line(p.text, 400),
        }

    def cell_class(self, row: Turn, column: str) -> str | None:
        if column in ("mark", "then") and row.then is None:
            return "unknown"
        if column == "mark" and turn_mark(row) in "≠~":
            return "differs"
        return None

    def yank_text(self, row: Turn, long: bool) -> tuple[str, str] | None:
        if long:
            return row.prompt.text, "the prompt"
        return f"{row.prompt.file} {row.prompt.entry_id}", "the session file and the entry id"

    def action_open(self) -> None:
        row = self.highlighted
        if row is not None:
            self.post_message(self.Opened(self, row))


def describe_session(row: SessionTurns | None) -> RenderableType:
    """A session: its file, its prompts and what became of them."""
    if row is None:
        return Text("Nothing selected.", style="italic")
    s = row.session
    out = Text()
    out.append(visible(origin_name(s.project) or "?"), style="bold")
    out.append(f" · started {s.started or '?'}\n", style="bold")
    out.append("session ")
    out.append(visible(s.session_id or "?"))
    out.append("\n")
    out.append(visible(f"{s.file.parent.name}/{s.file.name}"), style="dim")
    out.append("\n\n")
    if s.problem:
        out.append(f"{visible(s.problem)}\n", style="bold red")
    out.append(f"{len(s.prompts)} prompt(s); {row.with_memories} got memories then; "
               f"{row.differing} would get something else now\n")  # fmt: skip
    if row.unknown:
        out.append(f"{row.unknown} before the store's exact past: then is not known\n",
                   style="italic")  # fmt: skip
    if s.branches > 1:
        out.append(f"{s.branches} branches: the active one's prompts first\n")
    if s.corrupt:
        out.append(f"{s.corrupt} corrupt line(s) skipped\n", style="italic")
    if s.note:
        out.append(f"{visible(s.note)}\n", style="italic")
    if s.parent:
        out.append(
            f"forked from {visible(s.parent)}: its first {s.carried} prompt(s) are "
            "carried over from there, not turns of this session\n",
            style="italic",
        )
    for t in row.turns[:12]:
        out.append(f"\n{turn_mark(t)} ", style="bold yellow")
        out.append(visible(one_line(t.prompt.text, 60)))
    out.append("\n\nenter: its prompts, each with what pi injected then and now", style="dim")
    return out


def describe_turn(t: Turn | None) -> RenderableType:
    """The prompt, its earlier turns, and each record injected then and now."""
    if t is None:
        return Text("Nothing selected.", style="italic")
    p = t.prompt
    head = Text()
    head.append(f"{iso(p.moment_ms)} · ", style="bold")
    head.append(visible(origin_name(p.project)), style="bold")
    head.append(f"\nsession {visible(p.session_id)} · entry {visible(p.entry_id)}")
    head.append(" · on another branch\n" if p.branch else "\n")
    head.append("\n")
    shown, more = capped(p.text)
    head.append(visible(shown, keep_newlines=True))
    if more:
        head.append(f"\n{more} (f: the whole prompt, page by page)", style="italic")
    head.append("\n")
    if p.recent:
        head.append(f"\nearlier turns pi folds in ({len(p.recent)}):\n", style="dim")
        for n, r in enumerate(p.recent):
            head.append("  · ", style="dim")
            head.append(visible(one_line(r, 70)))
            if n < len(p.seen) and p.seen[n]:
                head.append(f"  (the model saw it {p.seen[n]}; pi's memory recall read the "
                            "original)", style="italic yellow")  # fmt: skip
            head.append("\n")
    body = Text()
    body.append(f"\nthen ({AS_PI}, the store as it was):\n", style="bold")
    if t.then is None:
        body.append(f"  not known: {visible(t.note)}\n", style="italic")
    elif not t.then:
        body.append("  nothing injected\n", style="dim")
    for i in t.then or ():
        gone = i not in t.now
        changed = i in t.changed
        body.append("  − " if gone else ("  Δ " if changed else "    "),
                    style="bold red" if gone else "bold yellow" if changed else "")  # fmt: skip
        body.append(i)
        body.append("  no longer injected\n" if gone else
                    "  changed since\n" if changed else "\n", style="dim")  # fmt: skip
    if t.approximate:
        body.append(f"  {visible(t.note)}\n", style="italic yellow")
    body.append("\nnow:\n", style="bold")
    if not t.now:
        body.append("  nothing injected\n", style="dim")
    for i in t.now:
        new = t.then is not None and i not in t.then
        body.append("  + " if new else "    ", style="bold green" if new else "")
        body.append(i)
        body.append("  newly injected\n" if new else "\n", style="dim")
    digest = Text()
    if t.then_digest:
        digest.append("\nwhat pi added to the system prompt then:\n", style="bold")
        digest.append(visible(t.then_digest, keep_newlines=True), style="dim")
    digest.append("\nenter: the recall preview on this prompt, as of then", style="dim")
    return Group(head, body, digest)


class TurnDetail(TextPane, can_focus=True):
    """The highlighted turn in full (or the highlighted session), drawn with the line
    API as the record's detail is: its height is known the moment its text is set."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(1, id=id)
        self.shown: Turn | None = None

    def on_mount(self) -> None:
        self.set_part(0, describe_turn(None))

    def show(self, turn: Turn | None) -> None:
        self.shown = turn
        self.set_part(0, describe_turn(turn))

    def show_session(self, row: SessionTurns | None) -> None:
        self.shown = None
        self.set_part(0, describe_session(row))
