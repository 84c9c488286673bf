"""kschedctl's scheduler with volumes, against the in-memory API: a bound claim's PV node
affinity decides the node; a WaitForFirstConsumer claim gets a static PV on the chosen node
(claimRef written, PV controller simulated, pod bound after the claim), two pods never share
one PV, a claim that is never bound times out into FailedScheduling and a retry, and
dynamic provisioning is refused with a clear message. The cache's volume tables and PV
assumptions are tested on their own."""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest
from test_filters_support import node
from test_filters_volumes import pv, pvc, sc
from test_scheduling_loop import FakeApi, eventually, ours, running, settings

from kschedctl.model.filters.volumebinding import bind_volume_to_claim
from kschedctl.model.scheduling.cache import SchedulerCache
from kschedctl.model.scheduling.loop import SchedulerLoop

__all__ = ["running"]  # the fixture, imported for the tests below


class ControllerApi(FakeApi):
    """A FakeApi whose PV controller completes every claimRef the scheduler writes."""

    def __init__(self, nodes: list[dict[str, Any]], *, complete: bool = True) -> None:
        super().__init__(nodes)
        self.complete = complete

    def bind_volume(self, pv_obj: Mapping[str, Any], claim: Mapping[str, Any]) -> None:
        super().bind_volume(pv_obj, claim)
        if not self.complete:
            return
        name = claim["metadata"]["name"]
        live = copy.deepcopy(self.volumes["persistentvolumeclaims"][name])
        live["spec"]["volumeName"] = pv_obj["metadata"]["name"]
        live["metadata"].setdefault("annotations", {})["pv.kubernetes.io/bind-completed"] = "yes"
        live["status"]["phase"] = "Bound"
        # The controller answers a moment later, from another thread.
        threading.Timer(0.1, self.put_volume, ("persistentvolumeclaims", live)).start()


def with_claim(name: str, claim: str) -> dict[str, Any]:
    return ours(name, volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": claim}}])


def api_with(
    pvcs: list[dict[str, Any]], pvs: list[dict[str, Any]], *, complete: bool = True
) -> ControllerApi:
    api = ControllerApi([node("n1"), node("n2"), node("n3")], complete=complete)
    for c in [sc("local"), sc("fast", provisioner="example.com/csi")]:
        api.put_volume("storageclasses", c)
    for c in pvcs:
        api.put_volume("persistentvolumeclaims", c)
    for v in pvs:
        api.put_volume("persistentvolumes", v)
    return api


def test_a_bound_claim_places_the_pod_on_its_volumes_node(
    running: Callable[..., SchedulerLoop],
) -> None:
    bound = pv("pv1", nodes=("n3",), phase="Bound", claim=("default", "data"))
    api = api_with([pvc("data", volume="pv1")], [bound])
    api.add_pod(with_claim("p", "data"))
    running(api, settings())
    eventually(lambda: api.binds)
    assert api.binds[0][:2] == ("p", "n3")
    assert api.volume_binds == []  # nothing to bind: the claim was bound already


def test_a_wait_for_first_consumer_claim_is_bound_to_a_local_pv_then_the_pod(
    running: Callable[..., SchedulerLoop],
) -> None:
    api = api_with([pvc("data")], [pv("local-n2", nodes=("n2",))])
    api.add_pod(with_claim("p", "data"))
    loop = running(api, settings())
    eventually(lambda: api.binds)
    assert api.volume_binds == [("local-n2", "data")]
    assert api.binds[0][:2] == ("p", "n2")
    claim = api.volumes["persistentvolumeclaims"]["data"]
    assert claim["spec"]["volumeName"] == "local-n2"  # bound before the pod
    ref = api.volumes["persistentvolumes"]["local-n2"]["spec"]["claimRef"]
    assert (ref["name"], ref["uid"]) == ("data", "uid-data")
    assert loop.metrics.value("pods_scheduled_total", (("fallback", ""),)) == 1


def test_two_pods_never_get_the_same_volume(running: Callable[..., SchedulerLoop]) -> None:
    api = api_with(
        [pvc("a"), pvc("b"), pvc("c")],
        [pv("v1", nodes=("n1",)), pv("v2", nodes=("n1",))],
    )
    for name in ("a", "b", "c"):
        api.add_pod(with_claim(f"p-{name}", name))
    running(api, settings())
    eventually(lambda: len(api.binds) == 2 and any(
        e["reason"] == "FailedScheduling" for e in api.events
    ))  # fmt: skip
    assert sorted(v for v, _c in api.volume_binds) == ["v1", "v2"]
    failed = [e["note"] for e in api.events if e["reason"] == "FailedScheduling"]
    assert failed[0] == (
        "0/3 nodes are available: 3 node(s) didn't find available persistent volumes to bind. "
        "no new claims to deallocate, preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    )


def test_a_claim_never_bound_times_out_into_failed_scheduling_and_a_retry(
    running: Callable[..., SchedulerLoop],
) -> None:
    api = api_with([pvc("data")], [pv("local-n1", nodes=("n1",))], complete=False)
    api.add_pod(with_claim("p", "data"))
    loop = running(api, settings(volume_bind_timeout=0.5))
    eventually(lambda: [e for e in api.events if e["reason"] == "FailedScheduling"])
    note = next(e["note"] for e in api.events if e["reason"] == "FailedScheduling")
    assert note == (
        'running PreBind plugin "VolumeBinding": binding volumes: context deadline exceeded'
    )
    assert api.binds == []
    assert loop.metrics.value("binding_errors_total", (("reason", "volume"),)) >= 1
    # The PV kept the claimRef we wrote (as kube-scheduler leaves it): the retry finds it
    # pre-bound to the claim and, once the controller completes it, binds the pod.
    api.complete = True
    live = copy.deepcopy(api.volumes["persistentvolumeclaims"]["data"])
    live["spec"]["volumeName"] = "local-n1"
    live["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"] = "yes"
    api.put_volume("persistentvolumeclaims", live)
    eventually(lambda: api.binds)
    assert api.binds[0][:2] == ("p", "n1")


def test_dynamic_provisioning_is_refused_clearly(running: Callable[..., SchedulerLoop]) -> None:
    api = api_with([pvc("data", cls="fast")], [])
    api.add_pod(with_claim("p", "data"))
    running(api, settings())
    eventually(lambda: [e for e in api.events if e["reason"] == "FailedScheduling"])
    note = next(e["note"] for e in api.events if e["reason"] == "FailedScheduling")
    assert note == (
        "0/3 nodes are available: 3 node(s) would need dynamic provisioning of a "
        "PersistentVolume, which kschedctl's scheduler does not do (use kube-scheduler for this "
        "pod). no new claims to deallocate, preemption: 0/3 nodes are available: 3 Preemption is "
        "not helpful for scheduling."
    )
    assert api.volume_binds == [] and api.binds == []


# --- the cache alone ------------------------------------------------------------------------------


def test_volume_tables_reach_the_snapshot_after_their_first_list() -> None:
    cache = SchedulerCache("mine")
    cache.replace_nodes([node("n1")])
    cache.replace_pods([])
    assert cache.snapshot.pvcs is None and cache.snapshot.pvs is None
    assert not cache.volume_event("PersistentVolume", "ADDED", pv("early"))  # before the list
    cache.replace_volumes("PersistentVolumeClaim", [pvc("data")])
    cache.replace_volumes("PersistentVolume", [pv("v")])
    cache.replace_volumes("StorageClass", [sc("local")])
    assert set(cache.snapshot.pvs or {}) == {"v"}
    cache.replace_pods([])  # a pod relist rebuilds the snapshot: the tables stay
    assert ("default", "data") in (cache.snapshot.pvcs or {})
    assert cache.volume_event("PersistentVolume", "DELETED", pv("v"))
    assert cache.snapshot.pvs == {}
    slim = (cache.snapshot.pvcs or {})[("default", "data")]
    assert "managedFields" not in slim["metadata"]


def test_an_assumed_pv_survives_stale_events_and_yields_to_newer_ones() -> None:
    cache = SchedulerCache("mine")
    volume = pv("v", nodes=("n1",))
    volume["metadata"]["resourceVersion"] = "5"
    claim = pvc("data")
    cache.replace_volumes("PersistentVolume", [volume])
    cache.assume_volumes([(claim, volume)])
    assert cache.snapshot.pvs is not None
    assert cache.snapshot.pvs["v"]["spec"]["claimRef"]["name"] == "data"
    cache.volume_event("PersistentVolume", "MODIFIED", copy.deepcopy(volume))  # same version
    assert cache.snapshot.pvs["v"]["spec"]["claimRef"]["name"] == "data"
    cache.replace_volumes("PersistentVolume", [copy.deepcopy(volume)])  # relist, same version
    assert (cache.snapshot.pvs or {})["v"]["spec"]["claimRef"]["name"] == "data"
    cache.forget_volumes([(claim, volume)])
    assert "claimRef" not in (cache.snapshot.pvs or {})["v"]["spec"]
    cache.assume_volumes([(claim, volume)])
    newer = bind_volume_to_claim(volume, claim)
    newer["metadata"]["resourceVersion"] = "6"
    cache.volume_event("PersistentVolume", "MODIFIED", newer)
    assert cache.assumed_pvs == {}


def test_bind_volume_to_claim_is_get_bind_volume_to_claim() -> None:
    claim = pvc("data")
    bound = bind_volume_to_claim(pv("v"), claim)
    assert bound["spec"]["claimRef"]["uid"] == "uid-data"
    assert bound["metadata"]["annotations"] == {"pv.kubernetes.io/bound-by-controller": "yes"}
    prebound = pv("w", claim=("default", "data"))
    again = bind_volume_to_claim(prebound, claim)
    assert "pv.kubernetes.io/bound-by-controller" not in again["metadata"]["annotations"]
    assert again["spec"]["claimRef"]["uid"] == "uid-data"  # the uid is filled in


@pytest.fixture(autouse=True)
def _no_stray_timers() -> Iterator[None]:
    yield
    for t in threading.enumerate():
        if isinstance(t, threading.Timer):
            t.join(1)
