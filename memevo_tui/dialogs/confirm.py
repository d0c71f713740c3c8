"""A yes/no question, with optional detail (an undo preview, say)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Static

from ..core.bulk import AnyStep, blocks_note, left_as_they_are, tally
from ..core.text import one_line, visible
from ..core.verbs import Confirm, Verb, named
from ..widgets.event_diff import describe_undo
from .dialog import Dialog


class ConfirmScreen(Dialog[bool]):
    """Dismisses with True on yes, False on no or escape. The ``summary`` (what the
    answer does) and the buttons stay in view; the ``detail`` below it scrolls."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes", id="confirm.yes"),
        Binding("n,escape", "answer(False)", "No", id="confirm.no"),
        Binding("i", "instead", "Instead", id="confirm.instead", show=False),
        # the detail scrolls from the keyboard, whichever button has the focus
        Binding("down,j", "scroll('down')", "Down", id="confirm.down", show=False),
        Binding("up,k", "scroll('up')", "Up", id="confirm.up", show=False),
        Binding("g,home", "scroll('home')", "Top", id="confirm.top", show=False),
        Binding("G,end", "scroll('end')", "Bottom", id="confirm.bottom", show=False),
        Binding("pagedown,ctrl+d,space", "scroll('page_down')", "Page down",
                id="confirm.page_down", show=False),
        Binding("pageup,ctrl+u", "scroll('page_up')", "Page up", id="confirm.page_up",
                show=False),
    ]  # fmt: skip

    def __init__(
        self,
        title: str,
        detail: RenderableType = "",
        *,
        summary: RenderableType = "",
        yes: str = "Yes",
        instead: str = "",
    ) -> None:
        super().__init__()
        self.title_text = title
        self.summary = summary
        self.detail = detail
        self.yes = yes
        self.instead = instead
        """A gentler write offered first (its button, and the i key): "" none."""
        self.chose_instead = False
        """The answer was ``instead`` (the dialog then dismisses with False)."""

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(self.title_text, id="dialog-title", markup=False)
            if self.summary:
                yield Static(self.summary, id="dialog-summary", markup=False)
            with VerticalScroll(id="dialog-detail", classes="-body"):
                yield Static(self.detail, markup=False)
            with Horizontal(id="dialog-buttons"):
                if self.instead:
                    yield Button(f"{self.instead} (i)", variant="primary", id="instead")
                yield Button(f"{self.yes} (y)", variant="error", id="yes")
                yield Button("Cancel (n)", variant="default", id="no")

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one("#instead" if self.instead else "#no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "instead":
            self.action_instead()
            return
        self.dismiss(event.button.id == "yes")

    def action_instead(self) -> None:
        if self.instead:
            self.chose_instead = True
            self.dismiss(False)

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)

    def action_scroll(self, where: str) -> None:
        box = self.query_one("#dialog-detail", VerticalScroll)
        getattr(box, f"scroll_{where}")(animate=False)


def _proved(summary: Text, effect: str) -> Text:
    """The summary, and what the write does to the project's recent prompts."""
    if effect:
        summary.append("\n")
        summary.append(effect, style="bold not italic")
    return summary


def verb_dialog(verb: Verb, content: str, duplicates: int = 0, effect: str = "") -> ConfirmScreen:
    """Asks before the verb's write on a record whose text is ``content``, in the verb's
    own words (``duplicates``: its same-text twins the write takes too; ``effect``: what
    it does to recent turns, when pi's sessions were replayed)."""
    confirm = verb.asking
    also = f" and its {duplicates} same-text duplicate(s)" if duplicates else ""
    summary = _proved(Text(confirm.warning.format(also=also), style="italic"), effect)
    detail = Text(visible(content, keep_newlines=True))
    return ConfirmScreen(confirm.title, detail, summary=summary, yes=confirm.yes)


def pair_dialog(verb: Verb, first: str, second: str) -> ConfirmScreen:
    """Asks before a verb that takes a pair, showing both records' texts."""
    confirm = verb.confirm or Confirm(f"{verb.label} these two?", "", verb.label)
    detail = Text()
    detail.append(visible(first, keep_newlines=True))
    detail.append("\n  ≠\n", style="bold")
    detail.append(visible(second, keep_newlines=True))
    summary = Text(confirm.warning, style="italic") if confirm.warning else ""
    return ConfirmScreen(confirm.title, detail, summary=summary, yes=confirm.yes)


def undo_dialog(
    what: str, plan: list[tuple[dict[str, Any], dict[str, Any]]], instead: str = ""
) -> ConfirmScreen:
    """Asks before undoing ``what``, naming the record and its text, saying what else
    the undo does, and showing what it would write; ``instead``: the inverse verb,
    offered first when the event only pinned or unpinned (it blocks nothing)."""
    detail = describe_undo(plan, in_pane=False)
    texts = [(str(c.get("scope", "")), str(c.get("content", ""))) for c, _ in plan]
    summary = Text(f"Undo {what}?\n")
    for (_, text), (current, _) in zip(texts, plan, strict=True):
        summary.append(f"{one_line(str(current.get('id', '')))}: ", style="bold")
        summary.append(one_line(text, 100) + "\n")
    if texts:
        summary.append(blocks_note(texts), style="italic")
    if instead:
        summary.append(f"\n{instead.capitalize()} instead (i): the same layer back, and "
                       "nothing is blocked.",
                       style="bold")  # fmt: skip
    label = f"{instead.capitalize()} instead" if instead else ""
    return ConfirmScreen("Undo", detail, summary=summary, yes="Undo", instead=label)


def bulk_dialog(
    title: str,
    steps: Sequence[AnyStep],
    notes: Sequence[str] = (),
    *,
    grouped: bool = True,
    instead: str = "",
) -> ConfirmScreen:
    """Asks before a bulk action, listing every record with what will happen to it
    (``notes``: what else the user must know first, one line each; ``grouped``: the
    history will show the events as one entry)."""
    table = Table(box=None, padding=(0, 1), show_header=False, expand=True)
    table.add_column("what", no_wrap=True, style="bold")
    table.add_column("record", ratio=1)
    for step in steps:
        text = Text(one_line(step.text, 90) or step.memory_id or step.target)
        if step.refusal:
            table.add_row(Text("refused", style="bold red"), text)
            table.add_row("", Text(step.refusal, style="italic"))
        elif step.unchanged:
            table.add_row(
                Text("left as is", style="dim"),
                Text(f"{text.plain} ({step.unchanged})", style="dim"),
            )
        else:
            table.add_row(named(step.op).words, text)
        if step.new_text and step.new_text != step.text and not step.refusal:
            table.add_row(Text("  into", style="bold"), Text(one_line(step.new_text, 90)))
    writes, unchanged, refused = tally(steps)
    one = " (one undo in the history undoes them all)" if grouped else ""
    head = Text(
        f"{writes} will be written, one pi event each{one}; {unchanged} unchanged; "
        f"{refused} refused.",
        style="italic",
    )
    for line in left_as_they_are(steps):
        head.append(f"\n{line}.")
    for note in notes:
        head.append(f"\n{note}", style="bold")
    if instead:
        head.append(f"\n{instead} instead (i): the same layers back, and nothing is blocked.",
                    style="bold")  # fmt: skip
    return ConfirmScreen(title, table, summary=head, yes="Write", instead=instead)
