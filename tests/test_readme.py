"""The README a newcomer reads: its links work on the package index, its quick start
is the one CI runs, and the screenshots it shows read the same in every renderer."""

from __future__ import annotations

import html
import re
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
URLS = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["urls"]
REPO = URLS["Repository"]  # https://github.com/<owner>/<name>
RAW = REPO.replace("https://github.com/", "https://raw.githubusercontent.com/") + "/main/"
BLOB = REPO + "/blob/main/"

sys.path.insert(0, str(ROOT / "scripts"))
from readme_quickstart import quick_start  # noqa: E402

FANCY = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["hatch"][
    "metadata"
]["hooks"]["fancy-pypi-readme"]


def test_links_are_relative_and_point_at_files_in_the_checkout() -> None:
    """In a checkout and on the forge the README links to its own files."""
    images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", README)
    links = re.findall(r"(?<!!)\[[^\]]*\]\(([^)]+)\)", README)
    assert images and any(link == "docs/GUIDE.md" for link in links)
    for url in [*images, *links]:
        assert not url.startswith(("http://", "https://", "/")), url
        assert (ROOT / url).is_file(), url


def test_the_package_index_gets_absolute_links_to_the_same_files() -> None:
    """The wheel's description is the README with its links made absolute (CI checks
    the built METADATA too): images at the raw files, links at the forge."""
    text = README
    for sub in FANCY["substitutions"]:
        text = re.sub(sub["pattern"], sub["replacement"], text)
    images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text)
    links = re.findall(r"(?<!!)\[[^\]]*\]\(([^)]+)\)", text)
    assert images and links
    for url in images:
        assert url.startswith(RAW) and (ROOT / url.removeprefix(RAW)).is_file(), url
    for url in links:
        assert url.startswith(BLOB) and (ROOT / url.removeprefix(BLOB)).is_file(), url


def test_the_readme_is_short_and_its_details_moved_to_docs() -> None:
    assert len(README.splitlines()) <= 160
    for name in ("docs/GUIDE.md", "docs/CLI.md", "docs/ARCHITECTURE.md", "docs/BENCHMARKS.md",
                 "CONTRIBUTING.md"):  # fmt: skip
        assert (ROOT / name).is_file(), name
    longest = max(len(p.splitlines()) for p in README.split("\n\n"))
    assert longest <= 35  # the keys table; no paragraph runs on


def test_the_quick_start_is_two_commands_and_ci_runs_them() -> None:
    first, second = quick_start(README)
    assert first.endswith(".venv/bin/memevo-tui --demo")
    assert second == ".venv/bin/python -m pytest -n auto --dist worksteal"  # CI stays in time
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "scripts/readme_quickstart.py" in ci
    # the README's command as written, with the slowest tests printed after it
    assert 'bash -c "$test_command --durations=15"' in ci


def svg_runs(path: Path) -> list[tuple[float, float, float, str]]:
    """(y, x, textLength, text) of every text run in an exported screenshot."""
    pattern = r'<text [^>]*?x="([\d.]+)" y="([\d.]+)" textLength="([\d.]+)"[^>]*>(.*?)</text>'
    runs = re.findall(pattern, path.read_text(encoding="utf-8"))
    return [(float(y), float(x), float(n), t) for x, y, n, t in runs]


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "screenshots").glob("*.svg")))
def test_screenshot_text_runs_carry_no_blank_cells_at_their_ends(name: str) -> None:
    for _, _, _, text in svg_runs(ROOT / "screenshots" / name):
        assert not text.startswith("&#160;") and not text.endswith("&#160;"), text


def test_the_recall_screenshot_footer_reads_ctrl_p_palette() -> None:
    runs = svg_runs(ROOT / "screenshots" / "recall.svg")
    bottom = max(y for y, *_ in runs)
    footer = sorted((x, n, html.unescape(t)) for y, x, n, t in runs if y == bottom)
    keys = [i for i, (_, _, t) in enumerate(footer) if t == "^p"]
    assert keys, footer
    x, length, _ = footer[keys[-1]]
    next_x, _, label = footer[keys[-1] + 1]
    cell = length / 2
    assert label == "palette"
    assert abs(next_x - (x + length + cell)) < 0.5  # one blank cell between key and label


def test_smoke_help_says_what_it_prints(capsys: pytest.CaptureFixture[str]) -> None:
    from memevo_tui.__main__ import build_parser

    text = " ".join(build_parser().format_help().split())
    assert "print one line (rows shown, corrupt rows) and exit 0" in text
    from memevo_tui.__main__ import main

    assert main(["--demo", "--smoke"]) == 0
    assert re.fullmatch(r"memevo-tui: smoke run ok: \d+ rows shown \(\d+ corrupt\)\n",
                        capsys.readouterr().out)  # fmt: skip
