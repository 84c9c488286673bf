"""A lab shaped like a snapshot of a cluster: its nodes on kwok, its namespaces, PriorityClasses,
PodDisruptionBudgets, storage and DRA objects, and its bound pods pinned to their nodes
(``spec.nodeName`` set, so no scheduler places them; already running, as a kubelet admitted them).

The nodes (with their node Leases) and the pinned pods — nearly all of a large snapshot — are
written straight into etcd (:mod:`kschedctl.lab.etcdload`), about a thousand a second, as the
objects the API server itself would have stored after the creates and the status writes of
kwok (:mod:`kschedctl.lab.stored` lists the defaults and admission changes applied). A
scheduler cannot tell: it lists and watches them through the API server, whose watch cache
picks the keys up from etcd as it does its own writes; each has a uid, a creationTimestamp
and an etcd revision of its own as resourceVersion; a node is Ready with no not-ready taint (as the
node lifecycle controller leaves a Ready node) and kwok renews its Lease from then on; a pod
is Running with the lab's admission mark, so neither kwok nor the runner writes it again.
Through the API it went at ~100 pods/s: a create, the status write and kwok's and the
runner's reactions each. What stays on the API: namespaces (the namespace controller and
the ServiceAccounts), PriorityClasses, PodDisruptionBudgets (the disruption controller
writes their status), storage (the volume controller binds claims) and DRA objects — few,
and each with side effects the control plane must produce.

:func:`reset` takes a lab back to the seeded state between two candidates: it deletes every
pod that is not one of the pinned pods (from etcd, as the API server removes a pod deleted
with grace period 0: watchers get the same DELETED event) and loads again the pinned pods that
are gone (a preemption victim), re-creates the claims and volumes (a candidate may have bound
them), then waits until the pod list is exactly the pinned set.
A scheduler started after that lists the same nodes and pods as on a fresh lab.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kschedctl.base.errors import ConflictError, KschedError, LabError, NotFoundError
from kschedctl.kubeclient.client import Cluster
from kschedctl.lab import stored
from kschedctl.lab.api import wait_nodes_ready
from kschedctl.lab.etcdload import EtcdLoader, key_of, new_uid
from kschedctl.lab.images import ADMITTED_ANNOTATION
from kschedctl.lab.parallel import in_parallel
from kschedctl.lab.provision import PROVISIONED_LABEL
from kschedctl.model.filters.volumebinding import BIND_COMPLETED, BOUND_BY_CONTROLLER
from kschedctl.model.scheduling.cache import VOLUME_KINDS

WRITERS = 8
# Created by the API server itself, with their values: a snapshot's copies are skipped.
BUILTIN_PRIORITY_CLASSES = {"system-cluster-critical": 2000000000,
                            "system-node-critical": 2000001000}  # fmt: skip
SEED_LABEL = "simulate.kschedctl.io/seed"  # on every object the seed creates but nodes

Progress = Callable[[str], None]


@dataclass
class Seed:
    """What a lab is built from: plain Kubernetes objects (nodes: lab.nodes.kwok_node)."""

    nodes: list[dict[str, Any]]
    namespaces: list[dict[str, Any]]  # Namespace objects (their labels: namespaceSelector)
    priority_classes: list[dict[str, Any]] = field(default_factory=list)
    disruption_budgets: list[dict[str, Any]] = field(default_factory=list)
    pinned: list[dict[str, Any]] = field(default_factory=list)  # pods with spec.nodeName
    # DRA (resource.k8s.io/v1): DeviceClasses, ResourceSlices, ResourceClaims (with their
    # allocation in status, written after the claim)
    device_classes: list[dict[str, Any]] = field(default_factory=list)
    resource_slices: list[dict[str, Any]] = field(default_factory=list)
    resource_claims: list[dict[str, Any]] = field(default_factory=list)
    resource_claim_templates: list[dict[str, Any]] = field(default_factory=list)
    # What the volume filters read (StorageClasses, CSIDrivers, CSINodes, PersistentVolumes,
    # PersistentVolumeClaims, CSIStorageCapacities), in that order: volumes before their claims
    storage: list[dict[str, Any]] = field(default_factory=list)


_DRA = "/apis/resource.k8s.io/v1"
_RESOURCES = {kind: resource for resource, kind in VOLUME_KINDS.items()}
_VOLUMES = ("PersistentVolume", "PersistentVolumeClaim")  # reset re-creates them
_PVS = "/api/v1/persistentvolumes"


def storage_collection(api_version: str, kind: str, namespace: str | None = None) -> str:
    """The REST collection of a storage kind (one of the volume filters' ``VOLUME_KINDS``),
    cluster-wide or in ``namespace``."""
    group = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
    where = f"/namespaces/{namespace}" if namespace else ""
    return f"{group}{where}/{_RESOURCES[kind]}"


def _storage_path(obj: Mapping[str, Any]) -> str:
    return storage_collection(obj["apiVersion"], obj["kind"], obj["metadata"].get("namespace"))


def as_created(obj: Mapping[str, Any]) -> dict[str, Any]:
    """An object as created: no status (the API ignores it on create), no deletion mark, and
    no mark of a binding the volume controller completed (it would take a claim whose volume
    it has not bound yet for Lost: the controller binds the two and marks them itself)."""
    md = {k: v for k, v in obj["metadata"].items() if k != "deletionTimestamp"}
    annotations = {k: v for k, v in (md.get("annotations") or {}).items()
                   if k not in (BIND_COMPLETED, BOUND_BY_CONTROLLER)}  # fmt: skip
    md.pop("annotations", None)
    if annotations:
        md["annotations"] = annotations
    return {**{k: v for k, v in obj.items() if k != "status"}, "metadata": md}


def seed_storage(cluster: Cluster, objects: Sequence[Mapping[str, Any]], timeout: float) -> None:
    """Create the storage objects kind by kind in their order, then wait until the
    kube-controller-manager's volume controller has bound each claim the snapshot had bound
    to a volume the snapshot holds (pre-bound to it by name), as the filters then read it."""
    for kind in dict.fromkeys(o["kind"] for o in objects):
        create_many(cluster, _storage_path, [as_created(o) for o in objects if o["kind"] == kind])
    volumes = {o["metadata"]["name"] for o in objects if o["kind"] == "PersistentVolume"}
    bound = {(o["metadata"]["namespace"], o["metadata"]["name"]) for o in objects
             if o["kind"] == "PersistentVolumeClaim"
             and (o.get("status") or {}).get("phase") == "Bound"
             and o["spec"].get("volumeName") in volumes}  # fmt: skip
    deadline = time.monotonic() + timeout
    while bound:
        claims = cluster.list(storage_collection("v1", "PersistentVolumeClaim"))
        bound -= {(c["metadata"]["namespace"], c["metadata"]["name"]) for c in claims
                  if (c.get("status") or {}).get("phase") == "Bound"}  # fmt: skip
        if not bound:
            return
        if time.monotonic() > deadline:
            raise LabError(
                f"{len(bound)} PersistentVolumeClaim(s) not Bound after {timeout:.0f}s",
                hint="look at the kube-controller-manager log in the lab directory's logs/",
            )
        time.sleep(0.3)


def reset_storage(cluster: Cluster, objects: Sequence[Mapping[str, Any]], timeout: float) -> None:
    """The claims and volumes as seeded: a candidate may have bound a volume to a claim, chosen
    a node for it (``volume.kubernetes.io/selected-node``) or had one provisioned. Deleted
    (their protection finalizers lifted: nothing mounts them in a lab) and created again."""
    volumes = [o for o in objects if o["kind"] in _VOLUMES]
    made = cluster.list(_PVS, labelSelector=PROVISIONED_LABEL)
    paths = [f"{_storage_path(o)}/{o['metadata']['name']}" for o in volumes]
    paths += [f"{_PVS}/{o['metadata']['name']}" for o in made]

    def delete(path: str) -> None:
        try:
            cluster.delete(path)
            cluster.patch(path, {"metadata": {"finalizers": None}})
        except NotFoundError:
            pass

    in_parallel(delete, paths, WRITERS)
    deadline = time.monotonic() + timeout
    while paths:
        present = {
            f"{storage_collection('v1', kind, o['metadata'].get('namespace'))}/"
            f"{o['metadata']['name']}"
            for kind in _VOLUMES
            for o in cluster.list(storage_collection("v1", kind))
        }
        left = present.intersection(paths)
        if not left:
            break
        if time.monotonic() > deadline:
            raise LabError(f"{len(left)} claim(s) or volume(s) still there after {timeout:.0f}s")
        time.sleep(0.3)
    seed_storage(cluster, volumes, timeout)


def _claim_path(claim: Mapping[str, Any]) -> str:
    md = claim["metadata"]
    return f"{_DRA}/namespaces/{md['namespace']}/resourceclaims/{md['name']}"


def seed_claims(cluster: Cluster, claims: Iterable[Mapping[str, Any]]) -> None:
    """Create the claims (without status: the API ignores it on create), then write back the
    allocation of those the snapshot had allocated."""
    claims = list(claims)
    bare = [{k: v for k, v in c.items() if k != "status"} for c in claims]
    create_many(
        cluster, lambda o: f"{_DRA}/namespaces/{o['metadata']['namespace']}/resourceclaims", bare
    )
    restore_claims(cluster, claims)


def restore_claims(cluster: Cluster, claims: Iterable[Mapping[str, Any]]) -> None:
    """Each claim's status as seeded: a candidate's scheduler may have allocated it since."""

    def restore(claim: Mapping[str, Any]) -> None:
        status = claim.get("status") or {"allocation": None, "reservedFor": None}
        cluster.patch(f"{_claim_path(claim)}/status", {"status": status})

    in_parallel(restore, claims, WRITERS)


def create_many(
    cluster: Cluster,
    collection: Callable[[Mapping[str, Any]], str],
    objects: Iterable[Mapping[str, Any]],
    *,
    exist_ok: bool = False,
    workers: int = WRITERS,
) -> None:
    """POST each object to ``collection(obj)``, ``workers`` at a time."""

    def create(obj: Mapping[str, Any]) -> None:
        try:
            cluster.create(collection(obj), obj)
        except ConflictError:
            if not exist_ok:
                raise

    in_parallel(create, objects, workers)


def _labelled(obj: Mapping[str, Any]) -> dict[str, Any]:
    """A pinned pod as created: the seed's label, and the lab's admission mark — it runs on its
    node in the cluster the snapshot was taken from, so a kubelet admitted it already (the lab
    runner counts it on its node without judging it again, as a restarted kubelet does)."""
    out = dict(obj)
    meta = dict(out.get("metadata") or {})
    meta["labels"] = {**(meta.get("labels") or {}), SEED_LABEL: "true"}
    meta["annotations"] = {**(meta.get("annotations") or {}), ADMITTED_ANNOTATION: "true"}
    out["metadata"] = meta
    return out


def seed(
    cluster: Cluster, loader: EtcdLoader, what: Seed, *, timeout: float, progress: Progress
) -> None:
    """Create everything in ``what`` on an empty lab and wait until the API server lists the
    nodes schedulable and the pinned pods running."""
    progress(f"loading {len(what.nodes)} node(s) into etcd")
    try:
        loader.load_nodes(what.nodes)
    except ConflictError as err:
        raise LabError(f"a node of the snapshot already exists in the lab: {err.message}") from err
    wait_nodes_ready(cluster, [n["metadata"]["name"] for n in what.nodes], timeout)
    existing = {n["metadata"]["name"] for n in cluster.list("/api/v1/namespaces")}
    for ns in what.namespaces:
        name = ns["metadata"]["name"]
        if name in existing:  # default, kube-system …: the snapshot's labels still count
            labels = ns["metadata"].get("labels") or {}
            if labels:
                cluster.patch(f"/api/v1/namespaces/{name}", {"metadata": {"labels": labels}})
    create_many(
        cluster,
        lambda _o: "/api/v1/namespaces",
        [ns for ns in what.namespaces if ns["metadata"]["name"] not in existing],
    )
    # Pods name the default ServiceAccount; the controller-manager makes it a little later.
    accounts = [
        {"apiVersion": "v1", "kind": "ServiceAccount",
         "metadata": {"name": "default", "namespace": ns["metadata"]["name"]}}
        for ns in what.namespaces
    ]  # fmt: skip
    create_many(
        cluster,
        lambda o: f"/api/v1/namespaces/{o['metadata']['namespace']}/serviceaccounts",
        accounts,
        exist_ok=True,
    )
    classes = [
        pc for pc in what.priority_classes
        if pc["metadata"]["name"] not in BUILTIN_PRIORITY_CLASSES
    ]  # fmt: skip
    create_many(cluster, lambda _o: "/apis/scheduling.k8s.io/v1/priorityclasses", classes)
    create_many(
        cluster,
        lambda o: f"/apis/policy/v1/namespaces/{o['metadata']['namespace']}/poddisruptionbudgets",
        what.disruption_budgets,
    )
    if what.storage:
        progress(f"creating {len(what.storage)} storage object(s)")
    seed_storage(cluster, what.storage, timeout)
    create_many(cluster, lambda _o: f"{_DRA}/deviceclasses", what.device_classes)
    create_many(cluster, lambda _o: f"{_DRA}/resourceslices", what.resource_slices)
    seed_claims(cluster, what.resource_claims)
    create_many(
        cluster,
        lambda o: f"{_DRA}/namespaces/{o['metadata']['namespace']}/resourceclaimtemplates",
        what.resource_claim_templates,
    )
    if what.pinned:
        progress(f"loading {len(what.pinned)} pod(s) bound to their nodes into etcd")
    load_pinned(loader, what.pinned, what.priority_classes, what.nodes)
    wait_admitted(cluster, len(what.pinned), timeout)


def priorities(
    classes: Sequence[Mapping[str, Any]],
) -> tuple[dict[str, tuple[int, str]], str | None]:
    """name → (value, preemptionPolicy) of the seed's PriorityClasses and the API server's
    own, and the global default class's name (the Priority admission's inputs)."""
    table = {name: (value, "PreemptLowerPriority")
             for name, value in BUILTIN_PRIORITY_CLASSES.items()}  # fmt: skip
    default = None
    for pc in classes:
        name = pc["metadata"]["name"]
        if name in BUILTIN_PRIORITY_CLASSES:
            continue
        table[name] = (
            int(pc.get("value") or 0),
            pc.get("preemptionPolicy") or "PreemptLowerPriority",
        )
        if pc.get("globalDefault"):
            default = name
    return table, default


def load_pinned(
    loader: EtcdLoader,
    pods: Sequence[Mapping[str, Any]],
    classes: Sequence[Mapping[str, Any]],
    nodes: Sequence[Mapping[str, Any]],
    *,
    first_ip: int = 0,
) -> None:
    """Each pinned pod as stored once created and reported Running: what kwok's pod-ready stage
    would write (that stage then leaves it alone), with the lab's admission mark. Pod IPs count
    down from the top of the lab's pod CIDR (kwok hands out those at its bottom)."""
    table, default = priorities(classes)
    labels = {n["metadata"]["name"]: n["metadata"].get("labels") or {} for n in nodes}
    now = time.time()
    loader.create([
        stored.stored_pod(_labelled(p), uid=new_uid(), now=now, priority_classes=table,
                          global_default=default, host_ip=stored.NODE_IP,
                          pod_ip=stored.pod_ip(stored.POD_CIDR, first_ip + i),
                          node_labels=labels.get(p["spec"].get("nodeName") or ""))
        for i, p in enumerate(pods)
    ])  # fmt: skip


def _pinned_state(cluster: Cluster) -> tuple[int, int]:
    """(pods past Pending, pods Failed) among the seed's pods."""
    pods = cluster.list("/api/v1/pods", labelSelector=SEED_LABEL)
    settled = sum(1 for p in pods if (p.get("status") or {}).get("phase") not in (None, "Pending"))
    failed = sum(1 for p in pods if (p.get("status") or {}).get("phase") == "Failed")
    return settled, failed


def wait_admitted(cluster: Cluster, count: int, timeout: float) -> None:
    """Wait until all ``count`` pinned pods are past Pending (a check: their status was
    written at creation), so no status write of theirs competes with a candidate's run."""
    deadline = time.monotonic() + timeout + count / 50
    while True:
        settled, _failed = _pinned_state(cluster)
        if settled >= count:
            return
        if time.monotonic() > deadline:
            raise LabError(
                f"{count - settled} of {count} pinned pod(s) still Pending",
                hint="look at the runner's and kwok's logs in the lab directory's logs/",
            )
        time.sleep(0.5)


def delete_pods(cluster: Cluster, pods: Iterable[Mapping[str, Any]]) -> None:
    def delete(pod: Mapping[str, Any]) -> None:
        try:
            cluster.delete(_pod_path(pod), gracePeriodSeconds=0)
        except NotFoundError:
            pass

    in_parallel(delete, pods, WRITERS)


def _key(pod: Mapping[str, Any]) -> tuple[str, str]:
    return pod["metadata"]["namespace"], pod["metadata"]["name"]


def _pod_path(pod: Mapping[str, Any]) -> str:
    return f"/api/v1/namespaces/{pod['metadata']['namespace']}/pods/{pod['metadata']['name']}"


def _live(cluster: Cluster, pod: Mapping[str, Any]) -> dict[str, Any] | None:
    try:
        return cluster.get(_pod_path(pod))
    except NotFoundError:
        return None


def reset(
    cluster: Cluster, loader: EtcdLoader, what: Seed, *, timeout: float, progress: Progress
) -> None:
    """Back to the seeded state: only the pinned pods, all of them, running.

    The pods a candidate made and the pinned ones it had deleted (terminating) go straight
    from etcd, as the API server removes a pod deleted with grace period 0 (those with
    finalizers through the API, which honours them); the pinned pods gone are loaded again.
    All pods are listed once: what is checked afterwards are the pods without the seed's
    label (a short list) and the few pinned pods deleted or loaded again, one by one."""
    pinned = {_key(p) for p in what.pinned}
    namespaces = {ns["metadata"]["name"] for ns in what.namespaces}

    def ours(pods: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        return [p for p in pods if p["metadata"]["namespace"] in namespaces]

    pods = ours(cluster.list("/api/v1/pods"))
    extra = [p for p in pods
             if _key(p) not in pinned or p["metadata"].get("deletionTimestamp")
             or SEED_LABEL not in (p["metadata"].get("labels") or {})]  # fmt: skip
    present = {_key(p) for p in pods} - {_key(p) for p in extra}
    if extra:
        progress(f"resetting the lab: deleting {len(extra)} pod(s)")
    deadline = time.monotonic() + timeout
    while extra:
        loader.delete([key_of(p, "Pod") for p in extra if not p["metadata"].get("finalizers")])
        delete_pods(cluster, [p for p in extra if p["metadata"].get("finalizers")])
        time.sleep(0.5)
        extra = ours(cluster.list("/api/v1/pods", labelSelector=f"!{SEED_LABEL}"))
        gone = [_live(cluster, p) for p in what.pinned if _key(p) not in present]
        extra += [p for p in gone if p is not None]
        if extra and time.monotonic() > deadline:
            raise LabError(f"{len(extra)} pod(s) still there after {timeout:.0f}s of deleting")
    restore_claims(cluster, what.resource_claims)
    reset_storage(cluster, what.storage, timeout)
    missing = [p for p in what.pinned if _key(p) not in present]
    if missing:
        progress(f"resetting the lab: loading {len(missing)} pinned pod(s) again")
        try:
            load_pinned(
                loader, missing, what.priority_classes, what.nodes, first_ip=len(what.pinned)
            )
        except KschedError as err:
            raise LabError(f"cannot load a pinned pod again: {err.message}") from err
    while not all(_live(cluster, p) for p in missing):  # the API server's view caught up
        if time.monotonic() > deadline:
            raise LabError(
                "a pinned pod loaded again is not served by the API server",
                hint="look at the kube-apiserver log in the lab directory's logs/",
            )
        time.sleep(0.2)
