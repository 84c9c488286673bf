"""Progress of a long step on stderr (``lab build``, ``deploy``'s wait): drawn in place on a
terminal, lines in a log."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable

from kschedctl.base import terminal
from kschedctl.base.errors import as_called
from kschedctl.cli import output


class StderrBuildProgress:
    """``lab build``'s progress on stderr: a spinner with the elapsed time on a terminal; in a
    log (CI), a line per step and one every 30 s while a binary compiles."""

    BEAT = 30.0

    def __init__(self) -> None:
        self.console = output.stderr_console()
        self.status = self.console.status("") if self.console.is_terminal else None
        self.next_beat = self.BEAT

    def __enter__(self) -> StderrBuildProgress:
        if self.status is not None:
            self.status.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        if self.status is not None:
            self.status.stop()

    def step(self, message: str) -> None:
        output.info(message)
        self.next_beat = self.BEAT

    def waiting(self, what: str, elapsed: float) -> None:
        from rich.text import Text  # rich is loaded already: output's console

        minutes, seconds = divmod(int(elapsed), 60)
        shown = f"still building {what}: {minutes}m{seconds:02d}s"
        if self.status is not None:
            self.status.update(Text(shown))  # Text: never read as markup
        elif elapsed >= self.next_beat:
            output.info(shown)
            self.next_beat += self.BEAT


class StderrWaitProgress:
    """A wait's state on stderr (``deploy``): one line redrawn in place on a terminal; in a log,
    a line each time the state changes (not each second), each with the seconds waited.

    Use it as a context manager (the line is cleared on the way out, error or not) and pass
    other messages through :meth:`before` so they never land on the half-drawn line."""

    def __init__(self) -> None:
        self.tty = sys.stderr.isatty()
        self.drawn = False
        self.last = ""

    def __enter__(self) -> StderrWaitProgress:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.clear()

    def __call__(self, state: str, elapsed: float) -> None:
        line = f"{terminal.escape(as_called(state))} ({int(elapsed)}s)"
        if self.tty:
            width = shutil.get_terminal_size().columns - 1  # \r returns to this row only
            sys.stderr.write(f"\r\x1b[K{line[:width]}")
            sys.stderr.flush()
            self.drawn = True
        elif state != self.last:
            output.info(line)
        self.last = state

    def clear(self) -> None:
        if self.drawn:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()
            self.drawn = False

    def before(self, say: Callable[[str], None]) -> Callable[[str], None]:
        def said(message: str) -> None:
            self.clear()
            say(message)

        return said
