"""SIGTERM and SIGHUP unwind like Ctrl-C (kschedctl.base.signals), sent to this very process.

The test session installs its own handler for both (tests/conftest.py): each test here starts
from the dispositions a command starts with (the defaults) and puts the session's back.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator

import pytest

from kschedctl.base.signals import TERMINATING, Terminated, deferred, unwinding_on_termination


@pytest.fixture(autouse=True)
def _default_dispositions() -> Iterator[None]:
    session = {sig: signal.signal(sig, signal.SIG_DFL) for sig in TERMINATING}
    try:
        yield
    finally:
        for sig, handler in session.items():
            signal.signal(sig, handler)


def _kill_self(signum: int) -> None:
    os.kill(os.getpid(), signum)
    time.sleep(5)  # the handler raises before this ends (signals reach the main thread)
    pytest.fail(f"{signal.Signals(signum).name} did not interrupt")


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_a_terminating_signal_unwinds_through_finally(signum: int, code: int) -> None:
    cleaned: list[str] = []
    with pytest.raises(Terminated) as raised, unwinding_on_termination():
        try:
            _kill_self(signum)
        finally:
            cleaned.append("lab down")
    assert cleaned == ["lab down"]
    assert raised.value.exit_code == code
    assert str(raised.value) == f"terminated by {signal.Signals(signum).name}"
    assert all(signal.getsignal(sig) == signal.SIG_DFL for sig in TERMINATING)  # restored


def test_it_is_neither_an_exception_nor_a_keyboard_interrupt() -> None:
    # `except Exception` must not swallow it; a watch's quiet Ctrl-C exit must not hide it.
    assert not issubclass(Terminated, (Exception, KeyboardInterrupt))


def test_a_second_signal_does_not_cut_the_unwinding_short() -> None:
    cleaned = []
    with pytest.raises(Terminated), unwinding_on_termination():
        try:
            _kill_self(signal.SIGTERM)
        finally:
            os.kill(os.getpid(), signal.SIGTERM)  # a supervisor's repeat, then a hangup
            os.kill(os.getpid(), signal.SIGHUP)
            cleaned.append("stopped")
    assert cleaned == ["stopped"]


def test_an_ignored_hangup_stays_ignored() -> None:
    signal.signal(signal.SIGHUP, signal.SIG_IGN)  # nohup kschedctl …
    with unwinding_on_termination():
        assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN
        os.kill(os.getpid(), signal.SIGHUP)
    assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN


def test_a_handler_someone_installed_stays_theirs() -> None:
    heard: list[int] = []
    signal.signal(signal.SIGTERM, lambda signum, _frame: heard.append(signum))
    with unwinding_on_termination():
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.01)  # a bytecode boundary: Python handlers run between instructions
    assert heard == [signal.SIGTERM]


def test_the_exception_raised_is_the_callers() -> None:
    with pytest.raises(KeyboardInterrupt), unwinding_on_termination(lambda _s: KeyboardInterrupt()):
        _kill_self(signal.SIGHUP)


def test_deferred_finishes_its_block_then_raises() -> None:
    steps = []
    with pytest.raises(Terminated), unwinding_on_termination():
        with deferred():
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.05)
            steps.append("every process stopped")
        steps.append("not reached")
    assert steps == ["every process stopped"]


def test_deferred_without_a_signal_or_a_handler_is_transparent() -> None:
    with deferred():
        pass
    with unwinding_on_termination(), deferred():
        pass


def test_outside_the_main_thread_nothing_is_installed() -> None:
    seen = []

    def worker() -> None:
        with unwinding_on_termination():
            seen.append(signal.getsignal(signal.SIGTERM))

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert seen == [signal.SIG_DFL]
