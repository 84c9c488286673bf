"""kschedctl's own scheduler on a real control plane.

A lab of its own (module scope) with nodes of different shapes: a main pool of two small
nodes in two zones, a tainted GPU node, a tainted spare pool, a cordoned node and a node with
a PreferNoSchedule taint. ``kschedctl scheduler run`` runs as subprocesses (stopped by pid).
The proofs: placement by taints, affinity, resources and ports with never a hard-constraint
violation; fallback steps only when nothing fits and only as the policy allows; two replicas
and one leader, a killed leader replaced within the lease duration with no pod bound twice;
a kube-apiserver restart without losing pending pods. The deploy path (`deploy --program
builtin --as-deployment`) runs on the session lab.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import lab_of_its_own, pod_events, pod_manifest, stop, wait_for

from kschedctl.base.errors import NotFoundError
from kschedctl.kubeclient.client import Cluster
from kschedctl.lab.cluster import Lab
from kschedctl.lab.nodes import lab_node
from kschedctl.lab.processes import proxy_free_environment
from kschedctl.model.filters import NodeInfoSnapshot, evaluate
from kschedctl.model.scheduling.policy import POD_POLICY_ANNOTATION, STEP_ANNOTATION
from kschedctl.model.scheduling.policyload import load_policy

SCHEDULER = "placer"
NO_FALLBACK = {POD_POLICY_ANNOTATION: "fallbacks: []"}  # a pod that opts out of every step
SPARE_TAINT = {"key": "pool", "value": "spare", "effect": "NoSchedule"}
GPU_TAINT = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
POLICY = """\
apiVersion: kschedctl.io/v1alpha1
kind: FallbackPolicy
fallbacks:
- name: gold-pool
  nodeSelector: {pool: gold}
- name: spare-pool
  nodePool: {pool: spare}
  tolerate:
  - {key: pool, operator: Equal, value: spare, effect: NoSchedule}
"""
NODES = [
    lab_node("main-a", labels={"pool": "main"}, zone="zone-a",
                capacity={"cpu": "2", "memory": "4Gi", "pods": "110"}),
    lab_node("main-b", labels={"pool": "main"}, zone="zone-b",
                capacity={"cpu": "2", "memory": "4Gi", "pods": "110"}),
    lab_node("gpu", labels={"pool": "gpu"}, taints=[GPU_TAINT], zone="zone-a",
                capacity={"cpu": "8", "memory": "16Gi", "pods": "110"}),
    lab_node("spare", labels={"pool": "spare"}, taints=[SPARE_TAINT], zone="zone-b",
                capacity={"cpu": "2", "memory": "4Gi", "pods": "110"}),
    lab_node("cordoned", labels={"pool": "main"}, unschedulable=True, zone="zone-a",
                capacity={"cpu": "8", "memory": "16Gi", "pods": "110"}),
    lab_node("spot", labels={"pool": "batch"},
                taints=[{"key": "spot", "value": "true", "effect": "PreferNoSchedule"}],
                zone="zone-b", capacity={"cpu": "8", "memory": "16Gi", "pods": "110"}),
]  # fmt: skip


@pytest.fixture(scope="module")
def own_lab(
    lab_binaries: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Lab]:
    """Own control plane: the placements assert which of exactly these six nodes wins, and
    a test restarts this lab's API server."""
    with lab_of_its_own(
        tmp_path_factory.mktemp("builtin"), NODES, progress=lambda _m: None
    ) as the_lab:
        yield the_lab


@pytest.fixture(scope="module")
def api(own_lab: Lab) -> Iterator[Cluster]:
    connection = Cluster.connect(str(own_lab.kubeconfig))
    yield connection
    connection.close()


@pytest.fixture(scope="module")
def policy_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("policy") / "policy.yaml"
    path.write_text(POLICY)
    return path


class Scheduler:
    """One `kschedctl scheduler run` process and its log."""

    def __init__(self, proc: subprocess.Popen[bytes], log: Path) -> None:
        self.proc = proc
        self.log = log

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def identity(self) -> str:
        found = wait_for(lambda: re.search(r"\(identity (\S+),", self.text()), 30, "start-up line")
        return str(found.group(1))

    def port(self) -> int:
        found = wait_for(lambda: re.search(r"serving on [\d.]+:(\d+)\)", self.text()), 30, "port")
        return int(found.group(1))

    def metrics(self) -> str:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port()}/metrics", timeout=5) as r:
            return str(r.read().decode())


@contextmanager
def scheduler(lab: Lab, log: Path, *args: str) -> Iterator[Scheduler]:
    argv = [sys.executable, "-m", "kschedctl", "scheduler", "run", f"--name={SCHEDULER}",
            f"--kubeconfig={lab.kubeconfig}", "--metrics-port=0", "--metrics-address=127.0.0.1",
            "--pod-initial-backoff=0.5", "--pod-max-backoff=2", *args]  # fmt: skip
    with open(log, "ab") as out:
        proc = subprocess.Popen(
            argv, stdout=out, stderr=subprocess.STDOUT, env=proxy_free_environment()
        )
    try:
        yield Scheduler(proc, log)
    finally:
        if proc.poll() is None:
            stop(proc)


def create_pod(
    api: Cluster, namespace: str, name: str, cpu: str = "100m", *,
    ports: list[dict[str, Any]] | None = None, annotations: dict[str, str] | None = None,
    **spec: Any,
) -> dict[str, Any]:  # fmt: skip
    body = pod_manifest(name, schedulerName=SCHEDULER, **spec)
    body["spec"]["containers"][0]["resources"] = {"requests": {"cpu": cpu, "memory": "64Mi"}}
    if ports:
        body["spec"]["containers"][0]["ports"] = ports
    if annotations:
        body["metadata"]["annotations"] = annotations
    return api.create(f"/api/v1/namespaces/{namespace}/pods", body)


def get_pod(api: Cluster, namespace: str, name: str) -> dict[str, Any]:
    return api.get(f"/api/v1/namespaces/{namespace}/pods/{name}")


def node_of(api: Cluster, namespace: str, name: str) -> str | None:
    return get_pod(api, namespace, name)["spec"].get("nodeName")


def bound(api: Cluster, namespace: str, name: str, timeout: float = 30) -> str:
    return str(wait_for(lambda: node_of(api, namespace, name), timeout, f"pod {name} to be bound"))


def scheduled_events(api: Cluster, namespace: str, name: str) -> list[dict[str, Any]]:
    return [e for e in pod_events(api, namespace, name) if e.get("reason") == "Scheduled"]


def failed_scheduling(api: Cluster, namespace: str, name: str) -> dict[str, Any] | None:
    for event in pod_events(api, namespace, name):
        if (
            event.get("reason") == "FailedScheduling"
            and event.get("reportingController") == SCHEDULER
        ):
            return event
    return None


@pytest.fixture()
def space(api: Cluster, request: pytest.FixtureRequest) -> Iterator[str]:
    name = "t-" + re.sub(r"[^a-z0-9-]", "-", request.node.name.lower())[:40].strip("-")
    api.create("/api/v1/namespaces", {"metadata": {"name": name}})
    wait_for(lambda: _exists(api, f"/api/v1/namespaces/{name}/serviceaccounts/default"), 60, "SA")
    yield name
    api.delete(f"/api/v1/namespaces/{name}")
    wait_for(lambda: not _exists(api, f"/api/v1/namespaces/{name}"), 120, f"namespace {name} gone")


def _exists(api: Cluster, path: str) -> bool:
    try:
        api.get(path)
        return True
    except NotFoundError:
        return False


def no_hard_rule_broken(api: Cluster, policy_path: Path) -> list[str]:
    """Every bound pod fits its node, given every other pod, by kube-scheduler's filters — with
    exactly the relaxation of the fallback step recorded on it, and no other."""
    policy = {s.name: s for s in load_policy(policy_path).steps}
    nodes = api.list("/api/v1/nodes")
    pods = [p for p in api.list("/api/v1/pods") if p["spec"].get("nodeName")
            and p["status"].get("phase") not in ("Succeeded", "Failed")]  # fmt: skip
    problems = []
    for pod in pods:
        if pod["spec"].get("schedulerName") != SCHEDULER:
            continue
        others = [p for p in pods if p["metadata"]["uid"] != pod["metadata"]["uid"]]
        pending = {**pod, "spec": {**pod["spec"], "nodeName": ""}}
        step = (pod["metadata"].get("annotations") or {}).get(STEP_ANNOTATION)
        if step:
            pending = policy[step].apply(pending)
        verdict = evaluate(pending, NodeInfoSnapshot(nodes, others), preemption=False).verdict(
            pod["spec"]["nodeName"]
        )
        if not verdict.fits:
            problems.append(
                f"{pod['metadata']['name']} on {verdict.name}: {[r.message for r in verdict.reasons]}"
            )
    return problems


# -- placement ---------------------------------------------------------------------------------


def test_placement_by_taints_affinity_resources_and_ports(
    api: Cluster, own_lab: Lab, space: str, tmp_path: Path, policy_file: Path
) -> None:
    with scheduler(own_lab, tmp_path / "placer.log", f"--policy={policy_file}") as sched:
        # Taints: the GPU node only for pods that tolerate it; never the cordoned node.
        create_pod(api, space, "gpu-job", nodeSelector={"pool": "gpu"},
                   tolerations=[{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}])  # fmt: skip
        create_pod(api, space, "plain", nodeSelector={"pool": "main"})
        # Required node affinity (zone-b within the main pool) and preferred (zone-a).
        create_pod(api, space, "zone-b", affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["zone-b"]},
                                  {"key": "pool", "operator": "In", "values": ["main"]}]}]}}})  # fmt: skip
        create_pod(api, space, "likes-zone-a", nodeSelector={"pool": "main"}, affinity={"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 100, "preference": {"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["zone-a"]}]}}]}})  # fmt: skip
        # PreferNoSchedule: the spot node is avoided while an untainted node fits.
        create_pod(api, space, "batch-or-main", affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["main", "batch"]}]}]}}})  # fmt: skip
        assert bound(api, space, "gpu-job") == "gpu"
        assert bound(api, space, "plain") in ("main-a", "main-b")
        assert bound(api, space, "zone-b") == "main-b"
        assert bound(api, space, "likes-zone-a") == "main-a"
        assert bound(api, space, "batch-or-main") in ("main-a", "main-b")

        # Host ports: two pods asking for 8080 on main-a: the second must wait, and no
        # fallback step may place it (ports are never relaxed; main-a is pinned).
        pin = {"kubernetes.io/hostname": "main-a"}
        port = [{"containerPort": 8080, "hostPort": 8080}]
        create_pod(api, space, "port-1", nodeSelector=pin, ports=port)
        assert bound(api, space, "port-1") == "main-a"
        # (Without a policy of its own, the spare-pool step would move it to the spare node.)
        create_pod(api, space, "port-2", nodeSelector=pin, ports=port, annotations=NO_FALLBACK)
        event = wait_for(
            lambda: failed_scheduling(api, space, "port-2"), 30, "FailedScheduling for port-2"
        )
        assert event["note"].startswith("0/6 nodes are available: ")
        assert "1 node(s) didn't have free ports for the requested pod ports" in event["note"]
        assert event["type"] == "Warning" and event["action"] == "Scheduling"
        condition = wait_for(lambda: next((c for c in get_pod(api, space, "port-2")["status"].get("conditions") or []
                                           if c["type"] == "PodScheduled"), None), 30, "PodScheduled")  # fmt: skip
        assert (condition["status"], condition["reason"]) == ("False", "Unschedulable")
        assert node_of(api, space, "port-2") is None
        # Freeing the port is a change that helps: the waiting pod is retried and placed.
        api.delete(f"/api/v1/namespaces/{space}/pods/port-1", gracePeriodSeconds=0)
        assert bound(api, space, "port-2") == "main-a"

        scheduled = scheduled_events(api, space, "gpu-job")
        assert scheduled and scheduled[0]["reportingController"] == SCHEDULER
        assert scheduled[0]["note"] == f"Successfully assigned {space}/gpu-job to gpu"
        assert 'kschedctl_scheduler_pods_scheduled_total{fallback=""}' in sched.metrics()
    for pod in api.list(f"/api/v1/namespaces/{space}/pods"):
        assert pod["spec"].get("nodeName") not in ("cordoned", "spare", "spot"), pod["metadata"][
            "name"
        ]
        assert STEP_ANNOTATION not in (pod["metadata"].get("annotations") or {})
    assert no_hard_rule_broken(api, policy_file) == []


def test_fallback_only_when_nothing_fits_and_only_as_allowed(
    api: Cluster, own_lab: Lab, space: str, tmp_path: Path, policy_file: Path
) -> None:
    main = {"pool": "main"}
    with scheduler(own_lab, tmp_path / "placer.log", f"--policy={policy_file}") as sched:
        # The main pool holds 2 cpu per node; ask for 1 cpu at a time and wait, so each
        # decision sees the one before it: four fit under the pod's own rules.
        for i in range(4):
            create_pod(api, space, f"main-{i}", cpu="900m", nodeSelector=main)
            assert bound(api, space, f"main-{i}") in ("main-a", "main-b")
        # The pool is full now: the next one is placed by the spare-pool step (gold-pool, tried
        # first, has no node).
        create_pod(api, space, "overflow", cpu="900m", nodeSelector=main)
        assert bound(api, space, "overflow") == "spare"
        overflow = get_pod(api, space, "overflow")
        assert overflow["metadata"]["annotations"][STEP_ANNOTATION] == "spare-pool"
        # Events are posted after the binding, by the scheduler's reporter threads.
        note = wait_for(
            lambda: next(
                (e["note"] for e in pod_events(api, space, "overflow") if e["reason"] == "Scheduled"),
                None,
            ),
            30, "the Scheduled event of overflow",
        )  # fmt: skip
        assert note == (
            f"Successfully assigned {space}/overflow to spare by fallback step 'spare-pool' of the "
            "scheduler's policy (node pool pool=spare; tolerate pool=spare:NoSchedule): no node "
            "fits under the pod's own rules"
        )
        for i in range(4):
            assert STEP_ANNOTATION not in (
                get_pod(api, space, f"main-{i}")["metadata"].get("annotations") or {}
            )
        # Resources stay hard: spare has 1.1 cpu left, so a 1.5 cpu pod fits nowhere, and the
        # event says what every step still fails on.
        create_pod(api, space, "too-big", cpu="1500m", nodeSelector=main)
        event = wait_for(
            lambda: failed_scheduling(api, space, "too-big"), 30, "FailedScheduling for too-big"
        )
        assert "Fallback steps of the scheduler's policy tried: gold-pool: " in event["note"]
        assert "spare-pool: " in event["note"] and node_of(api, space, "too-big") is None
        # A pod's own annotation replaces the policy: this one may not use the spare pool.
        create_pod(api, space, "no-spare", cpu="900m", nodeSelector=main,
                   annotations={POD_POLICY_ANNOTATION: "fallbacks: [{name: gold-only, nodeSelector: {pool: gold}}]"})  # fmt: skip
        event = wait_for(
            lambda: failed_scheduling(api, space, "no-spare"), 30, "FailedScheduling for no-spare"
        )
        assert "Fallback steps of the pod's annotation tried: gold-only:" in event["note"]
        time.sleep(2)
        assert node_of(api, space, "no-spare") is None
        metrics = sched.metrics()
        assert 'kschedctl_scheduler_fallback_used_total{step="spare-pool"} 1' in metrics
        assert "kschedctl_scheduler_decision_duration_seconds_count" in metrics
    assert no_hard_rule_broken(api, policy_file) == []


def test_why_names_the_fallback_step(
    api: Cluster, own_lab: Lab, space: str, tmp_path: Path, policy_file: Path
) -> None:
    env = {**os.environ, "KUBECONFIG": str(own_lab.kubeconfig)}
    with scheduler(own_lab, tmp_path / "placer.log", f"--policy={policy_file}"):
        wait_for(
            lambda: _exists(
                api, f"/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/{SCHEDULER}"
            ),
            30,
            "Lease",
        )
        # Gated: the scheduler leaves it alone, `why` shows what would happen once released.
        create_pod(
            api,
            space,
            "waits",
            cpu="3",
            nodeSelector={"pool": "main"},
            schedulingGates=[{"name": "hold"}],
        )
        result = subprocess.run([sys.executable, "-m", "kschedctl", "why", "waits", "-n", space, "-o", "json"],
                                capture_output=True, text=True, env=env, timeout=60)  # fmt: skip
    data = json.loads(result.stdout)
    assert data["fallback"]["policy"] == f"scheduler {SCHEDULER}'s policy"
    assert [s["step"] for s in data["fallback"]["stages"]] == [None, "gold-pool", "spare-pool"]
    assert all(s["chosen"] is None for s in data["fallback"]["stages"])  # 3 cpu fits nowhere
    codes = [f["code"] for f in data["findings"]]
    assert "scheduling-gated" in codes and "fallback-none-fits" in codes


# -- replicas and leadership -------------------------------------------------------------------


def lease_holder(api: Cluster) -> str | None:
    try:
        lease = api.get(f"/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/{SCHEDULER}")
    except NotFoundError:
        return None
    return lease["spec"].get("holderIdentity") or None


def test_two_replicas_one_leader_and_a_takeover_without_double_binding(
    api: Cluster, own_lab: Lab, space: str, tmp_path: Path
) -> None:
    with scheduler(own_lab, tmp_path / "a.log") as a, scheduler(own_lab, tmp_path / "b.log") as b:
        ids = {a.identity(): a, b.identity(): b}
        holder = wait_for(lambda: lease_holder(api) in ids and lease_holder(api), 30, "a leader")
        leader, standby = ids[holder], next(s for i, s in ids.items() if i != holder)
        for i in range(6):
            create_pod(api, space, f"before-{i}", cpu="50m", nodeSelector={"pool": "main"})
        for i in range(6):
            bound(api, space, f"before-{i}")
        # (A pod is bound before the leader logs it: wait for the log line.)
        wait_for(lambda: leader.text().count("bound ") == 6, 10, "the leader's log of 6 bindings")
        # Events are posted off the decision path: a SIGKILL may lose one still queued, which
        # is no double binding. Wait for them so the count below measures bindings only.
        for i in range(6):
            wait_for(
                lambda i=i: scheduled_events(api, space, f"before-{i}"), 10, "Scheduled events"
            )
        assert standby.text().count("bound ") == 0
        assert "became the leader" not in standby.text()

        # The leader dies without a word: the standby waits out the lease (15 s), then leads.
        leader.proc.kill()
        killed = time.monotonic()
        for i in range(6):
            create_pod(api, space, f"after-{i}", cpu="50m", nodeSelector={"pool": "main"})
        for i in range(6):
            bound(api, space, f"after-{i}", timeout=40)
        took = time.monotonic() - killed
        assert took < 15 + 8, f"the standby took {took:.1f}s to place pods after the leader died"
        assert lease_holder(api) == standby.identity()
        wait_for(lambda: standby.text().count("bound ") == 6, 10, "the new leader's log")
        for i in range(6):
            wait_for(lambda i=i: scheduled_events(api, space, f"after-{i}"), 10, "Scheduled events")
    for pod in api.list(f"/api/v1/namespaces/{space}/pods"):
        scheduled = scheduled_events(api, space, pod["metadata"]["name"])
        assert len(scheduled) == 1, pod["metadata"]["name"]  # bound once, by one replica
        assert scheduled[0]["note"].endswith(f"to {pod['spec']['nodeName']}")


def test_api_server_restart_loses_no_pending_pod(
    api: Cluster, own_lab: Lab, space: str, tmp_path: Path
) -> None:
    # A slow client (2 requests/s) keeps most pods pending when the API server goes away.
    with scheduler(own_lab, tmp_path / "placer.log", "--qps=2", "--burst=1") as sched:
        wait_for(lambda: lease_holder(api), 30, "a leader")
        with ThreadPoolExecutor(4) as pool:
            list(pool.map(lambda i: create_pod(api, space, f"p-{i:02d}", cpu="10m", nodeSelector={"pool": "batch"},
                                               tolerations=[{"key": "spot", "operator": "Exists"}]), range(24)))  # fmt: skip
        own_lab.restart("kube-apiserver", down_for=2)
        assert sched.proc.poll() is None, "the scheduler must survive an API server restart"
        pending_after = sum(
            1 for p in api.list(f"/api/v1/namespaces/{space}/pods") if not p["spec"].get("nodeName")
        )
        assert pending_after > 0, "the restart should have happened with pods still pending"
        wait_for(lambda: all(p["spec"].get("nodeName") == "spot" for p in api.list(f"/api/v1/namespaces/{space}/pods")),
                 120, "every pod bound after the restart")  # fmt: skip
        assert "watch of pods" in sched.text()  # it did lose its streams, and recovered


# -- the deploy path on the session lab --------------------------------------------------------


def test_deploy_builtin_as_deployment(
    lab: Lab, cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    env = {**os.environ, "KUBECONFIG": str(lab.kubeconfig)}

    def kschedctl(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "kschedctl", *args], capture_output=True,
                              text=True, env=env, cwd=tmp_path, timeout=240)  # fmt: skip

    deployed = kschedctl(
        "deploy", "own-sched", "--program", "builtin", "--as-deployment", "--replicas", "2"
    )
    assert deployed.returncode == 0, deployed.stderr
    assert "clusterrole/own-sched-scheduler created" in deployed.stdout
    assert "canary pod was scheduled by own-sched" in deployed.stderr
    try:
        dep = cluster.get("/apis/apps/v1/namespaces/kube-system/deployments/own-sched")
        container = dep["spec"]["template"]["spec"]["containers"][0]
        assert container["image"].startswith("kschedctl:")
        assert container["command"][:4] == ["kschedctl", "scheduler", "run", "--name=own-sched"]
        cluster.create(
            f"/api/v1/namespaces/{namespace}/pods",
            pod_manifest("uses-it", schedulerName="own-sched"),
        )
        node = wait_for(
            lambda: cluster.get(f"/api/v1/namespaces/{namespace}/pods/uses-it")["spec"].get(
                "nodeName"
            ),
            60,
            "uses-it bound",
        )
        assert node.startswith("lab-node-")
        listed = kschedctl("list", "-o", "json")
        entry = next(s for s in json.loads(listed.stdout)["items"] if s["name"] == "own-sched")
        assert (
            entry["form"] == "deployment"
            and entry["healthy"]
            and entry["leader"].startswith("own-sched-")
        )
        status = kschedctl("status", "own-sched")
        assert "all allowed" in status.stdout, status.stdout
        # Its /metrics are anyone's (plain HTTP, no authentication): no token is minted, no
        # credentials at all are sent to its pods.
        status = kschedctl("status", "own-sched", "--metrics", "-o", "json")
        metrics = json.loads(status.stdout)["metrics"]
        assert metrics["reader"] is None and metrics["readerProblem"] is None
        for replica in metrics["replicas"]:
            assert replica["problem"] is None, replica["problem"]
            assert replica["summary"]["program"] == "kschedctl"
            assert replica["sent"] == {"token": False, "serviceAccount": None,
                                       "lifetimeSeconds": None}  # fmt: skip
    finally:
        removed = kschedctl("remove", "own-sched", "--force")
        assert removed.returncode == 0, removed.stderr
