"""``memevo-tui serve``: the dashboard in browser tabs, over textual-serve.

Each browser tab that connects starts one dashboard process on the same store,
opened by the same rules as in a terminal (``python -m memevo_tui --db PATH``
under Textual's web driver). Tabs and pi may write at once: every write checks
the record's revision, as in the terminal.

textual-serve has no authentication of its own, so the server listens on
loopback unless told otherwise, and every run makes a secret token: the page and
its websocket answer only a URL that carries it. The token is printed once, in
the start-up line.
"""

from __future__ import annotations

import ipaddress
import os
import secrets
import socket
import sys
from dataclasses import dataclass
from pathlib import Path

EXIT_CANNOT_RUN = 2
EXTRA_MODULES = frozenset({"textual_serve", "aiohttp", "aiohttp_jinja2", "jinja2"})
LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})
NEEDS_EXTRA = (
    "memevo-tui: serve needs the serve extra: pipx install 'memevo-tui[serve]' "
    "(or, in a virtual environment, pip install 'memevo-tui[serve]')"
)
EXPOSE_FLAG = "--expose"
STOP_GRACE_S = 5.0  # how long a tab's dashboard gets to quit before it is killed


def too_many_tabs(max_tabs: int) -> str:
    """What a tab beyond the cap is told, in the page and in its terminal."""
    tabs = "tab" if max_tabs == 1 else "tabs"
    return (
        f"memevo-tui is serving {max_tabs} {tabs} already, the most it was started with "
        f"(--max-tabs {max_tabs}); each runs its own dashboard. Close one, then reload this one."
    )


def is_loopback(host: str) -> bool:
    """True for addresses only this machine can reach: 127.0.0.0/8, ::1, localhost."""
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to anything


def host_problem(host: str, *, expose: bool) -> str | None:
    """Why this host is refused, or None."""
    if is_loopback(host) or expose:
        return None
    return (
        f"memevo-tui: serve: {host} is not a loopback address, and the served dashboard "
        "has no login: anyone who can reach the port could read and curate the store. "
        f"Add {EXPOSE_FLAG} to serve it there anyway"
    )


def exposure_warning(host: str, port: int) -> str:
    wildcard = host in ("0.0.0.0", "::", "")
    who = "any machine that can reach this one" if wildcard else f"anyone who can reach {host}"
    return (
        f"memevo-tui: warning: serving on {host}:{port} without loopback protection: "
        f"{who} on port {port}, with the link below, can read and curate the store "
        "(plain HTTP: the link and the store's text cross the network unencrypted)"
    )


@dataclass(frozen=True)
class ServeRequest:
    db_path: Path
    read_only: bool
    demo: bool
    host: str
    port: int
    token: str
    max_tabs: int = 8

    def tab_argv(self) -> list[str]:
        """The command each browser tab runs: the dashboard, on this store."""
        argv = [sys.executable, "-m", "memevo_tui", "--db", str(self.db_path)]
        argv += ["--served", "demo" if self.demo else "store"]
        return argv + (["--read-only"] if self.read_only else [])


def url_host(host: str) -> str:
    """The host to print in the start-up URL."""
    if host in ("0.0.0.0", "", "::"):
        return socket.gethostname()
    if ":" in host and not host.startswith("["):
        return f"[{host}]"
    return host


def describe_bind_error(request: ServeRequest, exc: OSError) -> str:
    reason = os.strerror(exc.errno) if exc.errno else str(exc)
    reason = reason[:1].lower() + reason[1:]
    return f"memevo-tui: serve: cannot listen on {request.host}:{request.port}: {reason}"


def new_token() -> str:
    """A per-run secret for the URL: 144 random bits."""
    return secrets.token_urlsafe(18)
