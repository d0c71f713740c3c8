"""The layers as the code holds them: the store imports no UI (nor loads one when
imported), every dashboard module sits in a layer of the import contract, the UI
reaches the store through its package's names only (each of which resolves), a
request for another view names a registered view and method, no two modules import
each other (imports inside functions counted), and the size limits: ``app.py`` at
most 300 lines, a dashboard module at most 450 and a function at most 80, the store
grouped by concern with at most 12 modules at its root."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

STORE = Path(__file__).resolve().parents[1] / "store"
FORBIDDEN = ("textual", "memevo_tui", "rich")


def absolute_imports(path: Path) -> list[tuple[str, tuple[str, ...]]]:
    """Every module ``path`` imports by its absolute name, with the names it takes from
    it (none for ``import x``)."""
    found: list[tuple[str, tuple[str, ...]]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(a.name, ()) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.module, tuple(a.name for a in node.names)))
    return found


def test_no_module_under_store_imports_the_ui() -> None:
    offenders = []
    files = sorted(STORE.rglob("*.py"))
    assert len(files) >= 10
    for path in files:
        for name, _ in absolute_imports(path):
            if name.split(".")[0] in FORBIDDEN:
                offenders.append(f"{path.name}: {name}")
    assert offenders == []


def test_importing_store_loads_no_ui_module() -> None:
    code = (
        "import sys, store, store.demo.demo, store.learning.learning, store.learning.status; "
        "bad = [m for m in sys.modules if m.split('.')[0] in ('textual', 'memevo_tui')]; "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


ROOT = STORE.parent


def _modules(package: str) -> list[str]:
    out = []
    for path in sorted((ROOT / package).rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            continue  # a package is in a layer through its modules
        out.append(".".join(parts))
    return out


def test_every_dashboard_module_is_in_a_layer() -> None:
    """The layers contract names every module of the dashboard (itself or a package
    above it): a module added outside every layer escapes the contract and fails here."""
    import re
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    layers = next(c for c in contracts if c["name"] == "The dashboard is layered")["layers"]
    named = {m.strip() for layer in layers for m in re.split(r"[|:]", layer)}
    modules = _modules("memevo_tui")
    assert len(modules) >= 70
    outside = [m for m in modules if not any(m == n or m.startswith(n + ".") for n in named)]
    assert outside == []
    views = next(c for c in contracts if c["type"] == "independence")["modules"]
    shown = [m for m in modules if m.startswith("memevo_tui.views.")]
    shared = {"memevo_tui.views.base", "memevo_tui.views.marks"}
    assert sorted(views) == sorted(set(shown) - shared)


def test_the_ui_imports_no_private_module_of_the_store() -> None:
    """The dashboard, its tests and scripts use the store's public modules only: no
    ``store._name``, the store's private parts."""
    offenders = []
    for package in ("memevo_tui", "tests", "scripts"):
        for path in sorted((ROOT / package).rglob("*.py")):
            for module, taken in absolute_imports(path):
                # the store package's own names are modules too (from store import js)
                taken_modules = [f"store.{t}" for t in taken] if module == "store" else []
                for name in (module, *taken_modules):
                    parts = name.split(".")
                    if parts[0] == "store" and any(p.startswith("_") for p in parts[1:]):
                        offenders.append(f"{path.relative_to(ROOT)}: {name}")
    assert offenders == []


def test_every_request_for_another_view_names_a_registered_view_and_its_method() -> None:
    """Views ask for one another through ``ShowView`` (routed by the registry's ids):
    each request names a view the registry has, and a method that view's class has;
    the main screen imports no view, not even inside a function, and no screen that a
    registry entry opens (the diff)."""
    from memevo_tui.app.registry import VIEWS

    views = {entry.id: entry for entry in VIEWS}
    asked = []
    for path in sorted((ROOT / "memevo_tui").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "ShowView":
                args = [str(a.value) if isinstance(a, ast.Constant) else "" for a in node.args[:2]]
                if args[0]:
                    asked.append((path.name, *args))
                else:  # a view the record menu offers: each one that has a line there
                    asked += [(path.name, v.id, *args[1:]) for v in VIEWS if v.of_record]
    assert len(asked) >= 5
    for where, view, *call in asked:
        assert view in views, (where, view)
        if call and call[0]:
            assert callable(getattr(views[view].cls, call[0], None)), (where, view, call)
    dashboard = (ROOT / "memevo_tui" / "app" / "dashboard.py").read_text(encoding="utf-8")
    tree = ast.parse(dashboard)
    every = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module]
    imported = {n.module for n in every if n.module and n.module.startswith("views.")}
    registered = {e.where.module.removeprefix("memevo_tui.") for e in VIEWS} | {"views.diff"}
    assert len(registered) == 9
    assert not imported & registered, imported
    assert "views.base" in imported


def test_the_dashboard_imports_the_store_through_its_package_only() -> None:
    """``store`` is the store's one public face: no module of ``memevo_tui`` imports a
    module under it (``from store.recall import ...``), so the store can move its parts
    without touching the dashboard."""
    offenders = []
    for path in sorted((ROOT / "memevo_tui").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            offenders += [f"{path.relative_to(ROOT)}:{node.lineno}: {n}"
                          for n in names if n.startswith("store.")]  # fmt: skip
    assert offenders == []


@pytest.mark.unit  # the store's lazy face
def test_every_name_of_the_store_s_face_is_there() -> None:
    """Each lazily exported name resolves to what its module defines."""
    import importlib

    import store

    for name, (module, original) in store._LAZY.items():
        found = importlib.import_module(f"store.{module}")
        assert getattr(store, name) is (found if original is None else getattr(found, original))


BUILDERS = {"store/demo/demo.py:_build"}
"""The functions allowed over 80 lines: test data builders, which read as the data
they write (issue 57)."""


def test_no_function_of_the_dashboard_or_the_store_is_over_80_lines() -> None:
    """A function that long does several things: split it along what each does."""
    long = []
    for package in ("memevo_tui", "store"):
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    length = (node.end_lineno or node.lineno) - node.lineno + 1
                    where = f"{path.relative_to(ROOT)}:{node.name}"
                    if length > 80 and where not in BUILDERS:
                        long.append(f"{where} ({length})")
    assert long == []


def test_the_app_module_stays_small() -> None:
    """``app.py`` holds the app's wiring only (issue 46: at most 300 lines); what it
    works out lives in the layers below it."""
    lines = (ROOT / "memevo_tui" / "app" / "app.py").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 300


def test_no_module_of_the_dashboard_or_the_store_is_over_450_lines() -> None:
    """A module that long holds several things (issues 46, 57): split it along what
    each part holds, as ``state/``, ``export/``, ``reads/`` and ``past/`` were."""
    long = []
    for path in [*(ROOT / "memevo_tui").rglob("*.py"), *(ROOT / "store").rglob("*.py")]:
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > 450:
            long.append(f"{path.relative_to(ROOT)} ({lines})")
    assert long == []


def _imports_at_run_time(path: Path, name: str, modules: dict[str, Path]) -> set[str]:
    """The project's modules ``name`` imports when it runs: at the top and inside
    functions alike; not what it names for the type checker only (``TYPE_CHECKING``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for statement in node.body
        for inner in ast.walk(statement)
    }
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.ImportFrom):
            parts = package.split(".")
            base = parts[: len(parts) - (node.level - 1)] if node.level else []
            target = ".".join([*base, *([node.module] if node.module else [])])
            for alias in node.names:
                whole = f"{target}.{alias.name}"
                found.add(whole if whole in modules else target)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {m for m in found if m in modules and m != name}


def test_no_two_modules_import_each_other() -> None:
    """A pair of modules importing each other (even inside a function) is one module
    split in two, or a layer upside down: each such pair fails here (issue 57)."""
    modules: dict[str, Path] = {}
    for package in ("memevo_tui", "store"):
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    edges = {name: _imports_at_run_time(path, name, modules) for name, path in modules.items()}
    pairs = sorted({tuple(sorted((a, b))) for a, deps in edges.items() for b in deps
                    if a in edges.get(b, set())})  # fmt: skip
    assert pairs == []


def test_the_store_is_grouped_by_concern_with_at_most_12_modules_at_its_root() -> None:
    """Issue 57: a folder per concern (records, the reads, the past, recall, pi's files,
    the writes, learning, the demo); at the root only what every part shares."""
    root = sorted(p.name for p in STORE.glob("*.py"))
    assert len(root) <= 12, root
    folders = sorted(p.name for p in STORE.iterdir() if (p / "__init__.py").is_file())
    assert folders == ["demo", "learning", "past", "pi", "reads", "recall", "records", "write"]


def test_each_folder_of_the_dashboard_is_named_as_one_layer() -> None:
    """Every folder of ``memevo_tui`` but the CLI (which stands beside the app) is one
    layer of the folders' contract, so that a folder shows where its modules stand
    (issue 57): a new folder has to take its place there."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    folders = next(c for c in contracts if c["name"].startswith("Each folder"))["layers"]
    found = sorted(
        f"memevo_tui.{p.parent.name}"
        for p in (ROOT / "memevo_tui").glob("*/__init__.py")
        if p.parent.name != "cli"
    )
    assert sorted(folders) == found


def test_the_registry_imports_later_only_what_start_up_does_not_import() -> None:
    """``Later`` is the registry's one lazy mechanism (issue 57): every name it holds
    is a class or function of the module it says, and start-up (the app imported)
    has not imported that module; what start-up imports anyway is named directly."""
    import subprocess
    import sys

    probe = (
        "import json, sys, memevo_tui.app.app\n"
        "from memevo_tui.app.registry import LATER\n"
        "print(json.dumps([[w.place, w.module, w.module in sys.modules] for w in LATER]))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    later = json.loads(out.stdout)
    assert len(later) >= 20
    loaded_at_start = sorted({place for place, _, loaded in later if loaded})
    assert loaded_at_start == []
    from memevo_tui.app.registry import LATER

    for entry in LATER:
        assert callable(entry.get()), entry.place


def _private_uses(node: ast.AST) -> list[str]:
    """The private names ``node`` reaches: ``x._name`` (not ``self._name``, nor a
    dunder), and ``from module import _name`` or ``from a._b import c``."""
    found = []
    for n in ast.walk(node):
        if isinstance(n, ast.Attribute) and n.attr.startswith("_") and not n.attr.startswith("__"):
            if not (isinstance(n.value, ast.Name) and n.value.id in ("self", "cls", "os", "sys")):
                found.append(ast.unparse(n))
        elif isinstance(n, ast.ImportFrom) and n.module:
            parts = n.module.split(".")
            hidden = [
                a.name for a in n.names if a.name.startswith("_") and not a.name.startswith("__")
            ]
            if any(p.startswith("_") and not p.startswith("__") for p in parts) or hidden:
                found.append(f"from {n.module} import {', '.join(a.name for a in n.names)}")
    return found


def _marked_unit(decorators: list[ast.expr]) -> bool:
    return any("mark.unit" in ast.unparse(d) for d in decorators)


def test_tests_keep_to_public_names_or_say_they_are_unit_tests() -> None:
    """Issue 57: a test reaches the project through its public doors (``app.live_tick``,
    ``notifications(app)``, ``detail.part``); one that must read a module's private
    parts says so with ``@pytest.mark.unit`` (or its module's ``pytestmark``), so that
    a change inside a module breaks only the tests that said they look inside it."""
    offenders = []
    for path in sorted((ROOT / "tests").glob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        whole = any(
            isinstance(n, ast.Assign)
            and any(getattr(t, "id", "") == "pytestmark" for t in n.targets)
            and "mark.unit" in ast.unparse(n.value)
            for n in tree.body
        )
        if whole:
            continue
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                if node.name.startswith("test_") and not _marked_unit(node.decorator_list):
                    offenders += [f"{path.name}::{node.name}: {u}" for u in _private_uses(node)]
            elif isinstance(node, ast.ImportFrom):
                offenders += [f"{path.name}: {u}" for u in _private_uses(node)]
    assert offenders == []
