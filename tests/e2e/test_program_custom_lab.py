"""``program: custom`` end to end through kschedctl's own commands: the lab's custom
kube-scheduler (kube-scheduler v1.36.3 + the out-of-tree Filter plugin NodeLabelMatch,
kschedctl/lab/gomod/custom-scheduler) written by ``create --program custom``, checked by
``validate`` (and by the custom and the vanilla binary), deployed as a pod and as a Deployment,
scheduling with its plugin, shown by ``status``/``list``, removed without a trace.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from e2e_helpers import create_and_bind, pod_events, pod_manifest, scheduled_event, wait_for

from kschedctl.base.errors import KschedError, NotFoundError
from kschedctl.kubeclient.client import Cluster
from kschedctl.lab import binaries
from kschedctl.lab.cluster import Lab
from kschedctl.lab.images import CUSTOM_KUBE_SCHEDULER, CUSTOM_KUBE_SCHEDULER_IMAGE

PLUGIN = "NodeLabelMatch"
LABEL = "e2e.kschedctl.io/zone-class"
VALUES = ["gold", "silver"]
REASON = f"node(s) didn't have label {LABEL} with one of the values [gold silver]"
# kube-scheduler's own line when its build lacks the plugin (framework/runtime/framework.go)
MISSING = f'FilterPlugin "{PLUGIN}" does not exist'


def kschedctl(*args: str, cwd: Path, lab: Lab | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **({"KUBECONFIG": str(lab.kubeconfig)} if lab else {})}
    return subprocess.run(
        [sys.executable, "-m", "kschedctl", *args],
        capture_output=True, text=True, cwd=cwd, env=env, timeout=240,
    )  # fmt: skip


@pytest.fixture(scope="module")
def custom_binary() -> Path:
    """The custom scheduler binary, built if missing (the lab does not need it to start)."""
    try:
        return binaries.find_optional(CUSTOM_KUBE_SCHEDULER)
    except NotFoundError:
        try:
            binaries.build(progress=print)  # only what the cache lacks
            return binaries.find_optional(CUSTOM_KUBE_SCHEDULER)
        except KschedError as err:  # the test must fail loudly, never skip
            pytest.fail(f"cannot build {CUSTOM_KUBE_SCHEDULER}: {err}", pytrace=False)


def write_spec(name: str, cwd: Path, binary: str = "") -> dict[str, Any]:
    """``create NAME --program custom`` for the lab's image, then the profile edited to run
    NodeLabelMatch at filter with its args (and ``custom.binary`` if given: the command of the
    in-cluster forms, else ``kube-scheduler``); returns the spec document."""
    created = kschedctl(
        "create", name, "--program", "custom", "--image", CUSTOM_KUBE_SCHEDULER_IMAGE,
        "--custom-plugin", f"{PLUGIN}:Filter", cwd=cwd,
    )  # fmt: skip
    assert created.returncode == 0, created.stderr
    path = cwd / name / "scheduler.yaml"
    doc: dict[str, Any] = yaml.safe_load(path.read_text())
    assert doc["spec"]["program"] == "custom"
    assert doc["spec"]["custom"]["plugins"] == [{"name": PLUGIN, "extensionPoints": ["Filter"]}]
    doc["spec"]["profiles"] = [
        {
            "schedulerName": name,
            "plugins": {"filter": {"enabled": [{"name": PLUGIN}]}},
            "pluginConfig": [{"name": PLUGIN, "args": {"label": LABEL, "values": VALUES}}],
        }
    ]
    if binary:
        doc["spec"]["custom"]["binary"] = binary
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    pod = kschedctl("render", name, "--as", "pod", cwd=cwd)
    assert pod.returncode == 0, pod.stderr
    manifest = next(o for o in yaml.safe_load_all(pod.stdout) if o and o["kind"] == "Pod")
    (container,) = manifest["spec"]["containers"]
    assert container["image"] == CUSTOM_KUBE_SCHEDULER_IMAGE
    assert container["command"][0] == (binary or "kube-scheduler"), container["command"]
    return doc


def validate_json(cwd: Path, *args: str) -> tuple[int, dict[str, Any]]:
    result = kschedctl("validate", *args, "-o", "json", cwd=cwd)
    (entry,) = json.loads(result.stdout)
    return result.returncode, entry


def test_custom_spec_is_validated_by_kschedctl_and_both_binaries(
    lab_binaries: dict[str, Path], custom_binary: Path, tmp_path: Path
) -> None:
    """No lab needed: validate, and the custom and vanilla kube-scheduler on the same files."""
    name = "label-matcher"
    doc = write_spec(name, tmp_path)
    vanilla = lab_binaries["kube-scheduler"]

    assert kschedctl("validate", name, cwd=tmp_path).returncode == 0
    # The custom build accepts the rendered config: it agrees with validate.
    agreed = kschedctl("validate", name, "--kube-scheduler", str(custom_binary), cwd=tmp_path)
    assert agreed.returncode == 0, agreed.stdout + agreed.stderr
    assert f"{name}/scheduler.yaml: kube-scheduler: accepted" in agreed.stderr, agreed.stderr
    rc, entry = validate_json(tmp_path, name, "--kube-scheduler", str(custom_binary))
    assert (rc, entry["valid"], entry["agrees"]) == (0, True, True), entry

    # The vanilla build refuses the same spec's config: validate judged it for the custom image.
    rc, entry = validate_json(tmp_path, name, "--kube-scheduler", str(vanilla))
    prefix = f"initializing profiles: creating profile for scheduler name {name}: "
    assert entry["kubeScheduler"] == {"accepted": False, "messages": [prefix + MISSING]}, entry
    assert (rc, entry["valid"], entry["agrees"]) == (0, True, False), entry

    # The rendered config alone says nothing of the image: validate judges it for a vanilla
    # kube-scheduler and predicts the vanilla binary's line; both refuse, so they agree.
    config = kschedctl("render", name, "--as", "config", cwd=tmp_path)
    assert config.returncode == 0, config.stderr
    (tmp_path / "config.yaml").write_text(config.stdout)
    rc, entry = validate_json(tmp_path, "config.yaml", "--kube-scheduler", str(vanilla))
    assert (rc, entry["agrees"]) == (3, True), entry
    assert entry["kubeScheduler"]["messages"] == [prefix + MISSING]
    assert entry["problems"][0]["message"].startswith(MISSING + " ("), entry["problems"]
    # The custom build accepts that file: the one disagreement a bare config cannot avoid.
    rc, entry = validate_json(tmp_path, "config.yaml", "--kube-scheduler", str(custom_binary))
    assert (rc, entry["kubeScheduler"]["accepted"], entry["agrees"]) == (3, True, False)

    # The spec switched to program kube-scheduler: validate's message starts with exactly
    # kube-scheduler's own line.
    doc["spec"]["program"] = "kube-scheduler"
    del doc["spec"]["custom"]
    (tmp_path / "vanilla.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    rc, entry = validate_json(tmp_path, "vanilla.yaml")
    errors = [p for p in entry["problems"] if p["severity"] == "error"]
    assert rc == 3 and len(errors) == 1, entry
    assert errors[0]["path"] == "spec.profiles[0].plugins.filter.enabled[0].name"
    assert errors[0]["message"].startswith(MISSING + " ("), errors[0]


@pytest.fixture()
def zones(cluster: Cluster) -> Iterator[dict[str, str]]:
    """Zone-class labels on three of the lab's nodes (node -> value); taken off afterwards."""
    nodes = sorted(n["metadata"]["name"] for n in cluster.list("/api/v1/nodes"))
    assert len(nodes) >= 4, nodes
    placed = dict(zip(nodes[:3], ["gold", "silver", "bronze"], strict=True))
    for node, value in placed.items():
        cluster.patch(f"/api/v1/nodes/{node}", {"metadata": {"labels": {LABEL: value}}})
    yield placed
    for node in placed:
        cluster.patch(f"/api/v1/nodes/{node}", {"metadata": {"labels": {LABEL: None}}})


def leftovers(cluster: Cluster, name: str) -> list[str]:
    """Every object carrying the scheduler's instance label, and its Lease."""
    selector = f"app.kubernetes.io/instance={name}"
    paths = [
        "/api/v1/pods", "/api/v1/configmaps", "/api/v1/serviceaccounts", "/api/v1/secrets",
        "/apis/apps/v1/deployments", "/apis/apps/v1/replicasets",
        "/apis/rbac.authorization.k8s.io/v1/roles",
        "/apis/rbac.authorization.k8s.io/v1/rolebindings",
        "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
        "/apis/rbac.authorization.k8s.io/v1/clusterroles",
    ]  # fmt: skip
    left = [
        f"{path.rsplit('/', 1)[-1]}/{item['metadata']['name']}"
        for path in paths
        for item in cluster.list(path, labelSelector=selector)
    ]
    try:
        cluster.get(f"/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/{name}")
        left.append(f"lease/{name}")
    except NotFoundError:
        pass
    return left


def failed_scheduling(cluster: Cluster, namespace: str, pod: str) -> str | None:
    for event in pod_events(cluster, namespace, pod):
        if event.get("reason") == "FailedScheduling" and event.get("note"):
            return str(event["note"])
    return None


@pytest.mark.parametrize("form", ["pod", "deployment"])
def test_custom_program_deployed_schedules_with_its_plugin(
    lab: Lab,
    cluster: Cluster,
    namespace: str,
    zones: dict[str, str],
    custom_binary: Path,
    tmp_path: Path,
    form: str,
) -> None:
    name = f"label-matcher-{form}"
    # The lab runs a custom-kube-scheduler image by either command name: both are exercised.
    write_spec(
        name, tmp_path, binary="/usr/local/bin/custom-kube-scheduler" if form == "pod" else ""
    )
    fitting = {node for node, value in zones.items() if value in VALUES}
    try:
        deployed = kschedctl(
            "deploy", name, "--as", form, "--timeout", "120", cwd=tmp_path, lab=lab
        )
        assert deployed.returncode == 0, deployed.stderr
        assert f"{name} is serving" in deployed.stderr, deployed.stderr
        assert f"canary pod was scheduled by {name}" in deployed.stderr, deployed.stderr

        apps = [f"app-{i}" for i in range(6)]
        nodes = create_and_bind(cluster, namespace, apps, name)
        assert set(nodes.values()) <= fitting, (nodes, zones)
        for app in apps:
            assert scheduled_event(cluster, namespace, app)["reportingController"] == name

        # Only the bronze node passes the pod's own nodeSelector, and NodeLabelMatch refuses it.
        bronze = next(node for node, value in zones.items() if value == "bronze")
        cluster.create(
            f"/api/v1/namespaces/{namespace}/pods",
            pod_manifest(
                "on-bronze", schedulerName=name, nodeSelector={"kubernetes.io/hostname": bronze}
            ),
        )
        note = wait_for(
            lambda: failed_scheduling(cluster, namespace, "on-bronze"),
            60,
            "FailedScheduling for on-bronze",
        )
        print(f"FailedScheduling: {note}")
        total = len(cluster.list("/api/v1/nodes"))
        assert note.startswith(f"0/{total} nodes are available: "), note
        assert f"1 {REASON}" in note, note
        assert f"{total - 1} node(s) didn't match Pod's node affinity/selector" in note, note
        assert not cluster.get(f"/api/v1/namespaces/{namespace}/pods/on-bronze")["spec"].get(
            "nodeName"
        )

        listing = kschedctl("list", "-o", "json", cwd=tmp_path, lab=lab)
        assert listing.returncode == 0, listing.stderr
        entry = next(s for s in json.loads(listing.stdout)["items"] if s["name"] == name)
        assert (entry["form"], entry["managed"], entry["healthy"]) == (form, True, True), entry
        assert entry["lease"]["holder"] and entry["leader"], entry
        status = kschedctl("status", name, "-o", "json", cwd=tmp_path, lab=lab)
        assert status.returncode == 0, status.stderr
        report = json.loads(status.stdout)
        assert report["scheduler"]["healthy"], report
        assert report["version"]["image"] == CUSTOM_KUBE_SCHEDULER_IMAGE, report["version"]
        assert all(c["allowed"] for c in report["access"]["checks"]), report["access"]

        # remove refuses while pods still use the scheduler; gone, it removes everything.
        for pod in cluster.list(f"/api/v1/namespaces/{namespace}/pods"):
            cluster.delete(
                f"/api/v1/namespaces/{namespace}/pods/{pod['metadata']['name']}",
                gracePeriodSeconds=0,
            )
        wait_for(lambda: not cluster.list(f"/api/v1/namespaces/{namespace}/pods"), 60, "pods gone")
        removed = kschedctl("remove", name, cwd=tmp_path, lab=lab)
        assert removed.returncode == 0, removed.stderr
    finally:
        kschedctl("remove", name, "--force", cwd=tmp_path, lab=lab)
    wait_for(lambda: leftovers(cluster, name) == [], 60, f"nothing left of {name}")
    assert kschedctl("remove", name, cwd=tmp_path, lab=lab).returncode == 5
