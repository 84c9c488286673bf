"""Plain-dict builders for the filter-engine tests (no tests here).

Nodes and pods are shaped like API JSON, with only the fields the scheduler reads.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

FIXTURES = Path(__file__).parent / "fixtures" / "filters"


def node(
    name: str,
    *,
    cpu: str = "4",
    memory: str = "8Gi",
    pods: str = "110",
    labels: dict[str, str] | None = None,
    taints: list[dict[str, str]] | None = None,
    unschedulable: bool = False,
    extra: dict[str, str] | None = None,
) -> dict[str, Any]:
    allocatable = {"cpu": cpu, "memory": memory, "pods": pods, **(extra or {})}
    spec: dict[str, Any] = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    return {
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "spec": spec,
        "status": {"allocatable": allocatable, "capacity": dict(allocatable)},
    }


def container(
    name: str = "c",
    *,
    cpu: str | None = None,
    memory: str | None = None,
    requests: dict[str, str] | None = None,
    ports: list[dict[str, Any]] | None = None,
    restart_policy: str | None = None,
) -> dict[str, Any]:
    reqs = dict(requests or {})
    if cpu is not None:
        reqs["cpu"] = cpu
    if memory is not None:
        reqs["memory"] = memory
    c: dict[str, Any] = {"name": name, "image": "registry.k8s.io/pause:3.10"}
    if reqs:
        c["resources"] = {"requests": reqs}
    if ports:
        c["ports"] = ports
    if restart_policy:
        c["restartPolicy"] = restart_policy
    return c


def pod(
    name: str,
    *,
    namespace: str = "default",
    node_name: str | None = None,
    cpu: str | None = None,
    memory: str | None = None,
    labels: dict[str, str] | None = None,
    containers: list[dict[str, Any]] | None = None,
    phase: str | None = None,
    **spec: Any,
) -> dict[str, Any]:
    s: dict[str, Any] = {"containers": containers or [container(cpu=cpu, memory=memory)]}
    if node_name:
        s["nodeName"] = node_name
    s.update(spec)
    md: dict[str, Any] = {"name": name, "namespace": namespace, "uid": f"uid-{namespace}-{name}"}
    if labels:
        md["labels"] = labels
    return {
        "metadata": md,
        "spec": s,
        "status": {"phase": phase or ("Running" if node_name else "Pending")},
    }


def host_port(port: int, *, ip: str | None = None, protocol: str | None = None) -> dict[str, Any]:
    p: dict[str, Any] = {"containerPort": port, "hostPort": port}
    if ip:
        p["hostIP"] = ip
    if protocol:
        p["protocol"] = protocol
    return p


def node_affinity(*terms: dict[str, Any]) -> dict[str, Any]:
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}
        }
    }


def expr(key: str, op: str, *values: str) -> dict[str, Any]:
    e: dict[str, Any] = {"key": key, "operator": op}
    if values:
        e["values"] = list(values)
    return e


def pod_term(
    labels: dict[str, str], topology_key: str = "kubernetes.io/hostname", **extra: Any
) -> dict[str, Any]:
    return {"labelSelector": {"matchLabels": labels}, "topologyKey": topology_key, **extra}


def load_yaml(name: str) -> Any:
    return yaml.safe_load((FIXTURES / name).read_text())


def expand_nodes(specs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Nodes from the compact fixture form ({name, count, labels, taints, cpu, ...})."""
    out = []
    for s in specs:
        count = s.get("count", 1)
        names = [s["name"]] if count == 1 else [f"{s['name']}-{i}" for i in range(1, count + 1)]
        for n in names:
            out.append(
                node(
                    n,
                    cpu=str(s.get("cpu", "4")),
                    memory=str(s.get("memory", "8Gi")),
                    pods=str(s.get("pods", "110")),
                    labels=s.get("labels"),
                    taints=s.get("taints"),
                    unschedulable=bool(s.get("unschedulable", False)),
                    extra=s.get("extra"),
                )
            )
    return out
