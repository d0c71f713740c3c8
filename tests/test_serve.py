"""`memevo-tui serve`: loopback by default, a token in the URL, a clean stop, a real browser.

The server runs as a real process, as a user starts it. The browser test drives
Debian's Chromium through Playwright and reads the page's own terminal buffer
(xterm.js), so what it checks is what the browser shows.
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXTURE_NOW, FIXTURES

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
START_TIMEOUT_S = 60  # a hang fails the test; nothing is asserted about speed


@dataclass
class Served:
    process: subprocess.Popen[str]
    url: str
    line: str

    @property
    def port(self) -> int:
        return int(self.url.split("://", 1)[1].split("/", 1)[0].rsplit(":", 1)[1])

    def stop(self) -> tuple[int, str]:
        """Ctrl+C, as in a terminal; the exit code and what went to stderr."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
        _, err = self.process.communicate(timeout=START_TIMEOUT_S)
        return self.process.returncode, err


def serve_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "memevo_tui", "serve", *args]


def first_line(process: subprocess.Popen[str]) -> str:
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], START_TIMEOUT_S)
    assert ready, "serve printed nothing"
    return process.stdout.readline()


@contextmanager
def serving(*args: str, env: dict[str, str] | None = None) -> Iterator[Served]:
    process = subprocess.Popen(
        serve_argv("--port", "0", *args),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        line = first_line(process)
        assert " at http://" in line, (line, process.stderr.read() if process.stderr else "")
        url = line.split(" at ", 1)[1].split(" ", 1)[0]
        yield Served(process, url, line)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()


def tab_processes(marker: str) -> list[int]:
    """Live processes whose command line holds ``--served`` and ``marker``."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"--served" in argv and any(marker.encode() in a for a in argv):
            pids.append(int(entry.name))
    return pids


def outward_address() -> str:
    """This machine's address on its default route (no packet is sent), or loopback."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("10.254.254.254", 1))
        except OSError:  # no route out: loopback is all there is
            return "127.0.0.1"
        address: str = probe.getsockname()[0]
    return address


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


# ------------------------------------------------------------------ the command


def test_serve_prints_one_line_with_the_url_and_stops_on_ctrl_c(realistic: Path) -> None:
    with serving("--db", str(realistic)) as served:
        assert served.line.startswith(f"memevo-tui: serving {realistic} at http://127.0.0.1:")
        assert served.line.rstrip().endswith("(Ctrl+C stops)")
        assert "?token=" in served.url
        code, err = served.stop()
    assert code == 0
    assert "Traceback" not in err
    assert served.process.stdout is not None


def test_serve_listens_on_loopback_only_by_default(realistic: Path) -> None:
    if shutil.which("ss") is None:
        pytest.skip("ss (iproute2) is not installed")
    with serving("--db", str(realistic)) as served:
        listening = subprocess.run(["ss", "-ltnH"], capture_output=True, text=True, check=True)
        ours = [
            line.split()[3]
            for line in listening.stdout.splitlines()
            if line.split()[3].rsplit(":", 1)[1] == str(served.port)
        ]
        assert ours == [f"127.0.0.1:{served.port}"]
        served.stop()


def test_a_non_loopback_host_is_refused_without_expose(realistic: Path) -> None:
    for host in ("0.0.0.0", "::", "example.org", "192.168.1.20"):
        result = subprocess.run(
            serve_argv("--db", str(realistic), "--host", host, "--port", "0"),
            capture_output=True,
            text=True,
            timeout=START_TIMEOUT_S,
        )
        assert result.returncode == 2, host
        assert result.stdout == ""
        lines = result.stderr.splitlines()
        assert len(lines) == 1, lines
        assert lines[0].startswith(f"memevo-tui: serve: {host} is not a loopback address")
        assert "--expose" in lines[0]


def test_expose_serves_there_with_a_warning(realistic: Path) -> None:
    with serving("--db", str(realistic), "--host", "0.0.0.0", "--expose") as served:
        assert served.process.stderr is not None
        warning = served.process.stderr.readline()
        assert warning.startswith("memevo-tui: warning: serving on 0.0.0.0:")
        assert "any machine that can reach this one" in warning
        assert "can read and curate the store" in warning
        # reachable through this machine's own non-loopback address (a server of another
        # run that was given the same free port on 127.0.0.1 cannot answer there)
        host = served.url.split("/")[2].rsplit(":", 1)[0]
        status, _ = get(served.url.replace(host, outward_address(), 1))
        assert status == 200
        code, _ = served.stop()
    assert code == 0


def test_loopback_names_and_addresses_need_no_flag() -> None:
    from memevo_tui.core.serve import host_problem, is_loopback

    for host in ("127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost", "LOCALHOST"):
        assert is_loopback(host) and host_problem(host, expose=False) is None
    for host in ("0.0.0.0", "::", "10.0.0.1", "localhost.example.org"):
        assert not is_loopback(host)
        assert host_problem(host, expose=True) is None


def test_the_page_and_its_websocket_need_the_runs_token(realistic: Path) -> None:
    with serving("--db", str(realistic)) as served:
        base = served.url.split("?", 1)[0]
        token = served.url.split("token=", 1)[1]
        status, body = get(base)
        assert status == 403 and "the link it printed" in body
        status, _ = get(base + "?token=" + "x" * len(token))
        assert status == 403
        status, page = get(served.url)
        assert status == 200
        assert f"/ws/{token}" in page  # the websocket URL carries it
        status, _ = get(base.rstrip("/") + "/ws/wrong")
        assert status == 403
        served.stop()


async def open_tab(ws_url: str, session: Any) -> tuple[Any, str]:
    """A websocket as the page's script opens it; what its terminal drew first."""
    import asyncio

    import aiohttp

    ws = await session.ws_connect(ws_url)
    drawn = b""
    while b"shown of" not in drawn and b"--max-tabs" not in drawn:
        message = await asyncio.wait_for(ws.receive(), START_TIMEOUT_S)
        if message.type == aiohttp.WSMsgType.BINARY:
            drawn += message.data
        elif message.type != aiohttp.WSMsgType.TEXT:
            break
    return ws, drawn.decode("utf-8", "replace")


async def test_tabs_beyond_max_tabs_are_told_so_and_closed_tabs_are_reaped_quietly(
    realistic: Path,
) -> None:
    import asyncio

    import aiohttp

    with serving("--db", str(realistic), "--max-tabs", "2") as served:
        base, token = served.url.split("/?token=")
        ws_url = base.replace("http://", "ws://") + f"/ws/{token}?width=100&height=30"
        async with aiohttp.ClientSession() as session:
            for _ in range(4):  # open to the cap, one more, then close them all
                first = await open_tab(ws_url, session)
                second = await open_tab(ws_url, session)
                assert "shown of" in first[1] and "shown of" in second[1]
                status, page = await asyncio.to_thread(get, served.url)
                assert status == 503 and "--max-tabs 2" in page and "Close one" in page
                third, drawn = await open_tab(ws_url, session)
                assert "serving 2 tabs already" in drawn and "reload" in drawn
                assert len(tab_processes(str(realistic))) == 2  # no third dashboard
                for ws, _ in (first, second):
                    await ws.close()
                await third.close()
                await until_gone(str(realistic))
                # the server counts a tab closed once it has reaped it, just after it is gone
                await until_page(served.url, 200)
        code, err = served.stop()
    assert code == 0, err
    assert "Unknown child process" not in err and "Traceback" not in err
    assert err == "memevo-tui: stopped; every tab's dashboard has quit\n"


def test_max_tabs_must_be_a_count() -> None:
    for value in ("0", "-1", "many"):
        result = subprocess.run(serve_argv("--max-tabs", value), capture_output=True, text=True)
        assert result.returncode == 2
        assert len(result.stderr.splitlines()) == 1, result.stderr
        assert "--max-tabs" in result.stderr


def test_a_port_in_use_is_one_line(realistic: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            [*serve_argv("--db", str(realistic)), "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=START_TIMEOUT_S,
        )
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"memevo-tui: serve: cannot listen on 127.0.0.1:{port}: address already in use"
    ]


def test_a_store_the_dashboard_would_refuse_is_refused_before_listening(tmp_path: Path) -> None:
    garbage = tmp_path / "memory.sqlite"
    garbage.write_bytes(b"not a database" * 400)
    result = subprocess.run(
        serve_argv("--db", str(garbage), "--port", "0"),
        capture_output=True,
        text=True,
        timeout=START_TIMEOUT_S,
    )
    assert result.returncode == 2 and result.stdout == ""
    assert len(result.stderr.splitlines()) == 1
    assert result.stderr.startswith("memevo-tui: ")


def test_without_the_extra_serve_says_what_to_install(tmp_path: Path) -> None:
    code = (
        "import sys; sys.modules['textual_serve'] = None\n"
        "from memevo_tui.__main__ import main\n"
        "sys.exit(main(['serve', '--demo']))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "memevo-tui: serve needs the serve extra: pipx install 'memevo-tui[serve]' "
        "(or, in a virtual environment, pip install 'memevo-tui[serve]')"
    ]


def test_the_demo_store_lives_as_long_as_the_server(tmp_path: Path) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp)}
    with serving("--demo", env=env) as served:
        assert served.line.startswith("memevo-tui: serving the demo store at http://")
        (demo_dir,) = temp.iterdir()
        assert (demo_dir / "memory.sqlite").is_file()
        code, _ = served.stop()
    assert code == 0
    assert list(temp.iterdir()) == []


# ------------------------------------------------------------------ the browser

SCREEN_HOOK = """
// Keep the page's xterm.js terminal when textual.js creates it, to read its screen.
Object.defineProperty(Object.prototype, 'terminal', {
  configurable: true,
  set(value) {
    Object.defineProperty(this, 'terminal',
      {value, writable: true, configurable: true, enumerable: true});
    if (value && value.buffer && value.onData) { window.__memevoTerminal = value; }
  },
});
window.__memevoScreen = () => {
  const term = window.__memevoTerminal;
  if (!term) { return ''; }
  const buffer = term.buffer.active;
  const lines = [];
  for (let y = 0; y < term.rows; y++) {
    const line = buffer.getLine(buffer.viewportY + y);
    lines.push(line ? line.translateToString(true) : '');
  }
  return lines.join('\\n');
};
"""
CHROMIUM_ARGS = [
    "--no-sandbox",  # CI runs as root
    "--disable-gpu",
    "--disable-background-networking",  # the machine's network is closed
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


def browser_or_skip() -> Any:
    required = os.environ.get("MEMEVO_REQUIRE_BROWSER") == "1"  # set by .ci/run
    try:
        from playwright.async_api import async_playwright
    except ImportError:
        if required:
            raise
        pytest.skip("Playwright for Python is not installed (pip install -e '.[dev]')")
    if CHROMIUM is None:
        if required:
            pytest.fail("MEMEVO_REQUIRE_BROWSER=1 but Chromium is not installed")
        pytest.skip("Chromium is not installed (apt-get install chromium)")
    return async_playwright


async def until_page(url: str, wanted: int) -> None:
    import asyncio

    status = None
    for _ in range(START_TIMEOUT_S * 10):
        status, _ = await asyncio.to_thread(get, url)
        if status == wanted:
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"the page still answers {status}, not {wanted}")


async def until_gone(marker: str) -> None:
    import asyncio

    for _ in range(START_TIMEOUT_S * 10):
        if not tab_processes(marker):
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"a tab's dashboard is still running: {tab_processes(marker)}")


def last_event(path: Path) -> dict[str, Any]:
    import json

    con = sqlite3.connect(path)
    try:
        row = con.execute("SELECT data FROM events ORDER BY rowid DESC LIMIT 1").fetchone()
    finally:
        con.close()
    return dict(json.loads(row[0]))


@pytest.mark.browser
async def test_a_browser_tab_pins_a_record_and_another_tab_sees_it(realistic: Path) -> None:
    async_playwright = browser_or_skip()
    before = last_event(realistic)["id"]
    with serving("--db", str(realistic)) as served:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(
                executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
            )
            try:
                page = await browser.new_page(viewport={"width": 1400, "height": 900})
                await page.add_init_script(SCREEN_HOOK)
                await page.goto(served.url)
                screen = "window.__memevoScreen()"
                # the memory list has rendered (its status line counts the fixture's records),
                # and so has the detail pane of the record under the cursor
                loaded = f"{screen}.includes('shown of 205') && {screen}.includes(' layer ')"
                await page.wait_for_function(loaded, timeout=60_000)
                text = await page.evaluate(screen)
                memory_id = next(
                    line.split(" id ", 1)[1].split()[0]
                    for line in text.splitlines()
                    if " id " in line
                )
                assert "layer durable" in text
                # a second tab: its own dashboard, on the same store
                other = await browser.new_page(viewport={"width": 1400, "height": 900})
                await other.add_init_script(SCREEN_HOOK)
                await other.goto(served.url)
                await other.wait_for_function(loaded, timeout=60_000)
                assert len(tab_processes(str(realistic))) == 2
                await page.bring_to_front()
                await page.focus(".xterm-helper-textarea")
                await page.keyboard.press("p")
                await page.wait_for_function(
                    f"{screen}.includes('Pinned · {memory_id[:12]}')", timeout=60_000
                )
                # the other tab sees the write live, as a terminal dashboard sees pi's
                await other.wait_for_function(f"{screen}.includes('layer pinned')", timeout=60_000)
            finally:
                await browser.close()
        # closing the tab ends its dashboard, while the server keeps running
        await until_gone(str(realistic))
        assert served.process.poll() is None
        event = last_event(realistic)
        assert event["id"] != before
        assert event["actor"] == "manual" and event["reason"] == "pin"
        assert [a["id"] for a in event["after"]] == [memory_id]
        assert event["after"][0]["layer"] == "pinned"
        code, err = served.stop()
    assert code == 0, err
    assert "Traceback" not in err
    assert tab_processes(str(realistic)) == []  # every tab's dashboard quit with the server


@pytest.mark.browser
async def test_in_a_browser_tab_a_key_right_after_esc_goes_where_esc_went(
    realistic: Path,
) -> None:
    """esc then m at once, from the recall prompt: the memory list, and no "m" typed
    into the prompt (xterm.js sends ESC m, which Textual reads as alt+m)."""
    async_playwright = browser_or_skip()
    with serving("--db", str(realistic)) as served:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(
                executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
            )
            try:
                page = await browser.new_page(viewport={"width": 1400, "height": 900})
                await page.add_init_script(SCREEN_HOOK)
                await page.goto(served.url)
                screen = "window.__memevoScreen()"
                await page.wait_for_function(f"{screen}.includes('shown of 205')", timeout=60_000)
                await page.focus(".xterm-helper-textarea")
                await page.keyboard.press("i")
                await page.wait_for_function(f"{screen}.includes('a prompt:')", timeout=60_000)
                await page.keyboard.press("/")
                await page.keyboard.type("kyverno")
                await page.wait_for_function(f"{screen}.includes('kyverno')", timeout=60_000)
                await page.keyboard.press("Escape")
                await page.keyboard.press("m")  # no pause between them
                await page.wait_for_function(f"{screen}.includes('186 shown of 205')",
                                             timeout=60_000)  # fmt: skip
                await page.keyboard.press("i")
                await page.wait_for_function(f"{screen}.includes('kyverno')", timeout=60_000)
                assert "kyvernom" not in await page.evaluate(screen)
            finally:
                await browser.close()
        served.stop()


@pytest.mark.browser
async def test_in_a_browser_tab_keys_work_at_once_after_esc_closes_the_inbox(
    realistic: Path,
) -> None:
    """Issue 59, item 9: "Since your last visit" opens; esc closes it; w then opens
    Review with no click on the page, and the footer's keys are there throughout."""
    from memevo_tui.core.appstate import AppState, Visit

    AppState(realistic).save_visit(Visit(230, 1_793_361_600_000))  # 2026-10-30 12:00
    async_playwright = browser_or_skip()
    env = {**os.environ, "MEMEVO_NOW": FIXTURE_NOW}
    with serving("--db", str(realistic), env=env) as served:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(
                executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
            )
            try:
                page = await browser.new_page(viewport={"width": 1400, "height": 900})
                await page.add_init_script(SCREEN_HOOK)
                await page.goto(served.url)
                screen = "window.__memevoScreen()"
                inbox = f"{screen}.includes('esc dismisses')"
                await page.wait_for_function(inbox, timeout=60_000)
                await page.focus(".xterm-helper-textarea")
                await page.keyboard.press("Escape")
                await page.wait_for_function(f"!({inbox})", timeout=60_000)
                await page.wait_for_function(f"{screen}.includes('Quit')", timeout=60_000)
                await page.keyboard.press("w")
                await page.wait_for_function(f"{screen}.includes('to review')", timeout=60_000)
                assert "Quit" in await page.evaluate(screen)
            finally:
                await browser.close()
        served.stop()


@pytest.mark.browser
async def test_in_a_browser_tab_the_timeline_draws_and_enter_turns_the_dial(
    realistic: Path,
) -> None:
    async_playwright = browser_or_skip()
    with serving("--db", str(realistic)) as served:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(
                executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
            )
            try:
                page = await browser.new_page(viewport={"width": 1400, "height": 900})
                await page.add_init_script(SCREEN_HOOK)
                await page.goto(served.url)
                screen = "window.__memevoScreen()"
                await page.wait_for_function(f"{screen}.includes('shown of 205')", timeout=60_000)
                await page.focus(".xterm-helper-textarea")
                await page.keyboard.press("Shift+T")
                # every panel's title, and bars drawn in block characters
                drawn = " && ".join(
                    f"{screen}.includes({title!r})"
                    for title in ("Records by state", "Events a week", "Learning runs a week",
                                  "Model spend a week", "205 records")
                )  # fmt: skip
                await page.wait_for_function(drawn, timeout=60_000)
                assert "█" in await page.evaluate(screen)
                for _ in range(10):
                    await page.keyboard.press("ArrowLeft")
                await page.keyboard.press("Enter")
                await page.wait_for_function(
                    f"{screen}.includes('from the event log; 0: now')", timeout=60_000
                )
            finally:
                await browser.close()
        code, err = served.stop()
    assert code == 0, err


@pytest.mark.browser
async def test_in_a_browser_tab_the_record_menu_shows_where_a_memory_came_from(
    realistic: Path,
) -> None:
    async_playwright = browser_or_skip()
    with serving("--db", str(realistic)) as served:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(
                executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
            )
            try:
                page = await browser.new_page(viewport={"width": 1400, "height": 900})
                await page.add_init_script(SCREEN_HOOK)
                await page.goto(served.url)
                screen = "window.__memevoScreen()"
                await page.wait_for_function(f"{screen}.includes('shown of 205')", timeout=60_000)
                await page.focus(".xterm-helper-textarea")
                await page.keyboard.press("Enter")  # the record menu
                await page.wait_for_function(f"{screen}.includes('Where it came from')",
                                             timeout=60_000)  # fmt: skip
                await page.keyboard.press("Enter")  # its first line
                await page.wait_for_function(
                    f"{screen}.includes('The memory') && {screen}.includes('Source ') && "
                    f'({screen}.includes("of the claim\'s words"))',
                    timeout=60_000,
                )
                await page.keyboard.press("Escape")
                await page.wait_for_function(f"!{screen}.includes('The memory')", timeout=60_000)
            finally:
                await browser.close()
        code, err = served.stop()
    assert code == 0, err


@pytest.mark.browser
async def test_in_a_browser_tab_the_turns_view_lists_sessions_and_a_sessions_prompts(
    realistic: Path, tmp_path: Path
) -> None:
    async_playwright = browser_or_skip()
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "sessions").symlink_to(FIXTURES / "sessions")
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent)}
    with serving("--db", str(realistic), env=env) as served:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(
                executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
            )
            try:
                page = await browser.new_page(viewport={"width": 1400, "height": 900})
                await page.add_init_script(SCREEN_HOOK)
                await page.goto(served.url)
                screen = "window.__memevoScreen()"
                await page.wait_for_function(f"{screen}.includes('shown of 205')", timeout=60_000)
                await page.focus(".xterm-helper-textarea")
                await page.keyboard.press("n")
                await page.wait_for_function(
                    f"{screen}.includes('88 session(s), 154 prompt(s)')", timeout=90_000
                )
                await page.keyboard.press("Enter")
                await page.wait_for_function(
                    f"{screen}.includes('esc back to sessions') && {screen}.includes('THEN')",
                    timeout=60_000,
                )
            finally:
                await browser.close()
        code, err = served.stop()
    assert code == 0, err


async def test_a_tab_s_dashboard_ends_when_its_server_is_killed(realistic: Path) -> None:
    """kill -9 of serve: no chance to stop its tabs, which must notice and end."""
    import aiohttp

    with serving("--db", str(realistic)) as served:
        base, token = served.url.split("/?token=")
        ws_url = base.replace("http://", "ws://") + f"/ws/{token}?width=100&height=30"
        async with aiohttp.ClientSession() as session:
            ws, drawn = await open_tab(ws_url, session)
            assert "shown of" in drawn
            assert len(tab_processes(str(realistic))) == 1
            served.process.kill()
            served.process.wait()
            await until_gone(str(realistic))
            await ws.close()


def test_a_url_over_8_kb_and_a_bracketed_ipv6_host_are_one_line_each() -> None:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        pytest.skip("no IPv6 loopback on this machine")
    with serving("--demo", "--host", "[::1]") as served:
        assert "http://[::1]:" in served.url
        status, _ = get(served.url.split("/?token=")[0] + "/" + "a" * 9000)
        assert status == 400
        code, err = served.stop()
    assert code == 0 and "Traceback" not in err, err
    assert err.splitlines()[0] == (
        "memevo-tui serve: refused a request it could not read "
        "(HTTP 400: a request line or header over 8 KB)"
    )
    result = subprocess.run(serve_argv("--max-tabs", "-3"), capture_output=True, text=True)
    assert "must be 1 or more, not -3" in result.stderr


def test_a_served_page_never_makes_a_url_a_live_link() -> None:
    with serving("--demo") as served:
        status, page = get(served.url)
        assert status == 200 and "<script>window.open=function(){return null};</script>" in page
        base = served.url.split("/?token=")[0]
        status, script = get(base + "/static/js/textual.js")
        assert status == 200 and "WebLinksAddon" in script  # textual-serve's own script
        assert "loadAddon(this.weblinksAddon)" not in script  # without its links
        assert "loadAddon(this.fitAddon)" in script
        served.stop()
