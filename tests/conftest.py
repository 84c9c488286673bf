"""Shared test setup.

Unit and CLI tests point KUBECONFIG at a file that does not exist, so they can never reach a
real cluster by accident. The e2e tests (tests/e2e) bring up one lab for the session and set
their own kubeconfig explicitly.

SIGTERM and SIGHUP stop a session as Ctrl-C does: pytest unwinds, so every fixture's teardown
and every test's ``finally`` runs (the labs tests start are taken down, the processes they
started stopped), and the session exits 128 + the signal number.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import tempfile
from pathlib import Path

import pytest

from kschedctl.base.signals import unwinding_on_termination

_TERMINATION = contextlib.ExitStack()
_SESSION = pytest.StashKey[pytest.Session]()
_SIGNAL = pytest.StashKey[int]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--scale",
        action="store_true",
        help="run only the scale tests (500+ nodes or 1,000+ pods), which are left out otherwise",
    )


# Markers by folder: every e2e test needs the lab, and so does the oracle (kube-scheduler).
_FOLDER_MARKERS = {"e2e": ("e2e", "lab"), "oracle": ("lab",)}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    tests = Path(__file__).parent
    for item in items:
        folder = item.path.relative_to(tests).parts[0] if tests in item.path.parents else ""
        for marker in _FOLDER_MARKERS.get(folder, ()):
            item.add_marker(marker)
    # Deselected, not skipped: the README's test command runs the rest, CI's scale stage these.
    scale = config.getoption("--scale")
    chosen, left = [], []
    for item in items:
        (chosen if (item.get_closest_marker("scale") is not None) == scale else left).append(item)
    if left:
        config.hook.pytest_deselected(items=left)
        items[:] = chosen


def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput"):  # the controller (or a run without xdist)
        # Where the e2e session labs start (tests/e2e/conftest.py; the workers inherit it)
        root = tempfile.mkdtemp(prefix="kschedctl-labs-")
        os.environ["KSCHEDCTL_TEST_LABS_ROOT"] = root
        config.add_cleanup(lambda: _stop_labs_left_in(Path(root)))

    def interrupt(signum: int) -> BaseException:
        # KeyboardInterrupt is how pytest stops a session and tears it down. A command run
        # in-process turns it into exit 130: the session is also told to stop after the test.
        config.stash[_SIGNAL] = signum
        if _SESSION in config.stash:
            config.stash[_SESSION].shouldstop = f"terminated by {signal.Signals(signum).name}"
        return KeyboardInterrupt()

    _TERMINATION.enter_context(unwinding_on_termination(interrupt))


def _stop_labs_left_in(root: Path) -> None:
    """Each lab's own fixture stops it; this catches a worker that died before it could."""
    from kschedctl.lab.cluster import Lab

    for directory in sorted(root.iterdir()):
        lab = Lab(directory)
        if lab.is_lab_dir():
            with contextlib.suppress(Exception):  # reported by the fixture, if anywhere
                lab.down()
    shutil.rmtree(root, ignore_errors=True)


def pytest_sessionstart(session: pytest.Session) -> None:
    session.config.stash[_SESSION] = session


def pytest_sessionfinish(session: pytest.Session) -> None:
    if _SIGNAL in session.config.stash:
        session.exitstatus = 128 + session.config.stash[_SIGNAL]


def pytest_unconfigure(config: pytest.Config) -> None:
    _TERMINATION.close()


@pytest.fixture(autouse=True)
def _no_real_cluster(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    missing = tmp_path_factory.getbasetemp() / "no-such-kubeconfig"
    monkeypatch.setenv("KUBECONFIG", str(missing))


@pytest.fixture(scope="session")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A lab PKI (CA, serving and client certificates) for tests that run real TLS servers."""
    from kschedctl.lab.pki import generate

    directory = tmp_path_factory.mktemp("pki") / "pki"
    generate(directory, "127.0.0.1")
    return directory
