"""A small cluster as API dicts, with one pending pod per constraint the filters evaluate:
shared by the snapshot tests (reduce, round trip, anonymize, CLI)."""

from __future__ import annotations

from typing import Any


def node(name: str, zone: str, cpu: str = "4", **extra_labels: str) -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "uid": f"uid-{name}",
            "annotations": {"node.alpha.kubernetes.io/ttl": "0"},
            "labels": {
                "kubernetes.io/hostname": name,
                "topology.kubernetes.io/zone": zone,
                "kubernetes.io/os": "linux",
                **extra_labels,
            },
        },
        "spec": {},
        "status": {
            "capacity": {"cpu": cpu, "memory": "16Gi", "pods": "110"},
            "allocatable": {"cpu": cpu, "memory": "15Gi", "pods": "110"},
            "images": [{"names": ["registry.corp/secret:v1"], "sizeBytes": 1000}],
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def pod(
    namespace: str,
    name: str,
    node_name: str = "",
    *,
    cpu: str = "100m",
    labels: dict[str, str] | None = None,
    phase: str | None = None,
    owner: str = "",
    **spec: Any,
) -> dict[str, Any]:
    md: dict[str, Any] = {
        "namespace": namespace,
        "name": name,
        "uid": f"uid-{name}",
        "labels": labels or {},
        "annotations": {"secret": "x"},
    }
    if owner:
        md["ownerReferences"] = [{"kind": owner, "name": "o", "controller": True}]
    body: dict[str, Any] = {
        "schedulerName": "default-scheduler",
        "containers": [
            {
                "name": "app",
                "image": "registry.corp/app:v2",
                "env": [{"name": "PASSWORD", "value": "hunter2"}],
                "resources": {"requests": {"cpu": cpu, "memory": "128Mi"}},
            }
        ],
        **spec,
    }
    if node_name:
        body["nodeName"] = node_name
    return {
        "metadata": md,
        "spec": body,
        "status": {"phase": phase or ("Running" if node_name else "Pending")},
    }


def _daemon(node_name: str) -> dict[str, Any]:
    match = {"key": "metadata.name", "operator": "In", "values": [node_name]}
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchFields": [match]}]
            }
        }
    }
    return pod("kube-system", f"agent-{node_name}", node_name, owner="DaemonSet", affinity=affinity)


NODES = [
    node("node-a1", "zone-a"),
    node("node-a2", "zone-a"),
    node("node-b1", "zone-b", **{"example.com/cpu-gen": "5"}),
    node("node-b2", "zone-b", **{"example.com/cpu-gen": "3"}),
]
NODES[3]["spec"]["taints"] = [
    {"key": "dedicated", "value": "gpu-team", "effect": "NoSchedule", "timeAdded": "x"}
]

WEB = {"app": "web"}
SIDE = {"name": "proxy", "image": "envoy", "restartPolicy": "Always"}
HOSTPORT = [{"containerPort": 8080, "hostPort": 8080, "protocol": "TCP", "name": "http"}]

BOUND = [
    pod("shop", "web-1", "node-a1", labels=WEB, owner="ReplicaSet"),
    pod("data", "db-0", "node-b1", labels={"app": "db"}, owner="StatefulSet"),
    pod(
        "shop",
        "gateway",
        "node-a2",
        labels={"app": "gw"},
        overhead={"cpu": "50m"},
        initContainers=[
            {"name": "init", "image": "busybox", "resources": {"requests": {"cpu": "2"}}},
            {**SIDE, "resources": {"requests": {"cpu": "200m"}}},
        ],
        volumes=[{"name": "v", "persistentVolumeClaim": {"claimName": "gw-data"}}],
    ),
    pod("shop", "old-job", "node-a2", phase="Succeeded", owner="Job"),
    *[_daemon(n["metadata"]["name"]) for n in NODES],
]
BOUND[2]["spec"]["containers"][0]["ports"] = HOSTPORT


def _term(selector: dict[str, Any], key: str, **extra: Any) -> dict[str, Any]:
    return {"labelSelector": selector, "topologyKey": key, **extra}


ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"

PENDING = [
    pod(
        "shop",
        "web-2",
        labels=WEB,
        affinity={
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    _term({"matchLabels": WEB}, HOST)
                ]
            }
        },
    ),
    pod(
        "shop",
        "web-3",
        labels=WEB,
        topologySpreadConstraints=[
            {
                "maxSkew": 1,
                "topologyKey": ZONE,
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {
                    "matchExpressions": [{"key": "app", "operator": "In", "values": ["web"]}]
                },
            }
        ],
    ),
    pod("shop", "zoned", nodeSelector={ZONE: "zone-b"}),
    pod(
        "shop",
        "gpu",
        tolerations=[{"key": "dedicated", "operator": "Equal", "value": "gpu-team"}],
        affinity={
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": "example.com/cpu-gen", "operator": "Lt", "values": ["4"]}
                            ]
                        }
                    ]
                }
            }
        },
    ),
    pod("shop", "porty", hostNetwork=False),
    pod(
        "shop",
        "near-db",
        affinity={
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    _term(
                        {"matchLabels": {"app": "db"}},
                        ZONE,
                        namespaceSelector={"matchLabels": {"team": "data"}},
                    )
                ]
            }
        },
    ),
    pod(
        "data",
        "db-1",
        labels={"app": "db"},
        affinity={
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    _term({"matchLabels": {"app": "db"}}, HOST, namespaces=["data"])
                ]
            }
        },
    ),  # fmt: skip
    pod("shop", "huge", cpu="64"),
    pod("shop", "gated", schedulingGates=[{"name": "example.com/wait"}]),
]
PENDING[4]["spec"]["containers"][0]["ports"] = HOSTPORT

NAMESPACES = [
    {"metadata": {"name": n, "labels": {"kubernetes.io/metadata.name": n, **labels}}}
    for n, labels in (("shop", {"team": "web"}), ("data", {"team": "data"}), ("kube-system", {}))
]
PDBS = [
    {
        "metadata": {"namespace": "shop", "name": "web"},
        "spec": {"selector": {"matchLabels": WEB}, "minAvailable": "50%"},
        "status": {"disruptionsAllowed": 0},
    }
]
PRIORITY_CLASSES = [
    {"metadata": {"name": "high"}, "value": 1000, "preemptionPolicy": "Never"},
    {"metadata": {"name": "low"}, "value": -5, "globalDefault": True},
]


def every_pod() -> list[dict[str, Any]]:
    return [*BOUND, *PENDING]
