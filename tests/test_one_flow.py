"""One flow for confirmation and proof (issue 57): the Curator has no Textual; the
dashboard and the command line are two hosts of the same flow, so ``forget --prove``
prints the question and the proof ``d`` shows, word for word."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Collection, Coroutine
from pathlib import Path
from typing import Any

from store import StoreError

from apphelpers import opened
from conftest import FIXTURES

SESSIONS = FIXTURES / "sessions"
RECORD = "e665359dabc60f842b48881d"  # infra: "Prod cluster CPU requests are at 68%…"


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memevo_tui", *args],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


def test_the_curator_imports_no_textual_and_no_rich() -> None:
    probe = (
        "import sys, memevo_tui.curator, memevo_tui.cli.prove\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'textual', 'rich'}))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


async def test_a_host_without_textual_runs_the_flow_and_answers_its_question(
    realistic: Path,
) -> None:
    """A plain host (a test double, no app): ``d`` asks a ``VerbQuestion`` with the
    proof; a no writes nothing, a yes writes pi's forget."""
    from memevo_tui.core.asking import Answer, Question, Told, VerbQuestion
    from memevo_tui.core.state import DashboardState
    from memevo_tui.curator import Curator

    from apphelpers import stored

    class Host:
        def __init__(self, answer: bool) -> None:
            self.answer = answer
            self.asked: list[Question] = []
            self.told: list[Told] = []
            self.work: list[Coroutine[Any, Any, None]] = []

        def ask(self, question: Question, then: Callable[[Answer], None]) -> None:
            self.asked.append(question)
            then(self.answer)

        def tell(self, told: Told) -> None:
            self.told.append(told)

        def store_failed(self, error: StoreError) -> None:
            raise AssertionError(error)

        def reload(self) -> None:
            pass

        def run(self, group: str, work: Coroutine[Any, Any, None]) -> None:
            self.work.append(work)

        def running(self, groups: Collection[str]) -> bool:
            return bool(self.work)

        def reopen_hint(self) -> str:
            return ""

        async def settle(self) -> None:
            while self.work:
                await self.work.pop(0)

    state = DashboardState(realistic, remember=False)
    state.use_sessions(str(SESSIONS))
    try:
        await state.open()

        async def first(*_: object) -> None:
            pass

        load, last = await state.read(first)
        state.replace(load, partial=False, total=len(load.memories), last_rowid=last)
        for answer in (False, True):
            host = Host(answer)
            Curator(host, state).curate(state.find(RECORD), "forget")
            await host.settle()
            (question,) = host.asked
            assert isinstance(question, VerbQuestion) and question.verb.name == "forget"
            assert question.effect.startswith("Of the last 65 prompt(s) in infra, 1 would")
            assert stored(realistic, RECORD)["status"] == ("forgotten" if answer else "provisional")
        assert [t.title for t in host.told][-1] == "Saved"
    finally:
        await state.close()


def test_forget_with_prove_prints_the_dashboards_question_and_writes_only_with_yes(
    realistic: Path,
) -> None:
    from apphelpers import stored

    base = ["--db", str(realistic), "forget", RECORD, "--prove", "--sessions", str(SESSIONS)]
    shown = cli(*base)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines() == [
        "Forget this memory?",
        "Prod cluster CPU requests are at 68% of allocatable.",
        "Of the last 65 prompt(s) in infra, 1 would no longer get this record.",
    ]
    assert "Nothing written: add --yes to write it" in shown.stderr
    assert stored(realistic, RECORD)["status"] == "provisional"
    as_json = cli(*base, "--json")
    assert as_json.returncode == 2 and "leave out --json" in as_json.stdout + as_json.stderr
    written = cli(*base, "--yes")
    assert written.returncode == 0, written.stderr
    assert written.stdout.splitlines()[-1].startswith("Forgot")
    assert stored(realistic, RECORD)["status"] == "forgotten"
    short = ["--db", str(realistic), "correct", RECORD, "abc", "--prove", "--yes"]
    refused = cli(*short)  # pi's refusal, through the same flow: exit 1, its words
    assert refused.returncode == 1, (refused.stdout, refused.stderr)
    assert "Correction must be 4\u2013800 characters without credentials" in refused.stderr


async def test_d_in_a_fresh_dashboard_asks_the_same_words_as_forget_prove(
    realistic: Path,
) -> None:
    from memevo_tui.dialogs.confirm import ConfirmScreen

    from apphelpers import dialog_text, press, select, until

    printed = cli("--db", str(realistic), "forget", RECORD, "--prove", "--sessions", str(SESSIONS))
    effect = printed.stdout.splitlines()[-1]
    async with opened(realistic, sessions=SESSIONS) as (app, pilot):
        await select(pilot, RECORD)
        await press(pilot, "d")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question")
        text = " ".join(dialog_text(app.screen).split())
        assert "Forget this memory?" in text
        assert effect in text


async def test_a_merge_in_a_fresh_dashboard_is_proven_before_it_is_asked(
    realistic: Path,
) -> None:
    """``M`` on two marked records: the preview says what the merge (the kept record
    corrected, the other forgotten) changes in the project's recent prompts; no answer
    is written until the question's yes."""
    from memevo_tui.dialogs.confirm import ConfirmScreen
    from memevo_tui.dialogs.correct import CorrectScreen

    from apphelpers import (
        dialog_text,
        press,
        select,
        settle,
        stored,
        until,
        words,
    )

    other = "fbdae88003711523835db523"  # infra too
    async with opened(realistic, sessions=SESSIONS) as (app, pilot):
        for memory_id in (RECORD, other):
            await select(pilot, memory_id)
            await pilot.press("space")
        await settle(pilot)
        await press(pilot, "M")
        await until(pilot, lambda: isinstance(app.screen, CorrectScreen), "the editor")
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the merge preview")
        text = words(dialog_text(app.screen))
        assert "Merge 2 records into" in text
        assert "Of the last 65 prompt(s) in infra, " in text
        assert stored(realistic, other)["status"] != "forgotten"
        await press(pilot, "n")
