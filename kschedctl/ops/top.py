"""`kschedctl top nodes`: what the pods on each node request, split by scheduler.

Three list requests (four with ``--pods``), run together, whatever the cluster's size: the
nodes (the label selector judged by the server), the bound, non-terminal pods of every
namespace (a field selector, so Succeeded/Failed and Pending pods never travel) and
metrics-server's readings (metrics.k8s.io NodeMetrics, and PodMetrics for the per-pod view),
which are optional: without the API (not installed, not ready, not allowed) usage is unknown,
never an error. The rest is :func:`kschedctl.observe.placement.placement` on the plain dicts.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from kschedctl.base.errors import ApiError, ClusterError, NotFoundError
from kschedctl.kubeclient.client import Cluster
from kschedctl.observe.placement import BOUND_NON_TERMINAL, Placement, placement
from kschedctl.printers.formats import as_item, as_list

NODES = "/api/v1/nodes"
PODS = "/api/v1/pods"
NODE_METRICS = "/apis/metrics.k8s.io/v1beta1/nodes"
POD_METRICS = "/apis/metrics.k8s.io/v1beta1/pods"
# Pods are small next to a page's round trip: bigger pages, fewer requests at 20,000 pods.
POD_PAGE = 2000


def top_nodes(
    cluster: Cluster,
    *,
    selector: str | None = None,
    scheduler: str | None = None,
    sort_by: str = "name",
    limit: int | None = None,
    pod_usage: bool = False,
    namespace: str | None = None,
) -> Placement:
    """``selector``: a label selector for the nodes (already checked by the caller);
    ``pod_usage``: read each pod's usage too (``--pods``); ``namespace``: count only that
    namespace's pods (kube-capacity's -n)."""
    pods_path, pod_metrics_path = PODS, POD_METRICS
    if namespace is not None:
        pods_path = f"/api/v1/namespaces/{namespace}/pods"
        pod_metrics_path = POD_METRICS.replace("/pods", f"/namespaces/{namespace}/pods")
    with ThreadPoolExecutor(max_workers=4) as pool:
        nodes = pool.submit(cluster.list, NODES, labelSelector=selector)
        pods = pool.submit(
            cluster.list, pods_path, fieldSelector=BOUND_NON_TERMINAL, limit=POD_PAGE
        )
        node_metrics = pool.submit(_metrics, cluster, NODE_METRICS, labelSelector=selector)
        pod_metrics = pool.submit(_metrics, cluster, pod_metrics_path) if pod_usage else None
        return placement(
            nodes.result(),
            pods.result(),
            scheduler=scheduler,
            sort_by=sort_by,
            limit=limit,
            node_metrics=node_metrics.result(),
            pod_metrics=pod_metrics.result() if pod_metrics else None,
        )


def _metrics(cluster: Cluster, path: str, **query: Any) -> list[dict[str, Any]] | None:
    """metrics-server's readings, or None when the API does not answer (404: no
    metrics-server; 503: registered but not ready; 403: not allowed to read them)."""
    try:
        return cluster.list(path, **query)
    except (NotFoundError, ApiError, ClusterError):
        return None


def placement_dict(shown: Placement, *, pods: bool = False) -> dict[str, Any]:
    """``top nodes -o json|yaml``: a kubectl ``List`` of ``NodeUsage`` items, each ``kind`` and
    ``metadata`` then ``allocatable``, ``requested``, ``bySchedulers`` (cpu in millicores,
    memory in bytes, pods as a count), ``overcommitted``, ``unschedulable``, ``limits`` (cpu,
    memory), ``taints`` and, when metrics-server answers, ``usage`` (cpu, memory) (a
    contract). With ``pods`` (``--pods``): ``PodUsage`` items, each ``namespace``, ``node``,
    ``scheduler``, ``requests``, ``limits`` and maybe ``usage``."""
    if pods:
        return as_list([as_item("PodUsage", p.name, p.to_dict(), namespace=p.namespace)
                        for p in shown.pods])  # fmt: skip
    return as_list([as_item("NodeUsage", u.name, u.to_dict()) for u in shown.nodes])
