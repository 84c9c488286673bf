"""What `why` reads from the cluster: the requests it cannot do without (a 403 names the
permission) and those it can (forbidden or missing: a default), and :func:`cluster_state`, the
nodes, pods and schedulers every diagnosis is evaluated against, with what the pods' rules
need besides (namespaces, workloads, claims, disruption budgets), fetched concurrently."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, cast

from kschedctl.base.errors import (
    ClusterError,
    ForbiddenError,
    NotFoundError,
)
from kschedctl.k8s.inventory import snapshot as inventory_snapshot
from kschedctl.kubeclient.client import Cluster
from kschedctl.model.config.versions import server_version_or_default
from kschedctl.model.filters import NodeInfoSnapshot
from kschedctl.model.filters.cycle import MIGRATABLE_VOLUMES
from kschedctl.model.filters.drafeatures import features_for
from kschedctl.model.kubetypes import Node, Pod
from kschedctl.model.scheduling.plugins import (
    PluginSet,
)
from kschedctl.model.scheduling.policy import (
    FallbackPolicy,
)
from kschedctl.observe.crash import CrashReport
from kschedctl.observe.discovery import discover
from kschedctl.observe.plugin_files import (
    UnrunPlugins,
)
from kschedctl.observe.schedulers import Scheduler

PERMISSION_HINT = (
    "`kschedctl why` needs get/list on pods and list on nodes, cluster-wide (e.g. a ClusterRole "
    "with verbs get,list on pods and nodes, bound to you); events, leases, deployments and "
    "pods/log are optional"
)


def required_read(what: str, call: Any) -> Any:
    """Run a request `why` cannot do without; a 403 names the permission it lacks."""
    try:
        return call()
    except ClusterError as err:
        if isinstance(err, ForbiddenError):
            raise ClusterError(f"cannot {what}: {err.message}", hint=PERMISSION_HINT) from err
        raise


def optional_read(call: Any, default: Any = None) -> Any:
    """Run a request `why` can do without: forbidden or missing gives ``default``."""
    try:
        return call()
    except NotFoundError:
        return default
    except ClusterError as err:
        if isinstance(err, ForbiddenError):
            return default
        raise


@dataclass
class ClusterState:
    snapshot: NodeInfoSnapshot
    schedulers: list[Scheduler] | None
    version: tuple[int, ...]
    # Scheduler name -> the fallback policy of kschedctl's own scheduler (None: another one).
    policies: dict[str, FallbackPolicy | None] = field(default_factory=dict)
    # Scheduler name -> the plugins of its ConfigMap the caller named with
    # --run-cluster-plugins (hash checked), loaded.
    cluster_plugins: dict[str, PluginSet] = field(default_factory=dict)
    # Scheduler name -> the plugins it runs that `why` does not run (None: none known).
    unrun: dict[str, UnrunPlugins | None] = field(default_factory=dict)
    # Scheduler name -> why its pods do not run (read once per scheduler).
    crashes: dict[str, list[CrashReport]] = field(default_factory=dict)
    pods: list[dict[str, Any]] = field(default_factory=list)  # every pod, as listed
    # The Python plugins `why` runs for pods of kschedctl's own scheduler (``--plugin``),
    # as that scheduler runs them.
    plugins: PluginSet = field(default_factory=PluginSet)
    # Scheduler name -> the plugin NAMEs its Lease says it runs (None: not published).
    plugin_names: dict[str, tuple[str, ...] | None] = field(default_factory=dict)
    # Scheduler name -> the plugin files (names in order) and their hash its Lease publishes.
    plugin_hashes: dict[str, tuple[tuple[str, ...], str] | None] = field(default_factory=dict)


# The kinds DefaultSelector reads and where to list them.
WORKLOAD_PATHS = {
    "Service": "/api/v1/services",
    "ReplicationController": "/api/v1/replicationcontrollers",
    "ReplicaSet": "/apis/apps/v1/replicasets",
    "StatefulSet": "/apis/apps/v1/statefulsets",
}


def _uses(pods: Iterable[dict[str, Any]], marker: str) -> bool:
    return any(marker in str((p.get("spec") or {}).get("affinity") or "") for p in pods)


def _has_claims(pod: Mapping[str, Any]) -> bool:
    return any(
        "persistentVolumeClaim" in v or "ephemeral" in v
        for v in (pod.get("spec") or {}).get("volumes") or []
    )


def _has_inline_disks(pod: Mapping[str, Any]) -> bool:
    """In-tree disks count against attach limits: CSINodes say whether a node has one."""
    return any(
        k in v for v in (pod.get("spec") or {}).get("volumes") or [] for k in MIGRATABLE_VOLUMES
    )


DRA_PATHS = {
    "device_classes": "/apis/resource.k8s.io/v1/deviceclasses",
    "resource_slices": "/apis/resource.k8s.io/v1/resourceslices",
    "resource_claims": "/apis/resource.k8s.io/v1/resourceclaims",
}


def _may_use_dra(pod: Mapping[str, Any]) -> bool:
    """Resource claims, or an extended resource a DeviceClass may back."""
    spec = pod.get("spec") or {}
    if spec.get("resourceClaims"):
        return True
    return any(
        "/" in str(name) and not str(name).startswith(("hugepages-", "kubernetes.io/"))
        for c in [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]
        for name in ((c.get("resources") or {}).get("requests") or {})
    )


def _dra_objects(cluster: Cluster, pool: ThreadPoolExecutor) -> dict[str, Any]:
    """The DynamicResources plugin's objects; all three or none (not evaluated)."""
    listed = {
        key: pool.submit(optional_read, lambda path=path: cluster.list(path))
        for key, path in DRA_PATHS.items()
    }
    found = {key: f.result() for key, f in listed.items()}
    if any(v is None for v in found.values()):
        return {"device_classes": found["device_classes"] or ()}
    return found


def _may_preempt(pending: Sequence[Mapping[str, Any]], pods: list[dict[str, Any]]) -> bool:
    """Some pending pod outranks some bound pod: preemption may run, and PodDisruptionBudgets
    steer it."""
    priorities = [(p.get("spec") or {}).get("priority") or 0 for p in pending]
    bound = [
        (p.get("spec") or {}).get("priority") or 0
        for p in pods
        if (p.get("spec") or {}).get("nodeName")
    ]
    return bool(priorities and bound and max(priorities) > min(bound))


def cluster_state(cluster: Cluster, pending: Sequence[Mapping[str, Any]]) -> ClusterState:
    """Nodes, every pod, discovered schedulers and the server version, fetched concurrently;
    namespaces, claims and disruption budgets only when a pod's rules or priority need them."""
    with ThreadPoolExecutor(max_workers=4) as pool:
        nodes = pool.submit(
            required_read, "list nodes (cluster-wide)", lambda: cluster.list("/api/v1/nodes")
        )
        pods = pool.submit(
            required_read, "list pods in all namespaces", lambda: cluster.list("/api/v1/pods")
        )
        version = pool.submit(optional_read, cluster.server_version, {})
        all_pods = pods.result()
        found = pool.submit(optional_read, lambda: discover(inventory_snapshot(cluster, all_pods)))
        namespaces = None
        if _uses(all_pods, "namespaceSelector"):
            listed = optional_read(lambda: cluster.list("/api/v1/namespaces"))
            if listed is not None:
                namespaces = {n["metadata"]["name"]: n for n in listed}
        workloads = None
        if any(not (p.get("spec") or {}).get("topologySpreadConstraints") for p in pending):
            # the selectors of the system-default topology spreading, for the node
            # kschedctl's scheduler would choose (scoring)
            listed_workloads = {
                kind: pool.submit(optional_read, lambda path=path: cluster.list(path), [])
                for kind, path in WORKLOAD_PATHS.items()
            }
            workloads = {kind: f.result() for kind, f in listed_workloads.items()}
        pvcs = classes = pvs = drivers = capacities = csinodes = None
        if any(_has_claims(p) or _has_inline_disks(p) for p in pending):
            pvcs = optional_read(lambda: cluster.list("/api/v1/persistentvolumeclaims"))
            classes = optional_read(lambda: cluster.list("/apis/storage.k8s.io/v1/storageclasses"))
            pvs = optional_read(lambda: cluster.list("/api/v1/persistentvolumes"))
            # VolumeBinding's storage capacity check (unread: "not evaluated" when it matters)
            drivers = optional_read(lambda: cluster.list("/apis/storage.k8s.io/v1/csidrivers"))
            capacities = optional_read(
                lambda: cluster.list("/apis/storage.k8s.io/v1/csistoragecapacities")
            )
            csinodes = optional_read(lambda: cluster.list("/apis/storage.k8s.io/v1/csinodes"))
        dra: dict[str, Any] = {}
        if any(_may_use_dra(p) for p in pending):
            dra = _dra_objects(cluster, pool)
        pdbs = None
        if _may_preempt(pending, all_pods):
            pdbs = optional_read(lambda: cluster.list("/apis/policy/v1/poddisruptionbudgets"))
        judged = server_version_or_default(version.result().get("gitVersion", ""))
        snap = NodeInfoSnapshot(
            # the API's untyped lists enter the model here, read through its Node / Pod shapes
            cast(list[Node], nodes.result()),
            cast(list[Pod], all_pods),
            namespaces,
            persistent_volume_claims=pvcs,
            storage_classes=classes if pvcs is not None else None,
            # Without the classes an unbound claim's binding mode is unknown: no per-node check.
            persistent_volumes=pvs if pvcs is not None and classes is not None else None,
            csi_drivers=drivers if capacities is not None else None,
            csi_storage_capacities=capacities if drivers is not None else None,
            csi_nodes=csinodes,
            workloads=workloads,
            pod_disruption_budgets=pdbs or (),
            dra_features=features_for(judged[1]),
            **dra,
        )
        return ClusterState(snap, found.result(), judged, pods=all_pods)
