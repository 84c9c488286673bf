"""Progress of a long step on stderr (``lab build``): a spinner on a terminal, lines in a log."""

from __future__ import annotations

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
