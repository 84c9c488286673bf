"""The seed's bulk loader (lab/etcdload.py) on a real control plane: what it writes into etcd
is what the API server stores for the same objects created through it, kube-scheduler counts
the loaded pods on their nodes, and `seed.reset` brings back exactly the seeded state.

A lab of its own: the module loads nodes and pods straight into etcd and restarts the lab's
kube-scheduler, which the session lab's other tests must not see.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest
from e2e_helpers import lab_of_its_own, new_namespace, wait_for

from kschedctl.kubeclient.client import Cluster
from kschedctl.lab import seed
from kschedctl.lab.api import wait_nodes_ready
from kschedctl.lab.cluster import Lab
from kschedctl.lab.etcdload import EtcdLoader
from kschedctl.lab.nodes import kwok_node
from kschedctl.observe.workload import lab_pod

HOST = "kubernetes.io/hostname"


@pytest.fixture(scope="module")
def own_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    with lab_of_its_own(tmp_path_factory.mktemp("seed-loader"), []) as lab:
        yield lab


@pytest.fixture(scope="module")
def cluster(own_lab: Lab) -> Iterator[Cluster]:
    with Cluster.connect(str(own_lab.kubeconfig)) as c:
        yield c


def node(name: str, pool: str = "compare") -> dict[str, Any]:
    resources = {"cpu": "4", "memory": "16Gi", "pods": "110"}
    labels = {HOST: name, "topology.kubernetes.io/zone": "zone-a", "pool": pool}
    taints = [{"key": "dedicated", "value": "seed", "effect": "NoSchedule"}]
    return kwok_node(name, labels=labels, taints=taints, capacity=resources)


def pinned(name: str, namespace: str, node_name: str, cpu: str, **spec: Any) -> dict[str, Any]:
    container = {"name": "app", "image": "registry.k8s.io/pause:3.10",
                 "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}  # fmt: skip
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": namespace, "labels": {"app": "seeded"}},
           "spec": {"nodeName": node_name, "containers": [container],
                    "tolerations": [{"key": "dedicated", "operator": "Exists"}], **spec}}  # fmt: skip
    return lab_pod(pod, None)


_VOLATILE_META = ("name", "uid", "resourceVersion", "creationTimestamp", "managedFields")


def comparable_pod(pod: dict[str, Any]) -> dict[str, Any]:
    """What must be equal between two pods created alike: all but names, ids, times, IPs."""
    out = copy.deepcopy(pod)
    for key in _VOLATILE_META:
        out["metadata"].pop(key, None)
    out["spec"].pop("nodeName")
    status = out["status"]
    status["conditions"] = sorted((c["type"], c["status"]) for c in status["conditions"])
    status["containerStatuses"] = [(c["name"], c["ready"], sorted(c["state"]))
                                   for c in status["containerStatuses"]]  # fmt: skip
    for key in ("startTime", "podIP", "podIPs"):
        assert status.pop(key), key
    return out


def comparable_node(obj: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    for key in _VOLATILE_META:
        out["metadata"].pop(key, None)
    out["metadata"]["labels"].pop(HOST)
    status = out["status"]
    status["conditions"] = sorted(
        (c["type"], c["status"], c["reason"], c["message"]) for c in status["conditions"]
    )
    status["addresses"] = sorted(a["type"] for a in status["addresses"])
    return out


def test_loaded_objects_are_what_the_api_server_stores(own_lab: Lab, cluster: Cluster) -> None:
    namespace = new_namespace(cluster, "seed-compare")
    high = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
            "metadata": {"name": "seed-high"}, "value": 1000}  # fmt: skip
    cluster.create("/apis/scheduling.k8s.io/v1/priorityclasses", high)
    loader = EtcdLoader(own_lab)

    cluster.create("/api/v1/nodes", node("api-node"))
    loader.load_nodes([node("etcd-node")])
    wait_nodes_ready(cluster, ["api-node", "etcd-node"], 120)  # untainted by the controller
    via_api, loaded = (cluster.get(f"/api/v1/nodes/{n}") for n in ("api-node", "etcd-node"))
    assert comparable_node(loaded) == comparable_node(via_api)
    lease_path = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/etcd-node"
    lease = cluster.get(lease_path)
    assert lease["metadata"]["ownerReferences"][0]["uid"] == loaded["metadata"]["uid"]

    # the seed's API path before the loader: a create, then kwok reports it running
    cluster.create(f"/api/v1/namespaces/{namespace}/pods",
                   seed._labelled(pinned("api-pod", namespace, "api-node", "1",
                                         priorityClassName="seed-high")))  # fmt: skip
    seed.load_pinned(
        loader, [pinned("etcd-pod", namespace, "etcd-node", "1", priorityClassName="seed-high")],
        [high], [node("etcd-node")],
    )  # fmt: skip

    def running(name: str) -> dict[str, Any] | None:
        pod = cluster.get(f"/api/v1/namespaces/{namespace}/pods/{name}")
        conditions = {c["type"]: c["status"] for c in pod["status"].get("conditions") or []}
        return pod if conditions.get("Ready") == "True" else None

    api_pod = wait_for(lambda: running("api-pod"), 60, "kwok runs the pod created through the API")
    loaded_pod = wait_for(lambda: running("etcd-pod"), 60, "the loaded pod, listed Running")
    assert loaded_pod["spec"]["priority"] == 1000
    assert comparable_pod(loaded_pod) == comparable_pod(api_pod)
    wait_for(
        lambda: cluster.get(lease_path)["spec"]["renewTime"] != lease["spec"]["renewTime"],
        60,
        "kwok renews the loaded node's Lease",
    )


def seeded_pods(cluster: Cluster, namespace: str) -> dict[str, dict[str, Any]]:
    pods = cluster.list(f"/api/v1/namespaces/{namespace}/pods")
    return {p["metadata"]["name"]: p for p in pods}


def events_for(cluster: Cluster, namespace: str, pod: str) -> list[str]:
    return [e.get("message") or "" for e in cluster.list(f"/api/v1/namespaces/{namespace}/events")
            if e["involvedObject"].get("name") == pod and e.get("reason") == "FailedScheduling"]  # fmt: skip


def test_kube_scheduler_counts_loaded_pods_and_reset_restores_them(
    own_lab: Lab, cluster: Cluster
) -> None:
    namespace = "seeded"
    nodes = [node("full-1", "full"), node("full-2", "full")]
    pods = [pinned(f"run-{i}", namespace, f"full-{i % 2 + 1}", "1500m") for i in range(4)]
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
    what = seed.Seed(nodes, [ns], pinned=pods)
    loader = EtcdLoader(own_lab)
    seed.seed(cluster, loader, what, timeout=120, progress=print)
    first = seeded_pods(cluster, namespace)
    assert sorted(first) == [f"run-{i}" for i in range(4)]
    assert all(p["status"]["phase"] == "Running" for p in first.values())
    # a revision each, as the API server's own writes: the watch cache takes one per object
    assert len({p["metadata"]["resourceVersion"] for p in first.values()}) == len(first)
    node_uids = {n["metadata"]["name"]: n["metadata"]["uid"] for n in cluster.list("/api/v1/nodes")}

    # what a candidate leaves behind: a pinned pod evicted, a pod of its own
    cluster.delete(f"/api/v1/namespaces/{namespace}/pods/run-0", gracePeriodSeconds=0)
    extra = pinned("extra", namespace, "full-1", "100m")
    cluster.create(f"/api/v1/namespaces/{namespace}/pods", extra)
    listed = cluster.get(f"/api/v1/namespaces/{namespace}/pods")
    listed_before = int(listed["metadata"]["resourceVersion"])
    seed.reset(cluster, loader, what, timeout=120, progress=print)

    again = seeded_pods(cluster, namespace)
    assert sorted(again) == sorted(first)
    assert all(p["status"]["phase"] == "Running" for p in again.values())
    assert {n: p["spec"]["nodeName"] for n, p in again.items()} == {
        n: p["spec"]["nodeName"] for n, p in first.items()
    }
    reloaded = again["run-0"]["metadata"]
    assert reloaded["uid"] != first["run-0"]["metadata"]["uid"]  # a new object, as on a cluster
    assert int(reloaded["resourceVersion"]) > listed_before  # written after: watchers see it
    for name in ("run-1", "run-2", "run-3"):  # untouched ones are the same objects
        assert again[name]["metadata"] == first[name]["metadata"]
    assert {n["metadata"]["name"]: n["metadata"]["uid"] for n in cluster.list("/api/v1/nodes")} == (
        node_uids
    )

    # a kube-scheduler started now lists the reloaded state: 1 cpu is left on each node
    own_lab.restart("kube-scheduler")
    toleration = [{"key": "dedicated", "operator": "Exists"}]
    for name, cpu in (("too-big", "2"), ("fits", "500m")):
        pod = pinned(name, namespace, "", cpu)
        pod["spec"].pop("nodeName")
        pod["spec"]["tolerations"] = toleration
        pod["spec"]["nodeSelector"] = {"pool": "full"}  # not the other test's nodes
        cluster.create(f"/api/v1/namespaces/{namespace}/pods", pod)
    refused = wait_for(
        lambda: [m for m in events_for(cluster, namespace, "too-big") if "Insufficient cpu" in m],
        90,
        "kube-scheduler refuses the pod that fits only if the loaded pods are not counted",
    )
    print(refused[0])
    assert "2 Insufficient cpu" in refused[0]
    wait_for(
        lambda: cluster.get(f"/api/v1/namespaces/{namespace}/pods/fits")["spec"].get("nodeName"),
        90,
        "kube-scheduler places the pod that fits beside the loaded ones",
    )
