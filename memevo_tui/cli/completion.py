"""``memevo-tui completion bash|zsh|fish``: a completion script for the verbs, their
flags, their choices and the paths they take, derived from the parser itself (shtab)
so it never drifts from the command line."""

from __future__ import annotations

import argparse

SHELLS = ("bash", "zsh", "fish")
PATHS = frozenset(("PATH", "FILE", "DIR"))
"""The metavars of arguments that name a file or a directory."""


def _parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """The parser and every verb's, depth first."""
    found = [parser]
    for action in parser._actions:  # argparse keeps them here; no public door
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                found += _parsers(sub)
    return found


def script(parser: argparse.ArgumentParser, shell: str) -> str:
    """The completion script for ``shell``, paths completed as files or directories."""
    import shtab  # only for this verb

    for each in _parsers(parser):
        for action in each._actions:
            if action.metavar in PATHS:
                kind = shtab.DIRECTORY if action.metavar == "DIR" else shtab.FILE
                action.complete = kind  # type: ignore[attr-defined]
    return str(shtab.complete(parser, shell=shell))
