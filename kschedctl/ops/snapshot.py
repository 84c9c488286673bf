"""`kschedctl snapshot`: read a cluster (read-only) into a portable snapshot file.

Reads, concurrently: the nodes and every pod (required: without them there is nothing to
simulate, so a refusal is an error, exit 4, naming the resource and the verb), and the
PodDisruptionBudgets, PriorityClasses and Namespaces (optional: refused or not served, the
snapshot says so in ``metadata.omitted`` and what that costs). Pods are read in pages of
:data:`POD_PAGE` and reduced page by page (:class:`kschedctl.clustersnapshot.reduce.Reducer`),
so 20,000 pods never sit in memory as API objects. Nothing is written to the cluster.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from kschedctl import __version__
from kschedctl.base import userfile
from kschedctl.base.errors import ForbiddenError, KschedError, NotFoundError
from kschedctl.clustersnapshot import ClusterSnapshot, Omission, SnapshotSource, dump
from kschedctl.clustersnapshot.anonymize import anonymize
from kschedctl.clustersnapshot.reduce import Reducer
from kschedctl.clustersnapshot.storage import STORAGE_KINDS
from kschedctl.kubeclient.client import Cluster
from kschedctl.lab.private import write_private
from kschedctl.lab.seed import storage_collection

NODES = "/api/v1/nodes"
PODS = "/api/v1/pods"
# Pods are small next to a page's round trip: bigger pages, fewer requests at 20,000 pods
# (the figure `top nodes` uses).
POD_PAGE = 2000


DRA_COST = "device allocation (DynamicResources) is not evaluated for pods with claims"
STORAGE_COST = "the volume filters are not evaluated for pods with claims"


@dataclass(frozen=True)
class OptionalCollection:
    """A collection the snapshot can do without, and what its absence costs."""

    what: str
    path: str
    cost: str


OPTIONAL = (
    OptionalCollection(
        "PodDisruptionBudgets",
        "/apis/policy/v1/poddisruptionbudgets",
        "preemption will not see which victims a budget protects",
    ),
    OptionalCollection(
        "PriorityClasses",
        "/apis/scheduling.k8s.io/v1/priorityclasses",
        "pods keep their resolved priority; a lab cannot admit pods naming a missing class",
    ),
    OptionalCollection(
        "Namespaces",
        "/api/v1/namespaces",
        "namespaceSelector in pod affinity terms matches no namespace",
    ),
    # DRA: the three are read together; without any one DynamicResources is not evaluated.
    *(
        OptionalCollection(what, f"/apis/resource.k8s.io/v1/{plural}", DRA_COST)
        for what, plural in (
            ("DeviceClasses", "deviceclasses"),
            ("ResourceSlices", "resourceslices"),
            ("ResourceClaims", "resourceclaims"),
        )
    ),
    OptionalCollection(
        "ResourceClaimTemplates",
        "/apis/resource.k8s.io/v1/resourceclaimtemplates",
        "a simulation cannot make the claims of pods that use templates",
    ),
    # What the volume filters read, each on its own (why reads them the same way).
    *(
        OptionalCollection(what, storage_collection(version, kind), STORAGE_COST)
        for _field, kind, what, version in STORAGE_KINDS
    ),
)
STORAGE_FIELDS = {what: field_name for field_name, _kind, what, _version in STORAGE_KINDS}


@dataclass
class SnapshotTaken:
    """The snapshot and the facts the command prints about it."""

    snapshot: ClusterSnapshot
    daemonset_pods: int = 0
    gated_pods: int = 0
    refused: list[str] = field(default_factory=list)  # optional collections not read


def take_snapshot(
    cluster: Cluster,
    *,
    pending_namespace: str | None = None,
    images: bool = False,
    anonymized: bool = False,
    now: Callable[[], datetime] = lambda: datetime.now(timezone.utc),
) -> SnapshotTaken:
    """Read the cluster into a :class:`ClusterSnapshot` (module docstring)."""
    reducer = Reducer(images=images, pending_namespace=pending_namespace)
    with ThreadPoolExecutor(max_workers=2 + len(OPTIONAL)) as pool:
        version = pool.submit(_version, cluster)
        nodes = pool.submit(_required, cluster.list, NODES, "nodes")
        optional = {o.what: pool.submit(_optional, cluster, o) for o in OPTIONAL}
        pods = pool.submit(_reduce_pods, cluster, reducer)
        reducer.add_nodes(nodes.result())
        pods.result()
        refused = _add_optional(reducer, optional)
        gitversion = version.result()
    snap = reducer.finish()
    snap.metadata.omitted[:0] = refused
    snap.metadata.created = now().strftime("%Y-%m-%dT%H:%M:%SZ")
    snap.metadata.kschedctl_version = __version__
    snap.metadata.source = SnapshotSource(
        # the URL says where the cluster is: a digest identifies it without saying it
        server_hash="" if anonymized else hashlib.sha256(cluster.server.encode()).hexdigest()[:16],
        version=gitversion,
    )
    if anonymized:
        snap = anonymize(snap)
    return SnapshotTaken(snap, reducer.daemonset_pods, reducer.gated, [o.what for o in refused])


def _required(read: Callable[..., Any], source: Any, what: str) -> Any:
    """``read(source)``, a refusal (403) re-raised naming what a snapshot needs."""
    try:
        return read(source)
    except ForbiddenError as err:
        raise ForbiddenError(
            f"cannot list {what}: {err.message}",
            hint="a snapshot needs the verbs get and list on nodes and on pods in all "
            "namespaces (a ClusterRole: the built-in view role grants neither), and optionally "
            "on poddisruptionbudgets, priorityclasses, namespaces, the DRA objects "
            "(resource.k8s.io) and the storage objects (persistentvolumes, "
            "persistentvolumeclaims, storage.k8s.io); ask for them, or use a context that has "
            "them",
        ) from err


def _reduce_pods(cluster: Cluster, reducer: Reducer) -> None:
    pages = cluster.pages(PODS, limit=POD_PAGE)  # requests start at the first next()
    while True:
        try:
            page = _required(next, pages, "pods in all namespaces")
        except StopIteration:
            return
        reducer.add_pods(page)


def _optional(cluster: Cluster, collection: OptionalCollection) -> list[dict[str, Any]] | Omission:
    try:
        return cluster.list(collection.path)
    except ForbiddenError:
        reason = "forbidden (list)"
    except NotFoundError:
        reason = "not served by this API server"
    return Omission(collection.what, f"{reason}: {collection.cost}")


def _add_optional(reducer: Reducer, results: Mapping[str, Future[Any]]) -> list[Omission]:
    adders: dict[str, Callable[[Iterable[Mapping[str, Any]]], None]] = {
        "PodDisruptionBudgets": reducer.add_pdbs,
        "PriorityClasses": reducer.add_priority_classes,
        "Namespaces": reducer.add_namespaces,
        "ResourceClaimTemplates": reducer.add_claim_templates,
    }
    refused = []
    dra: dict[str, Any] = {}
    for what, future in results.items():
        result = future.result()
        if isinstance(result, Omission):
            refused.append(result)
        elif what in adders:
            adders[what](result)
        elif what in STORAGE_FIELDS:
            reducer.add_storage(STORAGE_FIELDS[what], result)
        else:
            dra[what] = result
    if len(dra) == 3:
        reducer.add_dra(dra["DeviceClasses"], dra["ResourceSlices"], dra["ResourceClaims"])
    return refused


def _version(cluster: Cluster) -> str:
    try:
        return str(cluster.server_version().get("gitVersion") or "")
    except KschedError:  # /version is public on every cluster; a snapshot can do without it
        return ""


def write_snapshot(snap: ClusterSnapshot, target: str, as_json: bool | None = None) -> str:
    """Write ``snap`` to ``target`` (``as_json``, by default JSON if it ends in .json, else
    YAML), readable by its owner only (it describes the cluster), atomically; return the
    text (all there is for ``-``)."""
    if as_json is None:
        as_json = target.lower().endswith(".json")
    text = dump(snap, as_json=as_json)
    if target == "-":
        return text
    with userfile.writing("the snapshot", target):
        write_private(Path(target), text)
    return text
