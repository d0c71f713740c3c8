"""The recall preview: type a prompt, see what pi would inject for it now, and why.

The pane shows results; the Recall view computes them (in a worker, over the
loaded records) when the pane asks with ``PromptChanged``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import Input, Static

from store import (
    DIGEST_HEADER_BYTES,
    DIGEST_MAX_BYTES,
    ICU_AVAILABLE,
    REASONS,
    STATUS_REASONS,
    TOOL_NO_MATCH,
    Candidate,
    DigestLine,
    Purpose,
    Recall,
    utf8_len,
)

from ..core.glyphs import STATE_MEANINGS, badge
from ..core.text import one_line, visible
from .debounced_input import DebouncedInput
from .recall_list import RecallList
from .split import Split

PURPOSES: dict[Purpose, str] = {
    "inject": "automatic injection (dormant excluded, 3 records)",
    "tool": "what the model gets when it asks: the memory_recall tool (dormant included, "
    "marked aging, 3 records)",
    "search": "/memory search (dormant included, 10 records)",
}
CYCLE: tuple[Purpose, ...] = ("inject", "tool", "search")
"""ctrl+t steps through pi's recall entry points in this order."""
CHOSEN: dict[Purpose, str] = {"inject": "injected", "tool": "returned", "search": "selected"}
"""What a selected record is, by entry point."""
WITH_DIGEST: frozenset[Purpose] = frozenset(("inject", "tool"))

HINTS: dict[str, str] = {
    "dormant": "Pin it (p) to keep it awake; new evidence from pi also revives it.",
    "disputed": "Feedback 'accurate' (3) replaces the 'incorrect' verdict.",
    "conflicted": "Resolve it (r) to let it be recalled again.",
    "forgotten": "Undo the forget (u) to bring it back.",
    "relative-cutoff": "A better match exists; quality cannot lift a weak match.",
    "limit": "Pinning, or feedback 'useful' or 'accurate', raises its rank score.",
    "redundant": "Records above already cover every word it matched.",
    "duplicate": "The same text is selected above.",
    "resource-mismatch": "If the path belongs in it, correct (e) its text to name it.",
    "thin-match": "Correct (e) its text to name the subject, or ask more precisely.",
    "incidental-overlap": "Correct (e) its text to name the subject, or ask more precisely.",
    "subject-attribute-mismatch": "It answers a different subject or attribute.",
}
"""What would change the outcome, by reason (keys as on the memory list)."""

PLACES = {"body": "text", "alias": "search term", "mention": "quoted question", "origin": "origin"}

PLANS = {
    "direct": "the prompt alone",
    "followup": "a follow-up: an earlier turn gives the subject",
    "empty": "nothing to search for",
    "reset": "a new subject: earlier turns are set aside",
}
"""What each query plan means, in the summary line."""

TERMS = (
    ("plan", "how pi reads the prompt with its earlier turns: direct (alone), follow-up "
     "(an earlier turn gives the subject), reset (a new subject), empty (nothing to find)"),
    ("words", "the terms pi searches for; concept:port stands for any way of naming a port, "
     "concept:database for any database, and so on (pi's 34 concepts)"),
    ("context", "the earlier turn's words a follow-up is matched against"),
    ("eligible", "records recall may consider: not forgotten, conflicted or disputed "
     "(nor dormant, for injection)"),
    ("excluded by status", "forgotten, conflicted, disputed, or (for injection) dormant"),
    ("score × quality = rank", "how well the words match, times the record's quality; "
     "the rank orders the selection"),
)  # fmt: skip
"""The recall preview's terms in one line each (shown in ?)."""


def explain(result: Recall | None, c: Candidate | None, lines: Sequence[DigestLine] = ()) -> Text:
    """The explanation for one candidate. Store text is plain text, never markup."""
    out = Text()
    if result is None or c is None:
        out.append("Nothing selected.", style="italic")
        return out
    m = c.memory
    q = m.quality
    if c.selected:
        rank = 1 + next(i for i, s in enumerate(result.selected) if s is c)
        line = next((d for d in lines if d.memory_id == m.id), None)
        verb = "returned to the model" if result.purpose == "tool" else "injected"
        if result.purpose == "search":
            out.append(f"#{rank} in /memory search", style="bold")
        elif line is not None and not line.included:
            out.append(f"#{rank} selected, but not {verb}", style="bold")
            out.append(
                f"\nIts digest line ({utf8_len(line.line):,} bytes) would push the digest past "
                f"{DIGEST_MAX_BYTES:,} bytes, so pi skips it."
            )
        else:
            out.append(f"#{rank} would be {verb}", style="bold")
            if result.purpose == "tool" and m.quality.dormant:
                out.append("\nDormant, so injection leaves it out; asked for, it comes back "
                           "marked aging.")  # fmt: skip
        if line is not None:
            out.append(f"\ndigest line ({utf8_len(line.line):,} bytes):\n", style="bold")
            out.append(visible(line.line.rstrip("\n")))
    else:
        reason = c.reason or ""
        out.append(f"Left out: {reason}", style="bold")
        out.append(f"\n{REASONS.get(reason, reason)}")
        if reason in STATUS_REASONS:
            would = c.would_fail
            out.append(f"\nOtherwise it would fail: {would}" if would else "\nOtherwise: passes")
        hint = HINTS.get(reason)
        if hint:
            out.append(f"\n{hint}", style="italic")
    out.append("\n\n")
    out.append(f"score {c.score:.3f} × quality {c.factor:.3f} = rank {c.rank_score:.3f}\n")
    out.append(f"covers {c.coverage:.0%} of the prompt's weight\n")
    out.append(
        f"quality = freshness {q.freshness:.3f} × evidence {q.evidence_weight:.2f}"
        f" × utility {q.utility:g} × accuracy {q.accuracy:g}\n"
    )
    out.append("matched: ", style="bold")
    if c.where:
        out.append(", ".join(f"{visible(w)} ({PLACES[p]})" for w, p in c.where))
    else:
        out.append("-")
    missing = [w for w in result.query if w not in c.matches]
    if missing:
        out.append("\nnot matched: ", style="bold")
        out.append(
            ", ".join(
                visible(w) + (" (in no eligible record)" if w in result.unknown else "")
                for w in missing
            )
        )
    out.append("\n\n")
    out.append(f"{badge(m.state)}\n", style="bold")
    out.append(f"{STATE_MEANINGS[m.state]}\n", style="italic")
    out.append(f"{m.kind} · {one_line(m.scope, 60)} · {m.id}\n\n")
    out.append(visible(m.content, keep_newlines=True))
    return out


def summary(
    result: Recall | None, purpose: Purpose, pending: bool, lines: Sequence[DigestLine] = ()
) -> Text:
    out = Text()
    out.append(f"{purpose}: ", style="bold")
    out.append(PURPOSES[purpose])
    if result is None:
        out.append("  ·  ctrl+t switches" if not pending else "  ·  computing…")
        return out
    if result.turns:
        shown = " ⏵ ".join(one_line(t, 40) for t in result.turns)
        out.append(f"\nearlier turns ({len(result.turns)}, ctrl+l clears): {shown}")
    words = ", ".join(visible(w) for w in result.query) or "none"
    mode = result.plan.mode
    out.append(f"\nplan {mode} ({PLANS.get(mode, mode)}) · words: {words}")
    if result.context:
        out.append(f" · context: {', '.join(visible(w) for w in result.context)}")
    out.append(
        f"\n{len(result.selected)} selected of {result.limit} · {result.left_out_total} left out"
        f" · {result.eligible} eligible, {result.excluded} excluded by status"
    )
    if lines:
        used = DIGEST_HEADER_BYTES + sum(utf8_len(d.line) for d in lines if d.included)
        injected = sum(1 for d in lines if d.included)
        out.append(f" · digest {injected} line(s), {used:,} of {DIGEST_MAX_BYTES:,} bytes")
    elif purpose == "tool" and result.prompt.strip():
        out.append(f"\nthe tool answers: {TOOL_NO_MATCH}", style="italic")
    if not ICU_AVAILABLE:
        out.append("\nPyICU is not installed: words are split differently from pi", "bold")
    return out


def _every(origin: str) -> bool:
    return True


class RecallPane(Vertical):
    """Prompt box, summary, candidate list and the explanation of the highlighted one."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "ctrl+t",
            "toggle_purpose",
            "Mode",
            id="recall.purpose",
            tooltip="Preview automatic injection, the model's memory_recall tool, or "
            "/memory search",
        ),
        Binding(
            "ctrl+n",
            "next_turn",
            "Next turn",
            id="recall.next_turn",
            tooltip="Keep this prompt as an earlier user turn and type the next (as pi does)",
        ),
        Binding(
            "ctrl+l",
            "clear_turns",
            "Clear turns",
            id="recall.clear_turns",
            show=False,
            tooltip="Forget the earlier turns: the prompt stands alone",
        ),
    ]

    MAX_TURNS = 6
    """pi folds in the last six user turns."""

    DEBOUNCE = 0.12

    class PromptChanged(Message):
        """The prompt or the purpose changed: the view should evaluate it."""

        def __init__(
            self, pane: RecallPane, prompt: str, purpose: Purpose, turns: tuple[str, ...]
        ) -> None:
            super().__init__()
            self.pane = pane
            self.prompt = prompt
            self.purpose = purpose
            self.turns = turns

        @property
        def control(self) -> RecallPane:
            return self.pane

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.purpose: Purpose = "inject"
        self.result: Recall | None = None
        self.digest: Sequence[DigestLine] = ()
        self.turns: list[str] = []
        """Earlier user turns, oldest first (injection only: search has no history)."""
        self.covers: Callable[[str], bool] = _every
        """The project scope: which origins' records left out are listed (pi's recall
        ranks every project's records; what it selects is listed whatever its origin)."""
        self._asked: tuple[str, Purpose, tuple[str, ...]] | None = None
        self._explained: Candidate | None = None

    def compose(self) -> ComposeResult:
        yield DebouncedInput(
            delay=self.DEBOUNCE,
            placeholder="/ to type a prompt: what would pi inject for it right now?",
            id="recall-input",
        )
        yield Static(summary(None, self.purpose, False), id="recall-summary", markup=False)
        with Split(width=36, id="recall-main"):
            yield RecallList(id="recall-list")
            with VerticalScroll(id="recall-explain-scroll"):
                yield Static(explain(None, None), id="recall-explain", markup=False)

    @property
    def prompt(self) -> str:
        return self.query_one("#recall-input", Input).value

    def _question(self) -> tuple[str, Purpose, tuple[str, ...]]:
        turns = tuple(self.turns) if self.purpose == "inject" else ()
        return self.prompt, self.purpose, turns

    @property
    def waiting(self) -> bool:
        """True from a question until its answer, and its explanation, are on screen."""
        recall_list = self.query_one(RecallList)
        return (
            self.query_one(DebouncedInput).pending
            or (self._asked is not None and self._asked != self._answered())
            or self._explained is not recall_list.highlighted
        )

    def _answered(self) -> tuple[str, Purpose, tuple[str, ...]] | None:
        r = self.result
        return None if r is None else (r.prompt, r.purpose, r.turns)

    def on_debounced_input_settled(self, event: DebouncedInput.Settled) -> None:
        event.stop()
        if event.stale:  # typed on, or submitted, since
            return
        self.ask()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.ask()
        self.screen.set_focus(self.query_one(RecallList))

    def ask(self) -> None:
        self.query_one(DebouncedInput).cancel()
        self.query_one("#recall-summary", Static).update(summary(None, self.purpose, True))
        prompt, purpose, turns = self._asked = self._question()
        self.post_message(self.PromptChanged(self, prompt, purpose, turns))

    def ask_with(self, prompt: str, turns: tuple[str, ...]) -> None:
        """Injection for ``prompt`` with ``turns`` as its earlier user turns, asked now."""
        self.purpose = "inject"
        self.turns = list(turns)
        box = self.query_one("#recall-input", Input)
        with box.prevent(Input.Changed):
            box.value = prompt
        self.ask()

    def explain_search(self, query: str) -> None:
        """Show why ``/memory search`` returns what it does for ``query``."""
        self.purpose = "search"
        box = self.query_one("#recall-input", Input)
        if box.value == query:
            self.ask()
        else:
            box.value = query  # the change asks, after the debounce

    def action_next_turn(self) -> None:
        box = self.query_one("#recall-input", Input)
        if not box.value.strip():
            self.notify("Type a prompt first", severity="warning")
            return
        self.turns = [*self.turns, box.value][-self.MAX_TURNS :]
        box.value = ""
        self.screen.set_focus(box)
        self.ask()

    def action_clear_turns(self) -> None:
        self.turns = []
        self.notify("Earlier turns cleared")
        self.ask()

    def action_toggle_purpose(self) -> None:
        self.purpose = CYCLE[(CYCLE.index(self.purpose) + 1) % len(CYCLE)]
        self.notify(f"Recall preview: {PURPOSES[self.purpose]}")
        self.ask()

    def show(self, result: Recall, lines: Sequence[DigestLine] = ()) -> list[str]:
        """Display a result; returns a line per record whose outcome changed since the last."""
        if (result.prompt, result.purpose, result.turns) != self._question():
            return []  # an older answer arrived after a newer question
        previous = self.result
        self.result = result
        self.digest = lines
        rows = [*result.selected, *(c for c in result.left_out if self.covers(c.memory.scope))]
        recall_list = self.query_one(RecallList)
        recall_list.over_budget = frozenset(d.memory_id for d in lines if not d.included)
        recall_list.chosen = CHOSEN.get(result.purpose, "selected")
        recall_list.empty_text = (
            "/ and a prompt: what pi would inject for it."
            if not result.prompt.strip()
            else f"No record shares a word with this prompt ({result.eligible} eligible)."
        )
        # A new question starts at the top; the same one asked again (after a change)
        # keeps the highlighted record, wherever it moved.
        same = previous is not None and (previous.prompt, previous.purpose, previous.turns) == (
            result.prompt,
            result.purpose,
            result.turns,
        )
        recall_list.set_rows(rows, top=not same)
        self.query_one("#recall-summary", Static).update(
            summary(result, self.purpose, False, lines)
        )
        self._explained = recall_list.highlighted
        self.query_one("#recall-explain", Static).update(
            explain(result, recall_list.highlighted, lines)
        )
        if previous is None or (previous.prompt, previous.turns) != (result.prompt, result.turns):
            return []
        return _changes(previous, result)

    def on_recall_list_highlighted(self, message: RecallList.Highlighted) -> None:
        self._explained = message.row
        self.query_one("#recall-explain", Static).update(
            explain(self.result, message.row, self.digest)
        )


def _outcome(c: Candidate, purpose: Purpose) -> str:
    if c.selected:
        return CHOSEN.get(purpose, "selected")
    return f"left out ({c.reason})"


def _changes(before: Recall, after: Recall) -> list[str]:
    """One line per record whose outcome changed, naming it by its text."""
    old = {c.memory.id: c for c in (*before.selected, *before.left_out)}
    out = []
    for c in (*after.selected, *after.left_out):
        was = old.get(c.memory.id)
        now, then = _outcome(c, after.purpose), (_outcome(was, before.purpose) if was else "")
        if was is not None and now != then:
            out.append(f"“{one_line(c.memory.content, 48)}”: now {now}, was {then}")
    return out
