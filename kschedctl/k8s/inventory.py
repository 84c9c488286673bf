"""Fetch what scheduler discovery needs, as plain dicts, with the requests run concurrently."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from kschedctl.errors import NotFoundError
from kschedctl.k8s.client import Cluster
from kschedctl.observe.schedulers import (
    Snapshot,
    config_source,
    owned,
    owner_selectors,
    scheduler_container,
)

ROLES = "/apis/rbac.authorization.k8s.io/v1/roles"


def snapshot(cluster: Cluster, pods: list[dict[str, Any]] | None = None) -> Snapshot:
    """``pods``: every pod, when the caller has listed them already (`why` needs them too)."""
    with ThreadPoolExecutor(max_workers=4) as pool:
        all_pods = pool.submit(lambda: pods if pods is not None else cluster.list("/api/v1/pods"))
        deployments = pool.submit(cluster.list, "/apis/apps/v1/deployments")
        # Node heartbeats live in kube-node-lease: thousands of leases no scheduler owns.
        leases = pool.submit(
            cluster.list,
            "/apis/coordination.k8s.io/v1/leases",
            fieldSelector="metadata.namespace!=kube-node-lease",
        )
        managed_roles = [
            pool.submit(cluster.list, ROLES, labelSelector=selector)
            for selector in owner_selectors()
        ]
        snap = Snapshot(
            pods=all_pods.result(),
            deployments=deployments.result(),
            configmaps={},
            leases=leases.result(),
            managed=owned(future.result() for future in managed_roles),
        )
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


def _configmap(cluster: Cluster, namespace: str, name: str) -> dict[str, Any] | None:
    try:
        return cluster.get(f"/api/v1/namespaces/{namespace}/configmaps/{name}")
    except NotFoundError:
        return None
