"""The nodes file format and the default node set (pure)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kschedctl.base.errors import NotFoundError, SpecError
from kschedctl.lab.devices import node_resource_slices
from kschedctl.lab.nodes import default_nodes, load_nodes_file


def test_default_nodes_are_kwok_managed_with_a_real_shape() -> None:
    nodes = default_nodes(3)
    assert [n["metadata"]["name"] for n in nodes] == ["lab-node-1", "lab-node-2", "lab-node-3"]
    for node in nodes:
        assert node["metadata"]["annotations"]["kwok.x-k8s.io/node"] == "fake"
        assert node["status"]["allocatable"] == {"cpu": "4", "memory": "8Gi", "pods": "110"}
    assert [n["metadata"]["labels"]["topology.kubernetes.io/zone"] for n in nodes] == [
        "zone-a", "zone-b", "zone-a",
    ]  # fmt: skip
    assert default_nodes(0) == []


def test_nodes_carry_the_beta_os_and_arch_labels_a_kubelet_sets(tmp_path: Path) -> None:
    """Set at creation, they spare the node lifecycle controller a patch per node before it
    lifts the not-ready taint; they follow the stable labels, as the controller makes them."""
    labels = default_nodes(1)[0]["metadata"]["labels"]
    assert labels["beta.kubernetes.io/os"] == "linux"
    assert labels["beta.kubernetes.io/arch"] == "amd64"
    path = tmp_path / "nodes.yaml"
    path.write_text("nodes:\n- name: arm\n  labels: {kubernetes.io/arch: arm64}\n")
    assert load_nodes_file(path)[0]["metadata"]["labels"]["beta.kubernetes.io/arch"] == "arm64"


def test_nodes_file_expands_counts_and_keeps_shape(tmp_path: Path) -> None:
    path = tmp_path / "nodes.yaml"
    path.write_text(
        "nodes:\n- name: big\n  count: 2\n  labels: {disktype: ssd}\n"
        "  taints: [{key: a, value: b, effect: NoExecute}]\n  capacity: {cpu: '8'}\n"
        "- name: cordoned\n  unschedulable: true\n"
    )
    nodes = {n["metadata"]["name"]: n for n in load_nodes_file(path)}
    assert sorted(nodes) == ["big-1", "big-2", "cordoned"]
    assert nodes["big-2"]["metadata"]["labels"]["disktype"] == "ssd"
    assert nodes["big-1"]["status"]["capacity"] == {"cpu": "8", "memory": "8Gi", "pods": "110"}
    assert nodes["big-1"]["spec"]["taints"] == [{"key": "a", "value": "b", "effect": "NoExecute"}]
    assert nodes["cordoned"]["spec"] == {"unschedulable": True}


@pytest.mark.parametrize(
    ("text", "path", "message"),
    [
        pytest.param("nodes: {}", "nodes", "must be a list", id="not-a-list"),
        pytest.param("nodes: []\nextra: 1", "extra", "unknown field", id="unknown-top-level"),
        pytest.param("nodes: [{name: Big}]", "nodes[0].name", "not a valid", id="bad-name"),
        pytest.param("nodes: [{name: a, count: 0}]", "nodes[0].count", "from 1 to", id="zero-count"),
        pytest.param("nodes: [{name: a, hue: red}]", "nodes[0].hue", "unknown", id="unknown-field"),
        pytest.param(
            "nodes: [{name: a, taints: [{key: k, effect: Sometimes}]}]",
            "nodes[0].taints[0].effect", "must be one of", id="bad-effect",
        ),
        pytest.param(
            "nodes: [{name: a, capacity: {cpu: lots}}]",
            "nodes[0].capacity.cpu", "not a quantity", id="bad-quantity",
        ),
        pytest.param("nodes: [{name: a}, {name: a}]", "nodes", "duplicate", id="duplicate"),
        pytest.param("nodes: [a: b: c", "", "not valid YAML", id="malformed-yaml"),
    ],
)  # fmt: skip
def test_nodes_file_errors_name_the_field(
    tmp_path: Path, text: str, path: str, message: str
) -> None:
    file = tmp_path / "nodes.yaml"
    file.write_text(text)
    with pytest.raises(SpecError) as info:
        load_nodes_file(file)
    assert info.value.path == path
    assert message in info.value.message
    assert str(file) in info.value.message


def test_missing_nodes_file(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError):
        load_nodes_file(tmp_path / "nope.yaml")


def test_node_counts_are_added_up_before_any_node_is_built(tmp_path: Path) -> None:
    file = tmp_path / "nodes.yaml"
    file.write_text("nodes:\n- {name: a, count: 3000}\n- {name: b, count: 3000}\n")
    with pytest.raises(SpecError) as info:
        load_nodes_file(file)
    assert info.value.path == "nodes[1].count"
    assert "3,000 nodes is more than the limit of 5,000 nodes" in info.value.message


@pytest.mark.parametrize(
    ("entry", "path", "message"),
    [
        ("{name: a, labels: {app: <script>}}", "nodes[0].labels.app", "label value '<script>'"),
        ("{name: a, labels: {'a b': x}}", "nodes[0].labels['a b']", "label key 'a b'"),
        ("{name: a, taints: [{key: '../k', effect: NoSchedule}]}", "nodes[0].taints[0].key", "taint key '../k'"),
        ("{name: a, taints: [{key: k, value: 'a b', effect: NoSchedule}]}", "nodes[0].taints[0].value", "label value 'a b'"),
        ("{name: a, capacity: {'gpu!': '1'}}", "nodes[0].capacity['gpu!']", "resource name 'gpu!'"),
    ],
)  # fmt: skip
def test_nodes_file_labels_and_taints_follow_the_api_rules(
    tmp_path: Path, entry: str, path: str, message: str
) -> None:
    file = tmp_path / "nodes.yaml"
    file.write_text(f"nodes: [{entry}]\n")
    with pytest.raises(SpecError) as info:
        load_nodes_file(file)
    assert info.value.path == path and message in info.value.message


def test_nodes_file_devices_become_resource_slices(tmp_path: Path) -> None:
    file = tmp_path / "nodes.yaml"
    file.write_text(
        "nodes:\n- name: gpu\n  count: 2\n  devices:\n"
        "  - {driver: gpu.example.com, name: gpu, count: 2, attributes: {model: a100, cores: 8,"
        " ecc: true, v: {version: 1.2.3}}, capacity: {memory: 40Gi}}\n"
    )
    nodes = load_nodes_file(file)
    nodes[0]["metadata"]["uid"] = "u-1"  # as the API server returns it
    (published,) = node_resource_slices(nodes[0])
    assert published["spec"]["nodeName"] == "gpu-1"
    assert published["spec"]["pool"] == {"name": "gpu-1", "generation": 1, "resourceSliceCount": 1}
    assert published["metadata"]["ownerReferences"][0]["uid"] == "u-1"
    assert [d["name"] for d in published["spec"]["devices"]] == ["gpu-0", "gpu-1"]
    assert published["spec"]["devices"][0]["attributes"] == {
        "model": {"string": "a100"}, "cores": {"int": 8}, "ecc": {"bool": True},
        "v": {"version": "1.2.3"}}  # fmt: skip
    assert published["spec"]["devices"][0]["capacity"] == {"memory": {"value": "40Gi"}}


@pytest.mark.parametrize(
    ("devices", "path", "message"),
    [
        ("[{driver: Not_A_Domain}]", "devices[0].driver", "not a driver name"),
        ("[{driver: a.io, count: 0}]", "devices[0].count", "positive integer"),
        ("[{driver: a.io, capacity: {memory: lots}}]", "devices[0].capacity.memory", "quantity"),
        ("[{driver: a.io, attributes: {x: [1]}}]", "devices[0].attributes.x", "string, integer"),
        ("[{driver: a.io, colour: red}]", "devices[0].colour", "unknown field"),
        ("[{driver: a.io, taints: [{key: k, effect: Sometimes}]}]", "devices[0].taints[0].effect",
         "not one of NoSchedule, NoExecute, None"),
        ("[{driver: a.io, taints: [{key: 'a b', effect: NoSchedule}]}]",
         "devices[0].taints[0].key", "taint key 'a b'"),
        ("[{driver: a.io, consumesCounters: {g: {memory: 1Gi}}}]", "devices[0].consumesCounters.g",
         "no earlier sharedCounters entry of a.io declares"),
        ("[{driver: a.io, sharedCounters: {g: {memory: 1Gi}}},"
         " {driver: a.io, consumesCounters: {g: {cores: 1}}}]", "devices[1].consumesCounters.g",
         "no earlier sharedCounters entry"),
        ("[{driver: a.io, sharedCounters: {g: {memory: 1Gi}}, count: 2}]", "devices[0].count",
         "unknown field beside sharedCounters"),
        ("[{driver: a.io, sharedCounters: {G_: {memory: 1Gi}}}]", "devices[0].sharedCounters.G_",
         "not a counter set name"),
        ("[{driver: a.io, allowMultipleAllocations: yes please}]",
         "devices[0].allowMultipleAllocations", "true or false"),
        ("[{driver: a.io, count: 65, taints: [{key: k, effect: None}]}]", "devices",
         "at most 64 devices"),
    ],
)  # fmt: skip
def test_nodes_file_devices_errors_name_the_field(
    tmp_path: Path, devices: str, path: str, message: str
) -> None:
    file = tmp_path / "nodes.yaml"
    file.write_text(f"nodes:\n- name: gpu\n  devices: {devices}\n")
    with pytest.raises(SpecError) as err:
        load_nodes_file(file)
    assert path in str(err.value) and message in str(err.value)


def test_nodes_file_device_taints_and_shared_counters_become_slices(tmp_path: Path) -> None:
    file = tmp_path / "nodes.yaml"
    file.write_text(
        "nodes:\n- name: gpu\n  devices:\n"
        "  - {driver: gpu.example.com, sharedCounters: {gpu-0: {memory: 80Gi}}}\n"
        "  - {driver: gpu.example.com, name: half, count: 2, consumesCounters: {gpu-0: {memory: 40Gi}},"
        " taints: [{key: gpu.example.com/health, value: broken, effect: NoSchedule}]}\n"
    )  # fmt: skip
    counters, devices = node_resource_slices(load_nodes_file(file)[0])
    pool = {"name": "gpu", "generation": 1, "resourceSliceCount": 2}
    assert counters["spec"] == {
        "driver": "gpu.example.com", "nodeName": "gpu", "pool": pool,
        "sharedCounters": [{"name": "gpu-0", "counters": {"memory": {"value": "80Gi"}}}]}  # fmt: skip
    assert devices["spec"]["pool"] == pool and "sharedCounters" not in devices["spec"]
    assert devices["spec"]["devices"][1] == {
        "name": "half-1",
        "consumesCounters": [{"counterSet": "gpu-0", "counters": {"memory": {"value": "40Gi"}}}],
        "taints": [{"key": "gpu.example.com/health", "value": "broken", "effect": "NoSchedule"}],
    }
