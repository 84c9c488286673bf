"""Helpers shared by the e2e tests (polling, pod manifests, events)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml

from kschedctl.base.errors import LabError, NotFoundError
from kschedctl.kubeclient.client import Cluster
from kschedctl.lab import processes
from kschedctl.lab.cluster import Lab


def stop(proc: subprocess.Popen[Any], grace: float = 15) -> None:
    """Stop a process a test started, by its pid: SIGTERM, then SIGKILL after ``grace`` s."""
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)


@contextmanager
def sigint_as_in_a_background_job() -> Iterator[None]:
    """SIGINT ignored in this process, as a shell script's ``pytest &`` has it; the commands
    started meanwhile inherit that unless started as :func:`foreground` does."""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def foreground(argv: list[str], **popen: Any) -> subprocess.Popen[Any]:
    """Start ``argv`` with SIGINT at its default, as a terminal's foreground command has it, so
    that a test's Ctrl-C (SIGINT) reaches it. A test run in the background (``pytest &`` in a
    script) ignores SIGINT, and an ignored signal is inherited across exec; a Python handler
    is not (it is the default again after exec)."""
    previous = signal.getsignal(signal.SIGINT)
    if previous == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return subprocess.Popen(argv, **popen)
    finally:
        signal.signal(signal.SIGINT, previous)


def start_kschedctl(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """``kschedctl ARGS`` running, its output captured (read it after it ends)."""
    return foreground(
        [sys.executable, "-m", "kschedctl", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip


def signal_and_wait(proc: subprocess.Popen[str], signum: int, timeout: float = 120) -> str:
    """Send ``signum`` and wait for the process to end (however long its cleanup takes, up to
    ``timeout``); its stderr."""
    proc.send_signal(signum)
    try:
        _, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail(f"still running {timeout:.0f}s after {signal.Signals(signum).name}")
    return str(stderr)


Recorded = tuple[int, str, int | None]  # pid, executable, start time


def recorded_processes(directory: Path) -> set[Recorded]:
    """The processes the lab in ``directory`` records now: its components (lab.json) and what
    commands started in it (procs/). A record being written is read at the next call."""
    found: set[Recorded] = set()
    try:
        state = Lab(directory).state()
    except (LabError, OSError):
        state = None
    for c in state.components.values() if state is not None else []:
        found.add((c.pid, c.exe, c.started))
    for record in (directory / "procs").glob("*.json"):
        try:
            data = json.loads(record.read_text())
            found.add((data["pid"], data["exe"], data.get("started")))
        except (OSError, ValueError, KeyError):
            continue
    return found


def running(found: set[Recorded]) -> list[Recorded]:
    return sorted(p for p in found if processes.is_running(*p))


@contextmanager
def lab_of_its_own(directory: Path, nodes: list[dict[str, Any]], **up: Any) -> Iterator[Lab]:
    """A lab of its own with exactly ``nodes`` (a module's fixture), always taken down."""
    the_lab = Lab(directory / "lab")
    try:
        the_lab.up(nodes, **up)
        yield the_lab
    finally:
        the_lab.down()


def exists(cluster: Cluster, path: str) -> bool:
    try:
        cluster.get(path)
        return True
    except NotFoundError:
        return False


BUSY_MACHINE_FLOOR = 60.0  # seconds: the shortest overall wait for any condition


def wait_for(
    condition: Callable[[], Any],
    timeout: float,
    what: str | Callable[[], str],
    interval: float = 0.25,
) -> Any:
    """Poll ``condition`` until it returns something truthy; fail naming ``what`` (a callable:
    asked at the failure, so it can say what was last seen).

    ``timeout`` is what the condition needs on an idle machine; the wait is never shorter than
    ``BUSY_MACHINE_FLOOR`` (CI machines are busy: a test must not fail on a margin)."""
    timeout = max(timeout, BUSY_MACHINE_FLOOR)
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() > deadline:
            label = what() if callable(what) else what
            pytest.fail(f"timed out after {timeout:.0f}s waiting for {label}")
        time.sleep(interval)


def create_and_bind(
    cluster: Cluster, namespace: str, names: list[str], scheduler: str, timeout: float = 120
) -> dict[str, str]:
    """Create a pod per name asking for ``scheduler``; wait until all are bound: name -> node."""
    for name in names:
        cluster.create(
            f"/api/v1/namespaces/{namespace}/pods", pod_manifest(name, schedulerName=scheduler)
        )

    def placed() -> dict[str, str] | None:
        pods = cluster.list(f"/api/v1/namespaces/{namespace}/pods")
        nodes = {
            p["metadata"]["name"]: p["spec"].get("nodeName")
            for p in pods
            if p["metadata"]["name"] in names
        }
        return nodes if len(nodes) == len(names) and all(nodes.values()) else None

    return dict(wait_for(placed, timeout, f"{len(names)} pods bound by {scheduler}"))


def pod_manifest(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10"}],
            "terminationGracePeriodSeconds": 0,
            **spec,
        },
    }


def pod_events(cluster: Cluster, namespace: str, pod: str) -> list[dict[str, Any]]:
    return cluster.list(
        f"/apis/events.k8s.io/v1/namespaces/{namespace}/events",
        fieldSelector=f"regarding.name={pod},regarding.kind=Pod",
    )


def latest_failure(cluster: Cluster, namespace: str, pod: str, by: str | None = None) -> str | None:
    """The note of the pod's latest FailedScheduling event (of reporting controller ``by``,
    if given); None: none yet. A scheduler retries a pod when the cluster changes, and a
    retry whose message differs is a new event: the latest is what it judges now."""
    events = [e for e in pod_events(cluster, namespace, pod) if e["reason"] == "FailedScheduling"
              and (by is None or e.get("reportingController") == by)]  # fmt: skip
    if not events:
        return None

    def seen(e: dict[str, Any]) -> str:
        return str((e.get("series") or {}).get("lastObservedTime") or e.get("eventTime") or "")

    return str(max(events, key=seen)["note"])


def scheduled_event(cluster: Cluster, namespace: str, pod: str) -> dict[str, Any]:
    """The pod's Scheduled event, waited for: a scheduler records it after the binding, on
    its own time, so a bound pod may not have it yet."""
    return dict(
        wait_for(
            lambda: next(
                (e for e in pod_events(cluster, namespace, pod) if e["reason"] == "Scheduled"),
                None,
            ),
            60,
            f"the Scheduled event of {namespace}/{pod}",
        )  # fmt: skip
    )


def token_kubeconfig(lab: Lab, cluster: Cluster, namespace: str, account: str, path: Path) -> None:
    """Write to ``path`` a kubeconfig for the lab that authenticates with a fresh token of
    ServiceAccount ``namespace/account`` (what a scraper or a scheduler pod would hold)."""
    answer = cluster.create(
        f"/api/v1/namespaces/{namespace}/serviceaccounts/{account}/token",
        {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
         "spec": {"expirationSeconds": 3600}},
    )  # fmt: skip
    state = lab.state()
    assert state is not None
    config = {
        "apiVersion": "v1", "kind": "Config", "current-context": "sa",
        "clusters": [{"name": "lab", "cluster": {
            "server": f"https://127.0.0.1:{state.api_port}",
            "certificate-authority": str(lab.pki / "ca.crt")}}],
        "users": [{"name": account, "user": {"token": answer["status"]["token"]}}],
        "contexts": [{"name": "sa", "context": {"cluster": "lab", "user": account}}],
    }  # fmt: skip
    path.write_text(yaml.safe_dump(config))


def pod_reader_kubeconfig(lab: Lab, cluster: Cluster, namespace: str, tmp_path: Path) -> Path:
    """A kubeconfig for a ServiceAccount ``viewer`` that may get and list the pods of
    ``namespace`` only (to see what a command says when it is refused the rest)."""
    rbac = "/apis/rbac.authorization.k8s.io/v1"
    cluster.create(
        f"/api/v1/namespaces/{namespace}/serviceaccounts", {"metadata": {"name": "viewer"}}
    )
    cluster.create(f"{rbac}/namespaces/{namespace}/roles", {"metadata": {"name": "pods"}, "rules": [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}]})  # fmt: skip
    cluster.create(f"{rbac}/namespaces/{namespace}/rolebindings", {
        "metadata": {"name": "pods"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "pods"},
        "subjects": [{"kind": "ServiceAccount", "name": "viewer", "namespace": namespace}]})  # fmt: skip
    path = tmp_path / "viewer.kubeconfig"
    token_kubeconfig(lab, cluster, namespace, "viewer", path)
    return path


def run(lab: Lab, *args: str, cwd: Path, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    """``kschedctl ARGS`` in a fresh process against ``lab``, run in ``cwd``."""
    env = {**os.environ, "KUBECONFIG": str(lab.kubeconfig)}
    return subprocess.run(
        [sys.executable, "-m", "kschedctl", *args],
        capture_output=True, text=True, cwd=cwd, env=env, timeout=timeout,
    )  # fmt: skip


def new_namespace(cluster: Cluster, name: str) -> str:
    """Create namespace ``name`` and wait until its ``default`` ServiceAccount exists (pods
    cannot be created before)."""
    cluster.create("/api/v1/namespaces", {"metadata": {"name": name}})
    wait_for(
        lambda: exists(cluster, f"/api/v1/namespaces/{name}/serviceaccounts/default"),
        60,
        f"ServiceAccount {name}/default",
    )
    return name


def service_account_token(cluster: Cluster, namespace: str, account: str, seconds: int) -> str:
    """A TokenRequest token of ServiceAccount ``namespace/account``, valid ``seconds``."""
    answer = cluster.create(
        f"/api/v1/namespaces/{namespace}/serviceaccounts/{account}/token",
        {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
         "spec": {"expirationSeconds": seconds}},
    )  # fmt: skip
    return str(answer["status"]["token"])
