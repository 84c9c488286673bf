"""A lab shaped like a snapshot of a cluster: its nodes on kwok, its namespaces, PriorityClasses,
PodDisruptionBudgets, storage and DRA objects, and its bound pods pinned to their nodes
(``spec.nodeName`` set at creation, so no scheduler places them; the lab runner admits them as
a kubelet would).

Creation is the slow part of a large simulation, so every collection goes through a small
pool of writers (the connection pool holds ``cpu_count * 5`` connections), and the not-ready
taint the API server puts on every new node (the TaintNodesByCondition admission) is lifted
as soon as kwok reports the node Ready, as the node lifecycle controller would a little later
— nothing else about the nodes changes.

:func:`reset` takes a lab back to the seeded state between two candidates: it deletes every
pod that is not one of the pinned pods (grace period 0) and re-creates the pinned pods that
are gone (a preemption victim), re-creates the claims and volumes (a candidate may have bound
them), then waits until the pod list is exactly the pinned set.
A scheduler started after that lists the same nodes and pods as on a fresh lab.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from kschedctl.base.errors import ConflictError, KschedError, LabError, NotFoundError
from kschedctl.kubeclient.client import Cluster
from kschedctl.lab.api import NOT_READY_TAINT, is_ready
from kschedctl.lab.images import ADMITTED_ANNOTATION
from kschedctl.lab.provision import PROVISIONED_LABEL
from kschedctl.model.filters.volumebinding import BIND_COMPLETED, BOUND_BY_CONTROLLER
from kschedctl.model.scheduling.cache import VOLUME_KINDS

WRITERS = 8
# Created by the API server itself: a snapshot's copies are skipped.
BUILTIN_PRIORITY_CLASSES = ("system-cluster-critical", "system-node-critical")
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

    _in_parallel(delete, paths, WRITERS)
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

    _in_parallel(restore, claims, WRITERS)


def _in_parallel(work: Callable[[Any], None], items: Iterable[Any], workers: int) -> None:
    """``work`` on every item, ``workers`` at a time; the first error (or Ctrl-C) cancels the
    writes not started yet and is raised."""
    items = list(items)
    if not items:
        return
    pool = ThreadPoolExecutor(min(workers, len(items)), thread_name_prefix="seed")
    try:
        for future in [pool.submit(work, item) for item in items]:
            future.result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


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

    _in_parallel(create, objects, workers)


def _pods_path(obj: Mapping[str, Any]) -> str:
    return f"/api/v1/namespaces/{obj['metadata']['namespace']}/pods"


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


def seed(cluster: Cluster, what: Seed, *, timeout: float, progress: Progress) -> None:
    """Create everything in ``what`` on an empty lab and wait until the nodes are schedulable
    and the pinned pods running."""
    progress(f"creating {len(what.nodes)} node(s)")
    try:
        create_many(cluster, lambda _n: "/api/v1/nodes", what.nodes)
    except ConflictError as err:
        raise LabError(f"a node of the snapshot already exists in the lab: {err.message}") from err
    progress(f"waiting for kwok to report {len(what.nodes)} node(s) Ready")
    wait_schedulable(cluster, [n["metadata"]["name"] for n in what.nodes], what.nodes, timeout)
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
        progress(f"creating {len(what.pinned)} pod(s) bound to their nodes")
    create_running(cluster, what.pinned)
    wait_admitted(cluster, len(what.pinned), timeout)


def _running_status() -> dict[str, Any]:
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    conditions = [{"type": t, "status": "True", "lastTransitionTime": now}
                  for t in ("PodScheduled", "Initialized", "ContainersReady", "Ready")]  # fmt: skip
    return {"status": {"phase": "Running", "startTime": now, "conditions": conditions}}


def create_running(cluster: Cluster, pods: Iterable[Mapping[str, Any]]) -> None:
    """Create each pinned pod and report it Running at once (the status kwok's pod-ready stage
    would write: that stage then leaves it alone). kwok runs a few pods a second on a busy
    machine; with the writes here, 20,000 pinned pods do not wait for it."""

    def create(pod: Mapping[str, Any]) -> None:
        made = cluster.create(_pods_path(pod), _labelled(pod))
        meta = made["metadata"]
        cluster.patch(f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}/status",
                      _running_status())  # fmt: skip

    _in_parallel(create, pods, WRITERS)


def wait_schedulable(
    cluster: Cluster, names: list[str], nodes: Sequence[Mapping[str, Any]], timeout: float
) -> None:
    """Wait until kwok reports every node Ready, lifting the admission's not-ready taint from
    the Ready ones on the way (the node lifecycle controller's job, done at once)."""
    wanted = set(names)
    own_taints = {n["metadata"]["name"]: (n.get("spec") or {}).get("taints") or [] for n in nodes}
    deadline = time.monotonic() + timeout
    while True:
        listed = [n for n in cluster.list("/api/v1/nodes") if n["metadata"]["name"] in wanted]
        tainted = []
        ready = 0
        for node in listed:
            if not is_ready(node):
                continue
            ready += 1
            taints = (node.get("spec") or {}).get("taints") or []
            if any(t.get("key") == NOT_READY_TAINT for t in taints):
                tainted.append(node["metadata"]["name"])
        if ready == len(wanted) and not tainted:
            return

        def lift(name: str) -> None:
            try:
                cluster.patch(f"/api/v1/nodes/{name}", {"spec": {"taints": own_taints[name]}})
            except NotFoundError:
                pass

        _in_parallel(lift, tainted, WRITERS)
        if time.monotonic() > deadline:
            raise LabError(
                f"{len(wanted) - ready} of {len(wanted)} node(s) not Ready after {timeout:.0f}s",
                hint="look at the kwok log in the lab directory's logs/",
            )
        time.sleep(0.3)


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
        meta = pod["metadata"]
        try:
            cluster.delete(
                f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}",
                gracePeriodSeconds=0,
            )
        except NotFoundError:
            pass

    _in_parallel(delete, pods, WRITERS)


def reset(cluster: Cluster, what: Seed, *, timeout: float, progress: Progress) -> None:
    """Back to the seeded state: only the pinned pods, all of them, running."""
    pinned = {(p["metadata"]["namespace"], p["metadata"]["name"]) for p in what.pinned}
    namespaces = {ns["metadata"]["name"] for ns in what.namespaces}
    deadline = time.monotonic() + timeout
    while True:
        pods = [p for p in cluster.list("/api/v1/pods") if p["metadata"]["namespace"] in namespaces]
        extra = [p for p in pods
                 if (p["metadata"]["namespace"], p["metadata"]["name"]) not in pinned
                 or SEED_LABEL not in (p["metadata"].get("labels") or {})]  # fmt: skip
        if not extra:
            break
        progress(f"resetting the lab: deleting {len(extra)} pod(s)")
        delete_pods(cluster, extra)
        if time.monotonic() > deadline:
            raise LabError(f"{len(extra)} pod(s) still there after {timeout:.0f}s of deleting")
        time.sleep(0.5)
    restore_claims(cluster, what.resource_claims)
    reset_storage(cluster, what.storage, timeout)
    present = {(p["metadata"]["namespace"], p["metadata"]["name"]) for p in pods}
    missing = [p for p in what.pinned
               if (p["metadata"]["namespace"], p["metadata"]["name"]) not in present]  # fmt: skip
    if missing:
        progress(f"resetting the lab: re-creating {len(missing)} pinned pod(s)")
        try:
            create_running(cluster, missing)
        except KschedError as err:
            raise LabError(f"cannot re-create a pinned pod: {err.message}") from err
    wait_admitted(cluster, len(what.pinned), timeout)
