"""Scoring parity: kschedctl's scheduler (default strategy, no plugins) picks the node the lab's
kube-scheduler v1.36.3 picks, in scenarios where kube-scheduler's pick is unique.

Each scenario adds its own nodes to the session lab (labelled and tainted NoSchedule with a key
only its pods tolerate, zones named after the namespace, so no other test's pod or node
counts in its domains), binds the existing pods directly (``spec.nodeName``), then:
kube-scheduler places pod A; A is deleted; kschedctl's scheduler places the identical pod B on
the identical state. The nodes must be equal, and equal to the node the scenario was designed
for: the one the plugin under test makes win against the resource scores. Every scenario's
margin is checked on the live state first, so a tie (where kube-scheduler picks at random)
fails loudly instead of flaking.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import exists, pod_manifest, stop, wait_for

from kschedctl.kubeclient.client import Cluster
from kschedctl.lab.cluster import Lab
from kschedctl.lab.nodes import lab_node
from kschedctl.lab.processes import proxy_free_environment
from kschedctl.model.filters import NodeInfoSnapshot, feasible_nodes
from kschedctl.model.scheduling.scoring import score_nodes

SCHEDULER = "scoring-parity"
KEY = "kschedctl.io/scoring-e2e"
ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
CAPACITY = {"cpu": "4", "memory": "8Gi", "pods": "110"}
BIG_IMAGE = "kschedctl.io/e2e-scoring-big:1"
GIB = 1024**3


@dataclass
class Existing:
    name: str
    node: str
    labels: dict[str, str] = field(default_factory=dict)
    cpu: str = "100m"
    memory: str = "128Mi"
    affinity: dict[str, Any] | None = None


@dataclass
class Scenario:
    id: str
    nodes: dict[str, dict[str, Any]]  # suffix -> zone, taints, labels, images
    existing: list[Existing]
    pod: dict[str, Any]  # labels, affinity, topologySpreadConstraints, image
    expected: str  # the node suffix the plugin under test makes win
    service: dict[str, str] | None = None


def term(labels: dict[str, str], key: str) -> dict[str, Any]:
    return {"labelSelector": {"matchLabels": labels}, "topologyKey": key}


def preferred(
    kind: str, weight: int, labels: dict[str, str], key: str, namespaces: Any = None
) -> dict[str, Any]:
    affinity_term = term(labels, key)
    if namespaces is not None:
        affinity_term["namespaceSelector"] = namespaces
    return {kind: {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": weight, "podAffinityTerm": affinity_term}]}}  # fmt: skip


# Every namespace carries this label (the API server sets it).
EVERY_NAMESPACE = {
    "matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "Exists"}]
}


WEB, API, CLIENT = {"app": "web"}, {"app": "api"}, {"role": "client"}
FILLER = {"cpu": "1500m", "memory": "3Gi"}
SCENARIOS = [
    # ScheduleAnyway zone spread: z3 is empty but its node is the busiest.
    Scenario(
        "topology-spread-zones",
        {"n1": {"zone": "z1"}, "n2": {"zone": "z1"}, "n3": {"zone": "z2"}, "n4": {"zone": "z3"}},
        [
            Existing("w1", "n1", WEB),
            Existing("w2", "n2", WEB),
            Existing("w3", "n3", WEB),
            Existing("fill", "n4", **FILLER),
        ],
        {
            "labels": WEB,
            "topologySpreadConstraints": [
                {
                    "maxSkew": 1,
                    "topologyKey": ZONE,
                    "whenUnsatisfiable": "ScheduleAnyway",
                    "labelSelector": {"matchLabels": WEB},
                }
            ],
        },
        "n4",
    ),  # fmt: skip
    # No constraints: the system defaults (hostname 3, zone 5) over the Service's selector.
    Scenario(
        "default-spread-service",
        {"n1": {"zone": "z1"}, "n2": {"zone": "z2"}, "n3": {"zone": "z2"}},
        [Existing("a1", "n2", API), Existing("a2", "n3", API), Existing("fill", "n1", **FILLER)],
        {"labels": API},
        "n1",
        service=API,
    ),
    Scenario(
        "preferred-pod-affinity",
        {"n1": {"zone": "z1"}, "n2": {"zone": "z2"}, "n3": {"zone": "z2"}},
        [Existing("cache", "n1", {"app": "cache"}, **FILLER)],
        {"labels": CLIENT, "affinity": preferred("podAffinity", 50, {"app": "cache"}, ZONE)},
        "n1",
    ),
    # The same term reaching the cache pod's namespace through a namespaceSelector that
    # selects every namespace — by their labels, which the scheduler must watch (as
    # kube-scheduler's namespace informer does) for the term to count the cache pod.
    Scenario(
        "preferred-pod-affinity-namespace-selector",
        {"n1": {"zone": "z1"}, "n2": {"zone": "z2"}, "n3": {"zone": "z2"}},
        [Existing("cache", "n1", {"app": "cache"}, **FILLER)],
        {
            "labels": CLIENT,
            "affinity": preferred(
                "podAffinity", 50, {"app": "cache"}, ZONE, namespaces=EVERY_NAMESPACE
            ),
        },
        "n1",
    ),  # fmt: skip
    Scenario(
        "preferred-pod-anti-affinity",
        {"n1": {"zone": "z1"}, "n2": {"zone": "z1"}, "n3": {"zone": "z2"}},
        [Existing("w1", "n1", WEB), Existing("w2", "n2", WEB), Existing("fill", "n3", **FILLER)],
        {"labels": CLIENT, "affinity": preferred("podAntiAffinity", 40, WEB, HOST)},
        "n3",
    ),
    # The incoming pod has no terms: existing pods' preferred and required (hard weight 1)
    # affinity to it decide.
    Scenario(
        "existing-pods-affinity-terms",
        {"n1": {"zone": "z1"}, "n2": {"zone": "z2"}, "n3": {"zone": "z3"}},
        [
            Existing(
                "hard",
                "n2",
                {"app": "h"},
                **FILLER,
                affinity={
                    "podAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": [term(CLIENT, ZONE)]
                    }
                },
            ),
            Existing(
                "soft",
                "n3",
                {"app": "s"},
                **FILLER,
                affinity=preferred("podAffinity", 20, CLIENT, ZONE),
            ),
        ],
        {"labels": CLIENT},
        "n3",
    ),  # fmt: skip
    Scenario(
        "preferred-node-affinity-vs-resources",
        {"n1": {"labels": {"disk": "ssd"}}, "n2": {}, "n3": {}},
        [Existing("fill", "n1", cpu="2", memory="4Gi")],
        {
            "affinity": {
                "nodeAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "weight": 10,
                            "preference": {
                                "matchExpressions": [
                                    {"key": "disk", "operator": "In", "values": ["ssd"]}
                                ]
                            },
                        }
                    ]
                }
            }
        },
        "n1",
    ),  # fmt: skip
    Scenario(
        "image-locality",
        {"n1": {"images": [BIG_IMAGE]}, "n2": {"images": [BIG_IMAGE]}, "n3": {}},
        [Existing("small", "n1", cpu="200m", memory="256Mi")],
        {"image": BIG_IMAGE},
        "n2",
    ),
    Scenario(
        "prefer-no-schedule-taint",
        {
            "n1": {"taints": [{"key": "spot", "value": "true", "effect": "PreferNoSchedule"}]},
            "n2": {},
        },
        [Existing("fill", "n2", cpu="1", memory="2Gi")],
        {},
        "n2",
    ),  # fmt: skip
]


@pytest.fixture(scope="module")
def ksched(lab: Lab, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """kschedctl's scheduler with its defaults (strategy spread, no plugins)."""
    log = tmp_path_factory.mktemp("scoring") / "scheduler.log"
    argv = [sys.executable, "-m", "kschedctl", "scheduler", "run", f"--name={SCHEDULER}",
            f"--kubeconfig={lab.kubeconfig}", "--no-leader-elect", "--metrics-port=0",
            "--metrics-address=127.0.0.1", "--pod-initial-backoff=0.5", "--pod-max-backoff=2"]  # fmt: skip
    with open(log, "ab") as out:
        proc = subprocess.Popen(
            argv, stdout=out, stderr=subprocess.STDOUT, env=proxy_free_environment()
        )
    try:
        yield log
    finally:
        stop(proc)


def _ident(namespace: str) -> str:
    return "s" + hashlib.sha256(namespace.encode()).hexdigest()[:6]


def _node_ready(cluster: Cluster, name: str) -> bool:
    node = cluster.get(f"/api/v1/nodes/{name}")
    ready = any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in (node.get("status") or {}).get("conditions") or []
    )
    # the node lifecycle controller's not-ready taint goes once the node is Ready
    lifecycle = [t for t in node["spec"].get("taints") or [] if t["key"].startswith("node.")]
    return ready and not lifecycle


def _pod(name: str, ident: str, scenario: Scenario, scheduler: str) -> dict[str, Any]:
    spec = dict(scenario.pod)
    labels = spec.pop("labels", {})
    image = spec.pop("image", None)
    body = pod_manifest(name, schedulerName=scheduler, nodeSelector={KEY: ident}, **spec)
    body["spec"]["tolerations"] = [{"key": KEY, "operator": "Exists", "effect": "NoSchedule"}]
    container = body["spec"]["containers"][0]
    container["resources"] = {"requests": {"cpu": "500m", "memory": "512Mi"}}
    if image:
        container["image"] = image
    body["metadata"]["labels"] = labels
    return body


def _live_margin(cluster: Cluster, probe: dict[str, Any], ident: str) -> tuple[str, int]:
    """kschedctl's scores on the live state: (best node, lead over the second best)."""
    nodes = cluster.list("/api/v1/nodes")
    pods = cluster.list("/api/v1/pods")
    services = cluster.list("/api/v1/services")
    namespaces = {ns["metadata"]["name"]: ns for ns in cluster.list("/api/v1/namespaces")}
    snap = NodeInfoSnapshot(nodes, pods, namespaces, workloads={"Service": services})
    names = [n for n in feasible_nodes(probe, snap).names if n.startswith(ident)]
    ranked = sorted(score_nodes(probe, snap, names), key=lambda s: -s.total)
    lead = ranked[0].total - ranked[1].total if len(ranked) > 1 else 1000
    return ranked[0].name, lead


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.id for s in SCENARIOS])
def test_kschedctl_picks_kube_schedulers_node(
    scenario: Scenario, cluster: Cluster, namespace: str, ksched: Path
) -> None:
    ident = _ident(namespace)
    names = {suffix: f"{ident}-{suffix}" for suffix in scenario.nodes}
    try:
        for suffix, shape in scenario.nodes.items():
            node = lab_node(
                names[suffix],
                labels={KEY: ident, **shape.get("labels", {})},
                taints=[{"key": KEY, "value": ident, "effect": "NoSchedule"},
                        *shape.get("taints", [])],
                capacity=CAPACITY,
                zone=f"{ident}-{shape['zone']}" if "zone" in shape else None,
            )  # fmt: skip
            if shape.get("images"):
                node["status"]["images"] = [
                    {"names": shape["images"], "sizeBytes": 20 * GIB}  # past the 1000MB cap
                ]
            cluster.create("/api/v1/nodes", node)
        for name in names.values():
            wait_for(lambda name=name: _node_ready(cluster, name), 90, f"node {name} Ready")
            if scenario.nodes[name.rsplit("-", 1)[1]].get("images"):
                images = cluster.get(f"/api/v1/nodes/{name}")["status"].get("images")
                assert images, f"node {name} lost status.images: ImageLocality cannot be compared"
        if scenario.service is not None:
            cluster.create(
                f"/api/v1/namespaces/{namespace}/services",
                {"metadata": {"name": "svc"},
                 "spec": {"selector": scenario.service, "ports": [{"port": 80}]}},
            )  # fmt: skip
        for e in scenario.existing:
            body = pod_manifest(e.name, nodeName=names[e.node])
            body["metadata"]["labels"] = e.labels
            body["spec"]["containers"][0]["resources"] = {
                "requests": {"cpu": e.cpu, "memory": e.memory}
            }
            if e.affinity:
                body["spec"]["affinity"] = e.affinity
            cluster.create(f"/api/v1/namespaces/{namespace}/pods", body)

        probe = _pod("probe", ident, scenario, SCHEDULER)
        probe["metadata"]["namespace"] = namespace
        best, lead = _live_margin(cluster, probe, ident)
        assert lead > 0, f"{scenario.id}: the best nodes tie; kube-scheduler would pick at random"

        pods = f"/api/v1/namespaces/{namespace}/pods"
        cluster.create(pods, _pod("by-kube-scheduler", ident, scenario, "default-scheduler"))
        kube = wait_for(
            lambda: cluster.get(f"{pods}/by-kube-scheduler")["spec"].get("nodeName"), 60,
            "kube-scheduler's binding",
        )  # fmt: skip
        cluster.delete(f"{pods}/by-kube-scheduler", gracePeriodSeconds=0)
        wait_for(lambda: not exists(cluster, f"{pods}/by-kube-scheduler"), 60, "pod A gone")
        time.sleep(1)  # the deletion reaches kschedctl's watch before pod B does anyway
        cluster.create(pods, _pod("by-kschedctl", ident, scenario, SCHEDULER))
        ours = wait_for(
            lambda: cluster.get(f"{pods}/by-kschedctl")["spec"].get("nodeName"), 90,
            "kschedctl's binding",
        )  # fmt: skip
        assert (kube, ours) == (names[scenario.expected], names[scenario.expected]), (
            f"{scenario.id}: kube-scheduler chose {kube}, kschedctl {ours}, designed for "
            f"{names[scenario.expected]} (kschedctl's live scores: {best} leads by {lead})"
        )
    finally:
        for name in names.values():
            if exists(cluster, f"/api/v1/nodes/{name}"):
                cluster.delete(f"/api/v1/nodes/{name}")
