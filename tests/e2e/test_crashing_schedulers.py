"""Schedulers that do not run, in the lab: a config that makes kube-scheduler exit
(CrashLoopBackOff), a missing ConfigMap (FailedMount), an image tag no registry has
(ImagePullBackOff). `status`, `list` and `why` name what the kubelet reports, and
`logs --previous` shows the crash."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from e2e_helpers import pod_manifest, run, wait_for

from kschedctl.kubeclient.client import Cluster
from kschedctl.lab.cluster import Lab


def deploy(lab: Lab, name: str, namespace: str, cwd: Path, form: str, **spec: Any) -> None:
    """create NAME in ``namespace`` with ``spec`` fields changed, deploy without waiting."""
    created = run(lab, "create", name, "-n", namespace, cwd=cwd)
    assert created.returncode == 0, created.stderr
    path = cwd / name / "scheduler.yaml"
    document = yaml.safe_load(path.read_text())
    document["spec"].update(spec)
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    deployed = run(lab, "deploy", name, form, "--no-wait", cwd=cwd)
    assert deployed.returncode == 0, deployed.stderr


def entry(lab: Lab, name: str, cwd: Path) -> dict[str, Any]:
    listing = run(lab, "list", "-o", "json", cwd=cwd)
    assert listing.returncode == 0, listing.stderr
    return next((s for s in json.loads(listing.stdout)["items"] if s["name"] == name), {})


def status(lab: Lab, name: str, cwd: Path) -> dict[str, Any]:
    report = run(lab, "status", name, "-o", "json", cwd=cwd)
    assert report.returncode == 0, report.stderr
    data: dict[str, Any] = json.loads(report.stdout)
    return data


def test_crash_loop_is_named_with_exit_code_and_the_previous_log(
    lab: Lab, cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    name = f"crash-{namespace[-5:]}"
    try:
        # kube-scheduler refuses a flag it does not know and exits 1 before doing anything.
        deploy(lab, name, namespace, tmp_path, "--as-pod", extraArgs=["--no-such-flag=1"])
        problem = wait_for(
            lambda: next(
                (p for p in status(lab, name, tmp_path)["problems"]
                 if p["reason"] == "CrashLoopBackOff" and p["previousLog"]),
                None,
            ),
            60, "the scheduler pod in CrashLoopBackOff with a previous log",
        )  # fmt: skip
        assert problem["pod"] == f"{namespace}/{name}" and problem["container"] == "kube-scheduler"
        assert (problem["lastTerminationReason"], problem["exitCode"]) == ("Error", 1)
        assert problem["restarts"] >= 1
        assert "unknown flag: --no-such-flag" in problem["keyLine"], problem
        assert f"kschedctl logs {name} --previous" in problem["hint"]

        found = entry(lab, name, tmp_path)
        assert (found["healthy"], found["problem"]) == (False, "CrashLoopBackOff"), found
        table = run(lab, "list", cwd=tmp_path)
        row = next(line for line in table.stdout.splitlines() if line.startswith(name))
        assert row.split()[-1] == "CrashLoopBackOff", table.stdout

        text = run(lab, "status", name, cwd=tmp_path)
        assert "Problems:" in text.stdout and "exit code 1" in text.stdout, text.stdout
        assert "unknown flag: --no-such-flag" in text.stdout

        previous = run(lab, "logs", name, "--previous", cwd=tmp_path)
        assert previous.returncode == 0, previous.stderr
        assert "unknown flag: --no-such-flag" in previous.stdout
        refused = run(lab, "logs", name, "--previous", "--follow", cwd=tmp_path)
        assert refused.returncode == 2 and "cannot be combined" in refused.stderr

        cluster.create(
            f"/api/v1/namespaces/{namespace}/pods", pod_manifest("app", schedulerName=name)
        )
        why = run(lab, "why", "app", "-n", namespace, "-o", "json", cwd=tmp_path)
        findings = {f["code"]: f for f in json.loads(why.stdout)["findings"]}
        crash = findings["scheduler-not-running"]
        assert crash["severity"] == "error" and "CrashLoopBackOff" in crash["message"]
        assert "exit code 1" in crash["message"] and "unknown flag" in crash["message"]
        assert "scheduler-not-ready" not in findings
    finally:
        run(lab, "remove", name, "--force", cwd=tmp_path)


def test_missing_configmap_is_named(
    lab: Lab, cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    name = f"nocm-{namespace[-5:]}"
    try:
        deploy(lab, name, namespace, tmp_path, "--as-deployment")
        (configmap,) = [
            c["metadata"]["name"]
            for c in cluster.list(
                f"/api/v1/namespaces/{namespace}/configmaps",
                labelSelector=f"kschedctl.io/scheduler={name}",
            )
        ]
        cluster.delete(f"/api/v1/namespaces/{namespace}/configmaps/{configmap}")
        # The Deployment replaces its pod: the new one cannot mount its config.
        for pod in cluster.list(
            f"/api/v1/namespaces/{namespace}/pods", labelSelector=f"kschedctl.io/scheduler={name}"
        ):
            cluster.delete(f"/api/v1/namespaces/{namespace}/pods/{pod['metadata']['name']}")
        problem = wait_for(
            lambda: next(
                (p for p in status(lab, name, tmp_path)["problems"] if p["reason"] == "FailedMount"),
                None,
            ),
            60, "status to name the missing ConfigMap",
        )  # fmt: skip
        assert problem["missing"] == f"ConfigMap {namespace}/{configmap}", problem
        assert (
            problem["message"]
            == (f'MountVolume.SetUp failed for volume "config" : configmap "{configmap}" not found')
            or f'configmap "{configmap}" not found' in problem["message"]
        ), problem
        assert f"create the missing ConfigMap {namespace}/{configmap}" in problem["hint"]
        found = entry(lab, name, tmp_path)  # still found under its own name
        assert found["problem"] == "FailedMount" and not found["healthy"], found
    finally:
        run(lab, "remove", name, "--force", cwd=tmp_path)


def test_image_tag_no_registry_has_is_image_pull_back_off(
    lab: Lab, cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    name = f"noimg-{namespace[-5:]}"
    image = "registry.k8s.io/kube-scheduler"  # no tag means latest: the registry has none
    try:
        deploy(lab, name, namespace, tmp_path, "--as-pod", image=image)
        problem = wait_for(
            lambda: next(
                (p for p in status(lab, name, tmp_path)["problems"]
                 if p["reason"] == "ImagePullBackOff"),
                None,
            ),
            60, "ImagePullBackOff",
        )  # fmt: skip
        assert problem["message"].startswith(f'Back-off pulling image "{image}": ErrImagePull: ')
        assert image in problem["hint"] and problem["restarts"] == 0
        assert entry(lab, name, tmp_path)["problem"] in ("ImagePullBackOff", "ErrImagePull")
        events = cluster.list(
            f"/api/v1/namespaces/{namespace}/events", fieldSelector=f"involvedObject.name={name}"
        )
        notes = [e.get("message") for e in events]
        assert f'Pulling image "{image}"' in notes and "Error: ErrImagePull" in notes, notes
        assert not any("Started container" in (n or "") for n in notes), notes
    finally:
        run(lab, "remove", name, "--force", cwd=tmp_path)


def test_over_its_memory_limit_is_oom_killed(
    lab: Lab, cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    name = f"oom-{namespace[-5:]}"
    # kube-scheduler needs tens of MiB: the runner kills it as the kernel would a cgroup.
    resources = {"requests": {"cpu": "100m", "memory": "8Mi"}, "limits": {"memory": "8Mi"}}
    try:
        deploy(lab, name, namespace, tmp_path, "--as-pod", pod={"resources": resources})
        problem = wait_for(
            lambda: next(
                (p for p in status(lab, name, tmp_path)["problems"]
                 if p["lastTerminationReason"] == "OOMKilled"),
                None,
            ),
            60, "an OOMKilled termination",
        )  # fmt: skip
        assert problem["exitCode"] == 137 and problem["reason"] in ("CrashLoopBackOff", "OOMKilled")
        assert "resources.limits.memory (now 8Mi)" in problem["hint"], problem
    finally:
        run(lab, "remove", name, "--force", cwd=tmp_path)
