"""The scheduler's run loop: watches feed the cache and the queue, one worker decides, a small
pool binds, the Lease decides who may work.

Threads (all daemons; ``run`` returns after a clean shutdown):

- **watchers** (nodes; every non-terminal pod; PersistentVolumeClaims, PersistentVolumes and
  StorageClasses; namespaces, whose labels the namespaceSelector of pod affinity terms
  selects) apply events to the cache and the queue, and move unschedulable pods back when a
  change could help them; four more (services, replication controllers, replica sets,
  stateful sets) keep the selectors of the system-default topology spreading, which only
  scoring reads, and one the PodDisruptionBudgets, which only preemption reads;
- the **elector** (:mod:`.campaign`) renews or acquires the Lease every retry period (always
  leading with leader election off);
- one **worker** (the GIL makes more pointless) pops the next pod, decides under the cache
  lock and *assumes* the pod on its node before the lock is released, so the next decision
  already sees it;
- **binders** first bind the pod's WaitForFirstConsumer claims like VolumeBinding's PreBind
  (each chosen PersistentVolume gets its claimRef; the PV controller completes the binding;
  the binder waits, up to ``volume_bind_timeout``, for every claim to be Bound — else a
  FailedScheduling and a retry), then post ``pods/binding`` with the pod's uid and the fallback
  annotation; a 409 (bound already, or a re-created pod) or 404 drops the assumption and the
  pod, other errors put the pod back with backoff;
- **reporters** (:mod:`.reporting`) post FailedScheduling events and the
  ``PodScheduled=False`` condition off the decision path; when the decision preempts, they then
  evict the victims as kube-scheduler's preemption executor does. The preemptor is not retried
  before that is done;
- **event posters** post the ``Scheduled`` events, stamped when the binding succeeded, a few at
  a time: during a burst they trail the bindings instead of taking the API server's seats and
  cores from them.

The API is reached only through the port, :class:`~.port.SchedulerApi`
(``kschedctl.k8s.scheduler_api`` implements it), so this module stays free of the kubernetes
client and is unit-tested with a fake.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from kschedctl.model.filters.drabind import extended_status
from kschedctl.model.filters.volumebinding import fully_bound, pv_node_affinity_failure
from kschedctl.model.kubetypes import Pod

from .algorithm import Algorithm, Decision
from .cache import VOLUME_KINDS, WORKLOAD_RESOURCES, PodChanges, SchedulerCache
from .campaign import Campaign
from .dracache import DRA_KINDS
from .leader import LeaderElector
from .metrics import Metrics, Series, define_scheduler_metrics
from .policy import STEP_ANNOTATION
from .port import (
    NAMESPACES,
    PDBS,
    SYNC,
    UNLISTED,
    ApiConflict,
    ApiNotFound,
    ApiUnavailable,
    SchedulerApi,
)
from .queue import QueuedPod, SchedulingQueue, pod_uid
from .reporting import Eviction, Reporter, pod_key

__all__ = [
    "Settings",
    "SchedulerLoop",
    "CONNECTIONS",
    "BIND_WORKERS",
    "REPORT_WORKERS",
    "EVENT_WORKERS",
    "WATCHES",
]

log = logging.getLogger("kschedctl.scheduler")

# Bindings in flight at once. kube-scheduler binds each pod in a goroutine of its own
# (schedule_one.go: go sched.runBindingCycle): with a few binders, the binding rate is capped
# at binders / API latency, whatever the client limit allows (4 binders at 1 s: 4 pods/s). On
# a busy API server a binding takes 100-400 ms (benchmarks/scheduler.py, 1,000 pending pods
# on 500 nodes: 8 binders 171 pods/s, 32: 272, 96: 294).
BIND_WORKERS = 96
REPORT_WORKERS = 16  # FailedScheduling events and PodScheduled=False, off the decision path
# Scheduled events in flight at once. A burst's bindings and its events go to the same API
# server, whose cores and APF seats (one priority level for the scheduler's identity: 98
# seats by default) they share; with every event in flight at once, each binding waits
# longer. The events are kept (none dropped) and stamped at the binding, so they say when
# the pod was bound even when they are posted later.
EVENT_WORKERS = 4
# Watches held open at once: nodes, pods, PodDisruptionBudgets, namespaces, the volume
# kinds, the DRA kinds, the workload kinds (see ``start``).
WATCHES = 4 + len(VOLUME_KINDS) + len(DRA_KINDS) + len(WORKLOAD_RESOURCES)
# Connections the scheduler's client keeps: one per request in flight (binders, reporters,
# every watch, the Lease), so that none is opened (a TLS handshake on both sides) and closed
# per request when the pool is short of one.
CONNECTIONS = BIND_WORKERS + REPORT_WORKERS + EVENT_WORKERS + WATCHES + 1


@dataclass
class Settings:
    name: str
    algorithm: Algorithm = field(default_factory=Algorithm)
    identity: str = ""
    leader_elect: bool = True
    lease_namespace: str = "kube-system"
    lease_name: str = ""
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    initial_backoff: float = 1.0
    max_backoff: float = 10.0
    bind_workers: int = BIND_WORKERS
    report_workers: int = REPORT_WORKERS
    event_workers: int = EVENT_WORKERS
    # The same FailedScheduling message for the same pod is posted at most this often.
    event_interval: float = 60.0
    # VolumeBindingArgs.bindTimeoutSeconds' default: how long PreBind waits for the claims.
    volume_bind_timeout: float = 600.0
    # Published on the Lease so `kschedctl why` knows this scheduler's fallback policy.
    lease_annotations: dict[str, str] = field(default_factory=dict)


class SchedulerLoop:
    def __init__(
        self, api: SchedulerApi, settings: Settings, metrics: Metrics | None = None
    ) -> None:
        self.api = api
        self.settings = settings
        self.algorithm = settings.algorithm
        # Plugins may read any annotation of pods and nodes: the cache keeps them then.
        self.cache = SchedulerCache(settings.name, annotations=bool(self.algorithm.plugins))
        self.queue = SchedulingQueue(settings.initial_backoff, settings.max_backoff)
        self.lock = threading.Lock()  # guards the cache and the start index
        self.start_index = 0
        self.stop = threading.Event()
        self.leading = threading.Event()
        self.campaign: Campaign | None = None
        if settings.leader_elect:
            elector = LeaderElector(
                settings.identity, settings.lease_namespace, settings.lease_name or settings.name,
                settings.lease_duration, settings.renew_deadline, settings.retry_period,
            )  # fmt: skip
            self.campaign = Campaign(
                api, elector, settings.lease_annotations, self.leading, self.queue.wake
            )
        self.metrics = metrics or Metrics()
        define_scheduler_metrics(
            self.metrics, self.algorithm.plugins.names(),
            self._queue_gauge, self._leader_gauge, self._cache_gauge,
        )  # fmt: skip
        self.reporter = Reporter(
            api, settings.name, settings.identity, settings.event_interval, self.metrics
        )
        self._binders = ThreadPoolExecutor(settings.bind_workers, thread_name_prefix="bind")
        self._reporters = ThreadPoolExecutor(settings.report_workers, thread_name_prefix="report")
        self._events = ThreadPoolExecutor(settings.event_workers, thread_name_prefix="event")
        self._threads: dict[str, threading.Thread] = {}
        # Preemptors whose victims are being evicted: not retried until that is done, like
        # DefaultPreemption's PreEnqueue ("waiting for the preemption for this pod to be
        # finished"), so a retry cannot see a half-evicted node.
        self._preempting: set[str] = set()

    # -- metrics ---------------------------------------------------------------------------

    def _queue_gauge(self) -> Series:
        return [((("queue", k),), float(v)) for k, v in sorted(self.queue.counts().items())]

    def _leader_gauge(self) -> Series:
        return [((), 1.0 if self.leading.is_set() else 0.0)]

    def _cache_gauge(self) -> Series:
        return [((("kind", k),), float(v)) for k, v in sorted(self.cache.counts().items())]

    # -- health ----------------------------------------------------------------------------

    def ready(self) -> bool:
        """Every cache listed once (kube-scheduler too waits for all its informers)."""
        c = self.cache
        return (
            c.nodes_synced
            and c.pods_synced
            and c.pdbs_synced
            and c.namespaces_synced
            and c.volumes_synced()
            and c.dra.synced()
            and len(c.workloads_synced) == len(WORKLOAD_RESOURCES)
        )

    def healthy(self) -> tuple[bool, str]:
        for name, thread in self._threads.items():
            if not thread.is_alive() and not self.stop.is_set():
                return False, f"the {name} thread died"
        return True, "ok"

    # -- running ---------------------------------------------------------------------------

    def start(self) -> None:
        threads: list[tuple[str, Any]] = [
            ("nodes watcher", lambda: self._watch("nodes")),
            ("pods watcher", lambda: self._watch("pods")),
            *((f"{r} watcher", lambda r=r: self._watch(r)) for r in WORKLOAD_RESOURCES),
            ("poddisruptionbudgets watcher", lambda: self._watch(PDBS)),
            ("namespaces watcher", lambda: self._watch(NAMESPACES)),
            ("worker", self._work),
        ]
        for resource in [*VOLUME_KINDS, *DRA_KINDS]:
            threads.append((f"{resource} watcher", lambda r=resource: self._watch(r)))
        if self.campaign is None:
            self.leading.set()  # leader election off: this replica always schedules
        else:
            threads.append(("elector", partial(self.campaign.run, self.stop)))
        for name, target in threads:
            thread = threading.Thread(target=target, name=name, daemon=True)
            self._threads[name] = thread
            thread.start()

    def run(self) -> None:
        """Start, then block until :attr:`stop` is set; shut down cleanly."""
        self.start()
        while not self.stop.wait(1.0):  # a timed wait lets signal handlers run promptly
            pass
        self.shutdown()

    def shutdown(self, grace: float = 5.0) -> None:
        self.stop.set()
        self.queue.close()
        worker = self._threads.get("worker")
        if worker is not None:
            worker.join(grace)
        # Bindings already sent finish; queued ones are dropped (their pods stay pending and
        # the next leader places them).
        self._binders.shutdown(wait=True, cancel_futures=True)
        self._reporters.shutdown(wait=False, cancel_futures=True)
        self._events.shutdown(wait=False, cancel_futures=True)
        elector = self._threads.get("elector")
        if elector is not None:
            elector.join(grace)
        if self.campaign is not None:
            self.campaign.release()

    # -- watching --------------------------------------------------------------------------

    def _watch(self, resource: str) -> None:
        for event in self.api.watch(resource, self.stop):
            if self.stop.is_set():
                return
            with self.lock:
                if resource == PDBS:
                    if event.type == SYNC:
                        self.cache.replace_pdbs(event.objects)
                    else:
                        self.cache.pdb_event(event.type, event.object)
                    continue
                if resource in WORKLOAD_RESOURCES:
                    if event.type == SYNC:
                        self.cache.replace_workloads(resource, event.objects)
                    else:
                        self.cache.workload_event(resource, event.type, event.object)
                    continue  # scores may change; no pod becomes schedulable
                if resource == NAMESPACES:
                    if event.type == SYNC:
                        helps = self.cache.replace_namespaces(event.objects)
                    else:
                        helps = self.cache.namespace_event(event.type, event.object)
                    changes = PodChanges(helps=helps)
                elif resource in DRA_KINDS:
                    kind = DRA_KINDS[resource]
                    if event.type == UNLISTED:
                        self.cache.dra.unlisted.add(kind)
                        continue
                    if event.type == SYNC:
                        helps = self.cache.replace_dra(kind, event.objects)
                    else:
                        helps = self.cache.dra_event(kind, event.type, event.object)
                    changes = PodChanges(helps=helps)
                elif resource in VOLUME_KINDS:
                    kind = VOLUME_KINDS[resource]
                    if event.type == UNLISTED:
                        self.cache.volumes_unlisted.add(kind)
                        continue
                    if event.type == SYNC:
                        helps = self.cache.replace_volumes(kind, event.objects)
                    else:
                        helps = self.cache.volume_event(kind, event.type, event.object)
                    changes = PodChanges(helps=helps)
                elif resource == "nodes":
                    if event.type == SYNC:
                        helps = self.cache.replace_nodes(event.objects)
                    else:
                        helps = self.cache.node_event(event.type, event.object)
                    changes = PodChanges(helps=helps)
                elif event.type == SYNC:
                    changes = self.cache.replace_pods(event.objects)
                else:
                    changes = self.cache.pod_event(event.type, event.object)
            self._feed(changes)

    def _feed(self, changes: PodChanges) -> None:
        for uid in changes.dequeue:
            self.queue.delete(uid)
            self.reporter.forget(uid)
        for pod in changes.queue:
            self.queue.add(pod)
        for pod, relevant in changes.updated:
            self.queue.update(pod, relevant)
        if changes.helps:
            self.queue.move_all()

    # -- deciding --------------------------------------------------------------------------

    def _work(self) -> None:
        while not self.stop.is_set():
            if not self.leading.is_set() or not self.ready():
                self.leading.wait(0.2)
                if not self.ready():
                    self.stop.wait(0.05)
                continue
            entry = self.queue.pop(timeout=0.5)
            if entry is None:
                continue
            if not self.leading.is_set():
                self.queue.retry(entry)  # lost the lead meanwhile: the next leader decides
                continue
            self._attempt(entry)

    def _attempt(self, entry: QueuedPod) -> None:
        with self.lock:
            pod = self.cache.is_current(entry.pod)
            if pod is None or entry.uid in self.cache.assumed:
                self.queue.delete(entry.uid)
                return
            waits = entry.uid in self._preempting
            if not waits:
                began = time.perf_counter()
                decision, eviction = self._decide_locked(entry.uid, pod)
                elapsed = time.perf_counter() - began
        if waits:
            self.queue.unschedulable(entry)  # retried once its preemption is done
            return
        self.metrics.observe("decision_duration_seconds", elapsed)
        if decision.policy_error and entry.attempts == 0:
            log.warning("%s: %s", pod_key(pod), decision.policy_error)
        if decision.node is not None:
            self.queue.done(entry.uid)
            self._binders.submit(self._bind, pod, decision)
            return
        self.queue.unschedulable(entry)
        self.metrics.inc("pods_failed_total")
        if decision.plugin_error is not None:
            self.metrics.inc("plugin_errors_total", (("plugin", decision.plugin_error),))
            log.warning("%s: %s", pod_key(pod), decision.message)
        log.info("no node for %s: %s", pod_key(pod), decision.message)
        if decision.nominate is not None:
            self.metrics.inc("preemption_attempts_total")
        if decision.release is not None:
            self._release(pod, decision)
        if eviction is not None:
            self._reporters.submit(self._preempt, pod, decision, eviction)
        else:
            self._reporters.submit(self.reporter.failure, pod, decision)

    def _decide_locked(self, uid: str, pod: Pod) -> tuple[Decision, Eviction | None]:
        """Decide, and record the decision in the cache before the lock is released: the
        node assumed, or the nomination (and the nominations it takes away). Returns the
        decision and, when it preempts, the victims to evict and the pods that lose their
        nomination."""
        decision = self.algorithm.decide(pod, self.cache.snapshot, self.start_index)
        self.start_index = decision.next_start
        if decision.node is not None:
            self.cache.assume(pod, decision.node)
            self.cache.assume_volumes(decision.bindings)
            self.cache.assume_claims(decision.claims)
            return decision, None
        if decision.nominate is None:
            return decision, None
        self.cache.nominate(pod, decision.nominate)
        chosen = decision.victims
        if chosen is None:
            return decision, None
        victims = self._victim_pods(chosen.node, chosen.victim_uids)
        if victims:
            self._preempting.add(uid)
        # The executor takes the nomination away from lower-priority pods nominated to that
        # node: the room is the preemptor's now.
        unnominated = self._lower_nominated(pod, chosen.node)
        for other in unnominated:
            self.cache.nominate(other, "")
        if not victims and not unnominated:
            return decision, None
        return decision, Eviction(decision.nominate, victims, unnominated)

    def _victim_pods(self, node: str, uids: tuple[str, ...]) -> list[Pod]:
        if node not in self.cache.snapshot:
            return []
        by_uid = {p.uid: p.raw for p in self.cache.snapshot.node(node).pods}
        return [by_uid[u] for u in uids if u in by_uid]

    def _lower_nominated(self, pod: Pod, node: str) -> list[Pod]:
        priority = (pod.get("spec") or {}).get("priority")
        mine = priority if isinstance(priority, int) else 0
        nominated = self.cache.snapshot.nominated_pods(self.settings.name).get(node, [])
        return [p.raw for p in nominated if p.priority < mine and p.uid != pod_uid(pod)]

    # -- binding and reporting -------------------------------------------------------------

    def _bind(self, pod: Pod, decision: Decision) -> None:
        uid = pod_uid(pod)
        node = decision.node
        assert node is not None
        annotations = {STEP_ANNOTATION: decision.step.name} if decision.step is not None else {}
        if decision.bindings:
            failure = self._bind_volumes(pod, decision)
            if failure is not None:
                self.metrics.inc("binding_errors_total", (("reason", "volume"),))
                log.warning("binding the volumes of %s on %s: %s; retrying later",
                            pod_key(pod), node, failure)  # fmt: skip
                self._unreserve(pod, decision, 0, backoff=True, message=failure)
                return
        created: list[Mapping[str, Any]] = []  # the special claim, once PreBind created it
        failure, written = self._bind_claims(pod, decision, created)
        if failure is not None:
            self.metrics.inc("binding_errors_total", (("reason", "claim"),))
            log.warning("reserving the ResourceClaims of %s on %s: %s; retrying later",
                        pod_key(pod), node, failure)  # fmt: skip
            self._unreserve(pod, decision, written, backoff=True, message=failure,
                            created=created)  # fmt: skip
            return
        began = time.perf_counter()
        try:
            self.api.bind(pod, node, annotations)
        except (ApiConflict, ApiNotFound) as err:
            reason = "conflict" if isinstance(err, ApiConflict) else "gone"
            self.metrics.inc("binding_errors_total", (("reason", reason),))
            log.info("binding %s to %s: %s; dropping it", pod_key(pod), node, err)
            self._unreserve(pod, decision, written, backoff=False, created=created)
            return
        except ApiUnavailable as err:
            self.metrics.inc("binding_errors_total", (("reason", "error"),))
            log.warning("binding %s to %s failed: %s; retrying later", pod_key(pod), node, err)
            self._unreserve(pod, decision, written, backoff=True, created=created)
            return
        finally:
            self.metrics.observe("binding_duration_seconds", time.perf_counter() - began)
        step = decision.step.name if decision.step is not None else ""
        self.metrics.inc("pods_scheduled_total", (("fallback", step),))
        if step:
            self.metrics.inc("fallback_used_total", (("step", step),))
        log.info("bound %s to %s%s", pod_key(pod), node, f" (fallback {step})" if step else "")
        self.reporter.forget(uid)
        self._events.submit(
            self.reporter.event, pod, "Normal", "Scheduled", "Binding",
            decision.scheduled_message(pod_key(pod)), at_ns=time.time_ns(),
        )  # fmt: skip

    def _bind_claims(
        self, pod: Pod, decision: Decision, created: list[Mapping[str, Any]]
    ) -> tuple[str | None, int]:
        """DynamicResources' PreBind: each claim's allocation and reservation, in the pod's
        order, before the binding; the special claim for extended resources is created
        first (into ``created``) and named in the pod's status after. The failure's
        FailedScheduling text (None: none) and how many claims were written."""
        for done, write in enumerate(decision.claims):
            try:
                claim = write.claim
                if write.create:
                    claim = self.api.create_claim(claim)
                    created.append(claim)
                self.api.reserve_claim(claim, write.allocation, write.reserve)
                if write.create:
                    self.api.patch_pod_status(pod, extended_status(pod, claim, write))
            except (ApiConflict, ApiNotFound, ApiUnavailable) as err:
                return f'running PreBind plugin "DynamicResources": {err}', done
        return None, len(decision.claims)

    def _unreserve(
        self, pod: Pod, decision: Decision, written: int, *, backoff: bool,
        message: str | None = None, created: Sequence[Mapping[str, Any]] = (),
    ) -> None:  # fmt: skip
        """The binding cycle failed: drop the assumption (pod, volumes, claims), take the pod
        out of the ``reservedFor`` of the first ``written`` claims (DynamicResources'
        Unreserve), and retry the pod with backoff if it still waits (reporting
        ``message``)."""
        uid = pod_uid(pod)
        with self.lock:
            self.cache.forget(uid)
            self.cache.forget_volumes(decision.bindings)
            self.cache.forget_claims(decision.claims)
            latest = self.cache.is_current(pod)
        for claim in created:  # the special claim goes (unreserveExtendedResourceClaim)
            try:
                self.api.delete_claim(claim)
            except (ApiConflict, ApiNotFound, ApiUnavailable) as err:
                log.warning("deleting claim %s for %s: %s", pod_key(claim), pod_key(pod), err)
        for write in decision.claims[:written]:
            if write.reserve is None or write.create:
                continue  # reserved before this attempt: not ours to take back
            try:
                self.api.unreserve_claim(write.claim, uid)
            except (ApiConflict, ApiNotFound, ApiUnavailable) as err:
                log.warning("unreserving claim %s for %s: %s", pod_key(write.claim),
                            pod_key(pod), err)  # fmt: skip
        if not backoff or latest is None or self.stop.is_set():
            return
        self.queue.add_backoff(latest)
        if message is not None:
            self._reporters.submit(self.reporter.failure, latest, Decision(None, message=message))

    def _release(self, pod: Pod, decision: Decision) -> None:
        """The DynamicResources PostFilter's write, in the scheduling cycle as kube-scheduler
        does: the claim's update brings the pod back to the queue."""
        release = decision.release
        assert release is not None
        try:
            if release.delete:
                self.api.delete_claim(release.claim)
            else:
                self.api.deallocate_claim(release.claim)
        except (ApiConflict, ApiNotFound, ApiUnavailable) as err:
            log.warning("%s for %s: claim %s: %s", release.message, pod_key(pod), release.name,
                        err)  # fmt: skip

    def _bind_volumes(self, pod: Pod, decision: Decision) -> str | None:
        """VolumeBinding's PreBind (``BindPodVolumes``): write each PV's claimRef, then poll
        every second until the PV controller reports every claim bound. The failure's
        FailedScheduling text (kube-scheduler's wording), or None."""
        prefix = 'running PreBind plugin "VolumeBinding": '
        for pvc, pv in decision.bindings:
            try:
                self.api.bind_volume(pv, pvc)
            except (ApiConflict, ApiNotFound, ApiUnavailable) as err:
                return f"{prefix}{err}"
        deadline = time.monotonic() + self.settings.volume_bind_timeout
        while True:
            with self.lock:
                state = self._volumes_bound(pod, decision)
            if state is not None:
                return None if state == "" else f"{prefix}binding volumes: {state}"
            if time.monotonic() >= deadline:
                return f"{prefix}binding volumes: context deadline exceeded"
            if self.stop.wait(1.0):
                return f"{prefix}binding volumes: the scheduler is stopping"

    def _volumes_bound(self, pod: Pod, decision: Decision) -> str | None:
        """``checkBindings`` on the cache: "" when every claim is bound, None to keep waiting,
        else why the binding must be retried."""
        if self.cache.is_current(pod) is None:
            return "pod does not exist any more"
        node = self.cache.nodes.get(decision.node or "")
        if node is None:
            return f'failed to get node "{decision.node}"'
        labels = (node.get("metadata") or {}).get("labels") or {}
        for pvc, pv in decision.bindings:
            pv_name = (pv.get("metadata") or {}).get("name") or ""
            cmd = pvc.get("metadata") or {}
            live_pv = self.cache.volume("PersistentVolume", pv_name)
            live_pvc = self.cache.volume(
                "PersistentVolumeClaim", (cmd.get("namespace") or "default", cmd.get("name"))
            )
            if live_pv is None or live_pvc is None:
                gone = f'pv "{pv_name}"' if live_pv is None else f'pvc "{cmd.get("name")}"'
                return f"failed to check binding: {gone} not found"
            if pv_node_affinity_failure(live_pv, labels) is not None:
                return f'pv "{pv_name}" node affinity doesn\'t match node "{decision.node}"'
            ref = (live_pv.get("spec") or {}).get("claimRef") or {}
            if not ref.get("uid"):
                return f'ClaimRef got reset for pv "{pv_name}"'
            if not fully_bound(live_pvc):
                return None
        return ""

    def _preempt(self, pod: Pod, decision: Decision, eviction: Eviction) -> None:
        """Report the pod as kube-scheduler does (FailedScheduling, PodScheduled=False with
        the nominated node), then evict (the executor's prepareCandidate); the pod may be
        retried after that."""
        try:
            self.reporter.failure(pod, decision)
            self.reporter.evict(pod, eviction)
        finally:
            with self.lock:
                self._preempting.discard(pod_uid(pod))
            self.queue.move_all()
