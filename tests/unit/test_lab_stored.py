"""The seed's bulk loader: objects shaped as the API server stores them (lab/stored.py) and
their etcd keys and bytes (lab/etcdload.py). tests/e2e/test_seed_loader.py compares the
shapes with objects created through a real API server."""

from __future__ import annotations

import json
from typing import Any

from kschedctl.lab import etcdload, seed, stored
from kschedctl.lab.nodes import lab_node
from kschedctl.observe.workload import lab_pod

NOW = 1_780_000_000.5  # 2026-05-28T20:26:40.5Z


def pinned(**spec: Any) -> dict[str, Any]:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "team"},
           "spec": {"nodeName": "n1",
                    "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}],
                    **spec}}  # fmt: skip
    return lab_pod(pod, None)


def shaped(pod: dict[str, Any], **kw: Any) -> dict[str, Any]:
    args: dict[str, Any] = {"uid": "u-1", "now": NOW, "priority_classes": {}, "host_ip": "127.0.0.1",
                            "pod_ip": "10.244.255.254", **kw}  # fmt: skip
    return stored.stored_pod(pod, **args)


def test_a_pod_gets_what_create_and_admission_give_it() -> None:
    out = shaped(pinned())
    md, spec = out["metadata"], out["spec"]
    assert (out["kind"], out["apiVersion"]) == ("Pod", "v1")
    assert md["uid"] == "u-1" and md["creationTimestamp"] == "2026-05-28T20:26:40Z"
    assert md["generation"] == 1 and "resourceVersion" not in md
    assert spec["priority"] == 0 and spec["preemptionPolicy"] == "PreemptLowerPriority"
    assert spec["schedulerName"] == "default-scheduler"
    assert spec["serviceAccountName"] == spec["serviceAccount"] == "default"
    assert (spec["restartPolicy"], spec["dnsPolicy"]) == ("Always", "ClusterFirst")
    assert spec["enableServiceLinks"] is False  # lab_pod's own choice survives the defaults
    assert spec["terminationGracePeriodSeconds"] == 0
    assert spec["tolerations"] == [
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
         "tolerationSeconds": 300},
        {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
         "tolerationSeconds": 300},
    ]  # fmt: skip
    container = spec["containers"][0]
    assert container["imagePullPolicy"] == "IfNotPresent"
    assert container["terminationMessagePath"] == "/dev/termination-log"


def test_a_pod_is_running_and_ready_as_kwok_leaves_it() -> None:
    status = shaped(pinned())["status"]
    assert status["phase"] == "Running" and status["qosClass"] == "BestEffort"
    ready = {c["type"]: c["status"] for c in status["conditions"]}
    assert ready == {"Initialized": "True", "ContainersReady": "True", "Ready": "True"}
    assert (status["hostIP"], status["podIP"]) == ("127.0.0.1", "10.244.255.254")
    assert status["containerStatuses"][0]["ready"] is True


def test_topology_labels_come_from_the_node() -> None:
    node = {"topology.kubernetes.io/zone": "z1", "topology.kubernetes.io/region": "r",
            "kubernetes.io/hostname": "n1"}  # fmt: skip
    pod = pinned()
    pod["metadata"]["labels"] = {"app": "a", "topology.kubernetes.io/zone": "mine"}
    labels = shaped(pod, node_labels=node)["metadata"]["labels"]
    assert labels == {"app": "a", "topology.kubernetes.io/zone": "z1",
                      "topology.kubernetes.io/region": "r"}  # fmt: skip


def test_priority_comes_from_the_class_or_the_global_default() -> None:
    classes = {"high": (1000, "Never"), "low": (10, "PreemptLowerPriority")}
    named = shaped(pinned(priorityClassName="high"), priority_classes=classes)["spec"]
    assert (named["priority"], named["preemptionPolicy"]) == (1000, "Never")
    default = shaped(pinned(), priority_classes=classes, global_default="low")["spec"]
    assert (default["priorityClassName"], default["priority"]) == ("low", 10)


def test_own_no_execute_tolerations_are_kept_not_doubled() -> None:
    own = {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
           "tolerationSeconds": 5}  # fmt: skip
    tolerations = shaped(pinned(tolerations=[own]))["spec"]["tolerations"]
    assert [t["key"] for t in tolerations] == [own["key"], "node.kubernetes.io/not-ready"]
    assert tolerations[0]["tolerationSeconds"] == 5
    everything = shaped(pinned(tolerations=[{"operator": "Exists"}]))["spec"]["tolerations"]
    assert everything == [{"operator": "Exists"}]


def test_qos_class_as_the_api_server_computes_it() -> None:
    def qos(**resources: Any) -> str:
        return stored.qos_class({"containers": [{"name": "c", "resources": resources}]})

    assert qos() == "BestEffort"
    assert qos(requests={"cpu": "1"}) == "Burstable"
    assert qos(limits={"cpu": "1", "memory": "1Gi"}) == "Guaranteed"  # requests = limits
    assert qos(requests={"cpu": "1", "memory": "1Gi"}, limits={"cpu": "2", "memory": "1Gi"}) == (
        "Burstable"
    )
    assert qos(requests={"example.com/gpu": "1"}) == "BestEffort"  # cpu and memory only


def test_a_limit_gives_its_request_and_latest_is_always_pulled() -> None:
    pod = pinned()
    pod["spec"]["containers"] = [{"name": "c", "image": "busybox",
                                  "resources": {"limits": {"cpu": "1"}}}]  # fmt: skip
    container = shaped(pod)["spec"]["containers"][0]
    assert container["resources"]["requests"] == {"cpu": "1"}
    assert container["imagePullPolicy"] == "Always"


def test_a_node_is_ready_untainted_with_kwoks_status() -> None:
    node = lab_node("n1", taints=[{"key": stored.NOT_READY_TAINT, "effect": "NoSchedule"},
                                  {"key": "gpu", "value": "x", "effect": "NoSchedule"}])  # fmt: skip
    out = stored.stored_node(node, uid="u-n", now=NOW, node_ip="127.0.0.1", kubelet_port=1234)
    assert out["spec"]["taints"] == [{"key": "gpu", "value": "x", "effect": "NoSchedule"}]
    conditions = {c["type"]: (c["status"], c["reason"]) for c in out["status"]["conditions"]}
    assert conditions["Ready"] == ("True", "KubeletReady")
    assert conditions["MemoryPressure"] == ("False", "KubeletHasSufficientMemory")
    assert out["status"]["daemonEndpoints"] == {"kubeletEndpoint": {"Port": 1234}}
    assert out["status"]["phase"] == "Running"
    assert out["status"]["allocatable"] == node["status"]["allocatable"]
    lease = stored.node_lease(out, uid="u-l", now=NOW, seconds=40)
    assert lease["metadata"]["namespace"] == "kube-node-lease"
    assert lease["metadata"]["ownerReferences"][0]["uid"] == "u-n"
    assert lease["spec"]["renewTime"] == "2026-05-28T20:26:40.500000Z"


def test_keys_are_the_api_servers() -> None:
    node = {"kind": "Node", "apiVersion": "v1", "metadata": {"name": "n1"}}
    pod = {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p", "namespace": "ns"}}
    lease = {"kind": "Lease", "apiVersion": "coordination.k8s.io/v1",
             "metadata": {"name": "n1", "namespace": "kube-node-lease"}}  # fmt: skip
    assert etcdload.key_of(node) == "/registry/minions/n1"
    assert etcdload.key_of(pod) == "/registry/pods/ns/p"
    assert etcdload.key_of(lease) == "/registry/leases/kube-node-lease/n1"
    assert etcdload.encode(pod).startswith(b'{"kind":"Pod","apiVersion":"v1",')
    assert json.loads(etcdload.encode(pod)) == pod


def test_pod_ips_count_down_from_the_top_of_the_cidr() -> None:
    assert stored.pod_ip("10.244.0.0/16", 0) == "10.244.255.254"
    assert stored.pod_ip("10.244.0.0/16", 1) == "10.244.255.253"
    assert stored.pod_ip("10.0.0.0/30", 2) == "10.0.0.2"  # wraps round


def test_priorities_of_the_seed_and_the_api_servers_own_classes() -> None:
    classes = [{"metadata": {"name": "batch"}, "value": 5, "globalDefault": True},
               {"metadata": {"name": "system-node-critical"}, "value": 1}]  # fmt: skip
    table, default = seed.priorities(classes)
    assert default == "batch" and table["batch"] == (5, "PreemptLowerPriority")
    assert table["system-node-critical"] == (2000001000, "PreemptLowerPriority")
