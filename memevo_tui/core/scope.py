"""The project scope: one project (an origin pi knows) or all of them, obeyed by every
view, the recall preview, the Timeline, the Turns view and the counts.

A scope is an origin path, pi's ``scope`` of a record, a source, an event or a session's
project; "" is every project. Started inside a directory pi knows (a record's origin is
the directory or one of its parents), the dashboard opens scoped to it: that is its
*home*. One key cycles home, all projects, and a project picked from a menu. No
Textual here.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from store import CorruptRow, Event, Memory, Source

from .view import origin_name

ALL = ""
"""The scope of every project."""
AUTO = None
"""Asked for nothing: the project of the directory the dashboard started in, if pi
knows it, else every project."""


@dataclass(frozen=True, slots=True)
class Scope:
    project: str = ALL
    """The origin shown ("" every project)."""
    home: str = ""
    """The project the dashboard started in ("" none pi knows)."""

    def covers(self, origin: str) -> bool:
        """Is something of ``origin`` (a record's, an event's, a source's, a session's
        project) in the scope?"""
        return not self.project or origin == self.project

    def shows(self, row: Memory | Event | Source | CorruptRow) -> bool:
        """Is a row (a record, an event, a source) in the scope? A corrupt row always is:
        its origin cannot be read, and it is never hidden."""
        return isinstance(row, CorruptRow) or self.covers(row.scope)

    @property
    def name(self) -> str:
        """How the title bar and the status lines say it: "webshop", "all projects"."""
        return origin_name(self.project) if self.project else "all projects"

    @property
    def everything(self) -> bool:
        return not self.project

    def cycled(self) -> Scope | None:
        """The next scope the key gives: home, then every project, then a project to
        pick (None: ask which)."""
        if self.project and self.project != self.home:
            return Scope(self.home, self.home) if self.home else Scope(ALL, self.home)
        if self.project:  # home: every project next
            return Scope(ALL, self.home)
        return None


def project_for(directory: str, origins: Iterable[str]) -> str:
    """The origin ``directory`` is in (the deepest origin that is it or one of its
    parents), or "" when pi knows none."""
    here = os.path.normpath(directory)
    best = ""
    for origin in origins:
        if not origin.startswith("/"):
            continue  # "legacy" and other names that are no directory
        root = os.path.normpath(origin)
        inside = here == root or here.startswith(root.rstrip("/") + "/")
        if inside and len(root) > len(best):
            best = origin
    return best


def origins_by_size(records: Iterable[object]) -> list[tuple[str, int]]:
    """Every origin of the records with how many it holds, the largest first (the
    picker's menu); "legacy" records are in every-project scope only."""
    counts = Counter(r.scope for r in records if isinstance(r, Memory) and r.scope != "legacy")
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


def resolve_project(asked: str, origins: Iterable[str], cwd: str | None = None) -> str:
    """The project a path names, one way for every verb and the dashboard: made
    absolute (``~`` expanded, from ``cwd``) and normalised (``.``, ``..``, a trailing
    slash), symlinks resolved as pi's own working directory is; then the origin it is,
    or is inside (``apps/api`` of webshop is webshop). A path pi knows no origin for
    is itself, resolved."""
    known = list(origins)
    expanded = os.path.expanduser(asked)
    base = os.getcwd() if cwd is None else cwd
    plain = os.path.normpath(os.path.join(base, expanded))
    real = os.path.realpath(plain)
    return project_for(real, known) or project_for(plain, known) or real


def start_scope(asked: str | None, directory: str, origins: Iterable[str]) -> Scope:
    """The scope the dashboard opens in: ``asked`` (a project path, or "" every project;
    ``AUTO``: the project of ``directory`` if pi knows it, else every project)."""
    known = list(origins)
    home = resolve_project(directory, known)
    home = home if home in known else ""
    if asked is AUTO:
        return Scope(home, home)
    if asked:
        return Scope(resolve_project(asked, known, directory), home)
    return Scope(ALL, home)
