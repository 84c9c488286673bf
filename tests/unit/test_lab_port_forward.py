"""The lab runner's kwok PortForward: each pod port a program serves on, to the local port the
process really listens on (what pods/portforward, and so `status`'s metrics, reach)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from kschedctl.lab.runner.kube import LabApi
from kschedctl.lab.startup import KWOK_PORT_FORWARD_CRD

POD = {"metadata": {"name": "sched", "namespace": "kube-system", "uid": "u-1"}}


class RecordingCluster:
    def __init__(self) -> None:
        self.applied: list[tuple[str, dict[str, Any]]] = []

    def apply(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        self.applied.append((path, body))
        return body


def test_port_forward_maps_each_serving_port_to_its_local_port() -> None:
    cluster = RecordingCluster()
    api = LabApi(cluster)  # type: ignore[arg-type]
    api.apply_port_forward(POD, {10259: 41234})
    ((path, body),) = cluster.applied
    assert path == "/apis/kwok.x-k8s.io/v1alpha1/namespaces/kube-system/portforwards/sched"
    assert body["kind"] == "PortForward"
    assert body["spec"] == {
        "forwards": [{"ports": [10259], "target": {"address": "127.0.0.1", "port": 41234}}]
    }
    # Garbage-collected with its pod, like the Logs object.
    assert body["metadata"]["ownerReferences"] == [
        {"apiVersion": "v1", "kind": "Pod", "name": "sched", "uid": "u-1"}
    ]


def test_the_shipped_crd_is_kwoks_port_forward() -> None:
    (crd,) = [d for d in yaml.safe_load_all(Path(KWOK_PORT_FORWARD_CRD).read_text()) if d]
    assert crd["metadata"]["name"] == "portforwards.kwok.x-k8s.io"
    assert crd["spec"]["names"]["kind"] == "PortForward"
    assert crd["spec"]["scope"] == "Namespaced"
