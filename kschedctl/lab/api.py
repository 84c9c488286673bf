"""What the lab asks of its own API server: nodes, readiness, the default ServiceAccount."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import yaml

from kschedctl.base.errors import ConflictError, LabError, NotFoundError
from kschedctl.kubeclient.client import Cluster
from kschedctl.kubeclient.watch import SYNC, list_and_watch

from .devices import DEVICES_ANNOTATION, node_resource_slices
from .etcdload import EtcdLoader
from .parallel import in_parallel
from .stored import NOT_READY_TAINT

# Requests in flight while publishing nodes' ResourceSlices: enough to hide the round trips.
CREATE_WORKERS = 16


def create_nodes(cluster: Cluster, loader: EtcdLoader, nodes: list[dict[str, Any]]) -> None:
    """Load the nodes Ready, with their Leases, straight into etcd (through the API, 2,000
    nodes took 30–60 s of creates, kwok's initialisation and the node lifecycle controller's
    taint removal), then publish the ResourceSlices of those with DRA
    devices (the lab's driver) through the API. A node that exists already stops it all
    (``Lab.up`` then removes the lab)."""
    try:
        made = loader.load_nodes(nodes)
    except ConflictError as err:
        raise LabError(f"a node to create exists already: {err.message}") from err
    with_devices = [n for n in made if DEVICES_ANNOTATION in n["metadata"].get("annotations", {})]
    in_parallel(lambda n: publish_resource_slices(cluster, n), with_devices, CREATE_WORKERS)


def publish_resource_slices(cluster: Cluster, node: dict[str, Any]) -> None:
    """What a DRA driver's kubelet plugin does for its node: publish its devices."""
    for resource_slice in node_resource_slices(node):
        cluster.create("/apis/resource.k8s.io/v1/resourceslices", resource_slice)


def is_ready(node: dict[str, Any]) -> bool:
    conditions = (node.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def schedulable(node: dict[str, Any]) -> bool:
    """Ready, and the node lifecycle controller has lifted the not-ready taint it puts on every
    new node (until then no pod fits it, and a lab would start with pods that cannot run)."""
    taints = (node.get("spec") or {}).get("taints") or []
    return is_ready(node) and not any(t.get("key") == NOT_READY_TAINT for t in taints)


def wait_nodes_ready(cluster: Cluster, names: list[str], timeout: float) -> None:
    """Until every node named is :func:`schedulable`: one list, then each change as it comes
    (listing thousands of nodes again and again took the CPU the API server and kwok need)."""
    wanted = set(names)
    ready: set[str] = set()
    stop = threading.Event()
    deadline = threading.Timer(timeout, stop.set)  # list_and_watch checks it between events
    deadline.start()
    try:
        for event in list_and_watch(
            cluster, "/api/v1/nodes", stop, timeout_seconds=5, transform=_readiness
        ):
            if event.type == SYNC:
                ready = {n["name"] for n in event.objects if n["schedulable"]}
            elif event.type != "DELETED" and event.object["schedulable"]:
                ready.add(event.object["name"])
            else:
                ready.discard(event.object["name"])
            if wanted <= ready:
                return
    finally:
        deadline.cancel()
    missing = sorted(wanted - ready)
    raise LabError(
        f"{len(missing)} simulated node(s) not Ready, or still tainted not-ready, "
        f"after {timeout:.0f}s: " + ", ".join(missing[:5]),
        hint="look at the kwok log (`kschedctl lab status` shows where it is)",
    )


def _readiness(node: dict[str, Any]) -> dict[str, Any]:
    return {"name": node["metadata"]["name"], "schedulable": schedulable(node)}


def wait_default_service_account(cluster: Cluster, namespace: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            cluster.get(f"/api/v1/namespaces/{namespace}/serviceaccounts/default")
            return
        except NotFoundError:
            if time.monotonic() > deadline:
                raise LabError(
                    f"the ServiceAccount {namespace}/default did not appear within {timeout:.0f}s",
                    hint="look at the kube-controller-manager log",
                ) from None
            time.sleep(0.2)


def install_crds(cluster: Cluster, manifest: Path, timeout: float) -> None:
    """Apply the CustomResourceDefinitions in ``manifest`` and wait until they are served."""
    names = []
    for crd in yaml.safe_load_all(manifest.read_text()):
        if not crd:
            continue
        name = crd["metadata"]["name"]
        cluster.apply(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}", crd)
        names.append(name)
    deadline = time.monotonic() + timeout
    for name in names:
        while True:
            crd = cluster.get(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}")
            conditions = (crd.get("status") or {}).get("conditions") or []
            if any(c["type"] == "Established" and c["status"] == "True" for c in conditions):
                break
            if time.monotonic() > deadline:
                raise LabError(f"the CustomResourceDefinition {name} was not established "
                               f"within {timeout:.0f}s")  # fmt: skip
            time.sleep(0.1)


def node_counts(cluster: Cluster) -> dict[str, int]:
    nodes = cluster.list("/api/v1/nodes")
    return {"total": len(nodes), "ready": sum(1 for n in nodes if is_ready(n))}
