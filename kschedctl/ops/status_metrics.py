"""`kschedctl status NAME`'s Metrics section: each replica's own ``/metrics``, read through
``pods/portforward`` with the caller's credentials (:mod:`kschedctl.k8s.scrape` says why not
``pods/proxy``), summarized by :mod:`kschedctl.observe.metrics`.

Never fails the status: a replica whose metrics cannot be read carries the reason (forbidden
and the RBAC that would allow it, unreachable, not a scheduler) and every other section is
printed as usual. Replicas are read in parallel, each within :data:`TIMEOUT` seconds.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypedDict

from kschedctl.errors import KschedError
from kschedctl.k8s.client import Cluster
from kschedctl.k8s.scrape import Target, get_via_port_forward
from kschedctl.observe.metrics import (
    SUMMARY_PREFIXES,
    MetricsFormatError,
    MetricsSummary,
    metrics_endpoint,
    parse_text,
    summarize,
)
from kschedctl.observe.schedulers import Scheduler, scheduler_container

TIMEOUT = 5.0  # seconds per replica (they are read in parallel)
MAX_REPLICAS = 10  # a status, not a scraper


class ReplicaMetrics(TypedDict):
    pod: str  # namespace/name
    port: int | None
    leader: bool | None  # None: unknown (no leader election, or nothing read)
    summary: MetricsSummary | None  # None: see problem
    problem: str | None


class MetricsReport(TypedDict):
    replicas: list[ReplicaMetrics]
    problem: str | None  # why no replica could be asked at all


def read_metrics(
    cluster: Cluster, entry: Scheduler | None, pods: list[dict[str, Any]]
) -> MetricsReport:
    """The Metrics section for scheduler ``entry`` (``pods``: the cluster's pods)."""
    if entry is None:
        return {"replicas": [], "problem": "nothing serves this name: no scheduler to ask"}
    if not entry.pods:
        where = {
            "service": "a systemd service on a host",
            "process": "a process on a host",
        }.get(entry.form, f"a {entry.form}")
        return {
            "replicas": [],
            "problem": f"it runs as {where}, not in a pod: there is no pod to forward a port "
            "to; on that host, GET https://127.0.0.1:<service.securePort>/metrics as a user "
            "allowed `get` on the non-resource URL /metrics",
        }
    by_name = {(p["metadata"].get("namespace"), p["metadata"].get("name")): p for p in pods}
    chosen = [by_name.get((entry.namespace, name)) for name in entry.pods[:MAX_REPLICAS]]
    with ThreadPoolExecutor(max_workers=len(chosen)) as pool:
        replicas = list(
            pool.map(
                lambda pair: _replica(cluster, entry, *pair),
                zip(entry.pods[:MAX_REPLICAS], chosen, strict=True),
            )
        )
    return {"replicas": replicas, "problem": None}


def _replica(
    cluster: Cluster, entry: Scheduler, name: str, pod: dict[str, Any] | None
) -> ReplicaMetrics:
    ref = f"{entry.namespace}/{name}"
    reading: ReplicaMetrics = {
        "pod": ref, "port": None, "leader": _lease_leader(entry, name, pod), "summary": None,
        "problem": None,
    }  # fmt: skip
    container = scheduler_container((pod or {}).get("spec") or {})
    if pod is None or container is None:
        reading["problem"] = "not a kube-scheduler or kschedctl scheduler pod"
        return reading
    endpoint = metrics_endpoint(container, entry.namespace or "")
    reading["port"] = endpoint.port
    if endpoint.port is None:
        reading["problem"] = endpoint.problem
        return reading
    phase = (pod.get("status") or {}).get("phase")
    if phase != "Running":
        reading["problem"] = f"the pod is {phase or 'not started'}, not Running"
        return reading
    target = Target(entry.namespace or "", name, endpoint.port, endpoint.https)
    try:
        text = get_via_port_forward(cluster, target, "/metrics", TIMEOUT)
    except KschedError as err:
        reading["problem"] = err.message + (f"; {err.hint}" if err.hint else "")
        return reading
    try:
        summary = summarize(parse_text(text, SUMMARY_PREFIXES))
    except MetricsFormatError as err:
        reading["problem"] = f"its /metrics is not Prometheus text: {err}"
        return reading
    if summary is None:
        reading["problem"] = (
            f"port {endpoint.port} serves metrics, but no scheduler's "
            "(no scheduler_schedule_attempts_total): not a kube-scheduler"
        )
        return reading
    reading["summary"] = summary
    if summary["leader"] is not None:
        reading["leader"] = summary["leader"]
    return reading


def _lease_leader(entry: Scheduler, name: str, pod: dict[str, Any] | None) -> bool | None:
    """Does the Lease name this pod as its holder? (kube-scheduler's identity is
    ``<hostname>_<uuid>``: a pod's hostname is its name; a host-network pod, such as a static
    pod, shares its node's UTS namespace: pkg/kubelet/kuberuntime/util/util.go NamespacesForPod.)"""
    holder = entry.lease.holder if entry.lease else None
    if not holder:
        return None
    spec = (pod or {}).get("spec") or {}
    hostname = spec.get("nodeName") if spec.get("hostNetwork") else None
    return holder.split("_", 1)[0] == (hostname or name)
