"""The dashboard as the Curator's host: each question a dialog, each thing said a
notice, each piece of work one of the app's workers (``core.asking.Host``)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Coroutine
from typing import Any

from rich.text import Text
from textual.app import App

from store import StoreError

from ..core.asking import (
    INSTEAD,
    Answer,
    ManyQuestion,
    OriginQuestion,
    PairQuestion,
    PurgeQuestion,
    Question,
    TextQuestion,
    Told,
    UndoQuestion,
    VerbQuestion,
)
from ..views.base import IN_FLIGHT
from ..widgets.keys import reopen_hint
from ..widgets.messages import ReloadWanted, StoreFailed


class DashboardHost:
    """Shows the Curator's questions as the dashboard's dialogs."""

    def __init__(self, app: App[Any]) -> None:
        self.app = app

    def ask(self, question: Question, then: Callable[[Answer], None]) -> None:
        from ..dialogs import confirm
        from ..dialogs.correct import edit_correction
        from ..dialogs.prompt import PromptScreen

        if isinstance(question, TextQuestion):
            edit_correction(self.app, question.memory_id, question.text, then)
            return
        if isinstance(question, OriginQuestion):
            ask = PromptScreen(question.title, placeholder=question.placeholder,
                               hint=question.hint)  # fmt: skip
            self.app.push_screen(ask, then)
            return
        if isinstance(question, VerbQuestion):
            dialog = confirm.verb_dialog(
                question.verb, question.text, question.duplicates, question.effect
            )
        elif isinstance(question, PairQuestion):
            dialog = confirm.pair_dialog(question.verb, question.first, question.second)
        elif isinstance(question, ManyQuestion):
            dialog = confirm.bulk_dialog(
                question.title,
                question.steps,
                question.notes,
                grouped=question.grouped,
                instead=question.instead,
            )
        elif isinstance(question, UndoQuestion):
            dialog = confirm.undo_dialog(question.what, question.plan, question.instead)
        else:
            assert isinstance(question, PurgeQuestion)
            dialog = confirm.ConfirmScreen(
                "Purge the secret from every copy?",
                Text("\n".join(question.lines)),
                summary=Text(question.summary),
                yes="Purge",
            )

        def answered(yes: bool | None) -> None:
            then(INSTEAD if dialog.chose_instead else yes)

        self.app.push_screen(dialog, answered)

    def tell(self, told: Told) -> None:
        self.app.notify(told.text, title=told.title, severity=told.severity, timeout=told.timeout)

    def store_failed(self, error: StoreError) -> None:
        self.app.post_message(StoreFailed(error))

    def reload(self) -> None:
        self.app.post_message(ReloadWanted())

    def run(self, group: str, work: Coroutine[Any, Any, None]) -> None:
        self.app.run_worker(work, group=group, exit_on_error=False)

    def running(self, groups: Collection[str]) -> bool:
        return any(w.group in groups and w.state in IN_FLIGHT for w in self.app.workers)

    def reopen_hint(self) -> str:
        return reopen_hint(self.app)
