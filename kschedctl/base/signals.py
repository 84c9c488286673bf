"""SIGTERM and SIGHUP end a command the way Ctrl-C does: by unwinding.

Python turns SIGINT into ``KeyboardInterrupt``, so every ``finally``, ``with`` and
``except BaseException`` on the way out runs: the lab ``simulate`` or ``lab up`` was starting is
stopped, a child process is killed. SIGTERM and SIGHUP kill the interpreter outright by
default and leave all of that running. Inside :func:`unwinding_on_termination` they raise
:class:`Terminated` in the main thread instead (the CLI wraps every command in it and exits
128 + the signal number, what a shell reports for a process the signal killed: 143, 129).

Cleanups that must not be cut short by a signal (a lab's ``down``) run in :func:`deferred`.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

TERMINATING = (signal.SIGTERM, signal.SIGHUP)


class Terminated(BaseException):
    """SIGTERM or SIGHUP arrived. A BaseException, so no ``except Exception`` swallows it, and
    not a KeyboardInterrupt, so a watch that Ctrl-C ends quietly (exit 0) still exits 143."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(f"terminated by {signal.Signals(signum).name}")

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


Raising = Callable[[int], BaseException]

_state = threading.local()  # only the main thread runs signal handlers; kept per thread anyway


def _deferring() -> list[BaseException] | None:
    return getattr(_state, "pending", None)


@contextlib.contextmanager
def unwinding_on_termination(raising: Raising = Terminated) -> Iterator[None]:
    """Within it SIGTERM and SIGHUP raise ``raising(signum)`` in the main thread.

    Only where they would kill the process: an ignored SIGHUP (``nohup``) stays ignored and a
    handler someone else installed stays theirs. The first signal raises; later ones are
    ignored, so that the unwinding it started (stopping a lab) is not cut short. Outside the
    main thread (where handlers cannot be installed) it does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    installed: dict[signal.Signals, Callable[[int, FrameType | None], Any] | int | None] = {}

    def handler(signum: int, _frame: FrameType | None) -> None:
        for sig in installed:
            signal.signal(sig, signal.SIG_IGN)
        error = raising(signum)
        pending = _deferring()
        if pending is None:
            raise error
        pending.append(error)  # inside deferred(): raised when it ends

    for sig in TERMINATING:
        if signal.getsignal(sig) == signal.SIG_DFL:
            installed[sig] = signal.signal(sig, handler)
    try:
        yield
    finally:
        for sig, previous in installed.items():
            signal.signal(sig, previous)


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """Run the block to its end even if SIGTERM or SIGHUP arrives meanwhile; the signal takes
    effect (raises) when the block ends. Ctrl-C still interrupts it."""
    if _deferring() is not None:  # nested: the outermost raises
        yield
        return
    pending: list[BaseException] = []
    _state.pending = pending
    try:
        yield
    finally:
        _state.pending = None
    if pending:
        raise pending[0]
