"""`list` reads only the pods discovery needs, and finds exactly what a scan of every pod finds.

A fake API server answers the reads of :func:`kschedctl.k8s.inventory.snapshot` from plain-dict
clusters holding every scheduler shape (selectors, ``limit`` and ``continue`` applied as the
API server applies them); each cluster is discovered twice — from the targeted reads and from
every pod — and the results must be the same, field for field.
"""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

from kschedctl.base.errors import NotFoundError
from kschedctl.k8s.inventory import snapshot
from kschedctl.model.filters.selectors import parse_field_selector, parse_label_selector
from kschedctl.observe.discovery import (
    discover,
    escape_field,
    holder_pod_names,
    merge_pods,
    other_bound_pods,
    scheduler_workload_selectors,
)
from kschedctl.observe.schedulers import Scheduler

KSCHEDCTL = {"kschedctl.io/scheduler": "", "app.kubernetes.io/managed-by": "kschedctl"}


class FakeApi:
    """The few collections discovery reads, filtered as the API server filters them."""

    def __init__(self, objects: dict[str, list[dict[str, Any]]]) -> None:
        self.objects = objects
        self.requests: list[tuple[str, dict[str, Any]]] = []

    def get(self, path: str, **query: Any) -> dict[str, Any]:
        self.requests.append((path, dict(query)))
        cm = re.fullmatch(r"/api/v1/namespaces/([^/]+)/configmaps/([^/]+)", path)
        if cm:
            for obj in self.objects.get("configmaps", []):
                if (obj["metadata"]["namespace"], obj["metadata"]["name"]) == cm.groups():
                    return copy.deepcopy(obj)
            raise NotFoundError(f"configmap {path} not found")
        if node := re.fullmatch(r"/api/v1/nodes/([^/]+)", path):
            for obj in self.objects.get("nodes", []):
                if obj["metadata"]["name"] == node.group(1):
                    return copy.deepcopy(obj)
            raise NotFoundError(f"node {path} not found")
        items = self._collection(path, query)
        start = int(query.get("continue") or 0)
        limit = int(query.get("limit") or 0) or len(items)
        page = items[start : start + limit]
        rest = start + limit < len(items)
        return {"items": page, "metadata": {"continue": str(start + limit) if rest else None}}

    def list(self, path: str, **query: Any) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        token = None
        while True:
            page = self.get(path, **query, limit=query.get("limit", 500), **{"continue": token})
            items += page["items"]
            token = page["metadata"]["continue"]
            if not token:
                return items

    def _collection(self, path: str, query: dict[str, Any]) -> list[dict[str, Any]]:
        namespace = None
        if match := re.fullmatch(r"/api/v1/namespaces/([^/]+)/pods", path):
            kind, namespace = "pods", match.group(1)
        elif match := re.fullmatch(r"/apis/apps/v1/namespaces/([^/]+)/replicasets", path):
            kind, namespace = "replicasets", match.group(1)
        else:
            kind = {
                "/api/v1/pods": "pods",
                "/apis/apps/v1/deployments": "deployments",
                "/apis/coordination.k8s.io/v1/leases": "leases",
                "/apis/rbac.authorization.k8s.io/v1/roles": "roles",
                "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings": "bindings",
            }[path]
        labels = parse_label_selector(query.get("labelSelector") or "")
        fields = parse_field_selector(query.get("fieldSelector") or "")
        found = [
            copy.deepcopy(obj)
            for obj in self.objects.get(kind, [])
            if (namespace is None or obj["metadata"].get("namespace") == namespace)
            and labels.matches(obj["metadata"].get("labels") or {})
            and all(r.matches(_fields(obj)) for r in fields)
        ]
        return sorted(
            found, key=lambda o: f"{o['metadata'].get('namespace', '')}/{o['metadata']['name']}"
        )

    def pod_lists(self) -> list[dict[str, Any]]:
        """The queries that listed pods across every namespace with no selector at all."""
        return [q for p, q in self.requests if p == "/api/v1/pods" and not _selective(q)]


def _selective(query: dict[str, Any]) -> bool:
    return bool(query.get("labelSelector") or query.get("fieldSelector"))


def _fields(obj: dict[str, Any]) -> dict[str, str]:
    """The selectable fields of pods and leases (pkg/registry/core/pod/strategy.go)."""
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    return {
        "metadata.name": obj["metadata"]["name"],
        "metadata.namespace": obj["metadata"]["namespace"],
        "spec.nodeName": spec.get("nodeName") or "",
        "spec.schedulerName": spec.get("schedulerName") or "",
        "status.phase": status.get("phase") or "",
    }


# -- the objects ----------------------------------------------------------------------------------


def meta(namespace: str, name: str, **extra: Any) -> dict[str, Any]:
    return {"namespace": namespace, "name": name, "uid": f"{namespace}-{name}", **extra}


def workload(
    namespace: str, name: str, scheduler: str = "default-scheduler", node: str | None = "n1",
    phase: str | None = None, **labels: str,
) -> dict[str, Any]:  # fmt: skip
    spec: dict[str, Any] = {"schedulerName": scheduler,
                            "containers": [{"name": "app", "image": "nginx"}]}  # fmt: skip
    if node:
        spec["nodeName"] = node
    return {"kind": "Pod", "metadata": meta(namespace, name, labels=labels), "spec": spec,
            "status": {"phase": phase or ("Running" if node else "Pending")}}  # fmt: skip


def config_map(namespace: str, name: str, *profiles: str, lease: str | None = None) -> dict:
    election = (
        f"leaderElection: {{leaderElect: true, resourceName: {lease}, "
        f"resourceNamespace: {namespace}}}"
        if lease
        else "leaderElection: {leaderElect: false}"
    )
    text = "\n".join([
        "apiVersion: kubescheduler.config.k8s.io/v1", "kind: KubeSchedulerConfiguration",
        election, "profiles:", *(f"- schedulerName: {p}" for p in profiles),
    ])  # fmt: skip
    return {"kind": "ConfigMap", "metadata": meta(namespace, name), "data": {"config.yaml": text}}


def scheduler_spec(config: str, image: str = "registry.k8s.io/kube-scheduler:v1.36.3") -> dict:
    return {
        "containers": [{
            "name": "kube-scheduler", "image": image,
            "command": ["kube-scheduler", "--config=/etc/sched/config.yaml"],
            "volumeMounts": [{"name": "config", "mountPath": "/etc/sched"}],
        }],
        "volumes": [{"name": "config", "configMap": {"name": config}}],
        "nodeName": "n2", "schedulerName": "default-scheduler",
    }  # fmt: skip


def scheduler_pod(namespace: str, name: str, config: str, ready: bool = True, **extra: Any) -> dict:
    return {
        "kind": "Pod",
        "metadata": meta(namespace, name, **extra),
        "spec": scheduler_spec(config),
        "status": {"phase": "Running",
                   "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]},
    }  # fmt: skip


def deployment(namespace: str, name: str, config: str, labels: dict[str, str]) -> dict:
    return {
        "kind": "Deployment",
        "metadata": meta(namespace, name, labels=labels),
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}},
                              "spec": scheduler_spec(config)}},
        "status": {"readyReplicas": 1},
    }  # fmt: skip


def replica(namespace: str, deployment_name: str, index: int, config: str) -> dict:
    rs = f"{deployment_name}-7d9"
    pod = scheduler_pod(
        namespace, f"{rs}-{index}", config, ready=index == 0,
        labels={"app": deployment_name},
        ownerReferences=[{"kind": "ReplicaSet", "name": rs, "uid": f"{namespace}-{rs}",
                          "controller": True}],
    )  # fmt: skip
    return pod


def replica_set(namespace: str, deployment_name: str) -> dict:
    """The ReplicaSet of :func:`replica`'s pods, owned by the Deployment (uids as meta makes)."""
    owner = {"kind": "Deployment", "name": deployment_name,
             "uid": f"{namespace}-{deployment_name}", "controller": True}  # fmt: skip
    return {
        "kind": "ReplicaSet",
        "metadata": meta(namespace, f"{deployment_name}-7d9", labels={"app": deployment_name},
                         ownerReferences=[owner]),
    }  # fmt: skip


def binding(scheduler: str, namespace: str) -> dict:
    """kschedctl's ClusterRoleBinding of ``scheduler``: its record of where it deployed it."""
    return {
        "kind": "ClusterRoleBinding",
        "metadata": {"name": f"{scheduler}-scheduler", "uid": f"crb-{scheduler}",
                     "labels": {**KSCHEDCTL, "kschedctl.io/scheduler": scheduler}},
        "subjects": [{"kind": "ServiceAccount", "name": scheduler, "namespace": namespace}],
    }  # fmt: skip


def lease(namespace: str, name: str, holder: str, **annotations: str) -> dict:
    return {
        "kind": "Lease",
        "metadata": meta(namespace, name, annotations=annotations),
        "spec": {"holderIdentity": holder, "renewTime": "2026-12-02T11:59:58.000000Z",
                 "leaseDurationSeconds": 15},
    }  # fmt: skip


def base() -> dict[str, list[dict[str, Any]]]:
    """A cluster with a scheduler of every kind that leaves a trace outside its own pod spec."""
    static = scheduler_pod(
        "kube-system", "kube-scheduler-cp1", "none",
        annotations={"kubernetes.io/config.mirror": "abc"},
        labels={"component": "kube-scheduler", "tier": "control-plane"},
    )  # fmt: skip
    static["spec"]["volumes"] = []  # its config is a file on the node
    managed_labels = {**KSCHEDCTL, "kschedctl.io/scheduler": "team-sched"}
    return {
        "pods": [
            static,
            *(replica("sched", "team-sched", i, "team-config") for i in range(2)),
            *(replica("kube-system", "my-scheduler", i, "my-config") for i in range(2)),
            # a bare kube-scheduler pod outside kube-system: found through the Lease it holds
            scheduler_pod("apps", "leader-sched", "leader-config"),
            # a kschedctl `pod` form in its own namespace: found by its label
            scheduler_pod(
                "pods-ns",
                "pod-sched",
                "pod-config",
                labels={**KSCHEDCTL, "kschedctl.io/scheduler": "pod-sched"},
            ),
            # a terminated scheduler pod is no scheduler
            {**scheduler_pod("apps", "old-sched", "old-config"), "status": {"phase": "Failed"}},
            # workload: bound, pending, finished — in namespaces whose names sort tricky
            *(workload("a", f"w{i}") for i in range(5)),
            *(workload("a-b", f"w{i}", scheduler="team-sched") for i in range(3)),
            workload("a", "wait-1", scheduler="team-sched", node=None),
            workload("a-b", "wait-2", scheduler="my-scheduler", node=None),
            workload("a", "done", scheduler="team-sched", node=None, phase="Succeeded"),
            workload("a", "failed", scheduler="other-done", node=None, phase="Failed"),
            workload("z", "bound-done", scheduler="default-scheduler", phase="Succeeded"),
        ],
        "deployments": [
            deployment("sched", "team-sched", "team-config", managed_labels),
            deployment("kube-system", "my-scheduler", "my-config", {}),
            {
                "kind": "Deployment",
                "metadata": meta("a", "web", labels={}),
                "spec": {
                    "selector": {"matchLabels": {"app": "web"}},
                    "template": {"spec": {"containers": [{"name": "web", "image": "nginx"}]}},
                },
            },
        ],  # fmt: skip
        "configmaps": [
            config_map("sched", "team-config", "team-sched", lease="team-sched"),
            config_map("kube-system", "my-config", "my-scheduler"),
            config_map("apps", "leader-config", "leader-sched", lease="leader-sched"),
            config_map("pods-ns", "pod-config", "pod-sched"),
        ],
        "leases": [
            lease("kube-system", "kube-scheduler", "cp1_1234"),
            lease("sched", "team-sched", "team-sched-7d9-0_5678"),
            lease("apps", "leader-sched", "leader-sched_9abc"),
            lease("kube-system", "kube-controller-manager", "cp1_4321"),
            # kschedctl's own scheduler as a plain process: its Lease names it
            lease(
                "kube-system",
                "fast-sched",
                "laptop_0000",
                **{"kschedctl.io/scheduler": "fast-sched"},
            ),
            lease("kube-system", "apiserver-x", "apiserver-x_e7f1-Q"),
        ],  # fmt: skip
        "roles": [],
        "replicasets": [
            replica_set("sched", "team-sched"),
            replica_set("kube-system", "my-scheduler"),
        ],
        "bindings": [binding("team-sched", "sched"), binding("pod-sched", "pods-ns")],
    }


def with_objects(**more: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    objects = base()
    for kind, extra in more.items():
        objects[kind] = objects.get(kind, []) + extra
    return objects


SERVED = base()
CLUSTERS = {
    "every-served-shape": SERVED,
    "no-pods-at-all": {
        "pods": [],
        "deployments": [],
        "configmaps": [],
        "leases": [],
        "roles": [],
    },  # fmt: skip
    "bound-under-a-gone-scheduler": with_objects(
        pods=[workload("b", f"g{i}", scheduler="gone-sched") for i in range(3)]
    ),
    "pending-for-a-typo": with_objects(
        pods=[workload("b", "typo", scheduler="tpyo-sched", node=None)]
    ),
    # leader election off, unlabelled, outside kube-system: only its own pod spec tells; the
    # pods it bound make the name visible, and the scan of every pod then finds it
    "hidden-bare-scheduler": with_objects(
        pods=[
            scheduler_pod("hide", "hidden-sched", "hidden-config"),
            *(workload("c", f"h{i}", scheduler="hidden") for i in range(2)),
        ],
        configmaps=[config_map("hide", "hidden-config", "hidden")],
    ),  # fmt: skip
    "many-names": with_objects(pods=[workload("m", f"x{i}", scheduler=f"s{i}") for i in range(70)]),
}


def _view(schedulers: list[Scheduler]) -> list[dict[str, Any]]:
    return [{**s.to_dict(), "labels": s.labels} for s in schedulers]


@pytest.mark.parametrize("objects", CLUSTERS.values(), ids=CLUSTERS.keys())
def test_targeted_reads_find_what_every_pod_shows(objects: dict[str, list[dict]]) -> None:
    api = FakeApi(objects)
    targeted = snapshot(api)  # type: ignore[arg-type]
    every = snapshot(FakeApi(objects), pods=FakeApi(objects).list("/api/v1/pods"))  # type: ignore[arg-type]
    targeted.now = every.now
    assert _view(discover(targeted)) == _view(discover(every))


def test_served_cluster_reads_no_full_pod_list() -> None:
    api = FakeApi(SERVED)
    snap = snapshot(api)  # type: ignore[arg-type]
    assert api.pod_lists() == []
    names = {p["metadata"]["name"] for p in snap.pods}
    # scheduler pods and unbound pods only: no bound workload pod was read
    assert names == {
        "kube-scheduler-cp1", "team-sched-7d9-0", "team-sched-7d9-1", "my-scheduler-7d9-0",
        "my-scheduler-7d9-1", "leader-sched", "pod-sched", "wait-1", "wait-2",
    }  # fmt: skip
    assert snap.bound_names == {"default-scheduler", "team-sched"}
    found = {s.name: s for s in discover(snap)}
    assert found["leader-sched"].form == "pod" and found["leader-sched"].pods == ["leader-sched"]
    assert found["team-sched"].pods == ["team-sched-7d9-0", "team-sched-7d9-1"]
    assert (found["team-sched"].pending, found["my-scheduler"].pending) == (1, 1)
    assert found["fast-sched"].form == "process"
    assert found["default-scheduler"].form == "static-pod"


@pytest.mark.parametrize(
    "name", ["bound-under-a-gone-scheduler", "pending-for-a-typo", "hidden-bare-scheduler",
             "many-names"],
)  # fmt: skip
def test_an_unplaced_name_reads_every_pod(name: str) -> None:
    api = FakeApi(CLUSTERS[name])
    snap = snapshot(api)  # type: ignore[arg-type]
    assert len(api.pod_lists()) == 1 and snap.bound_names is None
    assert len(snap.pods) == len(CLUSTERS[name]["pods"])


def test_hidden_scheduler_is_found_as_a_pod() -> None:
    found = {s.name: s for s in discover(snapshot(FakeApi(CLUSTERS["hidden-bare-scheduler"])))}  # type: ignore[arg-type]
    assert (found["hidden"].form, found["hidden"].served) == ("pod", True)


def test_bound_names_one_small_query_per_name() -> None:
    api = FakeApi(SERVED)
    snap = snapshot(api)  # type: ignore[arg-type]
    probes = [q for p, q in api.requests if q.get("limit") == 1]
    assert len(probes) == len(snap.bound_names or ()) + 1
    assert probes[-1]["fieldSelector"] == (
        "spec.nodeName!=,spec.schedulerName!=default-scheduler,spec.schedulerName!=team-sched"
    )


# -- the pure helpers -----------------------------------------------------------------------------


def test_merge_pods_keeps_the_api_order_and_each_pod_once() -> None:
    a, ab, a2 = workload("a", "x"), workload("a-b", "x"), workload("a", "y")
    merged = merge_pods([[a2, a], [ab, a]])
    assert [(p["metadata"]["namespace"], p["metadata"]["name"]) for p in merged] == [
        ("a-b", "x"), ("a", "x"), ("a", "y"),
    ]  # fmt: skip


def test_holder_pod_names() -> None:
    leases = [lease("x", "l1", "sched-abc-1_0f0e"), lease("x", "l2", "Host_1"),
              lease("x", "l3", ""), lease("x", "l4", "node1.example.com"),
              {"metadata": meta("x", "l5"), "spec": {}}]  # fmt: skip
    assert holder_pod_names(leases) == ["node1.example.com", "sched-abc-1"]


def test_field_selector_values_are_escaped() -> None:
    assert escape_field("a,b=c\\d") == "a\\,b\\=c\\\\d"
    selector = other_bound_pods({"x,y", "b"})
    assert selector == "spec.nodeName!=,spec.schedulerName!=b,spec.schedulerName!=x\\,y"
    assert [r.value for r in parse_field_selector(selector)] == ["", "b", "x,y"]


def test_scheduler_workload_selectors_only_for_scheduler_deployments() -> None:
    assert scheduler_workload_selectors(SERVED["deployments"]) == [
        ("kube-system", "app=my-scheduler"), ("sched", "app=team-sched"),
    ]  # fmt: skip
