"""The kubelet's admission for every pod bound to a simulated node.

kwok marks any bound pod Running: it cannot sum the requests of the other pods on a node, so two
schedulers over-committing one node would go unnoticed in the lab. A kubelet re-checks each pod
it receives against the pods it already admitted and rejects the one that does not fit (phase
``Failed``, reason ``OutOfcpu``, a Warning event from ``kubelet``). The runner does the same here
for every pod on a kwok node, in the order its watch delivers them, with
:mod:`kschedctl.model.filters.admission`'s arithmetic.

An admitted pod gets the annotation ``lab.kschedctl.io/admitted``; ``lab up`` gates kwok's
pod-ready stage on it (:func:`kschedctl.lab.images.kwok_admitted_expression`), so kwok never
calls an unadmitted pod Running. Decisions are made on the watch thread, in memory; the API
writes go to a small pool so thousands of bound pods do not queue behind each other's round
trips.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from kschedctl.base.errors import KschedError, NotFoundError
from kschedctl.lab.images import ADMITTED_ANNOTATION
from kschedctl.lab.runner.kube import LabApi, pod_path
from kschedctl.model.filters import node_allocatable
from kschedctl.model.filters.admission import NodeAdmission, Rejection

log = logging.getLogger("kschedctl.lab.runner")

MIRROR_ANNOTATION = "kubernetes.io/config.mirror"  # static pods: critical, always admitted
TERMINAL = ("Succeeded", "Failed")
WRITERS = 4
# What kwok's node-initialize stage reports for a node created without allocatable.
KWOK_DEFAULT_ALLOCATABLE = {"cpu": "1k", "memory": "1Ti", "pods": "1M"}


def _admitted_before(pod: Mapping[str, Any]) -> bool:
    """Admitted by an earlier runner (the mark), or already past Pending (it runs)."""
    meta = pod.get("metadata") or {}
    annotations = meta.get("annotations") or {}
    if annotations.get(ADMITTED_ANNOTATION) == "true":
        return True
    return (pod.get("status") or {}).get("phase") not in (None, "", "Pending")


def _arrival(pod: Mapping[str, Any]) -> tuple[str, str]:
    # The kubelet sorts the pods it finds at start-up by creation time (HandlePodAdditions).
    meta = pod.get("metadata") or {}
    return str(meta.get("creationTimestamp") or ""), str(meta.get("name") or "")


class Admitter:
    """Per kwok node, the pods admitted so far; one verdict per pod, written once."""

    def __init__(self, api: LabApi, writers: int = WRITERS) -> None:
        self.api = api
        self._lock = threading.Lock()
        self._nodes: dict[str, NodeAdmission] = {}
        self._where: dict[str, str] = {}  # uid -> node it is counted on
        self._verdicts: dict[str, Rejection | None] = {}  # decided here, written or in flight
        self._unwritten: dict[str, tuple[dict[str, Any], Rejection | None]] = {}
        self._pool = ThreadPoolExecutor(writers, thread_name_prefix="admit")

    # -- called from the watch thread ----------------------------------------------------------

    def resync(self, pods: Iterable[dict[str, Any]]) -> None:
        """A fresh list: count what was admitted, then admit the rest oldest first."""
        pods = [p for p in pods if (p.get("spec") or {}).get("nodeName")]
        present = {p["metadata"]["uid"] for p in pods}
        with self._lock:
            self._nodes.clear()
            self._where.clear()
            for uid in [u for u in self._verdicts if u not in present]:
                del self._verdicts[uid]
        waiting = []
        for pod in pods:
            uid = pod["metadata"]["uid"]
            if self._terminal(pod) or uid in self._verdicts or _admitted_before(pod):
                self.admitted(pod)
            else:
                waiting.append(pod)
        for pod in sorted(waiting, key=_arrival):
            self.admitted(pod)

    def admitted(self, pod: dict[str, Any]) -> bool:
        """Whether ``pod`` may run on its node, admitting it now if it is new.

        False for pods rejected, terminal, or not on a kwok node. Raises a KschedError when the
        node cannot be read (the caller retries the pod).
        """
        meta, spec = pod["metadata"], pod.get("spec") or {}
        uid, node = meta["uid"], spec.get("nodeName") or ""
        if not node:
            return False
        with self._lock:
            if self._terminal(pod):
                self._forget_locked(uid, keep_verdict=True)
                return False
            if uid in self._where:
                return True
            if self._verdicts.get(uid) is not None:
                return False  # rejected (an admitted one not counted yet is after a relist)
        if not self.api.is_kwok_node(node):
            return False
        node_obj = self.api.node(node)
        if not (node_obj.get("status") or {}).get("allocatable"):
            node_obj = {"status": {"allocatable": KWOK_DEFAULT_ALLOCATABLE}}
        allocatable = node_allocatable(node_obj)
        with self._lock:
            state = self._nodes.get(node)
            if state is None:
                state = self._nodes[node] = NodeAdmission(allocatable)
            state.allocatable = allocatable
            if _admitted_before(pod) or uid in self._verdicts:
                state.add(uid, pod)
                self._where[uid] = node
                return True
            if MIRROR_ANNOTATION in (meta.get("annotations") or {}):
                # A static pod is critical: the kubelet makes room for it (evicting others),
                # never rejects it; it still needs the mark so that kwok runs it.
                state.add(uid, pod)
                rejection = None
            else:
                rejection = state.try_admit(uid, pod)
            self._verdicts[uid] = rejection
            if rejection is None:
                self._where[uid] = node
            self._unwritten[uid] = (pod, rejection)
        if rejection is not None:
            log.warning(
                "%s/%s: rejected on node %s: %s",
                meta["namespace"],
                meta["name"],
                node,
                rejection.message,
            )
        self._pool.submit(self._write, uid)
        return rejection is None

    def gone(self, pod: Mapping[str, Any]) -> None:
        with self._lock:
            self._forget_locked(pod["metadata"]["uid"], keep_verdict=False)

    def retry(self) -> None:
        """Write again the verdicts whose write failed (from the runner's retry loop)."""
        with self._lock:
            uids = list(self._unwritten)
        for uid in uids:
            self._pool.submit(self._write, uid)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

    # -- internals -----------------------------------------------------------------------------

    @staticmethod
    def _terminal(pod: Mapping[str, Any]) -> bool:
        return (pod.get("status") or {}).get("phase") in TERMINAL

    def _forget_locked(self, uid: str, *, keep_verdict: bool) -> None:
        node = self._where.pop(uid, None)
        if node is not None and node in self._nodes:
            self._nodes[node].remove(uid)
        if not keep_verdict:
            self._verdicts.pop(uid, None)
            self._unwritten.pop(uid, None)

    def _write(self, uid: str) -> None:
        with self._lock:
            item = self._unwritten.get(uid)
        if item is None:
            return
        pod, rejection = item
        try:
            if rejection is None:
                self._mark_admitted(pod)
            else:
                self._reject(pod, rejection)
        except NotFoundError:
            pass  # deleted meanwhile: nothing left to tell
        except KschedError as err:
            ref = f"{pod['metadata']['namespace']}/{pod['metadata']['name']}"
            log.warning("%s: cannot write its admission (%s); retrying", ref, err.message)
            return
        with self._lock:
            if self._unwritten.get(uid) is item:
                del self._unwritten[uid]

    def _mark_admitted(self, pod: Mapping[str, Any]) -> None:
        # The uid makes the patch a precondition: never marks a newer pod of the same name.
        meta = {"uid": pod["metadata"]["uid"], "annotations": {ADMITTED_ANNOTATION: "true"}}
        self.api.cluster.patch(pod_path(pod), {"metadata": meta})

    def _reject(self, pod: Mapping[str, Any], rejection: Rejection) -> None:
        """``Kubelet.rejectPod``: a Warning event, then phase Failed with the reason."""
        self.api.record_event(pod, "", "Warning", rejection.reason, rejection.message)
        body = {
            "metadata": {"uid": pod["metadata"]["uid"]},
            "status": {
                "phase": "Failed",
                "reason": rejection.reason,
                "message": rejection.status_message,
            },
        }
        self.api.cluster.patch(pod_path(pod) + "/status", body)
