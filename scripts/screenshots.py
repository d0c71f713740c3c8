"""Regenerate screenshots/*.svg from the running app (headless, fixed clock).

    python scripts/screenshots.py

The demo store is built for a fixed instant, so the images only change when the
app's look does. The hostile screenshot needs ../shared/fixtures beside the repo.
"""

from __future__ import annotations

import asyncio
import html
import re
import shutil
import sys
import tempfile
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(ROOT / "tests"))

from rich.cells import cell_len  # noqa: E402

from memevo_tui.app import MemevoApp  # noqa: E402
from store import fixed_clock  # noqa: E402
from store.demo.demo import build_demo_async  # noqa: E402

from apphelpers import settle, wait_loaded  # noqa: E402

NOW = "2026-11-29T12:00:00.000Z"
OUT = ROOT / "screenshots"
REALISTIC = ROOT.parent / "shared" / "fixtures" / "realistic.sqlite"
HOSTILE = ROOT.parent / "shared" / "fixtures" / "hostile.sqlite"


TEXT = re.compile(r'(<text [^>]*?x=")([\d.]+)("[^>]*?textLength=")([\d.]+)("[^>]*>)(.*?)(</text>)')
NBSP = "&#160;"


def tidy_svg(svg: str) -> str:
    """Move the blank cells at either end of each text run out of it.

    Each run is stretched to its cells by ``textLength``; a renderer that drops a
    run's leading or trailing space (librsvg, some image viewers) then spreads the
    rest over the space's cell too, and the footer's " palette" after "^p" reads
    "^ppalette" or "^ppa lette". Without the blanks, every renderer agrees.
    """

    def trim(m: re.Match[str]) -> str:
        head, x, mid, length, open_, text, close = m.groups()
        lead = tail = 0
        while text.startswith(NBSP, lead * len(NBSP)):
            lead += 1
        body = text[lead * len(NBSP) :]
        while body.endswith(NBSP):
            body, tail = body[: -len(NBSP)], tail + 1
        if not body or not (lead or tail):
            return m.group(0)
        cell = float(length) / cell_len(html.unescape(text))
        new_x = float(x) + lead * cell
        new_length = float(length) - (lead + tail) * cell
        return f"{head}{new_x:.1f}{mid}{new_length:.1f}{open_}{body}{close}"

    return TEXT.sub(trim, svg)


async def shoot(app: MemevoApp, name: str, size: tuple[int, int], keys: Sequence[str] = ()) -> None:
    async with app.run_test(size=size) as pilot:
        await wait_loaded(pilot)
        for key in keys:
            await pilot.press(key)
            await settle(pilot)
        svg = app.export_screenshot()
    (OUT / f"{name}.svg").write_text(tidy_svg(svg), encoding="utf-8")
    print(f"wrote screenshots/{name}.svg")


def ids() -> Callable[[], str]:
    state = {"n": 0}

    def new_id() -> str:
        state["n"] += 1
        return str(uuid.UUID(int=(0xD0C5 << 96) | state["n"], version=4))

    return new_id


async def main() -> None:
    OUT.mkdir(exist_ok=True)
    clock = fixed_clock(NOW)
    with tempfile.TemporaryDirectory() as tmp:
        template = await build_demo_async(Path(tmp) / "template.sqlite", now_ms=clock())
        label = "demo store (temporary copy)"

        def demo() -> MemevoApp:
            # each shot starts from the same store (the history shot writes to it)
            path = Path(tmp) / "memory.sqlite"
            shutil.copyfile(template, path)
            path.chmod(0o600)
            return MemevoApp(path, clock=clock, label=label, keymap={}, new_id=ids())

        await shoot(demo(), "dashboard", (150, 42), ["a", *["j"] * 12])
        await shoot(demo(), "dashboard-80x24", (80, 24))
        await shoot(demo(), "history", (150, 42), ["j", "j", "1", "h"])
        await shoot(demo(), "search", (150, 42), ["s", "slash", *"caddy", "enter"])
        await shoot(
            demo(), "recall", (150, 42), ["i", "slash", *"redis celery broker", "enter", "j", "j"]
        )
        await shoot(demo(), "learning", (150, 42), ["l", "j", "j", "j", "j", "j"])
        await shoot(demo(), "review", (150, 42), ["w", "j"])
        await shoot(demo(), "help", (150, 42), ["question_mark"])

        def fixture(source: Path, name: str) -> MemevoApp:
            """The dashboard on a temporary, writable copy of an upstream fixture."""
            copy = Path(tmp) / source.name
            shutil.copyfile(source, copy)
            copy.chmod(0o600)
            return MemevoApp(
                copy,
                clock=fixed_clock("2026-11-01T12:00:00.000Z"),
                label=f"{name} fixture (temporary copy)",
                keymap={},
            )

        if HOSTILE.is_file():
            await shoot(fixture(HOSTILE, "hostile"), "hostile", (150, 42), ["a", *["j"] * 9])
        if REALISTIC.is_file():  # a store with two years of history, for the Timeline
            app = fixture(REALISTIC, "realistic")
            await shoot(app, "timeline", (150, 42), ["T", *["left"] * 3])


if __name__ == "__main__":
    asyncio.run(main())
