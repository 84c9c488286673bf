"""How a use case tells its caller what happens while it runs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


def _quiet(_message: str) -> None:
    return None


def _still(_state: str, _elapsed: float) -> None:
    return None


@dataclass(frozen=True)
class Reporter:
    """Four callbacks, all optional (a library caller may pass none).

    ``done``: one line per change made (``deployment/x -n ns created``); the CLI prints these to
    stdout as they happen, since they are the command's data and ``remove`` can wait minutes
    between two of them. ``info``: progress; ``warn``: something the user should know; the CLI
    prints both to stderr. ``progress``: where a wait stands (its state, the seconds since it
    began), called on every poll; the CLI redraws one line in place on a terminal and prints
    a line when the state changes otherwise. The result each use case returns carries the same
    facts.
    """

    done: Callable[[str], None] = _quiet
    info: Callable[[str], None] = _quiet
    warn: Callable[[str], None] = _quiet
    progress: Callable[[str, float], None] = _still


QUIET = Reporter()
