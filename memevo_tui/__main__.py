"""Entry point: ``memevo-tui`` and ``python -m memevo_tui``."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
import tempfile
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from store import (
    CannotOpen,
    Clock,
    MemoryStore,
    MissingStore,
    check_store_file,
    clock_from_env,
    default_db_path,
    fixed_clock,
    iso,
)

from . import __version__
from .cli import EXIT_CANNOT_RUN, SESSIONS_HELP, add_verbs, execute
from .core.when import OFFSET, BadMoment, parse_moment


class Parser(argparse.ArgumentParser):
    """argparse, with a usage mistake told in one line (and exit 2), not a usage dump;
    an option is taken only as written, never by a prefix of its name (``--session`` is
    turns' own option, not the start of ``--sessions``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        hint = f"see {self.prog} --help"
        for option in VALUED_OPTIONS:
            if message == f"argument {option}: expected one argument":
                hint = f"a value that begins with - is written {option}=-30d"
        self.exit(EXIT_CANNOT_RUN, f"{self.prog}: {message} ({hint})\n")


VALUED_OPTIONS = ("--as-of",)
"""Options whose value may begin with "-" as users type it: ``--as-of -30d``."""


def join_dashed_values(argv: Sequence[str]) -> list[str]:
    """``--as-of -30d`` as ``--as-of=-30d``: argparse takes a value that begins with
    "-" for another option, and would say the option has no value."""
    out: list[str] = []
    items = list(argv)
    i = 0
    while i < len(items):
        item = items[i]
        if item == "--":
            out += items[i:]
            break
        if item in VALUED_OPTIONS and i + 1 < len(items) and OFFSET.match(items[i + 1].strip()):
            out.append(f"{item}={items[i + 1]}")
            i += 2
            continue
        if item.startswith("-") and OFFSET.match(item.strip()):
            out.append(f" {item}")  # a moment where a verb takes one (diff -30d): not an option
        else:
            out.append(item)
        i += 1
    return out


def build_parser() -> argparse.ArgumentParser:
    common = Parser(add_help=False)
    common.add_argument(
        "--db",
        metavar="PATH",
        default=argparse.SUPPRESS,
        help="the memory store to open (default: where pi keeps it)",
    )
    common.add_argument(
        "--read-only",
        action="store_true",
        default=argparse.SUPPRESS,
        help="never write to the store",
    )
    common.add_argument(
        "--demo",
        action="store_true",
        default=argparse.SUPPRESS,
        help="use a freshly built demo store in a temporary directory",
    )
    common.add_argument(
        "--json",
        action="store_true",
        default=argparse.SUPPRESS,
        help="print JSON (verbs only)",
    )
    parser = Parser(
        prog="memevo-tui",
        description=(
            "See, curate and correct what the pi coding agent remembers. "
            "Without a verb, opens the dashboard."
        ),
        parents=[common],
        epilog=(
            "The store is found at $PI_CODING_AGENT_DIR (else ~/.pi/agent) + "
            "/agent-suite/memory-evolution/memory.sqlite. MEMEVO_NOW=<ISO instant> fixes "
            "the clock. Exit codes: 0 done, 1 refused by the store's rules, 2 could not run."
        ),
    )
    parser.add_argument("--version", action="version", version=f"memevo-tui {__version__}")
    parser.add_argument(
        "--live",
        action="store_true",
        help="with --demo: run a learner that writes like pi's learning runs while you watch",
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="an install check: start the dashboard headless on the store, wait until the "
        "memory list has loaded, print one line (rows shown, corrupt rows) and exit 0; "
        "exit 1 if the list never loads",
    )
    parser.add_argument(
        "--sessions",
        "--session-dir",
        metavar="DIR",
        dest="top_sessions",
        help=f"pi's session folder, read to show where a memory came from ({SESSIONS_HELP})",
    )
    scope = parser.add_mutually_exclusive_group()
    scope.add_argument(
        "--project",
        metavar="PATH",
        dest="open_project",
        help="open scoped to the project pi knows PATH as, or PATH is inside (default: the "
        "project of the directory you start in, if pi knows it)",
    )
    scope.add_argument(
        "--all-projects",
        action="store_true",
        dest="open_all",
        help="open on every project, wherever you start it",
    )
    # Set by `memevo-tui serve` for each browser tab's dashboard: no terminal, the web driver.
    parser.add_argument("--served", choices=("store", "demo"), help=argparse.SUPPRESS)
    add_verbs(parser, common)
    return parser


def _exit_cleanly_on(*signals: signal.Signals) -> None:
    """Turn these signals into SystemExit, so the demo's temporary copy is removed
    when the terminal closes or the process is asked to stop."""

    def leave(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    for sig in signals:
        signal.signal(sig, leave)


def _run_verb(open_store: Callable[[], Awaitable[MemoryStore]], args: argparse.Namespace) -> int:
    """A CLI verb. A reader that closes early (`| head`) stops it at once and silently,
    as it stops other Unix tools: by SIGPIPE (status 141 in the shell), never a
    traceback. Only a verb: the dashboard and the server keep Python's SIG_IGN, since
    a write to one of their own pipes or sockets that closed while they shut down
    (asyncio's self-pipe, which a signal's wake-up writes to) must not kill them."""
    previous = signal.signal(signal.SIGPIPE, signal.SIG_DFL) if hasattr(signal, "SIGPIPE") else None
    ended: dict[int, Any] = {}
    for name in ("SIGTERM", "SIGHUP"):  # ended as Ctrl+C ends it: what it started ends too
        sig = getattr(signal, name, None)
        if sig is not None:
            ended[sig] = signal.signal(sig, _leave)
    try:
        return execute(open_store, args)
    except KeyboardInterrupt:  # Ctrl+C: silently, as the shell expects (128 + SIGINT)
        return 128 + signal.SIGINT
    except Leaving as exc:
        return 128 + exc.signum
    finally:
        if previous is not None:
            signal.signal(signal.SIGPIPE, previous)
        for sig, handler in ended.items():
            signal.signal(sig, handler)


class Leaving(BaseException):
    """SIGTERM or SIGHUP to a CLI verb: raised where it runs, so that every block it is
    in closes (a worker pool's terminates its workers) before it exits, silently."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _leave(signum: int, _frame: object) -> None:
    raise Leaving(signum)


def _keeping_past(store: MemoryStore, path: Path, *, demo: bool) -> MemoryStore:
    """``store``, its walk of the whole event log kept in the cache directory for the
    next ``--as-of`` (not the demo's, a temporary copy)."""
    if demo:
        return store
    from .core.recallcache import keeping_past

    return keeping_past(store, path)


TOP_OPTIONS = (
    ("top_sessions", "sessions", "--sessions"),
    ("open_project", "project", "--project"),
    ("open_all", "all_projects", "--all-projects"),
    ("live", None, "--live"),
    ("smoke", None, "--smoke"),
)
"""The dashboard's options a verb may take too: (the dashboard's name, the verb's
name or None for a verb never, the option)."""


def _hand_down(args: argparse.Namespace) -> str | None:
    """The dashboard's options written before a verb (``memevo-tui --sessions DIR
    turns``) given to the verb, as if written after it; one it does not take, or one
    written both ways with two values, is refused (the line why), never dropped."""
    verb = getattr(args, "verb", None)
    for top, own, flag in TOP_OPTIONS:
        value = getattr(args, top, None)
        if not verb or not value:
            continue
        if own is None or not hasattr(args, own):
            return f"{flag} does not apply to {verb} (memevo-tui {verb} --help lists its options)"
        mine = getattr(args, own)
        if mine and mine != value:
            return f"{flag} was given twice, before and after {verb}, with two values"
        setattr(args, own, value)
    return None


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(join_dashed_values(sys.argv[1:] if argv is None else argv))
    if refused := _hand_down(args):
        sys.stderr.write(f"memevo-tui: {refused}\n")
        return EXIT_CANNOT_RUN
    if getattr(args, "verb", None) == "completion":  # no store: the parser itself
        from .cli.completion import script

        sys.stdout.write(script(build_parser(), args.shell))
        return 0
    for name in ("db", "read_only", "demo", "json"):
        if not hasattr(args, name):
            setattr(args, name, None if name == "db" else False)
    clock = clock_from_env()
    past: float | None = None  # a moment before now: the store replayed from its event log
    if getattr(args, "as_of", None) is not None:
        try:
            when = parse_moment(args.as_of, clock())
        except BadMoment as exc:
            sys.stderr.write(f"memevo-tui: --as-of: {exc}\n")
            return EXIT_CANNOT_RUN
        if when is not None:
            past = when if when < clock() else None
            clock = fixed_clock(iso(when))
    workdir: tempfile.TemporaryDirectory[str] | None = None
    try:
        if args.live and not args.demo:
            sys.stderr.write("memevo-tui: --live runs the demo learner and needs --demo "
                             "(changes pi makes to a real store always show live)\n")  # fmt: skip
            return EXIT_CANNOT_RUN
        if args.demo:
            if args.db:
                sys.stderr.write("memevo-tui: --demo and --db cannot be used together\n")
                return EXIT_CANNOT_RUN
            workdir = tempfile.TemporaryDirectory(prefix="memevo-demo-")
            _exit_cleanly_on(signal.SIGTERM, signal.SIGHUP)
            from store import build_demo  # the learner's rules: only for a demo

            path = build_demo(Path(workdir.name) / "memory.sqlite", now_ms=clock())
        else:
            path = Path(args.db).expanduser() if args.db else default_db_path()
            try:
                check_store_file(path)
            except MissingStore:
                sys.stderr.write(
                    f"memevo-tui: no memory store at {path}; pass --db PATH, or try --demo\n"
                )
                return EXIT_CANNOT_RUN
            except CannotOpen as exc:
                sys.stderr.write(f"memevo-tui: {exc}\n")
                return EXIT_CANNOT_RUN

        async def open_store() -> MemoryStore:
            store = await MemoryStore.open(
                path, read_only=bool(args.read_only), clock=clock, as_of=past
            )
            return _keeping_past(store, path, demo=bool(args.demo))

        if args.verb == "serve":
            return _serve(path, args, demo=bool(args.demo), clock=clock)
        if args.verb:
            return _run_verb(open_store, args)
        from .launch import run_app

        demo = args.demo or args.served == "demo"
        label = "demo store (temporary copy)" if demo else None
        return run_app(
            path,
            read_only=bool(args.read_only),
            clock=clock,
            smoke=args.smoke,
            label=label,
            live_demo=args.live,
            served=args.served is not None,
            sessions=args.top_sessions,
            scope="" if args.open_all else args.open_project,  # "": every project
        )
    finally:
        if workdir is not None:
            workdir.cleanup()


def _serve(path: Path, args: argparse.Namespace, *, demo: bool, clock: Clock) -> int:
    from .core.serve import (
        EXTRA_MODULES,
        NEEDS_EXTRA,
        ServeRequest,
        exposure_warning,
        host_problem,
        is_loopback,
        new_token,
    )
    from .launch import probe

    try:
        from .webserver import serve_forever
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] not in EXTRA_MODULES:
            raise
        sys.stderr.write(NEEDS_EXTRA + "\n")
        return EXIT_CANNOT_RUN

    if args.json:
        sys.stderr.write("memevo-tui: serve prints no JSON; --json does not apply to it\n")
        return EXIT_CANNOT_RUN
    if (problem := host_problem(args.host, expose=args.expose)) is not None:
        sys.stderr.write(problem + "\n")
        return EXIT_CANNOT_RUN
    path = path.resolve()
    # The opening rules every tab will meet, checked once before anything listens.
    failure = asyncio.run(probe(path, read_only=bool(args.read_only), clock=clock))
    if failure is not None:
        sys.stderr.write(f"memevo-tui: {failure}\n")
        return EXIT_CANNOT_RUN
    if not is_loopback(args.host):
        sys.stderr.write(exposure_warning(args.host, args.port) + "\n")
    request = ServeRequest(
        db_path=path,
        read_only=bool(args.read_only),
        demo=demo,
        host=args.host,
        port=args.port,
        token=new_token(),
        max_tabs=args.max_tabs,
    )
    return serve_forever(request)


if __name__ == "__main__":
    sys.exit(main())
