"""The scheduler's cache: slimming, pending pods, assumptions that survive updates and relists."""

from __future__ import annotations

import copy
from typing import Any

from test_filters_support import node, pod

from kschedctl.model.scheduling.cache import SchedulerCache, relevant_pod_change
from kschedctl.model.scheduling.slim import slim_node, slim_pod


def ours(name: str, **kw: Any) -> dict[str, Any]:
    p = pod(name, schedulerName="mine", **kw)
    p["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    return p


def full_pod() -> dict[str, Any]:
    p = ours("web", cpu="1")
    p["metadata"]["managedFields"] = [{"manager": "kubectl", "fieldsV1": {"f:spec": {}}}]
    p["metadata"]["annotations"] = {
        "kubectl.kubernetes.io/last-applied-configuration": "{...}",
        "kschedctl.io/fallback-policy": "fallbacks: []",
    }
    p["spec"]["containers"][0].update(
        env=[{"name": "A", "value": "1"}],
        command=["sleep"],
        ports=[{"containerPort": 80}, {"containerPort": 81, "hostPort": 81}],
    )
    p["spec"]["volumes"] = [
        {"name": "token", "projected": {"sources": []}},
        {"name": "data", "persistentVolumeClaim": {"claimName": "d"}},
    ]
    p["status"]["conditions"] = [
        {"type": "Ready", "status": "False"},
        {"type": "PodScheduled", "status": "False"},
    ]
    return p


def test_slim_pod_keeps_what_the_scheduler_reads() -> None:
    slim = slim_pod(full_pod())
    assert "managedFields" not in slim["metadata"]
    assert slim["metadata"]["annotations"] == {"kschedctl.io/fallback-policy": "fallbacks: []"}
    (c,) = slim["spec"]["containers"]
    assert c == {
        "name": "c",
        "image": "registry.k8s.io/pause:3.10",  # ImageLocality
        "resources": {"requests": {"cpu": "1"}},
        "ports": [{"containerPort": 81, "hostPort": 81}],
    }
    assert slim["spec"]["volumes"] == [
        {"name": "data", "persistentVolumeClaim": {"claimName": "d"}}
    ]
    assert [x["type"] for x in slim["status"]["conditions"]] == ["PodScheduled"]
    assert slim_pod(slim) == slim  # idempotent


def test_slim_node() -> None:
    n = node("a", taints=[{"key": "k", "effect": "NoSchedule"}])
    n["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
    n["status"]["images"] = [{"names": ["x"], "sizeBytes": 1}]
    n["status"]["nodeInfo"] = {"kubeletVersion": "v1.36.3"}
    assert slim_node(n) == {
        "metadata": {"name": "a", "labels": n["metadata"]["labels"]},
        "spec": {"taints": [{"key": "k", "effect": "NoSchedule"}]},
        "status": {
            "allocatable": n["status"]["allocatable"],
            "images": [{"names": ["x"], "sizeBytes": 1}],  # ImageLocality
        },
    }


def test_image_changes_reach_the_snapshot_without_waking_pods() -> None:
    cache = SchedulerCache("mine")
    cache.replace_nodes([node("a")])
    n = node("a")
    n["status"]["images"] = [{"names": ["nginx:1"], "sizeBytes": 5}]
    assert cache.node_event("MODIFIED", n) is False
    assert cache.snapshot.image_nodes("nginx:1") == (5, 1)


def test_workloads_survive_a_pod_relist_and_follow_their_events() -> None:
    cache = SchedulerCache("mine")
    cache.replace_nodes([node("a")])
    svc = {"metadata": {"name": "web", "namespace": "default"}, "spec": {"selector": {"app": "w"}}}
    cache.replace_workloads("services", [svc])
    cache.replace_pods([])
    p = pod("p", labels={"app": "w"})
    assert cache.snapshot.default_spread_selector(p).describe() == "app=w"
    cache.workload_event("services", "DELETED", svc)
    assert cache.snapshot.default_spread_selector(p).empty()


def synced(*pods: dict[str, Any]) -> SchedulerCache:
    cache = SchedulerCache("mine")
    cache.replace_nodes([node("a", cpu="2"), node("b", cpu="2")])
    cache.replace_pods(pods)
    return cache


def test_pending_pods_of_this_scheduler_only() -> None:
    gated = ours("gated", schedulingGates=[{"name": "wait"}])
    other = pod("other")
    cache = SchedulerCache("mine")
    cache.replace_nodes([node("a")])
    changes = cache.replace_pods([ours("p1"), other, gated, ours("bound", node_name="a")])
    assert [p["metadata"]["name"] for p in changes.queue] == ["p1"]
    assert cache.counts() == {
        "namespaces": 0,
        "nodes": 1,
        "pdbs": 0,
        "pods": 1,
        "pending": 1,
        "assumed": 0,
    }
    ungated = copy.deepcopy(gated)
    del ungated["spec"]["schedulingGates"]
    assert [p["metadata"]["name"] for p in cache.pod_event("MODIFIED", ungated).queue] == ["gated"]


def test_assumption_survives_updates_of_the_pending_copy() -> None:
    p = ours("p", cpu="2")
    cache = synced(p)
    cache.assume(cache.pending["uid-default-p"], "a")
    assert cache.snapshot.node("a").requested["cpu"] == 2000
    status_patched = copy.deepcopy(p)
    status_patched["status"]["conditions"] = [{"type": "PodScheduled", "status": "False"}]
    changes = cache.pod_event("MODIFIED", status_patched)
    assert cache.snapshot.node("a").requested["cpu"] == 2000  # still counted
    assert changes.queue == [] and changes.updated == []  # never queued twice
    bound = copy.deepcopy(p)
    bound["spec"]["nodeName"] = "a"
    changes = cache.pod_event("MODIFIED", bound)
    assert changes.dequeue == ["uid-default-p"] and "uid-default-p" not in cache.assumed
    assert cache.snapshot.node("a").requested["cpu"] == 2000  # the API's copy, counted once


def test_forget_releases_the_node() -> None:
    cache = synced(ours("p", cpu="2"))
    cache.assume(cache.pending["uid-default-p"], "a")
    cache.forget("uid-default-p")
    assert cache.snapshot.node("a").requested.get("cpu", 0) == 0


def test_relist_keeps_in_flight_assumptions_and_drops_vanished_pods() -> None:
    p, q = ours("p", cpu="1"), ours("q", cpu="1")
    cache = synced(p, q)
    cache.assume(cache.pending["uid-default-p"], "a")
    cache.assume(cache.pending["uid-default-q"], "b")
    changes = cache.replace_pods([p])  # q was deleted during a watch gap
    assert changes.dequeue == ["uid-default-q"]
    assert cache.snapshot.node("a").requested["cpu"] == 1000
    assert cache.snapshot.node("b").requested.get("cpu", 0) == 0
    assert list(cache.assumed) == ["uid-default-p"]


def test_deleting_a_bound_pod_helps_and_frees_capacity() -> None:
    running = pod("r", node_name="a", cpu="2")
    cache = synced(running)
    assert cache.snapshot.node("a").requested["cpu"] == 2000
    assert cache.pod_event("DELETED", running).helps
    assert cache.snapshot.node("a").requested.get("cpu", 0) == 0
    assert not cache.pod_event("DELETED", ours("never-bound")).helps


def test_node_heartbeats_do_not_count_as_changes() -> None:
    cache = synced()
    beat = node("a", cpu="2")
    beat["status"]["conditions"] = [{"type": "Ready", "status": "True", "lastHeartbeatTime": "now"}]
    beat["metadata"]["resourceVersion"] = "99"
    assert not cache.node_event("MODIFIED", beat)
    assert cache.node_event("MODIFIED", node("a", cpu="4"))
    assert cache.node_event("ADDED", node("c"))
    assert not cache.node_event("DELETED", node("c"))
    assert "c" not in cache.snapshot
    assert not cache.replace_nodes([node("a", cpu="4"), node("b", cpu="2")])


def test_a_node_declaring_a_feature_helps_and_is_kept() -> None:
    cache = synced()
    declaring = node("a", cpu="2")
    declaring["status"]["declaredFeatures"] = ["RestartAllContainersOnContainerExits"]
    assert cache.node_event("MODIFIED", declaring)  # NodeDeclaredFeatures may pass now
    raw = cache.snapshot.node("a").raw
    assert raw["status"]["declaredFeatures"] == ["RestartAllContainersOnContainerExits"]


def test_relevant_pod_changes() -> None:
    p = ours("p")
    assert relevant_pod_change(None, p)
    status_only = copy.deepcopy(p)
    status_only["status"]["phase"] = "Pending"
    status_only["metadata"]["resourceVersion"] = "7"
    assert not relevant_pod_change(p, status_only)
    labelled = copy.deepcopy(p)
    labelled["metadata"]["labels"] = {"a": "b"}
    assert relevant_pod_change(p, labelled)
    annotated = copy.deepcopy(p)
    annotated["metadata"]["annotations"] = {"kschedctl.io/fallback-policy": "x"}
    assert relevant_pod_change(p, annotated)
