"""The kubelet's resource admission of a pod bound to its node (Kubernetes v1.36).

A scheduler decides from its own cache; the kubelet decides again when the pod arrives, from the
pods it has already admitted. Two schedulers that each saw the same free capacity can both bind
to one node: the kubelet admits pods in the order it sees them and rejects the one that no
longer fits — phase ``Failed``, reason ``OutOfcpu`` (kubernetes#72043). This module is that
arithmetic, over plain dicts, so the lab's node simulator rejects exactly what a kubelet would.

Derived from pkg/kubelet/lifecycle/predicate.go (``Admit``: missing extended resources dropped,
the first failure named, ``InsufficientResourceError``'s message), pkg/kubelet/kubelet.go
(``rejectPod``: "Pod was rejected: " + message) and pkg/scheduler/framework/plugins/
noderesources/fit.go (``fitsRequest``: pods, cpu, memory, ephemeral-storage, scalar resources).
Requests are NodeResourcesFit's effective requests (:func:`~.resources.pod_requests`).
Only the resource predicate is modelled, not node affinity, host ports or NoExecute taints.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .resources import CPU, EPHEMERAL, MEMORY, PODS, is_scalar_resource, pod_requests

__all__ = ["OUT_OF_PREFIX", "Rejection", "admission_request", "admit", "NodeAdmission"]

OUT_OF_PREFIX = "OutOf"  # lifecycle.InsufficientResourcePrefix


@dataclass(frozen=True)
class Rejection:
    """``InsufficientResourceError``: the first resource the pod did not fit."""

    resource: str
    requested: int
    used: int
    capacity: int

    @property
    def reason(self) -> str:
        """``OutOfcpu``, ``OutOfmemory``, ``OutOfpods``, ``OutOfnvidia.com/gpu`` …"""
        return OUT_OF_PREFIX + self.resource

    @property
    def message(self) -> str:
        """The event's message (``InsufficientResourceError.Error``)."""
        return (
            f"Node didn't have enough resource: {self.resource}, requested: {self.requested}, "
            f"used: {self.used}, capacity: {self.capacity}"
        )

    @property
    def status_message(self) -> str:
        """``status.message`` of the rejected pod (``rejectPod``)."""
        return "Pod was rejected: " + self.message


def _is_extended(name: str) -> bool:
    """``v1helper.IsExtendedResourceName``: outside kubernetes.io, not a quota name."""
    return "/" in name and "kubernetes.io/" not in name and not name.startswith("requests.")


def admission_request(pod: Mapping[str, Any], allocatable: Mapping[str, int]) -> dict[str, int]:
    """The request the kubelet checks: extended resources the node does not have are dropped
    (``removeMissingExtendedResources``: cluster-level or DRA-backed resources)."""
    return {
        name: amount
        for name, amount in pod_requests(pod).items()
        if not _is_extended(name) or name in allocatable
    }


def admit(
    request: Mapping[str, int],
    allocatable: Mapping[str, int],
    used: Mapping[str, int],
    pod_count: int,
) -> Rejection | None:
    """``fitsRequest`` against the admitted pods, the first failure or ``None`` if it fits.

    ``used`` sums the admitted pods' requests, ``pod_count`` counts them; units are the
    scheduler's (cpu millicores, bytes, counts).
    """
    allowed = allocatable.get(PODS, 0)
    if pod_count + 1 > allowed:
        return Rejection(PODS, 1, pod_count, allowed)
    if not any(request.get(r, 0) for r in (CPU, MEMORY, EPHEMERAL)) and not any(
        is_scalar_resource(r) for r in request
    ):
        return None
    for name in (CPU, MEMORY, EPHEMERAL):
        want = request.get(name, 0)
        if want > 0 and want > allocatable.get(name, 0) - used.get(name, 0):
            return Rejection(name, want, used.get(name, 0), allocatable.get(name, 0))
    # Go ranges over a map here; sorted names make the choice among several reproducible.
    for name in sorted(r for r in request if is_scalar_resource(r)):
        want = request[name]
        if want and want > allocatable.get(name, 0) - used.get(name, 0):
            return Rejection(name, want, used.get(name, 0), allocatable.get(name, 0))
    return None


class NodeAdmission:
    """One node's admitted pods, as its kubelet keeps them: admit in arrival order, forget a pod
    when it ends or goes. Not thread-safe (the caller serialises, as the kubelet's sync loop)."""

    def __init__(self, allocatable: Mapping[str, int]) -> None:
        self.allocatable = dict(allocatable)
        self._pods: dict[str, dict[str, int]] = {}  # uid -> request counted
        self.used: dict[str, int] = {}

    def __contains__(self, uid: object) -> bool:
        return uid in self._pods

    def __len__(self) -> int:
        return len(self._pods)

    def add(self, uid: str, pod: Mapping[str, Any]) -> None:
        """Count a pod without checking it (one admitted before, or a static pod), with its
        in-place resize status as NodeInfo counts a running pod."""
        self._count(uid, pod_requests(pod, use_status=True))

    def _count(self, uid: str, request: Mapping[str, int]) -> None:
        if uid in self._pods:
            return
        self._pods[uid] = dict(request)
        for name, amount in request.items():
            self.used[name] = self.used.get(name, 0) + amount

    def remove(self, uid: str) -> None:
        request = self._pods.pop(uid, None)
        for name, amount in (request or {}).items():
            self.used[name] = self.used.get(name, 0) - amount

    def try_admit(self, uid: str, pod: Mapping[str, Any]) -> Rejection | None:
        """Admit ``pod`` (counting it) or say why not (counting nothing)."""
        if uid in self._pods:
            return None
        request = admission_request(pod, self.allocatable)
        rejection = admit(request, self.allocatable, self.used, len(self._pods))
        if rejection is None:
            self._count(uid, request)
        return rejection
