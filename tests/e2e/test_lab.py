"""The lab itself: a real control plane that schedules, and the faults `lab` must handle."""

from __future__ import annotations

import json
import os
import signal
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from e2e_helpers import (
    Recorded,
    pod_events,
    pod_manifest,
    recorded_processes,
    running,
    scheduled_event,
    signal_and_wait,
    start_kschedctl,
    wait_for,
)

from kschedctl.kubeclient.client import Cluster
from kschedctl.lab import pki, processes
from kschedctl.lab.cluster import Lab


def kschedctl(
    *args: str, env: dict[str, str] | None = None, timeout: float = 180
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kschedctl", *args],
        capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})},
    )  # fmt: skip


def test_default_scheduler_binds_pod_and_it_runs(cluster: Cluster, namespace: str) -> None:
    cluster.create(f"/api/v1/namespaces/{namespace}/pods", pod_manifest("web"))
    path = f"/api/v1/namespaces/{namespace}/pods/web"
    pod = wait_for(
        lambda: (p := cluster.get(path))["status"].get("phase") == "Running" and p,
        60, "pod web Running",
    )  # fmt: skip
    assert pod["spec"]["nodeName"].startswith("lab-node-")
    assert scheduled_event(cluster, namespace, "web")["reportingController"] == "default-scheduler"


def test_pod_for_unserved_scheduler_stays_pending_without_events(
    cluster: Cluster, namespace: str
) -> None:
    cluster.create(
        f"/api/v1/namespaces/{namespace}/pods",
        pod_manifest("orphan", schedulerName="my-scheduler"),
    )
    time.sleep(5)  # several scheduling cycles of the default scheduler
    pod = cluster.get(f"/api/v1/namespaces/{namespace}/pods/orphan")
    assert pod["status"]["phase"] == "Pending"
    assert not pod["spec"].get("nodeName")
    assert not [c for c in pod["status"].get("conditions") or [] if c["type"] == "PodScheduled"]
    assert pod_events(cluster, namespace, "orphan") == []


def test_lab_status_env_and_second_up_refused(lab: Lab) -> None:
    status = kschedctl("lab", "status", "--dir", str(lab.dir), "-o", "json")
    assert status.returncode == 0, status.stderr
    assert '"state": "healthy"' in status.stdout and '"ready": 4' in status.stdout
    # etcd's health is checked over TLS with its own client certificate
    assert json.loads(status.stdout)["components"]["etcd"]["state"] == "healthy"
    env = kschedctl("lab", "env", "--dir", str(lab.dir))
    assert env.stdout.strip() == f"export KUBECONFIG={lab.kubeconfig}"
    again = kschedctl("lab", "up", "--dir", str(lab.dir))
    assert again.returncode == 1
    assert "already running" in again.stderr and "lab down" in again.stderr
    assert lab.running_components().keys() == {
        "etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok", "runner",
    }  # fmt: skip


def test_port_in_use_is_refused_and_leaves_nothing(lab: Lab, tmp_path: Path) -> None:
    state = lab.state()
    assert state is not None
    target = tmp_path / "other-lab"
    result = kschedctl("lab", "up", "--dir", str(target), "--api-port", str(state.api_port))
    assert result.returncode == 1
    assert f"port {state.api_port}" in result.stderr and "already in use" in result.stderr
    assert not target.exists()


def test_missing_binaries_and_missing_go(tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    result = kschedctl("lab", "up", "--dir", str(tmp_path / "lab"), "--bin-dir", str(empty))
    assert result.returncode == 5
    assert "lab binaries not found" in result.stderr and "kschedctl lab build" in result.stderr
    assert not (tmp_path / "lab").exists()
    no_go = kschedctl(
        "lab", "build",
        env={"KSCHEDCTL_CACHE_DIR": str(tmp_path / "cache"), "PATH": str(empty)},
    )  # fmt: skip
    assert no_go.returncode == 5
    assert "Go toolchain is not installed" in no_go.stderr and "--bin-dir" in no_go.stderr


def test_second_lab_with_nodes_file_survives_a_crash_and_goes_down_clean(
    tmp_path: Path, own_lab_dir: Path
) -> None:
    nodes_file = tmp_path / "nodes.yaml"
    nodes_file.write_text(
        "nodes:\n"
        "- name: gpu\n  count: 2\n  labels: {accelerator: gpu}\n"
        "  taints: [{key: dedicated, value: gpu, effect: NoSchedule}]\n"
        "  capacity: {cpu: '16', memory: 64Gi, nvidia.com/gpu: '2'}\n"
        "- name: small\n  capacity: {cpu: 500m, memory: 1Gi, pods: '5'}\n"
    )
    directory = own_lab_dir
    up = kschedctl("lab", "up", "--dir", str(directory), "--nodes-file", str(nodes_file))
    assert up.returncode == 0, up.stderr
    lab2 = Lab(directory)
    cluster = Cluster.connect(str(lab2.kubeconfig))
    try:
        nodes = {n["metadata"]["name"]: n for n in cluster.list("/api/v1/nodes")}
    finally:
        cluster.close()
    assert sorted(nodes) == ["gpu-1", "gpu-2", "small"]
    assert nodes["gpu-1"]["status"]["allocatable"]["nvidia.com/gpu"] == "2"
    # (the node lifecycle controller's own node.kubernetes.io/* taints come and go)
    assert [
        t
        for t in nodes["gpu-2"]["spec"]["taints"]
        if not t["key"].startswith("node.kubernetes.io/")
    ] == [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]
    assert nodes["small"]["status"]["capacity"]["pods"] == "5"

    # A crash: every process killed without `lab down`.
    state = lab2.state()
    assert state is not None
    # The runner first: it would start the others again (as systemd would).
    for component in sorted(
        state.components.values(), key=lambda c: c is not state.components["runner"]
    ):
        os.kill(component.pid, 9)
    wait_for(lambda: not lab2.running_components(), 10, "the killed lab to be gone")
    status = kschedctl("lab", "status", "--dir", str(directory))
    assert status.returncode == 1 and "stopped" in status.stdout

    again = kschedctl("lab", "up", "--dir", str(directory), "--nodes", "1")
    assert again.returncode == 0, again.stderr
    assert "stale lab directory" in again.stderr
    state = lab2.state()
    assert state is not None
    pids = [(c.pid, c.exe) for c in state.components.values()]

    down = kschedctl("lab", "down", "--dir", str(directory))
    assert down.returncode == 0, down.stderr
    assert not directory.exists()
    assert not [p for p in pids if processes.is_running(*p)]


def answer(url: str, context: ssl.SSLContext | None = None) -> tuple[int, str]:
    """(HTTP status, body) of a GET, or (0, the error) if no HTTP answer came."""
    opener = urllib.request.build_opener(
        urllib.request.ProxyHandler({}), urllib.request.HTTPSHandler(context=context)
    )
    try:
        with opener.open(url, timeout=5) as response:
            return response.status, response.read(500).decode(errors="replace")
    except urllib.error.HTTPError as err:
        return err.code, err.read(500).decode(errors="replace")
    except (urllib.error.URLError, OSError) as err:
        return 0, str(getattr(err, "reason", err))


def test_etcd_serves_only_clients_with_a_certificate_of_its_own_ca(lab: Lab) -> None:
    state = lab.state()
    assert state is not None
    etcd = state.components["etcd"]
    health = f"https://127.0.0.1:{etcd.port}/health"
    status, body = answer(health, lab.etcd_tls(pki.ETCD_HEALTHCHECK_CLIENT))
    assert status == 200 and '"health":"true"' in body
    # Refused: plain HTTP, TLS without a client certificate, and a Kubernetes identity's
    # certificate (even system:masters: the Kubernetes CA is not etcd's).
    plain = answer(f"http://127.0.0.1:{etcd.port}/health")
    anonymous = answer(health, lab.etcd_tls(None))
    admin = lab.etcd_tls(None)
    admin.load_cert_chain(str(lab.pki / "admin.crt"), str(lab.pki / "admin.key"))
    as_admin = answer(health, admin)
    keys = answer(f"https://127.0.0.1:{etcd.port}/v3/kv/range", lab.etcd_tls(None))
    for refused in (plain, anonymous, as_admin, keys):
        assert refused[0] != 200 and '"health":"true"' not in refused[1], refused
    # (observed: the connection closed on plain HTTP; TLS alerts on the others)
    assert "CERTIFICATE_REQUIRED" in anonymous[1].upper(), anonymous
    # No listener without TLS: the client and the peer URLs are https, on loopback.
    urls = [a for a in etcd.argv if "-urls=" in a or a.startswith("--initial-cluster=")]
    assert urls and all("=https://127.0.0.1:" in a for a in urls), urls
    assert "--client-cert-auth=true" in etcd.argv and "--peer-client-cert-auth=true" in etcd.argv
    server = state.components["kube-apiserver"].argv
    assert f"--etcd-servers=https://127.0.0.1:{etcd.port}" in server


# A marked Python process (a lab program carrying this lab's mark) that runs `lab down`: only the
# rule "never itself, never an ancestor" keeps `lab down` from stopping it.
PARENT = """
import signal, subprocess, sys
signal.signal(signal.SIGTERM, lambda *a: print("SIGNALLED", flush=True))
down = subprocess.run([sys.executable, "-m", "kschedctl", "lab", "down", "--dir", sys.argv[1]],
                      capture_output=True, text=True, timeout=180)
sys.stderr.write(down.stderr)
print("down exited", down.returncode, flush=True)
"""


def test_lab_down_stops_its_processes_with_lost_records_and_only_them(
    own_lab_dir: Path,
) -> None:
    directory = own_lab_dir
    up = kschedctl("lab", "up", "--dir", str(directory), "--nodes", "0")
    assert up.returncode == 0, up.stderr
    identity = processes.read_identity(directory)
    assert identity is not None
    ours = processes.marked(identity)
    assert {Path(m.exe).name for m in ours} >= {
        "etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok",
    }  # fmt: skip
    assert len(ours) >= 6  # and the runner
    # Processes that merely name files of the lab directory: an editor, a `tail -f`, a script.
    bystanders = [
        subprocess.Popen(["tail", "-f", str(directory / "logs" / "etcd.log")]),
        subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(300)", str(directory / "lab.json")]
        ),
        subprocess.Popen(["sleep", "300"], cwd=directory),
    ]
    try:
        (directory / "lab.json").write_text("{ corrupt")  # as if a crash had lost the records
        parent = subprocess.run(
            [sys.executable, "-c", PARENT, str(directory)], capture_output=True, text=True,
            timeout=240, env={**os.environ, processes.MARKER_ENV: identity.id},
        )  # fmt: skip
        assert "down exited 0" in parent.stdout, parent.stdout + parent.stderr
        assert "SIGNALLED" not in parent.stdout  # its parent is never signalled
        assert not directory.exists()
        assert not [m for m in ours if processes.is_running(m.pid, m.exe, m.started)]
        assert [b.poll() for b in bystanders] == [None, None, None]
    finally:
        for bystander in bystanders:
            bystander.kill()
            bystander.wait()


def test_lab_up_stopped_by_sigterm_while_starting_leaves_nothing(own_lab_dir: Path) -> None:
    # Once up, a lab outlives the command (its processes are in sessions of their own); while
    # it starts, SIGTERM stops what was started, as Ctrl-C does.
    directory = own_lab_dir
    seen: set[Recorded] = set()

    def starting() -> bool:
        seen.update(recorded_processes(directory))
        return any(exe.endswith("kube-apiserver") for _, exe, _ in seen)

    up = start_kschedctl("lab", "up", "--dir", str(directory), "--nodes", "1")
    try:
        wait_for(lambda: starting() or up.poll() is not None, 120, "kube-apiserver started")
        assert up.poll() is None, up.communicate()
        identity = processes.read_identity(directory)
        assert identity is not None
        stderr = signal_and_wait(up, signal.SIGTERM)
        left, marked, kept = running(seen), processes.marked(identity), directory.exists()
    finally:
        if up.poll() is None:
            up.kill()
            up.wait()
    assert (left, marked, kept) == ([], [], False), stderr
    assert up.returncode == 143, stderr
    assert "start-up failed; stopping what was started" in stderr
    assert stderr.endswith("terminated by SIGTERM\n")
