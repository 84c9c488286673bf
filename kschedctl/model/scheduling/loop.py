"""The scheduler's run loop: watches feed the cache and the queue, one worker decides, a small
pool binds, the Lease decides who may work.

Threads (all daemons; ``run`` returns after a clean shutdown):

- **watchers** (nodes; every non-terminal pod; PersistentVolumeClaims, PersistentVolumes and
  StorageClasses; namespaces, whose labels the namespaceSelector of pod affinity terms
  selects) apply events to the cache and the queue, and move unschedulable pods back when a
  change could help them; four more (services, replication controllers, replica sets,
  stateful sets) keep the selectors of the system-default topology spreading, which only
  scoring reads, and one the PodDisruptionBudgets, which only preemption reads;
- the **elector** renews or acquires the Lease every retry period (always leading with
  leader election off); a leader that cannot renew within the renew deadline steps down
  and campaigns again, its caches still warm;
- one **worker** (the GIL makes more pointless) pops the next pod, decides under the cache
  lock and *assumes* the pod on its node before the lock is released, so the next decision
  already sees it;
- **binders** first bind the pod's WaitForFirstConsumer claims like VolumeBinding's PreBind
  (each chosen PersistentVolume gets its claimRef; the PV controller completes the binding;
  the binder waits, up to ``volume_bind_timeout``, for every claim to be Bound — else a
  FailedScheduling and a retry), then post ``pods/binding`` with the pod's uid and the fallback
  annotation; a 409 (bound already, or a re-created pod) or 404 drops the assumption and the
  pod, other errors put the pod back with backoff;
- **reporters** post events (``Scheduled``, ``FailedScheduling``) and the
  ``PodScheduled=False`` condition with ``status.nominatedNodeName``, off the decision path;
  when the decision preempts, they then evict the victims as kube-scheduler's preemption
  executor does (pkg/scheduler/framework/preemption/executor.go): a ``DisruptionTarget``
  condition, a graceful delete, a ``Preempted`` event on each victim naming the preemptor;
  lower-priority pods nominated to that node lose their nomination. The preemptor is not
  retried before that is done.

The API is reached only through the port, :class:`~.port.SchedulerApi`
(``kschedctl.k8s.scheduler_api`` implements it), so this module stays free of the kubernetes
client and is unit-tested with a fake.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from kschedctl.model.filters.volumebinding import fully_bound, pv_node_affinity_failure

from .algorithm import Algorithm, Decision
from .cache import VOLUME_KINDS, WORKLOAD_RESOURCES, PodChanges, SchedulerCache
from .leader import LeaderElector, micro_time
from .metrics import BINDING_BUCKETS, DECISION_BUCKETS, Metrics
from .policy import STEP_ANNOTATION
from .port import NAMESPACES, PDBS, SYNC, ApiConflict, ApiNotFound, ApiUnavailable, SchedulerApi
from .queue import QueuedPod, SchedulingQueue, pod_uid

__all__ = [
    "Settings",
    "SchedulerLoop",
    "NOTE_LIMIT",
    "CONNECTIONS",
    "BIND_WORKERS",
    "REPORT_WORKERS",
    "WATCHES",
]

log = logging.getLogger("kschedctl.scheduler")

NOTE_LIMIT = 1024  # events.k8s.io note length limit (bytes)
# Bindings in flight at once. kube-scheduler binds each pod in a goroutine of its own
# (schedule_one.go: go sched.runBindingCycle): with a few binders, the binding rate is capped
# at binders / API latency, whatever the client limit allows (4 binders at 1 s: 4 pods/s). On
# a busy API server a binding takes 100-400 ms (benchmarks/scheduler.py, 1,000 pending pods
# on 500 nodes: 8 binders 171 pods/s, 32: 272, 96: 294).
BIND_WORKERS = 96
REPORT_WORKERS = 16  # events and PodScheduled=False, off the decision path
# Watches held open at once: nodes, pods, PodDisruptionBudgets, namespaces, the volume
# kinds, the workload kinds (see ``start``).
WATCHES = 4 + len(VOLUME_KINDS) + len(WORKLOAD_RESOURCES)
# Connections the scheduler's client keeps: one per request in flight (binders, reporters,
# every watch, the Lease), so that none is opened (a TLS handshake on both sides) and closed
# per request when the pool is short of one.
CONNECTIONS = BIND_WORKERS + REPORT_WORKERS + WATCHES + 1


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
    # The same FailedScheduling message for the same pod is posted at most this often.
    event_interval: float = 60.0
    # VolumeBindingArgs.bindTimeoutSeconds' default: how long PreBind waits for the claims.
    volume_bind_timeout: float = 600.0
    # Published on the Lease so `kschedctl why` knows this scheduler's fallback policy.
    lease_annotations: dict[str, str] = field(default_factory=dict)


def _pod_key(pod: Mapping[str, Any]) -> str:
    md = pod.get("metadata") or {}
    return f"{md.get('namespace')}/{md.get('name')}"


def _truncate_note(note: str) -> str:
    raw = note.encode()
    if len(raw) <= NOTE_LIMIT:
        return note
    return raw[: NOTE_LIMIT - 4].decode(errors="ignore") + " ..."


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
        self.elector: LeaderElector | None = None
        if settings.leader_elect:
            self.elector = LeaderElector(
                settings.identity, settings.lease_namespace, settings.lease_name or settings.name,
                settings.lease_duration, settings.renew_deadline, settings.retry_period,
            )  # fmt: skip
        self.metrics = metrics or Metrics()
        self._define_metrics()
        self._binders = ThreadPoolExecutor(settings.bind_workers, thread_name_prefix="bind")
        self._reporters = ThreadPoolExecutor(settings.report_workers, thread_name_prefix="report")
        self._threads: dict[str, threading.Thread] = {}
        self._reported: dict[str, tuple[str, float]] = {}  # uid -> (message, when)
        # Preemptors whose victims are being evicted: not retried until that is done, like
        # DefaultPreemption's PreEnqueue ("waiting for the preemption for this pod to be
        # finished"), so a retry cannot see a half-evicted node.
        self._preempting: set[str] = set()

    # -- metrics ---------------------------------------------------------------------------

    def _define_metrics(self) -> None:
        m = self.metrics
        m.counter(
            "pods_scheduled_total",
            'Pods bound to a node, by the fallback step that placed them ("" for none).',
        )
        m.counter(
            "pods_failed_total", "Scheduling attempts that found no node, fallbacks included."
        )
        m.counter("fallback_used_total", "Pods placed by a fallback step, by step.")
        m.counter(
            "plugin_errors_total",
            "Scheduling attempts failed by a Python plugin that raised or broke its contract, "
            "by plugin.",
        )
        for plugin in self.algorithm.plugins.names():  # a 0 series per plugin from the start
            m.inc("plugin_errors_total", (("plugin", plugin),), 0)
        m.counter(
            "binding_errors_total",
            "Bindings that failed, by reason (conflict, gone, error, volume).",
        )
        m.histogram(
            "decision_duration_seconds",
            "Time to filter, score and walk the fallback steps for one pod.",
            DECISION_BUCKETS,
        )
        m.histogram(
            "binding_duration_seconds",
            "Time of the binding request, client rate limiting included.",
            BINDING_BUCKETS,
        )
        m.counter(
            "preemption_attempts_total",
            "Pods that found no node and were allowed to preempt (DefaultPreemption runs).",
        )
        m.counter("preemption_victims_total", "Pods evicted to make room for preemptors.")
        m.gauge("pending_pods", "Pods in the scheduling queue, by queue.", self._queue_gauge)
        m.gauge(
            "is_leader", "1 while this replica may schedule (holds the Lease).", self._leader_gauge
        )
        m.gauge("cache_objects", "Objects in the scheduler's cache, by kind.", self._cache_gauge)

    def _queue_gauge(self) -> list[tuple[tuple[tuple[str, str], ...], float]]:
        return [((("queue", k),), float(v)) for k, v in sorted(self.queue.counts().items())]

    def _leader_gauge(self) -> list[tuple[tuple[tuple[str, str], ...], float]]:
        return [((), 1.0 if self.leading.is_set() else 0.0)]

    def _cache_gauge(self) -> list[tuple[tuple[tuple[str, str], ...], float]]:
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
            and len(c.volumes) == len(VOLUME_KINDS)
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
        for resource in VOLUME_KINDS:
            threads.append((f"{resource} watcher", lambda r=resource: self._watch(r)))
        if self.elector is None:
            self.leading.set()  # leader election off: this replica always schedules
        else:
            threads.append(("elector", self._elect))
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
        elector = self._threads.get("elector")
        if elector is not None:
            elector.join(grace)
        self._release()

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
                elif resource in VOLUME_KINDS:
                    kind = VOLUME_KINDS[resource]
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
            self._reported.pop(uid, None)
        for pod in changes.queue:
            self.queue.add(pod)
        for pod, relevant in changes.updated:
            self.queue.update(pod, relevant)
        if changes.helps:
            self.queue.move_all()

    # -- leadership ------------------------------------------------------------------------

    def _elect(self) -> None:
        elector = self.elector
        assert elector is not None
        s = self.settings
        while not self.stop.is_set():
            try:
                lease = self.api.get_lease(s.lease_namespace, elector.name)
                action = elector.attempt(lease)
                written = None
                if action.kind == "create" and action.body is not None:
                    written = self.api.create_lease(s.lease_namespace, self._annotated(action.body))
                elif action.kind == "update" and action.body is not None:
                    written = self.api.update_lease(
                        s.lease_namespace, elector.name, self._annotated(action.body)
                    )
                if written is not None and elector.succeeded(written):
                    log.info("became the leader (Lease %s/%s, identity %s)",
                             s.lease_namespace, elector.name, s.identity)  # fmt: skip
                    self.leading.set()
                elif written is None and self.leading.is_set():
                    self._step_down("another replica holds the Lease")
            except ApiConflict:
                elector.lost_race()
                if self.leading.is_set():
                    self._step_down("another replica wrote the Lease first")
            except (ApiUnavailable, ApiNotFound) as err:
                log.warning("cannot renew or acquire the Lease: %s", err)
            if elector.should_step_down():
                self._step_down(f"the Lease was not renewed for {s.renew_deadline:.0f}s")
            self.stop.wait(s.retry_period)

    def _annotated(self, body: dict[str, Any]) -> dict[str, Any]:
        if self.settings.lease_annotations:
            md = body.setdefault("metadata", {})
            md["annotations"] = {**(md.get("annotations") or {}), **self.settings.lease_annotations}
        return body

    def _step_down(self, why: str) -> None:
        if self.elector is not None:
            self.elector.step_down()
        if self.leading.is_set():
            log.warning("stopped leading: %s; campaigning again", why)
            self.leading.clear()
            self.queue.wake()

    def _release(self) -> None:
        elector = self.elector
        if elector is None or not self.leading.is_set():
            return
        s = self.settings
        try:
            lease = self.api.get_lease(s.lease_namespace, elector.name)
            body = elector.release_body(lease) if lease else None
            if body is not None:
                self.api.update_lease(s.lease_namespace, elector.name, body)
                log.info("released the Lease %s/%s", s.lease_namespace, elector.name)
        except (ApiConflict, ApiNotFound, ApiUnavailable) as err:
            log.warning("could not release the Lease: %s", err)
        self.leading.clear()

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
                decision, victims, unnominated = self._decide_locked(entry.uid, pod)
                elapsed = time.perf_counter() - began
        if waits:
            self.queue.unschedulable(entry)  # retried once its preemption is done
            return
        self.metrics.observe("decision_duration_seconds", elapsed)
        if decision.policy_error and entry.attempts == 0:
            log.warning("%s: %s", _pod_key(pod), decision.policy_error)
        if decision.node is not None:
            self.queue.done(entry.uid)
            self._binders.submit(self._bind, pod, decision)
            return
        self.queue.unschedulable(entry)
        self.metrics.inc("pods_failed_total")
        if decision.plugin_error is not None:
            self.metrics.inc("plugin_errors_total", (("plugin", decision.plugin_error),))
            log.warning("%s: %s", _pod_key(pod), decision.message)
        log.info("no node for %s: %s", _pod_key(pod), decision.message)
        if decision.nominate is not None:
            self.metrics.inc("preemption_attempts_total")
        if victims or unnominated:
            self._reporters.submit(self._preempt, pod, decision, victims, unnominated)
        else:
            self._reporters.submit(self._report_failure, pod, decision)

    def _decide_locked(
        self, uid: str, pod: Mapping[str, Any]
    ) -> tuple[Decision, list[Mapping[str, Any]], list[Mapping[str, Any]]]:
        """Decide, and record the decision in the cache before the lock is released: the
        node assumed, or the nomination (and the nominations it takes away). Returns the
        decision, the victims to evict and the pods that lose their nomination."""
        decision = self.algorithm.decide(pod, self.cache.snapshot, self.start_index)
        self.start_index = decision.next_start
        if decision.node is not None:
            self.cache.assume(pod, decision.node)
            self.cache.assume_volumes(decision.bindings)
            return decision, [], []
        if decision.nominate is None:
            return decision, [], []
        self.cache.nominate(pod, decision.nominate)
        chosen = decision.victims
        if chosen is None:
            return decision, [], []
        victims = self._victim_pods(chosen.node, chosen.victim_uids)
        if victims:
            self._preempting.add(uid)
        # The executor takes the nomination away from lower-priority pods nominated to that
        # node: the room is the preemptor's now.
        unnominated = self._lower_nominated(pod, chosen.node)
        for other in unnominated:
            self.cache.nominate(other, "")
        return decision, victims, unnominated

    def _victim_pods(self, node: str, uids: tuple[str, ...]) -> list[Mapping[str, Any]]:
        if node not in self.cache.snapshot:
            return []
        by_uid = {p.uid: p.raw for p in self.cache.snapshot.node(node).pods}
        return [by_uid[u] for u in uids if u in by_uid]

    def _lower_nominated(self, pod: Mapping[str, Any], node: str) -> list[Mapping[str, Any]]:
        priority = (pod.get("spec") or {}).get("priority")
        mine = priority if isinstance(priority, int) else 0
        nominated = self.cache.snapshot.nominated_pods(self.settings.name).get(node, [])
        return [p.raw for p in nominated if p.priority < mine and p.uid != pod_uid(pod)]

    # -- binding and reporting -------------------------------------------------------------

    def _bind(self, pod: Mapping[str, Any], decision: Decision) -> None:
        uid = pod_uid(pod)
        node = decision.node
        assert node is not None
        annotations = {STEP_ANNOTATION: decision.step.name} if decision.step is not None else {}
        if decision.bindings:
            failure = self._bind_volumes(pod, decision)
            if failure is not None:
                self.metrics.inc("binding_errors_total", (("reason", "volume"),))
                log.warning("binding the volumes of %s on %s: %s; retrying later",
                            _pod_key(pod), node, failure)  # fmt: skip
                with self.lock:
                    self.cache.forget(uid)
                    self.cache.forget_volumes(decision.bindings)
                    latest = self.cache.is_current(pod)
                if latest is not None and not self.stop.is_set():
                    self.queue.add_backoff(latest)
                    self._reporters.submit(
                        self._report_failure, latest, Decision(None, message=failure)
                    )
                return
        began = time.perf_counter()
        try:
            self.api.bind(pod, node, annotations)
        except (ApiConflict, ApiNotFound) as err:
            reason = "conflict" if isinstance(err, ApiConflict) else "gone"
            self.metrics.inc("binding_errors_total", (("reason", reason),))
            log.info("binding %s to %s: %s; dropping it", _pod_key(pod), node, err)
            with self.lock:
                self.cache.forget(uid)
            return
        except ApiUnavailable as err:
            self.metrics.inc("binding_errors_total", (("reason", "error"),))
            log.warning("binding %s to %s failed: %s; retrying later", _pod_key(pod), node, err)
            with self.lock:
                self.cache.forget(uid)
                latest = self.cache.is_current(pod)
            if latest is not None:
                self.queue.add_backoff(latest)
            return
        finally:
            self.metrics.observe("binding_duration_seconds", time.perf_counter() - began)
        step = decision.step.name if decision.step is not None else ""
        self.metrics.inc("pods_scheduled_total", (("fallback", step),))
        if step:
            self.metrics.inc("fallback_used_total", (("step", step),))
        log.info("bound %s to %s%s", _pod_key(pod), node, f" (fallback {step})" if step else "")
        self._reported.pop(uid, None)
        self._reporters.submit(
            self._post_event, pod, "Normal", "Scheduled", "Binding",
            decision.scheduled_message(_pod_key(pod)),
        )  # fmt: skip

    def _bind_volumes(self, pod: Mapping[str, Any], decision: Decision) -> str | None:
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

    def _volumes_bound(self, pod: Mapping[str, Any], decision: Decision) -> str | None:
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

    def _preempt(
        self,
        pod: Mapping[str, Any],
        decision: Decision,
        victims: list[Mapping[str, Any]],
        unnominated: list[Mapping[str, Any]],
    ) -> None:
        """Report the pod as kube-scheduler does (FailedScheduling, PodScheduled=False with
        the nominated node), then evict ``victims`` (the executor's prepareCandidate) and take
        the nomination from ``unnominated``; the pod may be retried after that."""
        try:
            self._report_failure(pod, decision)
            self._evict(pod, decision, victims, unnominated)
        finally:
            with self.lock:
                self._preempting.discard(pod_uid(pod))
            self.queue.move_all()

    def _evict(
        self,
        pod: Mapping[str, Any],
        decision: Decision,
        victims: list[Mapping[str, Any]],
        unnominated: list[Mapping[str, Any]],
    ) -> None:
        node = decision.nominate
        md = pod.get("metadata") or {}
        scheduler = (pod.get("spec") or {}).get("schedulerName") or self.settings.name
        for victim in victims:
            vmd = victim.get("metadata") or {}
            if vmd.get("deletionTimestamp"):
                continue  # already terminating: nothing to ask of the API
            try:
                self.api.patch_pod_status(
                    victim,
                    {
                        "metadata": {"uid": vmd.get("uid")},
                        "status": {
                            "conditions": [
                                {
                                    "type": "DisruptionTarget",
                                    "status": "True",
                                    "reason": "PreemptionByScheduler",
                                    "message": f"{scheduler}: preempting to accommodate a "
                                    "higher priority pod",
                                    "lastTransitionTime": micro_time()[:19] + "Z",
                                }
                            ]
                        },
                    },
                )
                self.api.delete_pod(victim)
            except (ApiNotFound, ApiConflict):
                log.info("victim %s of %s is gone already", _pod_key(victim), _pod_key(pod))
                continue
            except ApiUnavailable as err:
                log.warning("cannot preempt %s for %s: %s", _pod_key(victim), _pod_key(pod), err)
                continue
            self.metrics.inc("preemption_victims_total")
            log.info("preempted %s on %s for %s", _pod_key(victim), node, _pod_key(pod))
            self._post_event(
                victim, "Normal", "Preempted", "Preempting",
                f"Preempted by pod {md.get('uid')} on node {node}", related=pod,
            )  # fmt: skip
        for other in unnominated:
            try:
                self.api.patch_pod_status(
                    other,
                    {
                        "metadata": {"uid": pod_uid(other)},
                        "status": {"nominatedNodeName": None},
                    },
                )
            except (ApiConflict, ApiNotFound, ApiUnavailable) as err:
                log.info("cannot clear the nominated node of %s: %s", _pod_key(other), err)

    def _report_failure(self, pod: Mapping[str, Any], decision: Decision) -> None:
        message = decision.message or "no node is available"
        uid = pod_uid(pod)
        now = time.monotonic()
        last = self._reported.get(uid)
        if last is None or last[0] != message or now - last[1] >= self.settings.event_interval:
            self._reported[uid] = (message, now)
            self._post_event(pod, "Warning", "FailedScheduling", "Scheduling", message)
        current = next(
            (c for c in (pod.get("status") or {}).get("conditions") or []
             if c.get("type") == "PodScheduled"),
            None,
        )  # fmt: skip
        # kube-scheduler's updatePod: the nominated node changes only when preemption says so
        # (set, or "" to clear) and differs from the pod's.
        nominate = decision.nominate
        nnn_changes = nominate is not None and nominate != (
            (pod.get("status") or {}).get("nominatedNodeName") or ""
        )
        if (
            not nnn_changes
            and current is not None
            and (
                current.get("status"),
                current.get("reason"),
                current.get("message"),
            )
            == ("False", "Unschedulable", message)
        ):
            return
        status: dict[str, Any] = {}
        if nnn_changes:
            status["nominatedNodeName"] = nominate or None
        patch = {
            "metadata": {"uid": pod_uid(pod)},  # never patch a re-created pod of that name
            "status": {
                **status,
                "conditions": [
                    {
                        "type": "PodScheduled",
                        "status": "False",
                        "reason": "Unschedulable",
                        "message": message,
                        "lastProbeTime": None,
                        "lastTransitionTime": micro_time()[:19] + "Z",
                    }
                ],
            },
        }
        try:
            self.api.patch_pod_status(pod, patch)
        except (ApiConflict, ApiNotFound, ApiUnavailable) as err:
            log.info("cannot set PodScheduled=False on %s: %s", _pod_key(pod), err)

    def _post_event(
        self,
        pod: Mapping[str, Any],
        kind: str,
        reason: str,
        action: str,
        note: str,
        related: Mapping[str, Any] | None = None,
    ) -> None:
        md = pod.get("metadata") or {}
        now_ns = time.time_ns()
        s = self.settings
        event = {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {"name": f"{md.get('name')}.{now_ns:x}", "namespace": md.get("namespace")},
            "eventTime": micro_time(),
            "reportingController": s.name,
            "reportingInstance": f"{s.name}-{s.identity.split('_', 1)[0]}"[:128],
            "action": action,
            "reason": reason,
            "type": kind,
            "note": _truncate_note(note),
            "regarding": {
                "apiVersion": "v1",
                "kind": "Pod",
                "namespace": md.get("namespace"),
                "name": md.get("name"),
                "uid": md.get("uid"),
            },
        }
        if related is not None:
            rmd = related.get("metadata") or {}
            event["related"] = {
                "apiVersion": "v1",
                "kind": "Pod",
                "namespace": rmd.get("namespace"),
                "name": rmd.get("name"),
                "uid": rmd.get("uid"),
            }
        try:
            self.api.post_event(event)
        except (ApiConflict, ApiNotFound, ApiUnavailable) as err:
            log.info("cannot post the %s event for %s: %s", reason, _pod_key(pod), err)
