"""The verbs, their arguments and their help."""

from __future__ import annotations

import argparse

from store import TOOL_QUERY_MAX

from ..core.export import FORMATS
from ..core.verbs import CLI_VERBS, FEEDBACK

READ_VERBS = (
    "list", "show", "source", "search", "recall", "explain", "history", "status", "export",
    "diff", "turns", "blame", "completion",
)  # fmt: skip
WRITE_VERBS = tuple(CLI_VERBS)
FILTER_HELP = (
    "the dashboard's filter tokens, e.g. 'kind:fact state:dormant' (kind: status: state: "
    "origin: is:pinned src: id:, and free words that must all match)"
)


COUNT_MAX = 2**53 - 1
"""The largest count taken (JavaScript's largest safe integer): a bigger one means "all",
and is taken as this (SQLite's integers stop at 2**63 - 1)."""


SESSIONS_HELP = (
    "pi's session folder, read only; by default the one pi itself uses, in its order: "
    "$PI_CODING_AGENT_SESSION_DIR, sessionDir in ./.pi/settings.json, sessionDir in "
    "$PI_CODING_AGENT_DIR/settings.json, else $PI_CODING_AGENT_DIR/sessions "
    "(~/.pi/agent/sessions); turns says which was read and why"
)


def _whole(text: str, least: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"must be {least} or more, not {value}")
    return min(value, COUNT_MAX)


def _host(text: str) -> str:
    """An address as typed, an IPv6 one perhaps in brackets as in a URL (``[::1]``)."""
    host = text.strip()
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not host or any(c in host for c in "[]/ "):
        raise argparse.ArgumentTypeError(f"not a host name or address: {text!r}")
    return host


def _limit(text: str) -> int:
    return _whole(text, 0)


def _tabs(text: str) -> int:
    return _whole(text, 1)


def _port(text: str) -> int:
    value = _limit(text)
    if value > 65535:
        raise argparse.ArgumentTypeError("a port is 0 to 65535 (0: any free port)")
    return value


class _Verbs:
    """What each group of verbs is added with: the subparsers and the common options."""

    def __init__(self, parser: argparse.ArgumentParser, common: argparse.ArgumentParser) -> None:
        self.sub = parser.add_subparsers(dest="verb", metavar="VERB")
        self.common = common

    def verb(self, name: str, help_: str, epilog: str | None = None) -> argparse.ArgumentParser:
        return self.sub.add_parser(
            name, help=help_, description=help_, epilog=epilog, parents=[self.common]
        )

    @staticmethod
    def as_of(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--as-of",
            metavar="WHEN",
            help="show the store as of another moment: a date (2026-12-15), an instant, or "
            "an offset (+30d, -1w). Before now, the records as they were then, replayed "
            "from pi's event log; after, the same records with decay projected",
        )

    @staticmethod
    def scoped(p: argparse.ArgumentParser) -> None:
        """The project scope, as the dashboard takes it (the verbs default to every
        project, whatever directory they run in)."""
        group = p.add_mutually_exclusive_group()
        group.add_argument("--project", metavar="PATH",
                           help="only the records (events) of the project pi knows PATH as, "
                           "or PATH is inside")  # fmt: skip
        group.add_argument("--all-projects", action="store_true",
                           help="every project's (the default)")  # fmt: skip


def _reads(v: _Verbs) -> None:
    """The reads pi's /memory has: list, show, search, recall, explain, history, status."""
    verb, as_of, scoped = v.verb, v.as_of, v.scoped
    piped = (
        "Piped, each record is one whole tab-separated line (full ids, nothing clipped) "
        "and the count goes to stderr."
    )
    p = verb("list", "list memories (not forgotten or conflicted), newest evidence first", piped)
    as_of(p)
    p.add_argument("--all", action="store_true", help="include forgotten and conflicted records")
    p.add_argument("--dormant", action="store_true", help="only dormant records")
    p.add_argument("--filter", metavar="TOKENS", default="", help=FILTER_HELP)
    scoped(p)
    p = verb("show", "one memory with its quality")
    p.add_argument("id")
    as_of(p)
    p = verb("search", "search as pi's /memory search does (dormant records included)", piped)
    p.add_argument("query", nargs="+")
    as_of(p)
    p.add_argument("--limit", type=_limit, default=10, help="at most N records (default 10)")
    scoped(p)
    p = verb(
        "recall",
        "what pi would inject for a prompt (dormant excluded, 3 records), and why the rest "
        "was left out",
        "With --tool: what the model gets when it calls pi's memory_recall tool mid-task "
        f"(query redacted first, 1 to {TOOL_QUERY_MAX} characters; dormant records included "
        "and marked aging; 3 records), ending with the digest lines pi returns.",
    )
    p.add_argument("query", nargs="+")
    as_of(p)
    p.add_argument(
        "--tool", action="store_true", help="the model's memory_recall tool instead of injection"
    )
    p.add_argument("--limit", type=_limit, default=None, help="at most N records (default 3)")
    p = verb(
        "explain",
        "pi's /memory explain: the records recall selects for a text (3, dormant excluded), "
        "each with score × quality = rank, then every record left out and why",
    )
    p.add_argument("text", nargs="+")
    as_of(p)
    p = verb(
        "history",
        "events, newest first (all, or one memory's); 10 unless told, as pi's /memory history",
        "Each line: <event id> <at> [<scope>] <actor>: <reason> (<n> changes). When more "
        "events exist than are shown, stderr says so.",
    )
    p.add_argument("id", nargs="?")
    p.add_argument("--limit", type=_limit, default=10, help="at most N events (default 10)")
    p.add_argument("--all", action="store_true", help="every event")
    scoped(p)
    as_of(
        verb(
            "status",
            "store and learning-queue figures, in the layout of pi's /memory status",
            "Lines pi prints come first, in its order and with its labels; figures pi "
            "does not print (tokens, problems found) follow.",
        )
    )


def _provenance(v: _Verbs) -> None:
    """Where a record came from, and what pi injected: source, turns, blame."""
    verb = v.verb
    p = verb(
        "source",
        "where a memory came from: each source that shaped it, its text with the passage "
        "that states the claim marked, and pi's session around it",
        "The passage is bold on a terminal and between [[ and ]] when piped; a claim no "
        "passage covers says so. --json gives each source's id, kind, text, and the "
        "passage's start and end (UTF-16 code units, as JavaScript counts), coverage and "
        "section.",
    )
    p.add_argument("id")
    p.add_argument("--context", type=_limit, default=0, metavar="N",
                   help="N turns of pi's session on each side of the source's entry")  # fmt: skip
    p.add_argument("--sessions", "--session-dir", metavar="DIR", help=SESSIONS_HELP)
    sessions_help = SESSIONS_HELP
    p = verb(
        "turns",
        "what pi injected into each past prompt of its sessions, replayed on the store as "
        "it was then, beside what the same prompt would get now",
        "One line per prompt, oldest first: its time, session, entry, the records injected "
        "then and now. '?' marks a prompt older than the store's past is exact (then is "
        "not known), '~' one that depends on a confirmation pi wrote with no event, bN a "
        "prompt on another branch than the session's active one. --json adds the prompt, "
        "the branch's recent user texts and both digests exactly as pi builds them. The "
        "replay is pi-memory-evolution 0.4.0's recall.",
    )
    p.add_argument("--session", metavar="ID", help="only the session whose id starts with ID")
    p.add_argument(
        "--since", metavar="WHEN", help="only prompts from this moment on (a date or an offset)"
    )
    p.add_argument("--project", metavar="PATH", help="only the sessions pi ran in PATH")
    p.add_argument("--sessions", "--session-dir", metavar="DIR", help=sessions_help)
    p = verb(
        "blame",
        "the past prompts that pi injected a memory into, replayed from its sessions",
        "Each turn that injected the record at the time, in the layout of turns.",
    )
    p.add_argument("id")
    p.add_argument("--sessions", "--session-dir", metavar="DIR", help=sessions_help)


def _completion(v: _Verbs) -> None:
    """The shell completion script."""
    sub = v.sub
    p = sub.add_parser(
        "completion",
        help="print a completion script for your shell (bash, zsh or fish)",
        description="Print a completion script for the verbs, their flags and the paths "
        "they take. bash: memevo-tui completion bash > "
        "~/.local/share/bash-completion/completions/memevo-tui; zsh: into a directory of "
        "your $fpath as _memevo-tui; fish: > ~/.config/fish/completions/memevo-tui.fish",
    )
    p.add_argument("shell", choices=("bash", "zsh", "fish"))


def _past_and_export(v: _Verbs) -> None:
    """The store between two moments, and its export."""
    verb, as_of = v.verb, v.as_of
    p = verb(
        "diff",
        "the records added, changed and removed between two moments, from the event log",
        "FROM and TO are moments as --as-of takes them (2026-10-01, an instant, -30d, +2w); "
        "TO defaults to now. A changed record lists the fields that changed, with before "
        "and after. Piped, each record is one tab-separated line: added, changed or "
        "removed, the id, the fields that changed, the text.",
    )
    p.add_argument("start", metavar="FROM")
    p.add_argument("end", metavar="TO", nargs="?", default="now")
    p = verb(
        "export",
        "export records: JSONL that loses nothing, or Markdown to read and share",
        "JSONL: a header line, then per record its stored JSON unchanged, its quality and "
        "state (and with the flags its events and the source rows that produced it); rows "
        "pi rejects come out as 'corrupt' lines with their columns as stored. Markdown: "
        "grouped by origin and kind, every text passed through pi's redactor.",
    )
    p.add_argument("--format", choices=FORMATS, default=None,
                   help="jsonl (default), or markdown (the default for -o FILE.md)")  # fmt: skip
    p.add_argument("--filter", metavar="TOKENS", default="", help=FILTER_HELP)
    p.add_argument("--with-events", action="store_true", help="each record's events")
    p.add_argument("--with-sources", action="store_true",
                   help="the source rows that produced each record")  # fmt: skip
    p.add_argument("-o", "--output", metavar="FILE",
                   help="write to FILE (complete or not at all) instead of stdout; "
                   "an existing FILE is refused")  # fmt: skip
    p.add_argument("--force", action="store_true", help="with -o: replace an existing FILE")
    as_of(p)


def _serve(v: _Verbs) -> None:
    """The dashboard served to browser tabs."""
    verb = v.verb
    p = verb(
        "serve",
        "serve the dashboard to browser tabs (needs the serve extra: memevo-tui[serve])",
        "Each tab runs the dashboard on the same store, with the same rules; tabs and pi "
        "may write at once. The server listens on loopback unless told otherwise and prints "
        "one line with the URL to open, which carries a secret token made for this run. "
        "Ctrl+C stops it and every tab's dashboard. With --demo, one demo store lives as "
        "long as the server.",
    )
    p.add_argument(
        "--host",
        type=_host,
        default="127.0.0.1",
        help="address to listen on (default 127.0.0.1; others need --expose)",
    )
    p.add_argument("--port", type=_port, default=8000,
                   help="port to listen on (default 8000; 0 picks a free one)")  # fmt: skip
    p.add_argument(
        "--expose",
        action="store_true",
        help="allow a --host other than loopback: anyone who can reach it and has the link "
        "can read and curate the store (there is no login, and no TLS)",
    )
    p.add_argument(
        "--max-tabs",
        type=_tabs,
        default=8,
        metavar="N",
        help="at most N tabs at once, each its own dashboard process (default 8); a tab "
        "beyond them is told so, and may reload once another is closed",
    )


PROVABLE = ("correct", "forget", "feedback")
"""The fixes a ``--prove`` proves on pi's sessions before writing (the dashboard's
e, d and 4)."""


def _writes(v: _Verbs) -> None:
    """The curation verbs (``verbs.VERBS``)."""
    verb = v.verb
    for name, first in CLI_VERBS.items():  # the curation verbs (``verbs.VERBS``)
        p = verb(name, first.cli_help)
        for arg in first.cli_args:
            if arg == "verdict":
                p.add_argument(arg, choices=FEEDBACK)
            else:
                p.add_argument(arg, nargs="+" if arg == "text" else None)
        if name in PROVABLE:
            p.add_argument(
                "--prove",
                action="store_true",
                help="first replay pi's sessions and say what the fix changes in the "
                "project's recent prompts, as the dashboard asks; writes only with --yes "
                "(or a yes typed on a terminal)",
            )
            p.add_argument("--yes", action="store_true", help="with --prove: write it")
            p.add_argument("--sessions", "--session-dir", metavar="DIR", help=SESSIONS_HELP)


def _merge(v: _Verbs) -> None:
    """The dashboard's merge, for scripts (``cli/merge.py``)."""
    p = v.verb(
        "merge",
        "merge near-duplicates into one: pi's correct of the record kept, then a forget of "
        "each other one, as one batch",
        "Shows the writes and writes nothing without --yes. The record kept is --keep, "
        "else the one that already has --text, else an active one, pinned first, with "
        "the longest text; --text is the text kept (default: the kept record's). Ids may "
        "be any unique prefix.",
    )
    p.add_argument("ids", nargs="+", metavar="ID")
    p.add_argument("--keep", metavar="ID", help="the record to keep")
    p.add_argument("--text", metavar="TEXT", help="the text kept (default: its own)")
    p.add_argument("--yes", action="store_true", help="write them (else: only show them)")


def _secrets(v: _Verbs) -> None:
    """The secret scan (``cli/secrets.py``)."""
    p = v.verb(
        "secrets",
        "find every place a secret sits: records, events, sources, other rows, the app's "
        "cache and state, pi's session files",
        "Rules: detect-secrets' detectors, pi's redactor's, Google API keys and a password "
        "said in words. Each finding: where, which id, which field, the rule, the secret "
        "masked. Exit 1 when something is found, 0 when nothing is.",
    )
    p.add_argument("--sessions", "--session-dir", metavar="DIR", help=SESSIONS_HELP)
    p.add_argument("--no-sessions", action="store_true", help="leave pi's session files out")
    p = v.verb(
        "purge",
        "remove secrets from every copy: the record forgotten through pi's write, then each "
        "copy replaced by [REDACTED:purged] in one transaction, the -wal truncated",
        "KEY is a finding's key as secrets prints it; --all takes every finding. Shows "
        "what it would write and writes nothing without --yes. pi's session files are "
        "rewritten only with --sessions DIR (the secret masked, every other line kept). "
        "Prints a receipt of every place written.",
    )
    p.add_argument("keys", nargs="*", metavar="KEY")
    p.add_argument("--all", action="store_true", help="every finding")
    p.add_argument("--yes", action="store_true", help="write (else: only show)")
    p.add_argument("--sessions", "--session-dir", metavar="DIR",
                   help="also rewrite pi's session files in DIR that hold the secret")  # fmt: skip


def add_verbs(parser: argparse.ArgumentParser, common: argparse.ArgumentParser) -> None:
    """Every verb of the command line, in the order help lists them."""
    v = _Verbs(parser, common)
    groups = (_reads, _provenance, _completion, _past_and_export, _serve, _writes, _merge,
              _secrets)  # fmt: skip
    for group in groups:
        group(v)
