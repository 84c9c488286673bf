"""The run loop against an in-memory API: assume-on-decide, binding outcomes, events, the
PodScheduled condition, retries on cluster changes, and leader election between replicas."""

from __future__ import annotations

import copy
import queue
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import pytest
from test_filters_support import node, pod

from kschedctl.model.scheduling.algorithm import Algorithm
from kschedctl.model.scheduling.loop import (
    BIND_WORKERS,
    CONNECTIONS,
    EVENT_WORKERS,
    REPORT_WORKERS,
    WATCHES,
    SchedulerLoop,
    Settings,
)
from kschedctl.model.scheduling.policyload import parse_policy
from kschedctl.model.scheduling.port import ApiConflict, ApiNotFound, ApiUnavailable


@dataclass
class Event:
    type: str
    object: dict[str, Any] = field(default_factory=dict)
    objects: list[dict[str, Any]] = field(default_factory=list)


class FakeApi:
    """Enough of an API server: objects, watches, binding with uid preconditions, Leases."""

    def __init__(self, nodes: list[dict[str, Any]]) -> None:
        self.lock = threading.Lock()
        self.nodes = {n["metadata"]["name"]: n for n in nodes}
        self.pods: dict[str, dict[str, Any]] = {}
        # resource -> name -> object (claims are keyed by name: the tests use one namespace)
        self.volumes: dict[str, dict[str, dict[str, Any]]] = {
            "persistentvolumeclaims": {},
            "persistentvolumes": {},
            "storageclasses": {},
            "deviceclasses": {},
            "resourceslices": {},
            "resourceclaims": {},
        }
        self.claim_writes: list[tuple[str, bool, str]] = []  # (claim, allocated, pod reserved)
        self.claim_hook: Callable[[Mapping[str, Any]], None] | None = None
        self.volume_binds: list[tuple[str, str]] = []  # (pv, claim)
        self.leases: dict[str, dict[str, Any]] = {}
        self.namespaces: dict[str, dict[str, Any]] = {}
        self.watchers: list[tuple[str, queue.Queue[Event]]] = []
        self.binds: list[tuple[str, str, str]] = []  # (pod, node, by whom: the calling thread)
        self.events: list[dict[str, Any]] = []
        self.status_patches: list[dict[str, Any]] = []
        self.bind_hook: Callable[[dict[str, Any]], None] | None = None
        self.pdbs: dict[str, dict[str, Any]] = {}
        self.deleted: list[str] = []  # names of the pods delete_pod removed
        self.version = 0
        self.unlisted: set[str] = set()  # resources the scheduler may not list: never synced

    # -- test helpers -------------------------------------------------------------------------

    def _broadcast(self, resource: str, kind: str, obj: dict[str, Any]) -> None:
        for res, q in self.watchers:
            if res == resource:
                q.put(Event(kind, copy.deepcopy(obj)))

    def add_pod(self, p: dict[str, Any]) -> None:
        with self.lock:
            self.pods[p["metadata"]["uid"]] = p
            self._broadcast("pods", "ADDED", p)

    def add_node(self, n: dict[str, Any]) -> None:
        with self.lock:
            self.nodes[n["metadata"]["name"]] = n
            self._broadcast("nodes", "ADDED", n)

    def put_namespace(self, name: str, labels: dict[str, str]) -> None:
        with self.lock:
            kind = "MODIFIED" if name in self.namespaces else "ADDED"
            self.namespaces[name] = {"metadata": {"name": name, "labels": labels}}
            self._broadcast("namespaces", kind, self.namespaces[name])

    def remove_pod(self, uid: str) -> None:
        with self.lock:
            p = self.pods.pop(uid)
            self._broadcast("pods", "DELETED", p)

    def node_of(self, name: str) -> str | None:
        for p in self.pods.values():
            if p["metadata"]["name"] == name:
                return p["spec"].get("nodeName")
        raise KeyError(name)

    # -- SchedulerApi -------------------------------------------------------------------------

    def watch(self, resource: str, stop: threading.Event) -> Iterator[Event]:
        q: queue.Queue[Event] = queue.Queue()
        if resource in self.unlisted:  # forbidden: told once, never synced
            yield Event("UNLISTED")
            stop.wait()
            return
        with self.lock:
            if resource in self.volumes:
                objects = list(self.volumes[resource].values())
            else:
                source = {
                    "nodes": self.nodes,
                    "pods": self.pods,
                    "poddisruptionbudgets": self.pdbs,
                    "namespaces": self.namespaces,
                }.get(resource, {})
                objects = list(source.values())
            self.watchers.append((resource, q))
            first = Event("SYNC", objects=copy.deepcopy(objects))
        yield first
        while not stop.is_set():
            try:
                yield q.get(timeout=0.05)
            except queue.Empty:
                continue

    def bind(self, p: Mapping[str, Any], node_name: str, annotations: Mapping[str, str]) -> None:
        if self.bind_hook is not None:
            self.bind_hook(dict(p))
        with self.lock:
            uid = p["metadata"]["uid"]
            live = self.pods.get(uid)
            if live is None:
                raise ApiNotFound(f"pods {p['metadata']['name']} not found")
            if live["spec"].get("nodeName"):
                raise ApiConflict(
                    f"pod {p['metadata']['name']} is already assigned to node {live['spec']['nodeName']}"
                )
            live["spec"]["nodeName"] = node_name
            live["metadata"].setdefault("annotations", {}).update(annotations)
            live["status"]["phase"] = "Running"
            self.binds.append(
                (live["metadata"]["name"], node_name, threading.current_thread().name)
            )
            self._broadcast("pods", "MODIFIED", live)

    def put_volume(self, resource: str, obj: dict[str, Any]) -> None:
        with self.lock:
            self.version += 1
            obj["metadata"]["resourceVersion"] = str(self.version)
            name = obj["metadata"]["name"]
            kind = "MODIFIED" if name in self.volumes[resource] else "ADDED"
            self.volumes[resource][name] = obj
            self._broadcast(resource, kind, obj)

    def bind_volume(self, pv: Mapping[str, Any], pvc: Mapping[str, Any]) -> None:
        with self.lock:
            live = self.volumes["persistentvolumes"][pv["metadata"]["name"]]
            if live["spec"].get("claimRef"):
                raise ApiConflict("taken")
            live = copy.deepcopy(live)
            live["spec"]["claimRef"] = {
                "namespace": pvc["metadata"]["namespace"],
                "name": pvc["metadata"]["name"],
                "uid": pvc["metadata"]["uid"],
            }
            self.volume_binds.append((live["metadata"]["name"], pvc["metadata"]["name"]))
        self.put_volume("persistentvolumes", live)

    def reserve_claim(
        self,
        claim: Mapping[str, Any],
        allocation: Mapping[str, Any] | None,
        reserve: Mapping[str, str] | None,
    ) -> None:
        if self.claim_hook is not None:
            self.claim_hook(claim)
        with self.lock:
            live = copy.deepcopy(self.volumes["resourceclaims"][claim["metadata"]["name"]])
            status = live.setdefault("status", {})
            if allocation is not None:
                if status.get("allocation"):
                    raise ApiConflict("got allocated elsewhere in the meantime")
                status["allocation"] = dict(allocation)
            if reserve is not None:
                status["reservedFor"] = [*(status.get("reservedFor") or []), dict(reserve)]
            self.claim_writes.append(
                (live["metadata"]["name"], allocation is not None, (reserve or {}).get("name", ""))
            )
        self.put_volume("resourceclaims", live)

    def unreserve_claim(self, claim: Mapping[str, Any], pod_uid: str) -> None:
        with self.lock:
            live = copy.deepcopy(self.volumes["resourceclaims"][claim["metadata"]["name"]])
            status = live.setdefault("status", {})
            status["reservedFor"] = [
                r for r in status.get("reservedFor") or [] if r.get("uid") != pod_uid
            ]
        self.put_volume("resourceclaims", live)

    def create_claim(self, claim: Mapping[str, Any]) -> dict[str, Any]:
        created = copy.deepcopy(dict(claim))
        md = created["metadata"]
        md["name"] = md["generateName"] + "x7k2q"
        md["uid"] = f"uid-{md['name']}"
        if self.claim_hook is not None:
            self.claim_hook({"metadata": {"name": f"create {md['name']}"}})
        self.put_volume("resourceclaims", created)
        return copy.deepcopy(created)

    def delete_claim(self, claim: Mapping[str, Any]) -> None:
        with self.lock:
            gone = self.volumes["resourceclaims"].pop(claim["metadata"]["name"], None)
            if gone is None:
                raise ApiNotFound("gone")
            self._broadcast("resourceclaims", "DELETED", gone)

    def deallocate_claim(self, claim: Mapping[str, Any]) -> None:
        with self.lock:
            live = copy.deepcopy(self.volumes["resourceclaims"][claim["metadata"]["name"]])
            for key in ("allocation", "reservedFor", "devices"):
                live.setdefault("status", {}).pop(key, None)
        self.put_volume("resourceclaims", live)

    def post_event(self, event: Mapping[str, Any]) -> None:
        with self.lock:
            self.events.append(dict(event))

    def delete_pod(self, p: Mapping[str, Any]) -> None:
        with self.lock:
            live = self.pods.pop(p["metadata"]["uid"], None)
            if live is None:
                raise ApiNotFound("gone")
            self.deleted.append(live["metadata"]["name"])
            self._broadcast("pods", "DELETED", live)  # a zero grace period

    def patch_pod_status(self, p: Mapping[str, Any], patch: Mapping[str, Any]) -> None:
        with self.lock:
            live = self.pods.get(p["metadata"]["uid"])
            if live is None:
                raise ApiNotFound("gone")
            self.status_patches.append(dict(patch))
            status = patch["status"]
            if "conditions" in status:
                kept = [
                    c
                    for c in live["status"].get("conditions") or []
                    if c["type"] not in {n["type"] for n in status["conditions"]}
                ]
                live["status"]["conditions"] = kept + status["conditions"]
            if "nominatedNodeName" in status:
                if status["nominatedNodeName"] is None:
                    live["status"].pop("nominatedNodeName", None)
                else:
                    live["status"]["nominatedNodeName"] = status["nominatedNodeName"]
            self._broadcast("pods", "MODIFIED", live)

    def get_lease(self, namespace: str, name: str) -> dict[str, Any] | None:
        with self.lock:
            lease = self.leases.get(name)
            return copy.deepcopy(lease) if lease else None

    def create_lease(self, namespace: str, body: Mapping[str, Any]) -> dict[str, Any]:
        with self.lock:
            name = body["metadata"]["name"]
            if name in self.leases:
                raise ApiConflict("exists")
            return self._store_lease(name, body)

    def update_lease(self, namespace: str, name: str, body: Mapping[str, Any]) -> dict[str, Any]:
        with self.lock:
            current = self.leases.get(name)
            if current is None:
                raise ApiNotFound("no lease")
            if body["metadata"].get("resourceVersion") != current["metadata"]["resourceVersion"]:
                raise ApiConflict("the object has been modified")
            return self._store_lease(name, body)

    def _store_lease(self, name: str, body: Mapping[str, Any]) -> dict[str, Any]:
        self.version += 1
        stored = copy.deepcopy(dict(body))
        stored["metadata"]["resourceVersion"] = str(self.version)
        self.leases[name] = stored
        return copy.deepcopy(stored)


def ours(name: str, cpu: str = "1", **kw: Any) -> dict[str, Any]:
    p = pod(name, schedulerName="mine", cpu=cpu, **kw)
    p["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    return p


def settings(**kw: Any) -> Settings:
    base: dict[str, Any] = dict(
        name="mine", identity=f"host_{time.monotonic_ns()}", leader_elect=False,
        initial_backoff=0.05, max_backoff=0.2, lease_duration=1.0, renew_deadline=0.6,
        retry_period=0.1,
    )  # fmt: skip
    base.update(kw)
    return Settings(**base)


def eventually(check: Callable[[], Any], timeout: float = 10.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.02)


@pytest.fixture()
def running() -> Iterator[Callable[..., SchedulerLoop]]:
    loops: list[SchedulerLoop] = []

    def start(api: FakeApi, s: Settings) -> SchedulerLoop:
        loop = SchedulerLoop(api, s)  # type: ignore[arg-type]
        loop.start()
        loops.append(loop)
        return loop

    yield start
    for loop in loops:
        loop.shutdown(grace=2)


def test_capacity_is_never_double_booked(running: Callable[..., SchedulerLoop]) -> None:
    api = FakeApi([node("a", cpu="4"), node("b", cpu="4")])
    slow = threading.Event()
    api.bind_hook = lambda _p: slow.wait(0.01)  # bindings lag behind decisions
    for i in range(10):
        api.add_pod(ours(f"p{i}", cpu="1"))
    loop = running(api, settings())
    eventually(
        lambda: (
            len(api.binds) == 8
            and len([e for e in api.events if e["reason"] == "FailedScheduling"]) == 2
            # events are posted off the decision path: the last may trail its binding
            and len([e for e in api.events if e["reason"] == "Scheduled"]) == 8
        )
    )
    per_node: dict[str, int] = {}
    for _name, n, _thread in api.binds:
        per_node[n] = per_node.get(n, 0) + 1
    assert per_node == {"a": 4, "b": 4}
    assert len({name for name, _n, _t in api.binds}) == 8  # none bound twice
    scheduled = [e for e in api.events if e["reason"] == "Scheduled"]
    assert len(scheduled) == 8 and all(e["reportingController"] == "mine" for e in api.events)
    assert scheduled[0]["note"].startswith("Successfully assigned default/p")
    failed = [e for e in api.events if e["reason"] == "FailedScheduling"]
    assert failed[0]["note"] == (
        "0/2 nodes are available: 2 Insufficient cpu. no new claims to deallocate, "
        "preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."
    )
    assert failed[0]["type"] == "Warning" and failed[0]["action"] == "Scheduling"
    eventually(lambda: len(api.status_patches) == 2)
    cond = api.status_patches[0]["status"]["conditions"][0]
    assert (cond["type"], cond["status"], cond["reason"]) == (
        "PodScheduled",
        "False",
        "Unschedulable",
    )
    assert loop.metrics.value("pods_failed_total") >= 2
    assert loop.metrics.value("pods_scheduled_total", (("fallback", ""),)) == 8


def test_priority_then_age_decides_who_gets_the_last_slot(
    running: Callable[..., SchedulerLoop],
) -> None:
    api = FakeApi([node("a", cpu="1")])
    api.add_pod(ours("low", created="2026-01-01T00:00:00Z"))
    high = ours("high", priority=100)
    high["metadata"]["creationTimestamp"] = "2026-01-01T00:00:09Z"
    api.add_pod(high)
    running(api, settings())
    eventually(lambda: api.binds)
    assert api.binds[0][:2] == ("high", "a")


def test_an_unschedulable_pod_is_retried_when_a_node_appears(
    running: Callable[..., SchedulerLoop],
) -> None:
    api = FakeApi([node("small", cpu="1")])
    api.add_pod(ours("big", cpu="2"))
    loop = running(api, settings(initial_backoff=0.05))
    eventually(lambda: api.status_patches)
    api.add_node(node("large", cpu="8"))
    eventually(lambda: api.binds)
    assert api.binds[0][:2] == ("big", "large")
    assert loop.queue.counts()["unschedulable"] == 0


def test_namespace_selectors_select_by_the_watched_namespace_labels(
    running: Callable[..., SchedulerLoop],
) -> None:
    """A required pod affinity term with a namespaceSelector, as kube-scheduler reads it:
    the namespaces whose labels match now; a namespace relabelled makes the pod fit."""
    api = FakeApi([node("a", cpu="4"), node("b", cpu="4")])
    api.put_namespace("default", {})
    api.put_namespace("shop", {})
    api.add_pod(pod("db", namespace="shop", node_name="b", labels={"app": "db"}))
    term = {
        "labelSelector": {"matchLabels": {"app": "db"}},
        "namespaceSelector": {"matchLabels": {"team": "shop"}},
        "topologyKey": "kubernetes.io/hostname",
    }
    affinity = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    api.add_pod(ours("web", affinity=affinity))
    loop = running(api, settings())
    failed = eventually(lambda: [e for e in api.events if e["reason"] == "FailedScheduling"])
    assert "didn't match pod affinity rules" in failed[0]["note"], failed[0]["note"]
    assert not api.binds
    api.put_namespace("shop", {"team": "shop"})  # now the term selects it
    eventually(lambda: api.binds)
    assert api.binds[0][:2] == ("web", "b")
    assert loop.cache.counts()["namespaces"] == 2


def test_deleting_a_running_pod_makes_room(running: Callable[..., SchedulerLoop]) -> None:
    api = FakeApi([node("a", cpu="1")])
    hog = pod("hog", node_name="a", cpu="1")
    api.add_pod(hog)
    api.add_pod(ours("waiting", cpu="1"))
    running(api, settings())
    eventually(lambda: api.status_patches)
    api.remove_pod(hog["metadata"]["uid"])
    eventually(lambda: api.binds)


def test_conflict_drops_the_assumption(running: Callable[..., SchedulerLoop]) -> None:
    api = FakeApi([node("a", cpu="2")])
    raced = ours("raced", cpu="2")

    def someone_else_binds_first(p: dict[str, Any]) -> None:
        if p["metadata"]["name"] == "raced":
            with api.lock:
                api.pods[p["metadata"]["uid"]]["spec"]["nodeName"] = "elsewhere"

    api.bind_hook = someone_else_binds_first
    api.add_pod(raced)
    loop = running(api, settings())
    eventually(lambda: loop.metrics.value("binding_errors_total", (("reason", "conflict"),)) == 1)
    eventually(lambda: not loop.cache.assumed)
    assert loop.cache.snapshot.node("a").requested.get("cpu", 0) == 0
    api.bind_hook = None
    api.add_pod(ours("next", cpu="2"))
    eventually(lambda: api.binds)  # the capacity is free again
    assert api.binds[0][:2] == ("next", "a")


def test_transient_binding_errors_are_retried(running: Callable[..., SchedulerLoop]) -> None:
    api = FakeApi([node("a")])
    failures = [ApiUnavailable("the server is currently unable to handle the request")] * 2

    def flaky(_p: dict[str, Any]) -> None:
        if failures:
            raise failures.pop()

    api.bind_hook = flaky
    api.add_pod(ours("p"))
    loop = running(api, settings())
    eventually(lambda: api.binds)
    assert loop.metrics.value("binding_errors_total", (("reason", "error"),)) == 2


def test_fallback_step_is_recorded_on_the_pod_and_in_the_event(
    running: Callable[..., SchedulerLoop],
) -> None:
    spare = node("spare", labels={"pool": "spare"})
    api = FakeApi([node("main", labels={"pool": "main"}, cpu="1"), spare])
    policy = parse_policy(
        {
            "apiVersion": "kschedctl.io/v1alpha1",
            "kind": "FallbackPolicy",
            "fallbacks": [{"name": "spare-pool", "nodePool": {"pool": "spare"}}],
        },
        "policy.yaml",
    )
    api.add_pod(ours("fits", cpu="1", nodeSelector={"pool": "main"}))
    api.add_pod(ours("overflow", cpu="1", nodeSelector={"pool": "main"}))
    loop = running(api, settings(algorithm=Algorithm(policy=policy)))
    eventually(lambda: len(api.binds) == 2)
    assert api.node_of("fits") == "main" and api.node_of("overflow") == "spare"
    overflow = next(p for p in api.pods.values() if p["metadata"]["name"] == "overflow")
    assert overflow["metadata"]["annotations"] == {"kschedctl.io/fallback-step": "spare-pool"}
    fits = next(p for p in api.pods.values() if p["metadata"]["name"] == "fits")
    assert "kschedctl.io/fallback-step" not in (fits["metadata"].get("annotations") or {})
    eventually(lambda: len(api.events) == 2)
    note = next(e["note"] for e in api.events if e["regarding"]["name"] == "overflow")
    assert "by fallback step 'spare-pool'" in note
    assert loop.metrics.value("fallback_used_total", (("step", "spare-pool"),)) == 1


def test_one_leader_among_replicas_and_a_takeover(running: Callable[..., SchedulerLoop]) -> None:
    api = FakeApi([node("a", cpu="100")])
    first = running(api, settings(leader_elect=True, identity="one_1"))
    second = running(api, settings(leader_elect=True, identity="two_2"))
    eventually(lambda: first.leading.is_set() or second.leading.is_set())
    time.sleep(0.5)
    assert first.leading.is_set() != second.leading.is_set()
    leader, standby = (first, second) if first.leading.is_set() else (second, first)
    for i in range(5):
        api.add_pod(ours(f"p{i}"))
    eventually(lambda: len(api.binds) == 5)
    assert api.leases["mine"]["spec"]["holderIdentity"] == leader.settings.identity
    leader.shutdown(grace=2)  # releases the Lease
    eventually(lambda: standby.leading.is_set(), timeout=5)
    for i in range(5, 8):
        api.add_pod(ours(f"p{i}"))
    eventually(lambda: len(api.binds) == 8)
    assert len({name for name, _n, _t in api.binds}) == 8


def test_a_crashed_leader_is_replaced_after_the_lease_expires(
    running: Callable[..., SchedulerLoop],
) -> None:
    api = FakeApi([node("a", cpu="100")])
    first = running(api, settings(leader_elect=True, identity="one_1"))
    eventually(lambda: first.leading.is_set())
    second = running(api, settings(leader_elect=True, identity="two_2"))
    first.stop.set()  # the elector stops renewing; no release
    first.queue.close()
    lost_at = time.monotonic()
    eventually(lambda: second.leading.is_set(), timeout=5)
    assert time.monotonic() - lost_at >= 0.5  # waited for the lease to expire
    assert api.leases["mine"]["spec"]["leaseTransitions"] == 1


def test_a_leader_that_cannot_renew_steps_down(running: Callable[..., SchedulerLoop]) -> None:
    api = FakeApi([node("a")])
    loop = running(api, settings(leader_elect=True, identity="one_1"))
    eventually(lambda: loop.leading.is_set())
    real_update = api.update_lease

    def unreachable(*_a: Any) -> dict[str, Any]:
        raise ApiUnavailable("connection refused")

    api.update_lease = unreachable  # type: ignore[method-assign]
    eventually(lambda: not loop.leading.is_set(), timeout=5)
    api.add_pod(ours("waits"))
    time.sleep(0.3)
    assert api.binds == []  # a former leader does not schedule
    api.update_lease = real_update  # type: ignore[method-assign]
    eventually(lambda: loop.leading.is_set(), timeout=5)
    eventually(lambda: api.binds)  # and resumes with the pod it kept queued


def test_ready_without_the_csi_objects_an_older_role_cannot_list() -> None:
    api = FakeApi([node("a")])
    api.unlisted = {"csidrivers", "csistoragecapacities", "csinodes"}
    loop = SchedulerLoop(api, settings())  # type: ignore[arg-type]
    loop.start()
    try:
        eventually(loop.ready)
        # unknown, not absent: pods that need them are "not evaluated"
        assert loop.cache.snapshot.csi_drivers is None
        api.add_pod(ours("plain"))
        eventually(lambda: api.binds)
    finally:
        loop.shutdown(grace=2)


def test_health_and_readiness() -> None:
    api = FakeApi([node("a")])
    loop = SchedulerLoop(api, settings())  # type: ignore[arg-type]
    assert not loop.ready()
    loop.start()
    try:
        eventually(loop.ready)
        assert loop.healthy() == (True, "ok")
        rendered = loop.metrics.render()
        assert 'kschedctl_scheduler_cache_objects{kind="nodes"} 1' in rendered
        assert 'kschedctl_scheduler_cache_objects{kind="csistoragecapacities"} 0' in rendered
    finally:
        loop.shutdown(grace=2)


def test_the_connection_pool_holds_every_request_in_flight(
    running: Callable[..., SchedulerLoop],
) -> None:
    """Every watch holds a connection while binders, reporters and the elector use theirs:
    a pool short of one opens and closes a connection (a TLS handshake) per request."""
    loop = running(FakeApi([node("a")]), settings(leader_elect=True))
    watches = [name for name in loop._threads if name.endswith(" watcher")]
    assert len(watches) == WATCHES
    assert CONNECTIONS == (
        BIND_WORKERS + REPORT_WORKERS + EVENT_WORKERS + WATCHES + ("elector" in loop._threads)
    )


def test_preemption_evicts_nominates_and_binds(running: Callable[..., SchedulerLoop]) -> None:
    api = FakeApi([node("a", cpu="2")])
    low = pod("low", node_name="a", cpu="1", priority=1)
    keep = pod("keep", node_name="a", cpu="1", priority=50)
    for p in (low, keep):
        api.add_pod(p)
    # a lower-priority pod of ours nominated to a (it may not preempt): it loses the nomination
    waiting = ours("waiting", cpu="1", priority=2, preemptionPolicy="Never")
    waiting["status"]["nominatedNodeName"] = "a"
    api.add_pod(waiting)
    loop = running(api, settings())
    api.add_pod(ours("vip", cpu="1", priority=10))
    eventually(lambda: ("vip", "a") in {(n, node_name) for n, node_name, _t in api.binds})
    assert api.deleted == ["low"]
    (preempted,) = [e for e in api.events if e["reason"] == "Preempted"]
    assert preempted["note"] == "Preempted by pod uid-default-vip on node a"
    assert (preempted["type"], preempted["action"]) == ("Normal", "Preempting")
    assert preempted["regarding"]["name"] == "low" and preempted["related"]["name"] == "vip"
    disruption = next(
        c
        for p in api.status_patches
        for c in p["status"].get("conditions") or []
        if c["type"] == "DisruptionTarget"
    )
    assert (disruption["reason"], disruption["message"]) == (
        "PreemptionByScheduler",
        "mine: preempting to accommodate a higher priority pod",
    )
    nominations = [
        (p["metadata"]["uid"], p["status"]["nominatedNodeName"])
        for p in api.status_patches
        if "nominatedNodeName" in p["status"]
    ]
    assert ("uid-default-waiting", None) in nominations
    assert ("uid-default-vip", "a") in nominations
    # as kube-scheduler: the preemptor is reported and nominated, then the victims go
    order = [
        "nominated" if p["status"].get("nominatedNodeName") == "a" else "evicting"
        for p in api.status_patches
        if p["status"].get("nominatedNodeName") == "a"
        or any(c["type"] == "DisruptionTarget" for c in p["status"].get("conditions") or [])
    ]
    assert order == ["nominated", "evicting"]
    failed = next(
        e
        for e in api.events
        if e["reason"] == "FailedScheduling" and e["regarding"]["name"] == "vip"
    )
    # preemption found a node: no PostFilter text, as kube-scheduler writes it
    assert failed["note"] == "0/1 nodes are available: 1 Insufficient cpu."
    assert loop.metrics.render().count("preemption_victims_total") >= 1


def test_never_preempts_nothing(running: Callable[..., SchedulerLoop]) -> None:
    api = FakeApi([node("a", cpu="1")])
    api.add_pod(pod("low", node_name="a", cpu="1", priority=1))
    running(api, settings())
    api.add_pod(ours("polite", cpu="1", priority=10, preemptionPolicy="Never"))
    eventually(lambda: api.status_patches)
    assert api.deleted == [] and not api.binds
    assert "nominatedNodeName" not in api.status_patches[0]["status"]
    assert api.status_patches[0]["status"]["conditions"][0]["message"] == (
        "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, "
        "preemption: not eligible due to preemptionPolicy=Never."
    )


def test_scheduled_events_trail_the_bindings_a_few_at_a_time_stamped_at_the_binding(
    running: Callable[..., SchedulerLoop],
) -> None:
    """A burst's Scheduled events go through EVENT_WORKERS posters (here 2), not all at once,
    and each says when its pod was bound, not when it was posted."""
    api = FakeApi([node("a", cpu="64")])
    gate = threading.Event()
    in_flight, most, bound_ns = [0], [0], {}
    post = api.post_event
    bind = api.bind

    def slow_post(event: Mapping[str, Any]) -> None:
        with api.lock:
            in_flight[0] += 1
            most[0] = max(most[0], in_flight[0])
        gate.wait(10)  # held until every pod is bound
        with api.lock:
            in_flight[0] -= 1
        post(event)

    def timed_bind(p: Mapping[str, Any], node_name: str, annotations: Mapping[str, str]) -> None:
        bind(p, node_name, annotations)
        bound_ns[p["metadata"]["name"]] = time.time_ns()

    api.post_event = slow_post  # type: ignore[method-assign]
    api.bind = timed_bind  # type: ignore[method-assign]
    for i in range(6):
        api.add_pod(ours(f"p{i}", cpu="1"))
    running(api, settings(event_workers=2))
    eventually(lambda: len(api.binds) == 6 and most[0] == 2)
    posted_ns = time.time_ns()
    gate.set()
    eventually(lambda: len(api.events) == 6)
    assert most[0] == 2
    for event in api.events:
        stamped = datetime.strptime(event["eventTime"], "%Y-%m-%dT%H:%M:%S.%f%z")
        stamped_ns = int(stamped.timestamp()) * 10**9 + stamped.microsecond * 1000
        # stamped when its binding returned (to the microsecond), not when it was posted
        assert bound_ns[event["regarding"]["name"]] - 1000 < stamped_ns < posted_ns
