"""The web server behind ``memevo-tui serve``: textual-serve, with a token and a clean stop.

textual-serve's ``Server`` builds its page and websocket URLs from one public
URL and starts each tab's app through a shell in the server's process group, so
Ctrl+C in the terminal would reach every tab's dashboard at once. Here the page
is built from the address the browser used, each tab's dashboard runs in its own
session (the server alone takes Ctrl+C, then asks each tab to quit), and the page
and the websocket answer only requests that carry the run's token (download keys
are random and only ever sent down such a websocket).
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import logging
import os
import secrets
import signal
import sys
from asyncio.subprocess import Process
from pathlib import Path

import aiohttp_jinja2
import jinja2
from aiohttp import web
from textual_serve.app_service import AppService
from textual_serve.server import Server, to_int

from .core.serve import (
    EXIT_CANNOT_RUN,
    STOP_GRACE_S,
    ServeRequest,
    describe_bind_error,
    too_many_tabs,
    url_host,
)

log = logging.getLogger("memevo-tui.serve")
FORBIDDEN = (
    "This memevo-tui server opens only with the link it printed when it started "
    "(the link carries the run's token).\n"
)


WEB_LINKS_LOAD = "this.terminal.loadAddon(this.weblinksAddon),"
"""Where textual-serve's script turns a URL on screen into a live link (taken out)."""
INERT_LINKS = "<script>window.open=function(){return null};</script>"
"""And should a script still try to open one (another textual-serve), nothing opens."""


class TabProcess(AppService):
    """One browser tab's dashboard: started without a shell, in a session of its own."""

    def __init__(self, argv: list[str], **kwargs: object) -> None:
        super().__init__(" ".join(argv), **kwargs)  # type: ignore[arg-type]
        self.argv = argv

    async def _open_app_process(self, width: int = 80, height: int = 24) -> Process:
        environment = self._build_environment(width=width, height=height)
        self._process = process = await asyncio.create_subprocess_exec(
            *self.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=environment,
            start_new_session=True,
        )
        assert process.stdin is not None
        self._stdin = process.stdin
        return process

    async def shut(self) -> None:
        """Ask the dashboard to quit; kill it if it has not within the grace period.

        The kill goes to the tab's session by its id, not through ``Process.kill``:
        that polls the child first, and the poll can reap it under asyncio's child
        watcher, which then logs "Unknown child process pid". Only the watcher reaps.
        The session's id stays the child's own until the watcher has reaped it, and
        ``returncode`` is set only after that, so the signal never reaches a stranger.
        """
        process = self._process
        loop = asyncio.get_running_loop()
        deadline = loop.time() + STOP_GRACE_S
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.stop(), STOP_GRACE_S)
        if process is None:
            return
        with contextlib.suppress(TimeoutError):  # it may be quitting still: let it
            await asyncio.wait_for(process.wait(), max(0.5, deadline - loop.time()))
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
            await process.wait()


class DashboardServer(Server):
    def __init__(self, request: ServeRequest, title: str) -> None:
        super().__init__(" ".join(request.tab_argv()), host=request.host, port=request.port,
                         title=title)  # fmt: skip
        self.request = request
        self.tabs: set[TabProcess] = set()
        self.open_tabs = 0
        """Websockets being served a dashboard (counted before the first await)."""
        self._script: str | None = None

    def authorised(self, given: str) -> bool:
        return secrets.compare_digest(given.encode(), self.request.token.encode())

    async def make_app(self) -> web.Application:
        app = web.Application()
        aiohttp_jinja2.setup(app, loader=jinja2.FileSystemLoader(self.templates_path))
        app.add_routes(
            [
                web.get("/", self.handle_index, name="index"),
                # textual.js appends "?width=…" to the websocket URL: its token goes in the path.
                web.get("/ws/{token}", self.handle_websocket, name="websocket"),
                # Download keys are random and only ever sent down an authorised websocket.
                web.get("/download/{key}", self.handle_download, name="download"),
                web.get("/static/js/textual.js", self.handle_script, name="script"),
                web.static("/static", self.statics_path, name="static"),
            ]
        )
        return app

    @property
    def full(self) -> bool:
        return self.open_tabs >= self.request.max_tabs

    async def handle_index(self, request: web.Request) -> web.StreamResponse:
        if not self.authorised(request.query.get("token", "")):
            return web.Response(status=403, text=FORBIDDEN)
        if self.full:
            return full_page(self.title, self.request.max_tabs)
        base = f"{request.scheme}://{request.host}"
        ws_scheme = "wss" if request.scheme == "https" else "ws"
        context = {
            "font_size": to_int(request.query.get("fontsize", "16"), 16),
            "app_websocket_url": f"{ws_scheme}://{request.host}/ws/{self.request.token}",
            "config": {"static": {"url": f"{base}/static/"}},
            "application": {"name": self.title},
        }
        response = aiohttp_jinja2.render_template("app_index.html", request, context)
        if response.text is not None:  # store text's URLs are never live links
            response.text = response.text.replace("<head>", f"<head>{INERT_LINKS}", 1)
        response.headers["Cache-Control"] = "no-store"
        response.headers["Referrer-Policy"] = "no-referrer"
        return response

    async def handle_script(self, request: web.Request) -> web.StreamResponse:
        """textual-serve's terminal script without its web-links add-on: a URL in a
        memory's text is shown, never underlined on hover nor opened by a click."""
        if self._script is None:
            source = (Path(self.statics_path) / "js" / "textual.js").read_text(encoding="utf-8")
            self._script = source.replace(WEB_LINKS_LOAD, "")
        return web.Response(text=self._script, content_type="application/javascript",
                            headers={"Cache-Control": "no-store"})  # fmt: skip

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        if not self.authorised(request.match_info["token"]) or not same_origin(request):
            raise web.HTTPForbidden(text=FORBIDDEN)
        websocket = web.WebSocketResponse(heartbeat=15)
        width = to_int(request.query.get("width", "80"), 80)
        height = to_int(request.query.get("height", "24"), 24)
        if self.full:  # a page loaded before the others opened: told in its terminal
            await websocket.prepare(request)
            text = too_many_tabs(self.request.max_tabs)
            with contextlib.suppress(Exception):
                await websocket.send_bytes(f"\r\n {text}\r\n".encode())
                await websocket.close()
            return websocket
        self.open_tabs += 1
        try:
            return await self._serve_tab(request, websocket, width, height)
        finally:
            self.open_tabs -= 1

    async def _serve_tab(
        self, request: web.Request, websocket: web.WebSocketResponse, width: int, height: int
    ) -> web.WebSocketResponse:
        await websocket.prepare(request)
        tab = TabProcess(
            self.request.tab_argv(),
            write_bytes=websocket.send_bytes,
            write_str=websocket.send_str,
            close=websocket.close,
            download_manager=self.download_manager,
            debug=False,
        )
        self.tabs.add(tab)
        try:
            await tab.start(width, height)
            await self._process_messages(websocket, tab)
        except (asyncio.CancelledError, ConnectionResetError):
            pass
        except Exception as exc:  # one tab's failure never stops the server
            log.warning("a tab's session ended with an error: %s", exc)
        finally:
            self.tabs.discard(tab)
            await tab.shut()
            with contextlib.suppress(Exception):
                await websocket.close()
        return websocket

    async def stop_tabs(self) -> None:
        await asyncio.gather(*(tab.shut() for tab in list(self.tabs)), return_exceptions=True)


def full_page(title: str, max_tabs: int) -> web.Response:
    """The page a tab beyond ``--max-tabs`` gets: what happened and what to do."""
    text = html.escape(too_many_tabs(max_tabs))
    body = (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
        f"</title></head><body style='font-family: monospace; margin: 2em'><p>{text}</p>"
        "</body></html>"
    )
    response = web.Response(status=503, text=body, content_type="text/html")
    response.headers["Cache-Control"] = "no-store"
    response.headers["Retry-After"] = "5"
    return response


def same_origin(request: web.Request) -> bool:
    """A websocket opened by a page from another site is refused (its Origin differs)."""
    origin = request.headers.get("Origin")
    if origin is None:
        return True  # not a browser
    return origin.split("://", 1)[-1].rstrip("/") == request.host


def bound_port(runner: web.AppRunner, fallback: int) -> int:
    for address in runner.addresses:
        if isinstance(address, tuple) and len(address) >= 2:
            return int(address[1])
    return fallback


_REFUSALS = {
    "LineTooLong": "a request line or header over 8 KB",
    "BadStatusLine": "not an HTTP request line",
    "BadHttpMessage": "a malformed request",
}


def one_line_refusals(record: logging.LogRecord) -> bool:
    """A request the HTTP parser refused (a URL over 8 KB, a malformed header): one
    line saying so, not aiohttp's traceback. Anything else is logged as it is."""
    from aiohttp.http_exceptions import HttpProcessingError

    exc = record.exc_info[1] if record.exc_info else None
    if isinstance(exc, HttpProcessingError):
        record.msg = "refused a request it could not read (HTTP %s: %s)"
        record.args = (exc.code, _REFUSALS.get(type(exc).__name__, type(exc).__name__))
        record.exc_info = None
        record.exc_text = None
    return True


def serve_forever(request: ServeRequest) -> int:
    """Serve until Ctrl+C (or SIGTERM, SIGHUP); the exit code."""
    logging.basicConfig(
        level=logging.WARNING, format="memevo-tui serve: %(message)s", stream=sys.stderr
    )
    for handler in logging.getLogger().handlers:
        handler.addFilter(one_line_refusals)
    try:
        return asyncio.run(run_server(request))
    except KeyboardInterrupt:  # a second Ctrl+C while stopping
        return 130


async def run_server(request: ServeRequest) -> int:
    title = "memevo-tui · demo store" if request.demo else f"memevo-tui · {request.db_path.name}"
    server = DashboardServer(request, title)
    runner = web.AppRunner(await server.make_app(), access_log=None, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, request.host, request.port, shutdown_timeout=1.0)
    try:
        await site.start()
    except OSError as exc:
        await runner.cleanup()
        sys.stderr.write(describe_bind_error(request, exc) + "\n")
        return EXIT_CANNOT_RUN
    port = bound_port(runner, request.port)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        sig = getattr(signal, name, None)
        if sig is not None:
            with contextlib.suppress(NotImplementedError):
                loop.add_signal_handler(sig, stop.set)
    url = f"http://{url_host(request.host)}:{port}/?token={request.token}"
    what = "the demo store" if request.demo else str(request.db_path)
    mode = ", read-only" if request.read_only else ""
    print(f"memevo-tui: serving {what}{mode} at {url} (Ctrl+C stops)", flush=True)
    try:
        await stop.wait()
    finally:
        await site.stop()
        await server.stop_tabs()
        await runner.cleanup()
    print("memevo-tui: stopped; every tab's dashboard has quit", file=sys.stderr, flush=True)
    return 0
