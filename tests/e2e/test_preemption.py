"""Preemption by kschedctl's scheduler against kube-scheduler v1.36.3 as the reference.

Three nodes of its own (labelled and tainted, so no other test's pod lands there and the
preemptors go nowhere else), 2 cpu each. Every scenario builds the same state twice on them —
low-priority pods pinned with spec.nodeName, PodDisruptionBudgets — once for a kube-scheduler
process (the lab's binary, a profile of its own) and once for `kschedctl scheduler run`, then
creates the high-priority preemptor for that scheduler and records the node it was nominated
to, where it was bound, the pods evicted with their `Preempted` events, and its
FailedScheduling message. Both outcomes must be equal. Each scenario is built so that
kube-scheduler's choice is unique (distinct priorities: no random tie-break), and the
reference outcome is also checked against the expected one, so a scenario cannot pass by
both schedulers doing nothing. Where nothing is preempted (no lower-priority pod; a
preemptor with preemptionPolicy Never) the FailedScheduling messages, PostFilter text
included, must be equal too.

With a Python plugin (kube-scheduler cannot run one, so the reference is the plugin's own
rule): kschedctl's scheduler runs it in the dry run as kube-scheduler runs out-of-tree
Filter plugins, evicts exactly the pods the rule requires, and `kschedctl why --plugin` on
a preemptor that stays pending says what the scheduler wrote.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from e2e_helpers import exists, pod_events, pod_manifest, wait_for
from e2e_helpers import stop as stop_process

from kschedctl.base.errors import NotFoundError
from kschedctl.kubeclient.client import Cluster
from kschedctl.kubeclient.watch import list_and_watch
from kschedctl.lab.cluster import Lab
from kschedctl.lab.components import free_port
from kschedctl.lab.nodes import lab_node
from kschedctl.lab.processes import proxy_free_environment

RUN = uuid.uuid4().hex[:5]
REFERENCE = f"preempt-ref-{RUN}"  # kube-scheduler's profile
OURS = f"preempt-own-{RUN}"  # kschedctl scheduler run --name
LABEL = {"e2e.kschedctl.io/pool": "preemption"}
TAINT = {"key": "e2e.kschedctl.io/preemption", "value": "true", "effect": "NoSchedule"}
TOLERATION = {"key": TAINT["key"], "operator": "Exists", "effect": "NoSchedule"}
NODES = [f"preempt-{i}" for i in (1, 2, 3)]
# Distinct priorities everywhere: MoreImportantPod never falls back to start times, which
# have a second's resolution and would make kube-scheduler's order a coin toss.
PRIORITIES = {"p100": 100, "p200": 200, "p300": 300, "p400": 400, "p500": 500, "top": 1000}
NEVER = "top-never"  # the same value, preemptionPolicy Never
DRA_POSTFILTER = "no new claims to deallocate, "  # compared without: both schedulers say it


def pclass(key: str) -> str:
    return f"e2e-preempt-{RUN}-{key}"


@dataclass(frozen=True)
class Pinned:
    name: str
    node: str
    priority: str
    cpu: str
    labels: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Scenario:
    pinned: tuple[Pinned, ...]
    cpu: str  # the preemptor's request
    priority: str = "top"
    pdbs: tuple[dict[str, str], ...] = ()  # matchLabels of minAvailable: 1 budgets
    # What kube-scheduler must do (checked on the reference run): node None = no preemption.
    node: str | None = None
    victims: frozenset[str] = frozenset()
    labels: dict[str, str] = field(default_factory=dict)  # the preemptor's


SCENARIOS = {
    # Each node would do with one eviction; preempt-1's victim has the lowest priority.
    "one-victim": Scenario(
        (
            Pinned("a", "preempt-1", "p100", "2"),
            Pinned("b", "preempt-2", "p500", "2"),
            Pinned("c", "preempt-3", "p400", "1"),
            Pinned("d", "preempt-3", "p300", "1"),
        ),
        cpu="2",
        node="preempt-1",
        victims=frozenset({"a"}),
    ),
    # preempt-1: p300 is reprieved (it fits beside the preemptor), p200 and p100 go.
    "several-victims": Scenario(
        (
            Pinned("keep", "preempt-1", "p300", "500m"),
            Pinned("mid", "preempt-1", "p200", "500m"),
            Pinned("low", "preempt-1", "p100", "1"),
            Pinned("big", "preempt-2", "p500", "2"),
            Pinned("x", "preempt-3", "p400", "1"),
            Pinned("y", "preempt-3", "p500", "1"),
        ),
        cpu="1500m",
        node="preempt-1",
        victims=frozenset({"mid", "low"}),
    ),
    # Without the budget preempt-1 (victim p100) wins; with it, evicting "guarded" violates it
    # and the fewest-violations rule picks preempt-2 (victim p200) over preempt-3 (p500).
    "pdb-steers": Scenario(
        (
            Pinned("guarded", "preempt-1", "p100", "2", {"app": "guarded"}),
            Pinned("plain", "preempt-2", "p200", "2"),
            Pinned("busy", "preempt-3", "p500", "2"),
        ),
        cpu="2",
        pdbs=({"app": "guarded"},),
        node="preempt-2",
        victims=frozenset({"plain"}),
    ),
    # Nothing of lower priority to evict: the PostFilter text says so, node by node.
    "not-helpful": Scenario(
        (
            Pinned("a", "preempt-1", "p500", "2"),
            Pinned("b", "preempt-2", "p400", "1"),
            Pinned("c", "preempt-3", "p300", "1500m"),
        ),
        cpu="2",
        priority="p200",
    ),
    # The one-victim state, but the preemptor may not preempt: it stays pending.
    "never": Scenario(
        (
            Pinned("a", "preempt-1", "p100", "2"),
            Pinned("b", "preempt-2", "p500", "2"),
            Pinned("c", "preempt-3", "p400", "2"),
        ),
        cpu="2",
        priority=NEVER,
    ),
}


@dataclass
class Outcome:
    nominated: set[str]  # every status.nominatedNodeName the preemptor carried
    bound: str | None
    victims: set[str]  # pinned pods gone
    preempted: dict[str, str]  # victim -> its Preempted event's note, the uid as <uid>
    message: str  # the preemptor's FailedScheduling, without kube-scheduler's DRA text


def _ready(cluster: Cluster, name: str) -> bool:
    node = cluster.get(f"/api/v1/nodes/{name}")
    conditions = (node.get("status") or {}).get("conditions") or []
    ready = any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)
    taints = (node.get("spec") or {}).get("taints") or []
    return ready and all(t["key"] != "node.kubernetes.io/not-ready" for t in taints)


@pytest.fixture(scope="module")
def preemption_lab(cluster: Cluster) -> Iterator[None]:
    """The nodes and the PriorityClasses (cluster-scoped), removed at the end."""
    classes = [(pclass(k), v, "PreemptLowerPriority") for k, v in PRIORITIES.items()]
    classes.append((pclass(NEVER), PRIORITIES["top"], "Never"))
    for name, value, policy in classes:
        cluster.create(
            "/apis/scheduling.k8s.io/v1/priorityclasses",
            {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
             "metadata": {"name": name}, "value": value, "preemptionPolicy": policy},
        )  # fmt: skip
    for name in NODES:
        cluster.create(
            "/api/v1/nodes",
            lab_node(name, labels=LABEL, taints=[TAINT],
                        capacity={"cpu": "2", "memory": "4Gi", "pods": "110"}),
        )  # fmt: skip
    try:
        wait_for(lambda: all(_ready(cluster, n) for n in NODES), 120, "the nodes Ready")
        yield
    finally:
        for name in NODES:
            _delete(cluster, f"/api/v1/nodes/{name}")
        for name, _v, _p in classes:
            _delete(cluster, f"/apis/scheduling.k8s.io/v1/priorityclasses/{name}")


def _delete(cluster: Cluster, path: str) -> None:
    try:
        cluster.request("DELETE", path)
    except NotFoundError:
        pass


@pytest.fixture(scope="module")
def schedulers(
    lab: Lab, lab_binaries: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[None]:
    """kube-scheduler (a profile of its own) and kschedctl's scheduler, one process each."""
    tmp = tmp_path_factory.mktemp("preemption")
    config = tmp / "reference.yaml"
    config.write_text(yaml.safe_dump({
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "clientConnection": {"kubeconfig": str(lab.dir / "scheduler.kubeconfig")},
        "leaderElection": {"leaderElect": False},
        "profiles": [{"schedulerName": REFERENCE}],
    }))  # fmt: skip
    commands = {
        "reference": [str(lab_binaries["kube-scheduler"]), f"--config={config}",
                      "--bind-address=127.0.0.1", f"--secure-port={free_port()}"],
        "ours": [sys.executable, "-m", "kschedctl", "scheduler", "run", f"--name={OURS}",
                 f"--kubeconfig={lab.kubeconfig}", "--no-leader-elect", "--metrics-port=0",
                 "--metrics-address=127.0.0.1", "--pod-initial-backoff=0.5",
                 "--pod-max-backoff=2"],
    }  # fmt: skip
    procs = []
    for name, argv in commands.items():
        with open(tmp / f"{name}.log", "ab") as log:
            procs.append(
                subprocess.Popen(
                    argv, stdout=log, stderr=subprocess.STDOUT, env=proxy_free_environment()
                )
            )
    try:
        yield
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)


def _spec(cpu: str, priority: str, **spec: Any) -> dict[str, Any]:
    body = pod_manifest("x", priorityClassName=pclass(priority), tolerations=[TOLERATION], **spec)
    body["spec"]["containers"][0]["resources"] = {"requests": {"cpu": cpu, "memory": "64Mi"}}
    return body["spec"]


def _build(cluster: Cluster, namespace: str, scenario: Scenario) -> None:
    pods = f"/api/v1/namespaces/{namespace}/pods"
    for p in scenario.pinned:
        body = {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": p.name, "labels": p.labels},
                "spec": _spec(p.cpu, p.priority, nodeName=p.node)}  # fmt: skip
        cluster.create(pods, body)
    for i, labels in enumerate(scenario.pdbs):
        cluster.create(
            f"/apis/policy/v1/namespaces/{namespace}/poddisruptionbudgets",
            {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
             "metadata": {"name": f"budget-{i}"},
             "spec": {"minAvailable": 1, "selector": {"matchLabels": labels}}},
        )  # fmt: skip

    def running() -> bool:
        listed = cluster.list(pods)
        return len(listed) == len(scenario.pinned) and all(
            p["status"].get("phase") == "Running" and p["status"].get("startTime") for p in listed
        )

    wait_for(running, 90, "the pinned pods Running")
    for i in range(len(scenario.pdbs)):
        path = f"/apis/policy/v1/namespaces/{namespace}/poddisruptionbudgets/budget-{i}"

        def observed(path: str = path) -> bool:
            b = cluster.get(path)
            status = b.get("status") or {}
            return bool(
                status.get("observedGeneration") == b["metadata"].get("generation")
                and status.get("expectedPods")
            )

        wait_for(observed, 60, "the disruption controller's view of the budget")
    # Whole seconds of startTime: the preemptor's victims must have started strictly earlier
    # than "now" for both schedulers alike.
    time.sleep(1.1)


def _run(
    cluster: Cluster,
    scenario: Scenario,
    scheduler: str,
    pending: Callable[[str], None] | None = None,
) -> Outcome:
    """The scenario in a namespace of its own; ``pending(namespace)`` runs once the
    preemptor has its FailedScheduling, while it may still be pending."""
    namespace = f"e2e-preempt-{RUN}-{uuid.uuid4().hex[:5]}"
    cluster.create("/api/v1/namespaces", {"metadata": {"name": namespace}})
    wait_for(
        lambda: exists(cluster, f"/api/v1/namespaces/{namespace}/serviceaccounts/default"),
        60,
        "the namespace's ServiceAccount",
    )
    pods = f"/api/v1/namespaces/{namespace}/pods"
    try:
        _build(cluster, namespace, scenario)
        nominated: set[str] = set()
        stop = threading.Event()

        def watch() -> None:
            for event in list_and_watch(cluster, pods, stop, timeout_seconds=5):
                for obj in event.objects or [event.object]:
                    if obj.get("metadata", {}).get("name") == "preemptor":
                        nnn = (obj.get("status") or {}).get("nominatedNodeName")
                        if nnn:
                            nominated.add(nnn)

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        time.sleep(0.5)  # the watch is listening before the preemptor exists
        body = {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "preemptor", "labels": scenario.labels},
                "spec": _spec(scenario.cpu, scenario.priority, schedulerName=scheduler,
                              nodeSelector=LABEL)}  # fmt: skip
        uid = cluster.create(pods, body)["metadata"]["uid"]

        def failed() -> str | None:
            """The first FailedScheduling (a retry while the victims terminate may follow)."""
            found = [
                e
                for e in pod_events(cluster, namespace, "preemptor")
                if e.get("reason") == "FailedScheduling"
            ]
            first = min(found, key=lambda e: str(e.get("eventTime")), default=None)
            return str(first["note"]) if first else None

        message = str(wait_for(failed, 60, f"{scheduler}'s FailedScheduling"))
        if pending is not None:
            pending(namespace)
        # Bound once the victims are gone; a scenario without preemption gets the same time
        # to show that nothing is evicted. Not bound in time is an outcome, not a failure.
        bound = _poll(
            lambda: cluster.get(f"{pods}/preemptor")["spec"].get("nodeName"),
            60 if scenario.node is not None else 5,
        )
        stop.set()
        watcher.join(10)
        left = {p["metadata"]["name"] for p in cluster.list(pods)}
        victims = {p.name for p in scenario.pinned} - left
        preempted = {
            name: str(e.get("note")).replace(uid, "<uid>")
            for name in victims
            for e in pod_events(cluster, namespace, name)
            if e.get("reason") == "Preempted"
        }
        return Outcome(nominated, bound, victims, preempted, message.replace(DRA_POSTFILTER, ""))
    finally:
        for p in cluster.list(pods):
            _delete_pod(cluster, pods, p["metadata"]["name"])
        wait_for(lambda: not cluster.list(pods), 60, "the scenario's pods deleted")
        _delete(cluster, f"/api/v1/namespaces/{namespace}")


def _poll(condition: Callable[[], Any], timeout: float) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = condition()
        if result:
            return result
        time.sleep(0.25)
    return condition() or None


def _delete_pod(cluster: Cluster, pods: str, name: str) -> None:
    try:
        cluster.request("DELETE", f"{pods}/{name}", body={"gracePeriodSeconds": 0})
    except NotFoundError:
        pass


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_preemption_matches_kube_scheduler(
    cluster: Cluster, preemption_lab: None, schedulers: None, name: str
) -> None:
    scenario = SCENARIOS[name]
    reference = _run(cluster, scenario, REFERENCE)
    ours = _run(cluster, scenario, OURS)
    print(f"\n{name}: kube-scheduler {reference}\n{name}: kschedctl       {ours}")
    # The reference did what the scenario was built for (a unique choice).
    if scenario.node is None:
        assert (reference.nominated, reference.bound, reference.victims) == (set(), None, set())
    else:
        assert reference.nominated == {scenario.node} and reference.bound == scenario.node
        assert reference.victims == scenario.victims
        assert set(reference.preempted) == scenario.victims
        assert all(
            note == f"Preempted by pod <uid> on node {scenario.node}"
            for note in reference.preempted.values()
        )
    assert ours == reference


# --- with a Python plugin: kube-scheduler's rule for out-of-tree Filter plugins ----------------

PLUGGED = f"preempt-plug-{RUN}"  # kschedctl scheduler run --plugin db_limit.py
DB = {"app": "db"}
DB_MAX = 2
DB_LIMIT = f"""\
NAME = "db-limit"
MAX = {DB_MAX}  # pods labelled app=db per node, the incoming one included


def _db(p):
    return (p["metadata"].get("labels") or {{}}).get("app") == "db"


def filter(pod, node, ctx):
    if not _db(pod):
        return None
    dbs = sum(1 for p in ctx.pods_on(node["metadata"]["name"]) if _db(p))
    return f"node(s) already run {{MAX}} db pods" if dbs + 1 > MAX else None
"""
DB_REASON = f"node(s) already run {DB_MAX} db pods"
# Every node runs two db pods: the plugin rejects all three, and only evicting db pods helps.
# preempt-1's lowest db pod has the lowest priority among the candidates' victims; web-1 is
# the lowest pod of all but evicting it helps nobody, so it stays.
DB_SCENARIO = Scenario(
    (
        Pinned("web-1", "preempt-1", "p100", "100m"),
        Pinned("db-1a", "preempt-1", "p200", "100m", DB),
        Pinned("db-1b", "preempt-1", "p300", "100m", DB),
        Pinned("db-2a", "preempt-2", "p400", "100m", DB),
        Pinned("db-2b", "preempt-2", "p500", "100m", DB),
        Pinned("db-3a", "preempt-3", "p400", "100m", DB),
        Pinned("db-3b", "preempt-3", "p500", "100m", DB),
    ),
    cpu="100m",
    labels=DB,
    node="preempt-1",
    victims=frozenset({"db-1a"}),
)


def _db_limit_victims(scenario: Scenario) -> tuple[str, frozenset[str]]:
    """The plugin's own arithmetic: on each node the fewest lower-priority db pods whose
    eviction leaves MAX - 1 db pods; the node whose most important victim ranks lowest."""
    rank = PRIORITIES[scenario.priority]
    options = {}
    for node in NODES:
        dbs = [p for p in scenario.pinned if p.node == node and p.labels == DB]
        lower = sorted((p for p in dbs if PRIORITIES[p.priority] < rank),
                       key=lambda p: PRIORITIES[p.priority])  # fmt: skip
        need = len(dbs) + 1 - DB_MAX
        if 0 < need <= len(lower):
            options[node] = lower[:need]
    node = min(options, key=lambda n: max(PRIORITIES[p.priority] for p in options[n]))
    return node, frozenset(p.name for p in options[node])


@pytest.fixture(scope="module")
def plugged(lab: Lab, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """kschedctl's scheduler with the db-limit plugin; yields the plugin's file."""
    tmp = tmp_path_factory.mktemp("preemption-plugin")
    plugin = tmp / "db_limit.py"
    plugin.write_text(DB_LIMIT)
    argv = [sys.executable, "-m", "kschedctl", "scheduler", "run", f"--name={PLUGGED}",
            f"--kubeconfig={lab.kubeconfig}", "--metrics-port=0", "--metrics-address=127.0.0.1",
            "--pod-initial-backoff=0.5", "--pod-max-backoff=2", f"--plugin={plugin}"]  # fmt: skip
    # With its Lease (leader election on): `why` finds it, its policy and its plugins' names.
    with open(tmp / "scheduler.log", "ab") as log:
        proc = subprocess.Popen(
            argv, stdout=log, stderr=subprocess.STDOUT, env=proxy_free_environment()
        )
    try:
        yield plugin
    finally:
        stop_process(proc)


def _why(lab: Lab, namespace: str, pod: str, plugin: Path) -> dict[str, Any]:
    argv = [sys.executable, "-m", "kschedctl", "why", pod, "-n", namespace,
            f"--kubeconfig={lab.kubeconfig}", f"--plugin={plugin}", "-o", "json"]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120,
                          env=proxy_free_environment())  # fmt: skip
    assert done.returncode in (0, 6), done.stderr
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def test_preemption_runs_the_plugins_in_the_dry_run(
    lab: Lab, cluster: Cluster, preemption_lab: None, plugged: Path
) -> None:
    # The plugin rejects every node the built-in filters pass: preemption runs, evicts
    # exactly the pods the plugin's rule requires, and the preemptor is bound there.
    assert _db_limit_victims(DB_SCENARIO) == (DB_SCENARIO.node, DB_SCENARIO.victims)
    ours = _run(cluster, DB_SCENARIO, PLUGGED)
    print(f"\ndb-limit: kschedctl {ours}")
    assert ours.nominated == {"preempt-1"} and ours.bound == "preempt-1"
    assert ours.victims == {"db-1a"}
    assert ours.preempted == {"db-1a": "Preempted by pod <uid> on node preempt-1"}
    assert f"3 {DB_REASON}" in ours.message and "preemption:" not in ours.message

    # A preemptor that outranks only web-1 there: evicting it does not satisfy the plugin,
    # so the dry run records the plugin's reason for preempt-1, and `why --plugin` on the
    # pending pod says exactly what the scheduler wrote.
    said: dict[str, Any] = {}

    def ask_why(namespace: str) -> None:
        said.update(_why(lab, namespace, "preemptor", plugged))

    outranks_web = replace(DB_SCENARIO, priority="p200", node=None, victims=frozenset())
    stuck = _run(cluster, outranks_web, PLUGGED, ask_why)
    assert (stuck.nominated, stuck.bound, stuck.victims) == (set(), None, set())
    total = len(cluster.list("/api/v1/nodes"))
    assert stuck.message.endswith(
        f"preemption: 0/{total} nodes are available: 1 {DB_REASON}, 2 No preemption victims "
        f"found for incoming pod, {total - 3} Preemption is not helpful for scheduling."
    ), stuck.message
    assert said["summary"].replace(DRA_POSTFILTER, "") == stuck.message, said["findings"]
    assert not any(f["code"] == "plugins-differ" for f in said["findings"])
    assert said["preemption"]["helps"] is False
    assert said["preemption"]["nodeReasons"]["preempt-1"] == [DB_REASON]
