"""One real control plane (``kschedctl lab``) for the whole e2e session.

The lab starts once per session (once per pytest-xdist worker: each worker's tests see the
same nodes whatever the other worker does), is torn down at the end of the session whatever
happens (failure, Ctrl-C, SIGTERM, SIGHUP; tests/conftest.py stops a lab a killed worker
left), and each test works in a namespace of its own. Missing binaries are built once, under a
lock the workers share (needs Go); if that fails the session fails — e2e tests are never
silently skipped.

``KSCHEDCTL_TEST_LAB_DIR=DIR`` keeps the lab between runs (a contributor's loop): the session
uses the lab running in DIR (one per worker: DIR/gw0, DIR/gw1 …), starts it there if none
runs, and leaves it up; ``kschedctl lab down --dir DIR/…`` stops it.
"""

from __future__ import annotations

import atexit
import fcntl
import os
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import new_namespace

from kschedctl.base.errors import NotFoundError
from kschedctl.kubeclient.client import Cluster
from kschedctl.lab import binaries
from kschedctl.lab.cluster import Lab
from kschedctl.lab.nodes import default_nodes
from kschedctl.lab.paths import cache_dir

E2E_NODES = 4


@pytest.fixture(scope="session")
def lab_binaries() -> dict[str, Path]:
    # One build for all workers: the first takes the lock and builds, the others then find it.
    lock_path = cache_dir() / "build.lock"
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with lock_path.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            return binaries.locate()
        except NotFoundError:
            try:
                binaries.build(progress=print)
            except Exception as err:  # the session must fail loudly, never skip
                pytest.fail(f"cannot build the lab binaries: {err}", pytrace=False)
            return binaries.locate()


def _worker() -> str:
    return os.environ.get("PYTEST_XDIST_WORKER", "gw0")


@pytest.fixture(scope="session")
def lab(lab_binaries: dict[str, Path]) -> Iterator[Lab]:
    kept = os.environ.get("KSCHEDCTL_TEST_LAB_DIR")
    # set by tests/conftest.py, which stops any lab left there when the session ends
    the_lab = Lab(Path(kept or os.environ["KSCHEDCTL_TEST_LABS_ROOT"]) / _worker())
    # Probes every second at most (rendered manifests wait 10 s before the first startup
    # probe): the lab runner's speed-up, inherited by every lab the tests start.
    os.environ.setdefault("KSCHEDCTL_LAB_MAX_PROBE_PERIOD", "1")
    if kept and the_lab.is_lab_dir() and the_lab.running_components():
        yield the_lab
        return

    def teardown(*_args: Any) -> None:
        if the_lab.dir.exists() and not kept:
            the_lab.down()

    # SIGTERM and SIGHUP unwind the session as Ctrl-C does (tests/conftest.py): this finally
    # runs; atexit is for an exit that skips it.
    atexit.register(teardown)
    started = time.monotonic()
    try:
        the_lab.up(default_nodes(E2E_NODES), progress=lambda _m: None)
        print(f"\nlab up in {time.monotonic() - started:.1f}s at {the_lab.dir}")
        yield the_lab
    finally:
        teardown()
        atexit.unregister(teardown)


@pytest.fixture(scope="session")
def cluster(lab: Lab) -> Iterator[Cluster]:
    connection = Cluster.connect(str(lab.kubeconfig))
    yield connection
    connection.close()


@pytest.fixture()
def namespace(cluster: Cluster, request: pytest.FixtureRequest) -> Iterator[str]:
    base = request.node.name.lower().replace("_", "-")
    slug = "".join(c for c in base if c.isalnum() or c == "-")[:40].strip("-")
    name = f"e2e-{slug}-{uuid.uuid4().hex[:5]}"
    yield new_namespace(cluster, name)
    cluster.delete(f"/api/v1/namespaces/{name}")


@pytest.fixture()
def own_lab_dir(tmp_path: Path) -> Iterator[Path]:
    """A directory for a lab a test starts itself (`kschedctl lab up --dir`, which a test
    interrupted kills); stopped whatever the test's outcome."""
    directory = tmp_path / "own-lab"
    yield directory
    if directory.exists():
        Lab(directory).down()


@pytest.fixture()
def kubectl(
    lab: Lab, lab_binaries: dict[str, Path]
) -> Callable[..., subprocess.CompletedProcess[str]]:
    def run(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(lab_binaries["kubectl"]), f"--kubeconfig={lab.kubeconfig}", *args],
            capture_output=True, text=True, check=check, timeout=60,
        )  # fmt: skip

    return run
