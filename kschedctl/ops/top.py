"""`kschedctl top nodes`: what the pods on each node request, split by scheduler.

Two list requests, run together, whatever the cluster's size: the nodes (the label selector
judged by the server) and the bound, non-terminal pods of every namespace (a field selector,
so Succeeded/Failed and Pending pods never travel). The rest is
:func:`kschedctl.observe.placement.placement` on the plain dicts.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from kschedctl.kubeclient.client import Cluster
from kschedctl.observe.placement import BOUND_NON_TERMINAL, Placement, placement
from kschedctl.printers.formats import as_item, as_list

NODES = "/api/v1/nodes"
PODS = "/api/v1/pods"
# Pods are small next to a page's round trip: bigger pages, fewer requests at 20,000 pods.
POD_PAGE = 2000


def top_nodes(
    cluster: Cluster,
    *,
    selector: str | None = None,
    scheduler: str | None = None,
    sort_by: str = "name",
    limit: int | None = None,
    namespace: str | None = None,
) -> Placement:
    """``selector``: a label selector for the nodes (already checked by the caller);
    ``namespace``: count only that namespace's pods (kube-capacity's -n)."""
    pods_path = PODS if namespace is None else f"/api/v1/namespaces/{namespace}/pods"
    with ThreadPoolExecutor(max_workers=2) as pool:
        nodes = pool.submit(cluster.list, NODES, labelSelector=selector)
        pods = pool.submit(
            cluster.list, pods_path, fieldSelector=BOUND_NON_TERMINAL, limit=POD_PAGE
        )
        return placement(
            nodes.result(), pods.result(), scheduler=scheduler, sort_by=sort_by, limit=limit
        )


def placement_dict(shown: Placement) -> dict[str, Any]:
    """``top nodes -o json|yaml``: a kubectl ``List`` of ``NodeUsage`` items, each ``kind`` and
    ``metadata`` then ``allocatable``, ``requested``, ``bySchedulers`` (cpu in millicores,
    memory in bytes, pods as a count), ``overcommitted`` and ``unschedulable`` (a contract)."""
    return as_list([as_item("NodeUsage", u.name, u.to_dict()) for u in shown.nodes])
