"""A real custom kube-scheduler: kube-scheduler v1.36.3 with kschedctl's out-of-tree plugin
NodeLabelMatch compiled in (kschedctl/lab/gomod/custom-scheduler), run by the lab from its image
like the upstream kube-scheduler image is.

The scheduler is deployed from kschedctl's own Deployment bundle for a kube-scheduler spec with
the image and the KubeSchedulerConfiguration swapped (:func:`_deploy_custom_scheduler`): the one
helper to replace once specs can say ``program: custom``.
"""

from __future__ import annotations

import copy
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from e2e_helpers import create_and_bind, pod_events, pod_manifest, scheduled_event, wait_for

from kschedctl.base.errors import KschedError, NotFoundError
from kschedctl.k8s.resources import object_path
from kschedctl.kubeclient.client import Cluster
from kschedctl.lab import binaries
from kschedctl.lab.images import CUSTOM_KUBE_SCHEDULER, CUSTOM_KUBE_SCHEDULER_IMAGE
from kschedctl.render.forms import render
from kschedctl.spec import default_spec

PLUGIN = "NodeLabelMatch"
SCHEDULER = "custom-scheduler"
LABEL = "e2e.kschedctl.io/rack"
ARGS = {"label": LABEL, "values": ["a", "b"]}
REASON = f"node(s) didn't have label {LABEL} with one of the values [a b]"
# A kubeconfig whose server nothing listens on: start-up fails before any request if the
# profiles cannot be built, which is all (b) and (c) look at.
UNREACHABLE_KUBECONFIG = {
    "apiVersion": "v1",
    "kind": "Config",
    "clusters": [{"name": "none", "cluster": {"server": "https://127.0.0.1:1"}}],
    "users": [{"name": "none", "user": {"token": "none"}}],
    "contexts": [{"name": "none", "context": {"cluster": "none", "user": "none"}}],
    "current-context": "none",
}


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


def _config(name: str, args: dict[str, Any], namespace: str = "kube-system") -> dict[str, Any]:
    """kschedctl's KubeSchedulerConfiguration for ``name`` with NodeLabelMatch added at filter."""
    bundle = yaml.safe_load_all(render(default_spec(name, namespace=namespace), "deployment"))
    configmap = next(o for o in bundle if o and o["kind"] == "ConfigMap")
    config: dict[str, Any] = yaml.safe_load(next(iter(configmap["data"].values())))
    (profile,) = config["profiles"]
    profile["plugins"] = {"filter": {"enabled": [{"name": PLUGIN}]}}
    profile["pluginConfig"] = [{"name": PLUGIN, "args": args}]
    return config


def _deploy_custom_scheduler(
    cluster: Cluster, namespace: str, name: str, config: dict[str, Any]
) -> list[dict[str, Any]]:
    """Apply kschedctl's Deployment bundle for kube-scheduler ``name`` in ``namespace``, with
    the custom image and ``config``; returns the objects applied (for clean-up)."""
    bundle = [
        o
        for o in yaml.safe_load_all(render(default_spec(name, namespace=namespace), "deployment"))
        if o
    ]
    for obj in bundle:
        if obj["kind"] == "ConfigMap":
            (key,) = obj["data"]
            obj["data"][key] = yaml.safe_dump(config, sort_keys=False)
        if obj["kind"] == "Deployment":
            pod = obj["spec"]["template"]["spec"]
            (container,) = pod["containers"]
            container["image"] = CUSTOM_KUBE_SCHEDULER_IMAGE
        cluster.apply(object_path(obj), obj)
    return bundle


@pytest.fixture()
def racks(cluster: Cluster) -> Iterator[dict[str, str]]:
    """Rack labels on three of the lab's nodes (node -> rack); taken off afterwards."""
    nodes = sorted(n["metadata"]["name"] for n in cluster.list("/api/v1/nodes"))
    assert len(nodes) >= 4, nodes
    placed = dict(zip(nodes[:3], ["a", "b", "c"], strict=True))
    for node, rack in placed.items():
        cluster.patch(f"/api/v1/nodes/{node}", {"metadata": {"labels": {LABEL: rack}}})
    yield placed
    for node in placed:
        cluster.patch(f"/api/v1/nodes/{node}", {"metadata": {"labels": {LABEL: None}}})


def _failed_scheduling(cluster: Cluster, namespace: str, pod: str) -> str | None:
    for event in pod_events(cluster, namespace, pod):
        if event.get("reason") == "FailedScheduling" and event.get("note"):
            return str(event["note"])
    return None


def test_custom_scheduler_deployment_places_pods_only_on_labelled_nodes(
    cluster: Cluster, namespace: str, racks: dict[str, str], custom_binary: Path
) -> None:
    config = _config(SCHEDULER, ARGS, namespace)
    objects = _deploy_custom_scheduler(cluster, namespace, SCHEDULER, config)
    try:
        names = [f"app-{i}" for i in range(6)]
        nodes = create_and_bind(cluster, namespace, names, SCHEDULER)
        fitting = {node for node, rack in racks.items() if rack in ARGS["values"]}
        assert set(nodes.values()) <= fitting, nodes
        for name in names:
            assert scheduled_event(cluster, namespace, name)["reportingController"] == SCHEDULER

        # Only the rack-c node passes the pod's own nodeSelector, and NodeLabelMatch refuses it.
        rack_c = next(node for node, rack in racks.items() if rack == "c")
        stuck = pod_manifest(
            "on-rack-c",
            schedulerName=SCHEDULER,
            nodeSelector={"kubernetes.io/hostname": rack_c},
        )
        cluster.create(f"/api/v1/namespaces/{namespace}/pods", stuck)
        note = wait_for(
            lambda: _failed_scheduling(cluster, namespace, "on-rack-c"),
            60,
            "FailedScheduling for on-rack-c",
        )
        print(f"FailedScheduling: {note}")
        total = len(cluster.list("/api/v1/nodes"))
        assert note.startswith(f"0/{total} nodes are available: "), note
        assert f"1 {REASON}" in note, note
        assert f"{total - 1} node(s) didn't match Pod's node affinity/selector" in note, note
        pod = cluster.get(f"/api/v1/namespaces/{namespace}/pods/on-rack-c")
        assert not pod["spec"].get("nodeName")
    finally:
        for obj in objects:
            if "namespace" not in obj["metadata"]:  # the rest goes with the namespace
                cluster.delete(object_path(obj))


def _start_refused(binary: Path, config: dict[str, Any], tmp_path: Path) -> str:
    """Run a scheduler binary on ``config``; it must exit non-zero: its stderr, with klog's
    escaped quotes (``err="… \\"NodeLabelMatch\\" …"``) unescaped."""
    kubeconfig = tmp_path / "unreachable.kubeconfig"
    kubeconfig.write_text(yaml.safe_dump(UNREACHABLE_KUBECONFIG))
    config = copy.deepcopy(config)
    config["clientConnection"] = {
        **config.get("clientConnection", {}),
        "kubeconfig": str(kubeconfig),
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    proc = subprocess.run(
        [str(binary), f"--config={path}", "--secure-port=0"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode != 0, proc.stderr[-2000:]
    return proc.stderr.replace('\\"', '"')


def test_vanilla_kube_scheduler_refuses_the_plugin(
    lab_binaries: dict[str, Path], tmp_path: Path
) -> None:
    stderr = _start_refused(lab_binaries["kube-scheduler"], _config(SCHEDULER, ARGS), tmp_path)
    assert f'FilterPlugin "{PLUGIN}" does not exist' in stderr, stderr[-2000:]
    assert f"creating profile for scheduler name {SCHEDULER}" in stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({}, "label: Required value"),
        ({"label": "bad label!"}, 'label: Invalid value: "bad label!"'),
        ({"label": LABEL, "values": ["a", "a"]}, 'values[1]: Duplicate value: "a"'),
        ({"label": LABEL, "values": ["not ok"]}, 'values[0]: Invalid value: "not ok"'),
        ({"label": LABEL, "value": ["a"]}, 'decoding args: json: unknown field "value"'),
    ],
    ids=["missing-label", "bad-label", "duplicate-value", "bad-value", "misspelt-field"],
)
def test_custom_kube_scheduler_refuses_bad_plugin_args(
    custom_binary: Path, tmp_path: Path, args: dict[str, Any], message: str
) -> None:
    stderr = _start_refused(custom_binary, _config(SCHEDULER, args), tmp_path)
    assert f'initializing plugin "{PLUGIN}": ' in stderr, stderr[-2000:]
    assert message in stderr, stderr[-2000:]


def test_custom_kube_scheduler_is_the_lab_release(custom_binary: Path) -> None:
    proc = subprocess.run([str(custom_binary), "--version"], capture_output=True, text=True)
    assert proc.stdout.strip() == f"Kubernetes {binaries.versions()['k8s.io/kubernetes']}"
