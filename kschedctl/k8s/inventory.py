"""Fetch what scheduler discovery needs, as plain dicts, with the requests run concurrently.

Discovery does not list every pod: in a large cluster they are nearly all workload pods bound
long ago, and reading them cost more than `kubectl get pods -A`. It reads the pods that can be
schedulers — every pod of kube-system, those kschedctl or kubeadm labelled, those of Deployments
running a scheduler, those named by a Lease's holder — and the unbound ones (what `pending`
counts), and asks the API server which other schedulerNames bound pods carry, one cheap
``limit=1`` query per name. When that leaves a name nothing found serves, a pod those reads do
not reach could serve it, and every pod is read as before: the result is always the one a scan
of every pod gives.

What tells a scheduler from a claim to its name is read too (:mod:`kschedctl.observe.identity`):
kschedctl's ClusterRoleBindings, the ReplicaSets of the scheduler Deployments (the owner chain
of their pods) and the nodes of kube-system's mirror pods.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from kschedctl.base.errors import ForbiddenError, NotFoundError
from kschedctl.kubeclient.client import Cluster
from kschedctl.model.config.versions import DEFAULT_SCHEDULER_NAME
from kschedctl.observe.containers import config_source, scheduler_container
from kschedctl.observe.discovery import (
    KUBEADM_COMPONENT_SELECTOR,
    UNBOUND_PODS,
    ClusterReading,
    discover,
    holder_pod_names,
    merge_pods,
    needs_every_pod,
    other_bound_pods,
    scheduler_workload_selectors,
)
from kschedctl.observe.identity import mirror_nodes
from kschedctl.observe.schedulers import owned, owner_selectors

PODS = "/api/v1/pods"
ROLES = "/apis/rbac.authorization.k8s.io/v1/roles"
BINDINGS = "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings"
# More distinct names than any cluster binds pods under: past it, every pod is read instead.
MAX_BOUND_NAMES = 64


def snapshot(cluster: Cluster, pods: list[dict[str, Any]] | None = None) -> ClusterReading:
    """``pods``: every pod, when the caller has listed them already (`why` needs them too)."""
    with ThreadPoolExecutor(max_workers=8) as pool:
        if pods is not None:
            return _read(cluster, pool, lambda: pods)
        snap = _read(cluster, pool, None)
        if snap.bound_names is None or needs_every_pod(discover(snap)):
            return _read(cluster, pool, lambda: cluster.list(PODS))
        return snap


def _read(
    cluster: Cluster,
    pool: ThreadPoolExecutor,
    every_pod: Callable[[], list[dict[str, Any]]] | None,
) -> ClusterReading:
    """Every object discovery reads; the pods are ``every_pod()``, or the targeted reads when
    it is None."""
    all_pods = pool.submit(every_pod) if every_pod is not None else None
    deployments = pool.submit(cluster.list, "/apis/apps/v1/deployments")
    # Node heartbeats live in kube-node-lease: thousands of leases no scheduler owns.
    leases = pool.submit(
        cluster.list,
        "/apis/coordination.k8s.io/v1/leases",
        fieldSelector="metadata.namespace!=kube-node-lease",
    )
    managed_roles = [
        pool.submit(cluster.list, ROLES, labelSelector=selector) for selector in owner_selectors()
    ]
    bindings = [
        pool.submit(cluster.list, BINDINGS, labelSelector=selector)
        for selector in owner_selectors()
    ]
    # The ReplicaSets of the scheduler Deployments: a pod is a Deployment's through them.
    replicasets = [
        pool.submit(
            cluster.list, f"/apis/apps/v1/namespaces/{ns}/replicasets", labelSelector=selector
        )
        for ns, selector in scheduler_workload_selectors(deployments.result())
    ]
    bound_names: set[str] | None = None
    if all_pods is not None:
        pods = all_pods.result()
    else:
        batches = [
            pool.submit(cluster.list, "/api/v1/namespaces/kube-system/pods"),
            pool.submit(cluster.list, PODS, fieldSelector=UNBOUND_PODS),
            pool.submit(cluster.list, PODS, labelSelector=KUBEADM_COMPONENT_SELECTOR),
            *(pool.submit(cluster.list, PODS, labelSelector=s) for s in owner_selectors()),
        ]
        names = pool.submit(_bound_names, cluster)
        first = [batch.result() for batch in batches]
        more: list[Future[list[dict[str, Any]]]] = [
            pool.submit(cluster.list, f"/api/v1/namespaces/{ns}/pods", labelSelector=selector)
            for ns, selector in scheduler_workload_selectors(deployments.result())
        ]
        # a holder's pod may live in any namespace: looked up by name across all of them
        more += [
            pool.submit(cluster.list, PODS, fieldSelector=f"metadata.name={name}")
            for name in holder_pod_names(leases.result())
        ]
        pods = merge_pods([*first, *(batch.result() for batch in more)])
        bound_names = names.result()
    snap = ClusterReading(
        pods=pods,
        deployments=deployments.result(),
        configmaps={},
        leases=leases.result(),
        managed=owned(future.result() for future in managed_roles),
        bound_names=bound_names,
        replicasets=[rs for batch in replicasets for rs in batch.result()],
        bindings=owned(future.result() for future in bindings),
    )
    hosts = mirror_nodes(pods)
    for host, node in zip(hosts, pool.map(lambda n: _node(cluster, n), hosts), strict=True):
        if node is not None:
            snap.nodes[host] = node
    wanted = set()
    for obj in [*snap.deployments, *snap.pods]:
        spec = obj.get("spec") or {}
        if "template" in spec:  # a Deployment: look at its pod template
            spec = spec["template"].get("spec") or {}
        container = scheduler_container(spec)
        source = config_source(spec, container) if container else None
        if source:
            wanted.add(((obj.get("metadata") or {}).get("namespace", ""), source[0]))
    keys = sorted(wanted)
    for key, cm in zip(keys, pool.map(lambda k: _configmap(cluster, *k), keys), strict=True):
        if cm is not None:
            snap.configmaps[key] = cm
    return snap


def _bound_names(cluster: Cluster) -> set[str] | None:
    """Every schedulerName a bound pod carries: ask for one bound pod under a name not seen
    yet until there is none (the API server filters; one small answer per name). None past
    :data:`MAX_BOUND_NAMES`, or when the server does not apply the selector."""
    carried: set[str] = set()  # as stored: the API server defaults an empty one
    names: set[str] = set()
    while len(carried) <= MAX_BOUND_NAMES:
        pod = _first(cluster, other_bound_pods(carried))
        if pod is None:
            return names
        name = str((pod.get("spec") or {}).get("schedulerName") or "")
        if name in carried:
            return None
        carried.add(name)
        names.add(name or DEFAULT_SCHEDULER_NAME)
    return None


def _first(cluster: Cluster, selector: str) -> dict[str, Any] | None:
    """The first pod matching ``selector``, following ``continue`` while a page is empty (a
    server may stop a filtered page early)."""
    token = None
    while True:
        page = cluster.get(PODS, fieldSelector=selector, limit=1, **{"continue": token})
        items = page.get("items") or []
        if items:
            first: dict[str, Any] = items[0]
            return first
        token = (page.get("metadata") or {}).get("continue")
        if not token:
            return None


def _node(cluster: Cluster, name: str) -> dict[str, Any] | None:
    """A node, or None when it is gone or may not be read (then no pod on it is known to be a
    control-plane static pod; kube-system still anchors it)."""
    try:
        return cluster.get(f"/api/v1/nodes/{name}")
    except (NotFoundError, ForbiddenError):
        return None


def _configmap(cluster: Cluster, namespace: str, name: str) -> dict[str, Any] | None:
    try:
        return cluster.get(f"/api/v1/namespaces/{namespace}/configmaps/{name}")
    except NotFoundError:
        return None
