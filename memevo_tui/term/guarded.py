"""A terminal driver that ends the process when its terminal goes away.

An ssh drop, ``tmux kill-session`` or a closed window hangs the terminal up.
Textual's Linux driver (8.2) then keeps the process alive for good: its output
thread dies on the first write the terminal refuses (EIO), and once 30 more
writes are queued the event loop blocks on the full queue, so not even SIGTERM is
handled; its input thread spins on the hung-up terminal's end of file; and the
SIGCONT a hang-up brings starts application mode a second time, with a second
output thread, though nothing was suspended (``docs/UPSTREAM.md`` has the report).

``GuardedDriver`` ends the process instead. A write or a read the terminal refuses,
its end of file, or SIGHUP once it no longer answers, is the terminal lost: from
then on nothing is written to it (standard output and error go to /dev/null), the
app exits with 129 as a hung-up shell job does, and if it has not ended 1.5 s later
(a worker waiting on a store pi holds busy, say) the process ends at once. Every
write to the store is one committed transaction or none, so ending there loses
nothing. Imported on Linux and macOS only (``terminal.driver``).
"""

from __future__ import annotations

import codecs
import os
import selectors
import signal
import termios
import threading
from collections.abc import Callable
from typing import IO, Any

from .compat.textual import LinuxDriver, WriterThread, use_writer_thread
from .paste import PasteSafeParser

EXIT_TERMINAL_LOST = 128 + signal.SIGHUP
"""The exit status when the terminal went away (a shell reports a hung-up job so)."""
GRACE_SECONDS = 1.5
"""How long the app may take to end once its terminal is lost."""


def terminal_alive(fd: int) -> bool:
    """True while ``fd`` is still a terminal that answers (False once it is hung up)."""
    try:
        termios.tcgetattr(fd)  # EIO once the terminal hung up (isatty is False then too)
    except (termios.error, OSError):
        return False
    return True


class GuardedWriter(WriterThread):
    """Textual's output thread, except that a write the terminal refuses ends the
    writing, never the thread: the rest of the queue is drained and dropped, so a
    write from the event loop never waits on a queue nobody empties."""

    def __init__(self, file: IO[str]) -> None:
        super().__init__(file)
        self.lost = threading.Event()
        self.on_lost: Callable[[], None] | None = None

    def write(self, text: str) -> None:
        if not self.lost.is_set():
            super().write(text)

    def _lose(self) -> None:
        if not self.lost.is_set():
            self.lost.set()
            if self.on_lost is not None:
                self.on_lost()

    def run(self) -> None:
        get, qsize = self._queue.get, self._queue.qsize
        while (text := get()) is not None:
            if self.lost.is_set():
                continue
            try:
                self._file.write(text)
                if not qsize():
                    self._file.flush()
            except (OSError, ValueError):  # EIO, EPIPE, or a file closed under it
                self._lose()
        if not self.lost.is_set():
            try:
                self._file.flush()
            except (OSError, ValueError):
                self._lose()

    def stop(self) -> None:
        """Stop the thread: it drains the queue, so this returns at once unless the
        terminal is slow to take the output (then at most ``GRACE_SECONDS`` later)."""
        self._queue.put(None)
        self.join(GRACE_SECONDS)


class GuardedDriver(LinuxDriver):
    """Textual's Linux and macOS driver, made to end the process when the terminal
    goes away (see the module's description)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lost = threading.Event()
        self._suspended = False

    # ------------------------------------------------------------ losing the terminal

    def lose(self) -> None:
        """The terminal is gone: write nothing more to it, and end the process soon.
        Safe from any thread and from a signal handler; does its work once."""
        if self.lost.is_set():
            return
        self.lost.set()
        writer = self._writer_thread
        if isinstance(writer, GuardedWriter):
            writer.lost.set()
        with open(os.devnull, "w") as null:  # exit messages, tracebacks: nowhere, not EIO
            for fd in (1, 2):
                try:
                    os.dup2(null.fileno(), fd)
                except OSError:
                    pass
        threading.Thread(target=_end_soon, name="memevo-terminal-lost", daemon=True).start()
        try:
            self._loop.call_soon_threadsafe(self._exit_app)
        except RuntimeError:  # the loop is closed: _end_soon ends the process
            pass

    def _exit_app(self) -> None:
        self._app.exit(return_code=EXIT_TERMINAL_LOST)

    def hang_up(self) -> None:
        """SIGHUP: the terminal hung up, or somebody sent it to a live one. The first
        loses the terminal; the second ends the app as q does, restoring the terminal."""
        output = self._file
        if terminal_alive(self.fileno) and output is not None and terminal_alive(output.fileno()):
            self._app.exit(return_code=EXIT_TERMINAL_LOST)
        else:
            self.lose()

    # ------------------------------------------------------------ Textual's driver, guarded

    def start_application_mode(self) -> None:
        super().start_application_mode()  # type: ignore[no-untyped-call]
        writer = self._writer_thread
        if isinstance(writer, GuardedWriter):
            writer.on_lost = self.lose
            if writer.lost.is_set():
                self.lose()

    def write(self, data: str) -> None:
        if not self.lost.is_set() and self._writer_thread is not None:
            self._writer_thread.write(data)

    def _sigtstp_application(self, *args: Any) -> None:
        self._suspended = self._auto_restart  # what Textual's handler is about to do
        super()._sigtstp_application(*args)

    def _sigcont_application(self, *args: Any) -> None:
        """Resume only what ctrl+z suspended: a hang-up brings SIGCONT too, and Textual
        would start application mode again on top of the running one."""
        if self._suspended and not self.lost.is_set():
            self._suspended = False
            super()._sigcont_application(*args)

    def run_input_thread(self) -> None:
        """Read the terminal and post its keys, until the app stops reading or the
        terminal ends (its end of file, or a read it refuses, is the terminal lost)."""
        fd = self.fileno
        parser = PasteSafeParser(self._debug)
        decode = codecs.getincrementaldecoder("utf-8")().decode
        with selectors.SelectSelector() as selector:  # as Textual: kqueue takes no tty
            selector.register(fd, selectors.EVENT_READ)
            while not self.exit_event.is_set():
                if selector.select(0.1):
                    try:
                        data = os.read(fd, 4096)
                    except OSError:
                        data = b""
                    if not data:
                        self.lose()
                        return
                    for event in parser.feed(decode(data)):
                        self.process_message(event)
                for event in parser.tick():
                    self.process_message(event)


def _end_soon() -> None:
    """The last resort once the terminal is lost: end the process if it is still here."""
    threading.Event().wait(GRACE_SECONDS)
    os._exit(EXIT_TERMINAL_LOST)


def install() -> None:
    """Make Textual's Linux driver start ``GuardedWriter`` as its output thread."""
    use_writer_thread(GuardedWriter)
