"""store/ is a data layer usable from scripts: it must never import the UI."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

STORE = Path(__file__).resolve().parents[1] / "store"
FORBIDDEN = ("textual", "memevo_tui", "rich")


def test_no_module_under_store_imports_the_ui() -> None:
    offenders = []
    files = sorted(STORE.rglob("*.py"))
    assert len(files) >= 10
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            for name in names:
                if name.split(".")[0] in FORBIDDEN:
                    offenders.append(f"{path.name}: {name}")
    assert offenders == []


def test_importing_store_loads_no_ui_module() -> None:
    code = (
        "import sys, store, store.demo, store.learning, store.status; "
        "bad = [m for m in sys.modules if m.split('.')[0] in ('textual', 'memevo_tui')]; "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
