"""`events --watch` and `logs` on the session lab, and `why` naming a scheduler that cannot work.

The schedulers here are deployed with `kschedctl deploy` (their pods run as real kube-scheduler
processes through the lab runner) and removed afterwards; the shared nodes are not touched.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import foreground, pod_manifest, run, sigint_as_in_a_background_job, wait_for

from kschedctl.kubeclient.client import Cluster
from kschedctl.lab.cluster import Lab


def env(lab: Lab) -> dict[str, str]:
    return {**os.environ, "KUBECONFIG": str(lab.kubeconfig)}


class Streaming:
    """A kschedctl command that streams (-w, -f): its stdout lines as they come."""

    def __init__(self, lab: Lab, *args: str, cwd: Path) -> None:
        # as from a terminal: Ctrl-C reaches it even when the tests run in the background
        self.proc = foreground(
            [sys.executable, "-m", "kschedctl", *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd, env=env(lab),
        )  # fmt: skip
        self.lines: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    def interrupt(self, signum: int = signal.SIGINT) -> tuple[int, str]:
        """Ctrl-C (or ``signum``), as a user ends a watch: (exit code, stderr). It must end
        promptly; the generous bound is for a busy machine, not a measure of it."""
        self.proc.send_signal(signum)
        try:
            code = self.proc.wait(60)
        except subprocess.TimeoutExpired:
            pytest.fail(f"still running 60s after {signal.Signals(signum).name}")
        self.reader.join(60)
        assert self.proc.stderr is not None
        return code, self.proc.stderr.read()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


def test_events_watch_streams_until_interrupted(
    lab: Lab, cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    watch = Streaming(lab, "events", "default-scheduler", "-n", namespace, "-w", cwd=tmp_path)
    try:
        wait_for(lambda: watch.lines, 30, "the watch's header")
        assert watch.lines[0].split()[:4] == ["LAST", "SEEN", "TYPE", "REASON"]
        cluster.create(f"/api/v1/namespaces/{namespace}/pods", pod_manifest("watched"))
        seen = wait_for(
            lambda: [line for line in watch.lines if "Pod/watched" in line], 60,
            "the Scheduled event in the watch",
        )  # fmt: skip
        assert "Normal" in seen[0] and "Scheduled" in seen[0]
        assert f"Successfully assigned {namespace}/watched to lab-node-" in seen[0]
        code, stderr = watch.interrupt()
    finally:
        watch.stop()
    assert code == 0, stderr
    assert stderr == ""  # Ctrl-C ends a watch quietly


@pytest.mark.parametrize(
    ("args", "what"),
    [
        (("events", "default-scheduler", "-w", "-n", "{namespace}"), "the watch's header"),
        (("logs", "default-scheduler", "-f", "--tail", "1"), "the followed tail"),
    ],
    ids=["events -w", "logs -f"],
)
def test_ctrl_c_ends_an_idle_watch_even_from_a_background_test_run(
    lab: Lab, namespace: str, tmp_path: Path, args: tuple[str, ...], what: str
) -> None:
    # A shell script's `pytest &` ignores SIGINT and its children inherit that: the watch
    # never heard the test's Ctrl-C (these tests timed out so). Nothing happens in the new
    # namespace, nor to the lab's default scheduler: the stream is idle when Ctrl-C comes.
    with sigint_as_in_a_background_job():
        watch = Streaming(lab, *(a.format(namespace=namespace) for a in args), cwd=tmp_path)
    try:
        wait_for(lambda: watch.lines, 60, what)
        code, stderr = watch.interrupt()
    finally:
        watch.stop()
    assert (code, stderr) == (0, "")  # Ctrl-C is how a watch ends


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_and_sighup_end_an_idle_watch_as_terminated(
    lab: Lab, namespace: str, tmp_path: Path, signum: int
) -> None:
    watch = Streaming(lab, "events", "default-scheduler", "-n", namespace, "-w", cwd=tmp_path)
    try:
        wait_for(lambda: watch.lines, 60, "the watch's header")
        code, stderr = watch.interrupt(signum)
    finally:
        watch.stop()
    name = signal.Signals(signum).name
    assert (code, stderr) == (128 + signum, f"terminated by {name}\n")


def _leader(cluster: Cluster, name: str) -> str:
    lease = cluster.get(f"/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/{name}")
    return str(lease["spec"].get("holderIdentity") or "").split("_", 1)[0]


def _ready(cluster: Cluster, pod: str) -> bool:
    status = cluster.get(f"/api/v1/namespaces/kube-system/pods/{pod}").get("status") or {}
    return any(c.get("ready") for c in status.get("containerStatuses") or [])


def _why(lab: Lab, namespace: str, pod: str, cwd: Path) -> dict[str, Any]:
    result = run(lab, "why", pod, "-n", namespace, "-o", "json", cwd=cwd)
    assert result.returncode in (0, 6), result.stderr
    return dict(json.loads(result.stdout))


def test_logs_of_a_deployed_scheduler_and_why_it_stops(
    lab: Lab, cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    name = "logs-sched"
    try:
        deployed = run(lab, "deploy", name, "--as-deployment", "--replicas", "2", cwd=tmp_path)
        assert deployed.returncode == 0, deployed.stderr
        leader = wait_for(lambda: _leader(cluster, name), 30, "a leader")
        pods = {p["metadata"]["name"] for p in cluster.list(
            "/api/v1/namespaces/kube-system/pods",
            labelSelector=f"app.kubernetes.io/instance={name}")}  # fmt: skip
        assert leader in pods and len(pods) == 2
        wait_for(lambda: all(_ready(cluster, pod) for pod in pods), 60, "both replicas Ready")

        # Every replica, prefixed; "(leader)" only on what the leader logged once it led.
        every = run(lab, "logs", name, cwd=tmp_path)
        assert every.returncode == 0, every.stderr
        lines = every.stdout.splitlines()
        prefixes = {line.split("] ", 1)[0] + "]" for line in lines}
        (other,) = pods - {leader}
        assert prefixes == {f"[{other}]", f"[{leader}]", f"[{leader} (leader)]"}
        own = [line for line in lines if line.startswith(f"[{leader}")]
        start = next(i for i, line in enumerate(own) if "Successfully acquired lease" in line)
        assert own[0].startswith(f"[{leader}] ")  # its start-up, before it led
        assert all(line.startswith(f"[{leader} (leader)] ") for line in own[start:])
        acquired = [line for line in lines if "Successfully acquired lease" in line]
        assert acquired and all(line.startswith(f"[{leader} (leader)] ") for line in acquired)

        # -o json: one object per line; -o raw: the messages only; -c: that container.
        as_json = run(lab, "logs", name, "-o", "json", cwd=tmp_path)
        assert as_json.returncode == 0, as_json.stderr
        objects = [json.loads(line) for line in as_json.stdout.splitlines()]
        assert objects and all(
            set(o) == {"pod", "container", "leader", "time", "message"} for o in objects
        )
        assert {o["pod"] for o in objects} == pods
        assert not any(o["leader"] for o in objects if o["pod"] == other)
        assert any(o["leader"] and "Successfully acquired lease" in o["message"] for o in objects)
        container = objects[0]["container"]
        raw = run(lab, "logs", name, "-o", "raw", "-c", container, cwd=tmp_path)
        assert raw.returncode == 0, raw.stderr
        assert any("Successfully acquired lease" in line for line in raw.stdout.splitlines())
        assert not any(
            line.startswith(("[" + leader, "[" + other)) for line in raw.stdout.splitlines()
        )
        for follow_flag in ((), ("-f",)):  # -f too: refused at once, never followed or retried
            missing = run(lab, "logs", name, "-c", "no-such-container", *follow_flag, cwd=tmp_path)
            assert missing.returncode == 5, missing.stderr
            assert "'no-such-container' is not valid" in missing.stderr
            assert f"-c {container}" in missing.stderr
            assert "Traceback" not in missing.stderr and missing.stdout == ""

        only = run(lab, "logs", name, "--leader-only", "--grep", "acquired lease", cwd=tmp_path)
        assert only.returncode == 0, only.stderr
        assert only.stdout.splitlines() == [line.split("] ", 1)[1] for line in acquired]
        last = run(lab, "logs", name, "--tail", "1", cwd=tmp_path)
        assert len(last.stdout.splitlines()) == 2  # one line per replica

        # -f keeps going when the leader's container restarts (the runner restarts it).
        follow = Streaming(lab, "logs", name, "-f", "--tail", "1", cwd=tmp_path)
        try:
            wait_for(lambda: len(follow.lines) >= 2, 30, "the followed tails")
            record = next((lab.dir / "procs").glob(f"kube-system_{leader}_*.json"))
            os.kill(json.loads(record.read_text())["pid"], signal.SIGKILL)
            wait_for(
                lambda: any(line.startswith(f"[{leader}") and "Starting Kubernetes Scheduler"
                            in line for line in follow.lines),
                120, "the restarted container's output in the follow",
            )  # fmt: skip
            code, stderr = follow.interrupt()
        finally:
            follow.stop()
        assert code == 0, stderr

        # Take the Lease permission away: the scheduler logs 'forbidden' and loses its Lease;
        # `why` says so for a pod that waits for it.
        cluster.delete(
            f"/apis/rbac.authorization.k8s.io/v1/namespaces/kube-system/rolebindings/"
            f"{name}-leader-election"
        )
        cluster.create(f"/api/v1/namespaces/{namespace}/pods",
                       pod_manifest("waits", schedulerName=name))  # fmt: skip

        def broken() -> dict[str, Any] | None:
            data = _why(lab, namespace, "waits", tmp_path)
            found = {f["code"] for f in data["findings"]}
            return data if {"scheduler-forbidden", "scheduler-no-leader"} <= found else None

        data = wait_for(broken, 90, "why to report the forbidden Lease", 2.0)
        assert data["schedulable"] is False
        forbidden = next(f for f in data["findings"] if f["code"] == "scheduler-forbidden")
        assert 'leases.coordination.k8s.io \\"logs-sched\\" is forbidden' in forbidden["message"]
    finally:
        run(lab, "remove", name, "--force", cwd=tmp_path)


def test_logs_of_host_schedulers(lab: Lab, tmp_path: Path) -> None:
    name = "svc-logs"
    try:
        deployed = run(lab, "deploy", name, "--as-service", cwd=tmp_path)
        assert deployed.returncode == 0, deployed.stderr
        service = run(lab, "logs", name, "--grep", "acquired lease", cwd=tmp_path)
        assert service.returncode == 0, service.stderr
        lines = service.stdout.splitlines()
        assert lines and all(f'lock="kube-system/{name}"' in line for line in lines)
        assert not lines[0].startswith("[")  # one source: no prefix
    finally:
        run(lab, "remove", name, "--force", cwd=tmp_path)
    default = run(lab, "logs", "default-scheduler", "--tail", "3", cwd=tmp_path)
    assert default.returncode == 0, default.stderr
    assert len(default.stdout.splitlines()) == 3
