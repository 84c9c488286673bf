"""`simulate --workload`: controllers expanded to pods, the objects created in the lab, and the
plan built from a snapshot (pinned pods, namespaces, PriorityClasses, PDBs)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kschedctl.base.errors import NotFoundError, SpecError
from kschedctl.clustersnapshot import snapshot_from_dict
from kschedctl.observe.workload import PLACEHOLDER_IMAGE, lab_pod, load_workload
from kschedctl.ops.simulate import Candidate, plan_from_snapshot
from kschedctl.ops.simulate_candidate import target_name
from kschedctl.spec import default_spec

TEMPLATE = {
    "metadata": {"labels": {"app": "web"}},
    "spec": {"containers": [{"name": "web", "image": "nginx", "env": [{"name": "A", "value": "1"}],
                            "resources": {"requests": {"cpu": "250m"}}}]},
}  # fmt: skip


def write(tmp_path: Path, docs: list[object]) -> Path:
    path = tmp_path / "workload.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return path


def test_controllers_become_their_pods(tmp_path: Path) -> None:
    path = write(tmp_path, [
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "shop"},
         "spec": {"replicas": 3, "template": TEMPLATE}},
        {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "train"},
         "spec": {"parallelism": 4, "completions": 2, "template": TEMPLATE}},
        {"apiVersion": "v1", "kind": "List", "items": [
            {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "solo", "labels": {"x": "y"}},
             "spec": TEMPLATE["spec"]},
            {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
             "spec": {"template": TEMPLATE}},
        ]},
    ])  # fmt: skip
    pods = load_workload(path)
    names = [f"{p['metadata']['namespace']}/{p['metadata']['name']}" for p in pods]
    assert names == ["shop/web-0", "shop/web-1", "shop/web-2", "default/train-0",
                     "default/train-1", "default/solo", "default/db-0"]  # fmt: skip
    assert pods[0]["metadata"]["labels"] == {"app": "web"}
    assert pods[0]["spec"]["containers"][0]["resources"] == {"requests": {"cpu": "250m"}}


def test_zero_replicas_give_no_pods(tmp_path: Path) -> None:
    path = write(tmp_path, [{"kind": "Deployment", "metadata": {"name": "off"},
                             "spec": {"replicas": 0, "template": TEMPLATE}}])  # fmt: skip
    assert load_workload(path) == []


@pytest.mark.parametrize(
    ("doc", "where"),
    [
        pytest.param(
            {"kind": "Service", "metadata": {"name": "s"}, "spec": {}}, "[0].kind", id="kind"
        ),
        pytest.param(
            {"kind": "Pod", "metadata": {}, "spec": TEMPLATE["spec"]},
            "[0].metadata.name",
            id="name",
        ),
        pytest.param(
            {
                "kind": "Deployment",
                "metadata": {"name": "d"},
                "spec": {"replicas": -1, "template": TEMPLATE},
            },
            "[0].spec.replicas",
            id="replicas",
        ),
        pytest.param(
            {"kind": "Deployment", "metadata": {"name": "d"}, "spec": {"replicas": 1}},
            "[0].spec.template.spec",
            id="template",
        ),
        pytest.param(
            {"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": []}},
            "[0].spec.containers",
            id="containers",
        ),
    ],
)
def test_bad_workloads_name_the_field(tmp_path: Path, doc: dict[str, object], where: str) -> None:
    with pytest.raises(SpecError) as caught:
        load_workload(write(tmp_path, [doc]))
    assert caught.value.path == where
    assert caught.value.exit_code == 3


def test_duplicate_pods_and_missing_file(tmp_path: Path) -> None:
    pod = {"kind": "Pod", "metadata": {"name": "web-0"}, "spec": TEMPLATE["spec"]}
    deployment = {"kind": "Deployment", "metadata": {"name": "web"}, "spec": {"template": TEMPLATE}}
    with pytest.raises(SpecError, match="two pods named 'default/web-0'"):
        load_workload(write(tmp_path, [pod, deployment]))
    with pytest.raises(NotFoundError):
        load_workload(tmp_path / "missing.yaml")


def test_lab_pod_keeps_scheduling_fields_only() -> None:
    pod = {
        "metadata": {"name": "p", "namespace": "ns", "labels": {"a": "b"}, "uid": "u",
                     "ownerReferences": [{"kind": "ReplicaSet"}]},
        "spec": {"nodeName": "n1", "schedulerName": "default-scheduler", "priority": 5,
                 "priorityClassName": "high", "serviceAccountName": "robot",
                 "tolerations": [{"key": "k", "operator": "Exists"}],
                 "volumes": [{"name": "v", "secret": {"secretName": "s"}},
                             {"name": "d", "persistentVolumeClaim": {"claimName": "data"}}],
                 "containers": [{"name": "c", "image": "registry.k8s.io/kube-scheduler:v1.36.3",
                                 "command": ["kube-scheduler"], "ports": [{"hostPort": 80, "containerPort": 80}]}]},
        "status": {"phase": "Running"},
    }  # fmt: skip
    submitted = lab_pod(pod, "binpack")
    assert submitted["metadata"] == {"name": "p", "namespace": "ns", "labels": {"a": "b"}}
    spec = submitted["spec"]
    assert spec["schedulerName"] == "binpack" and "nodeName" not in spec
    assert "priority" not in spec and spec["priorityClassName"] == "high"
    assert spec["containers"] == [{"name": "c", "ports": [{"hostPort": 80, "containerPort": 80}],
                                   "image": PLACEHOLDER_IMAGE}]  # fmt: skip
    assert spec["volumes"] == [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]
    assert "serviceAccountName" not in spec and "status" not in submitted
    pinned = lab_pod(pod, None)
    assert pinned["spec"]["nodeName"] == "n1"
    assert pinned["spec"]["schedulerName"] == "default-scheduler"


def test_pods_keep_a_scheduler_name_the_candidate_serves() -> None:
    spec = default_spec("multi")
    spec.profiles = [{"schedulerName": "multi"}, {"schedulerName": "multi-binpack"}]
    candidate = Candidate("multi/", spec)
    assert target_name({"spec": {"schedulerName": "multi-binpack"}}, candidate) == "multi-binpack"
    assert target_name({"spec": {}}, candidate) == "multi"


SNAPSHOT = {
    "apiVersion": "kschedctl.io/v1alpha1",
    "kind": "Snapshot",
    "spec": {
        "nodes": [{"name": "n1", "labels": {"kubernetes.io/hostname": "n1"}, "capacity": {"cpu": "4", "memory": "8Gi"},
                   "taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]}],
        "pods": [{"namespace": "shop", "name": "db", "nodeName": "n1", "priorityClassName": "high",
                  "containers": [{"name": "db", "requests": {"cpu": "1"}}]},
                 {"namespace": "shop", "name": "done", "nodeName": "n1", "phase": "Succeeded"}],
        "pendingPods": [{"namespace": "web", "name": "w", "containers": [{"name": "w"}]}],
        "namespaces": [{"name": "shop", "labels": {"team": "shop"}}],
        "priorityClasses": [{"name": "high", "value": 1000}],
        "podDisruptionBudgets": [{"namespace": "shop", "name": "db", "selector": {"matchLabels": {"app": "db"}},
                                  "minAvailable": 1}],
    },
}  # fmt: skip


def test_plan_from_snapshot() -> None:
    plan = plan_from_snapshot(snapshot_from_dict(SNAPSHOT), "snap.yaml")
    (node,) = plan.what.nodes
    assert node["metadata"]["labels"] == {"kubernetes.io/hostname": "n1"}
    assert node["metadata"]["annotations"]["kwok.x-k8s.io/node"] == "fake"
    assert node["status"]["allocatable"] == {"cpu": "4", "memory": "8Gi", "pods": "110"}
    assert node["spec"]["taints"] == [{"key": "k", "value": "v", "effect": "NoSchedule"}]
    assert [p["metadata"]["name"] for p in plan.what.pinned] == ["db"]  # finished pods hold nothing
    assert [ns["metadata"] for ns in plan.what.namespaces] == [
        {"name": "shop", "labels": {"team": "shop"}}, {"name": "web"}]  # fmt: skip
    assert plan.what.priority_classes[0]["value"] == 1000
    assert plan.what.disruption_budgets[0]["spec"] == {"selector": {"matchLabels": {"app": "db"}},
                                                       "minAvailable": 1}  # fmt: skip
    assert [p["metadata"]["name"] for p in plan.pending] == ["w"]


def test_a_pod_naming_a_missing_priority_class_is_refused() -> None:
    doc = yaml.safe_load(yaml.safe_dump(SNAPSHOT))
    doc["spec"]["priorityClasses"] = []
    with pytest.raises(
        SpecError, match="names PriorityClass 'high', which the snapshot does not hold"
    ):
        plan_from_snapshot(snapshot_from_dict(doc), "snap.yaml")


def test_a_retired_component_is_not_revived(tmp_path: Path) -> None:
    """simulate stops the lab's kube-scheduler for good: the runner's revive() must not start
    it again (a candidate named default-scheduler would otherwise share the pods with it)."""
    import os
    import subprocess
    import sys

    from kschedctl.lab import processes
    from kschedctl.lab.cluster import Lab
    from kschedctl.lab.state import MARKER, STATE, ComponentState, LabState

    lab = Lab(tmp_path / "lab")
    lab.dir.mkdir()
    (lab.dir / MARKER).write_text("")
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        component = ComponentState(sleeper.pid, os.readlink(f"/proc/{sleeper.pid}/exe"), 0, str(tmp_path / "log"),
                                   argv=[sys.executable, "-c", "pass"],
                                   started=processes.start_ticks(sleeper.pid))  # fmt: skip
        state = LabState(api_port=1, versions={}, started=0.0, components={"kube-scheduler": component},
                         ready=True)  # fmt: skip
        (lab.dir / STATE).write_text(state.to_json())
        assert lab.retire("kube-scheduler") is True
        assert sleeper.wait(timeout=10) is not None
        assert lab.revive() == []
        saved = lab.state()
        assert saved is not None and "kube-scheduler" not in saved.components
        assert lab.retire("kube-scheduler") is False
    finally:
        sleeper.kill()
        sleeper.wait()


def test_gated_pods_are_decided_at_once() -> None:
    from kschedctl.ops.simulate_candidate import _unschedulable

    gated = {"spec": {"schedulingGates": [{"name": "example.com/quota"}]}, "status": {}}
    assert _unschedulable(gated) == "waiting for scheduling gates: [example.com/quota]"
    reported = {"spec": {}, "status": {"conditions": [
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/3 nodes are available: 3 Insufficient cpu."}]}}  # fmt: skip
    assert _unschedulable(reported) == "0/3 nodes are available: 3 Insufficient cpu."
    assert _unschedulable({"spec": {}, "status": {"phase": "Pending"}}) is None
