"""deploy's wait on stderr: in a log a line only when the state changes; on a terminal one line
redrawn in place and cleared before any other message."""

from __future__ import annotations

import io

import pytest

from kschedctl.cli import progress as progress_module
from kschedctl.cli.progress import StderrWaitProgress


def test_in_a_log_a_line_per_change_with_the_seconds(capsys: pytest.CaptureFixture[str]) -> None:
    with StderrWaitProgress() as progress:
        progress("waiting for deployment ns/s: 1 of 3 updated, 0 ready", 1.2)
        progress("waiting for deployment ns/s: 1 of 3 updated, 0 ready", 2.7)
        progress("waiting for deployment ns/s: 3 of 3 updated, 3 ready", 12.4)
    assert capsys.readouterr().err.splitlines() == [
        "waiting for deployment ns/s: 1 of 3 updated, 0 ready (1s)",
        "waiting for deployment ns/s: 3 of 3 updated, 3 ready (12s)",
    ]


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_on_a_terminal_redrawn_in_place(monkeypatch: pytest.MonkeyPatch) -> None:
    screen = Terminal()
    monkeypatch.setattr(progress_module.sys, "stderr", screen)
    said: list[str] = []
    with StderrWaitProgress() as progress:
        progress("waiting: 1 of 3 updated\x1b[31m", 1)
        progress.before(said.append)("canary pod created")
        progress("waiting: 3 of 3 updated", 5)
    assert said == ["canary pod created"]
    assert screen.getvalue() == (
        "\r\x1b[Kwaiting: 1 of 3 updated^[[31m (1s)\r\x1b[K"
        "\r\x1b[Kwaiting: 3 of 3 updated (5s)\r\x1b[K"
    )
