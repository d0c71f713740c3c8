"""The one place that locates the app's stylesheets.

In a wheel the top-level ``styles/`` directory is shipped as ``memevo_tui/styles``;
in a source checkout it sits beside the package.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent
"""``memevo_tui/``: this module is in its ``app/`` folder."""


def styles_dir() -> Path:
    for candidate in (_PACKAGE / "styles", _PACKAGE.parent / "styles"):
        if (candidate / "app.tcss").is_file():
            return candidate
    raise FileNotFoundError("memevo-tui's styles/app.tcss is missing from this installation")


def stylesheet(name: str) -> Path:
    return styles_dir() / name
