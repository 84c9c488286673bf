"""Double booking as `status` and `why` report it: the kubelet's OutOf* rejections and the
schedulers that bound pods to the same node at the same time
(:mod:`kschedctl.observe.doublebooking`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kschedctl.base.errors import KschedError
from kschedctl.k8s.events import scheduled_events
from kschedctl.kubeclient.client import Cluster
from kschedctl.observe import doublebooking
from kschedctl.observe.diagnosis import Diagnosis
from kschedctl.observe.doublebooking import NodeRejections


def detect(cluster: Cluster, pods: Sequence[Mapping[str, Any]]) -> list[NodeRejections]:
    """``pods``: every pod of the cluster, as the caller listed them. The Scheduled events are
    read only when some pod was rejected; without the right to read them (or when the server
    fails) the pods alone say who bound them (``spec.schedulerName``, PodScheduled)."""
    if not any(doublebooking.is_rejected(p) for p in pods):
        return []
    try:
        events = scheduled_events(cluster)
    except KschedError:
        events = []
    return doublebooking.find_rejections(pods, events)


def explain_rejection(cluster: Cluster, pod: Mapping[str, Any], diagnosis: Diagnosis) -> None:
    """`why` for a pod the kubelet rejected: replace "finished" by the rejection and who
    collided on its node (every pod and the Scheduled events are read; optional)."""
    pods: Sequence[Mapping[str, Any]]
    try:
        pods = cluster.list("/api/v1/pods")
    except KschedError:
        pods = [pod]
    meta = pod.get("metadata") or {}
    found = doublebooking.for_pod(
        detect(cluster, pods), str(meta.get("namespace")), str(meta.get("name"))
    )
    findings = doublebooking.kubelet_rejection_findings(pod, found)
    diagnosis.findings = findings + [f for f in diagnosis.findings if f.code != "pod-finished"]
    diagnosis.schedulable = False
    diagnosis.double_booking = found.to_dict() if found is not None else None
