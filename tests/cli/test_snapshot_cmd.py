"""`kschedctl snapshot` through the CLI against a fake cluster (file, stdout, summary, refusal),
and `kschedctl validate` on snapshot files (bad ones exit 3 naming the field)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kschedctl.base.errors import ForbiddenError
from kschedctl.clustersnapshot import dump, load_snapshot
from kschedctl.clustersnapshot.model import ClusterSnapshot, SnapshotNode, SnapshotPod

NODES = [
    {
        "metadata": {"name": f"n{i}", "labels": {"kubernetes.io/hostname": f"n{i}"}},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
    }
    for i in range(3)
]
PODS = [
    {
        "metadata": {"namespace": "team-a", "name": "bound", "labels": {"app": "web"}},
        "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "i"}]},
        "status": {"phase": "Running"},
    },
    {
        "metadata": {"namespace": "team-a", "name": "waiting"},
        "spec": {"schedulerName": "mine", "containers": [{"name": "c", "image": "i"}]},
        "status": {"phase": "Pending"},
    },
    {
        "metadata": {"namespace": "team-b", "name": "waiting-too"},
        "spec": {"containers": [{"name": "c", "image": "i"}]},
        "status": {"phase": "Pending"},
    },
]


class FakeCluster:
    server = "https://example.invalid:6443"

    def __init__(self, forbidden: str = "") -> None:
        self.forbidden = forbidden

    def __enter__(self) -> FakeCluster:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def list(self, path: str, **query: Any) -> list[dict[str, Any]]:
        if path.endswith("/nodes"):
            return copy.deepcopy(NODES)
        if path.endswith(self.forbidden) and self.forbidden:
            raise ForbiddenError(f"forbidden: {self.forbidden} is forbidden")
        return []

    def pages(self, path: str, **query: Any) -> Any:
        if self.forbidden == "pods":
            raise ForbiddenError(
                'forbidden: pods is forbidden: User "x" cannot list resource "pods"'
            )
        yield copy.deepcopy(PODS)

    def server_version(self) -> dict[str, Any]:
        return {"gitVersion": "v1.36.3"}


@pytest.fixture
def cluster(monkeypatch: pytest.MonkeyPatch) -> FakeCluster:
    fake = FakeCluster()
    monkeypatch.setattr("kschedctl.cli.snapshot.connect", lambda *args: fake)
    return fake


def test_snapshot_to_a_file(run, cluster: FakeCluster, tmp_path: Path) -> None:
    result = run("snapshot", "-f", "snap.yaml")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == ""
    assert result.stderr.startswith(
        "wrote snap.yaml: 3 nodes, 1 bound pods (0 of DaemonSets), 2 pending pods (0 gated), "
        "0 PodDisruptionBudgets, 0 PriorityClasses"
    )
    snap = load_snapshot(str(tmp_path / "snap.yaml"))
    assert [p.name for p in snap.pending_pods] == ["waiting", "waiting-too"]
    assert snap.pending_pods[0].scheduler_name == "mine"


def test_snapshot_to_stdout_for_one_namespace(run, cluster: FakeCluster) -> None:
    result = run("snapshot", "-n", "team-b", "--anonymize")
    assert result.exit_code == 0, result.stderr
    doc = yaml.safe_load(result.stdout)
    assert doc["kind"] == "Snapshot" and doc["metadata"]["anonymized"] is True
    assert len(doc["spec"]["pendingPods"]) == 1
    assert "team-b" not in result.stdout and "waiting" not in result.stdout
    assert "anonymized" in result.stderr


def test_snapshot_as_json(run, cluster: FakeCluster, tmp_path: Path) -> None:
    assert run("snapshot", "-f", "snap.json").exit_code == 0
    assert json.loads((tmp_path / "snap.json").read_text())["spec"]["nodes"][0]["name"] == "n0"
    # -o is the format: it wins over the file's extension, and alone it goes to stdout
    assert run("snapshot", "-f", "snap.txt", "-o", "json").exit_code == 0
    assert json.loads((tmp_path / "snap.txt").read_text())["kind"] == "Snapshot"
    result = run("snapshot", "-o", "json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["kind"] == "Snapshot"
    assert not (tmp_path / "json").exists()
    result = run("snapshot", "--output", "yaml", "--output-file", "-")
    assert yaml.safe_load(result.stdout)["kind"] == "Snapshot"


@pytest.mark.parametrize(
    ("args", "written", "instead"),
    [
        (("-o", "old.json"), "old.json", "-f old.json"),
        (("-o", "dir/old.yaml"), "dir/old.yaml", "-f dir/old.yaml"),
        (("-o", "existing"), "existing", "-f existing"),
        (("-o", "-"), None, "leave out -o (YAML on stdout)"),
    ],
    ids=["json-name", "path", "existing-file", "dash"],
)
def test_the_old_o_file_spelling_still_writes_with_a_warning(
    run,
    cluster: FakeCluster,
    tmp_path: Path,
    args: tuple[str, ...],
    written: str | None,
    instead: str,
) -> None:
    (tmp_path / "dir").mkdir()
    (tmp_path / "existing").write_text("old snapshot\n")
    result = run("snapshot", *args)
    assert result.exit_code == 0, result.stderr
    assert (
        f"warning: -o FILE is deprecated, -o is the format (json or yaml): use {instead}"
        in result.stderr
    )
    if written is None:
        assert yaml.safe_load(result.stdout)["kind"] == "Snapshot"
    else:
        assert load_snapshot(str(tmp_path / written)).nodes[0].name == "n0"
        assert result.stdout == ""


@pytest.mark.parametrize(
    "args", [("-o", "wide"), ("-o", "snap"), ("-o", "table"), ("-o", "x.yaml", "-f", "y.yaml")]
)
def test_an_o_that_is_no_format_of_snapshot_is_a_usage_error(
    run, cluster: FakeCluster, tmp_path: Path, args: tuple[str, ...]
) -> None:
    result = run("snapshot", *args)
    assert result.exit_code == 2
    assert f"error: -o '{args[1]}': not a format of snapshot (yaml, json)" in result.stderr
    assert "hint: -o yaml or -o json; the file goes with -f FILE" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_refused_pods_exit_4_and_write_nothing(run, cluster: FakeCluster, tmp_path: Path) -> None:
    cluster.forbidden = "pods"
    result = run("snapshot", "-f", "snap.yaml")
    assert result.exit_code == 4
    assert result.stderr.startswith("error: cannot list pods in all namespaces: forbidden: ")
    assert (
        "hint: a snapshot needs the verbs get and list on nodes and on pods in all namespaces"
        in result.stderr
    )
    assert not (tmp_path / "snap.yaml").exists()


def test_refused_optional_collection_is_said(run, cluster: FakeCluster, tmp_path: Path) -> None:
    cluster.forbidden = "poddisruptionbudgets"
    result = run("snapshot", "-f", "snap.yaml")
    assert result.exit_code == 0
    assert (
        "left out PodDisruptionBudgets: forbidden or not served (see metadata.omitted)"
        in result.stderr
    )
    omitted = load_snapshot(str(tmp_path / "snap.yaml")).metadata.omitted
    assert omitted[0].what == "PodDisruptionBudgets"


def test_unwritable_target_exits_5_or_1(run, cluster: FakeCluster) -> None:
    result = run("snapshot", "-f", "no/such/dir/snap.yaml")
    assert result.exit_code == 5
    assert result.stderr.startswith("error: writing the snapshot to no/such/dir/snap.yaml failed")


def test_no_kubeconfig_exits_4(run) -> None:
    result = run("snapshot", "-f", "snap.yaml")
    assert result.exit_code == 4
    assert result.stderr.startswith("error: no kubeconfig found")


def test_usage(run) -> None:
    assert "kschedctl.io/v1alpha1" in run("snapshot", "--help").stdout


# --- validate on snapshot files ------------------------------------------------------------

GOOD = ClusterSnapshot(
    nodes=[SnapshotNode(name="n1", allocatable={"cpu": "2"})],
    pods=[SnapshotPod(namespace="a", name="p", node_name="n1")],
    pending_pods=[SnapshotPod(namespace="a", name="q")],
)


def test_validate_a_good_snapshot(run, tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text(dump(GOOD))
    result = run("validate", "s.yaml", "-o", "json")
    assert result.exit_code == 0, result.stdout
    assert json.loads(result.stdout)[0]["checked"] == [
        "cluster snapshot: 1 nodes, 1 bound pods, 1 pending pods"
    ]


def test_validate_a_snapshot_larger_than_a_spec_may_be(run, tmp_path: Path) -> None:
    big = ClusterSnapshot(
        nodes=GOOD.nodes,
        pending_pods=[
            SnapshotPod(namespace="a-namespace-with-a-long-name", name=f"pod-{i:05}")
            for i in range(20_000)
        ],
    )
    (tmp_path / "big.json").write_text(dump(big, as_json=True))
    assert (tmp_path / "big.json").stat().st_size > 1024 * 1024
    result = run("validate", "big.json", "-o", "json")
    assert result.exit_code == 0, result.stdout
    assert "20000 pending pods" in result.stdout


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"apiVersion": "kschedctl.io/v2"}, "s.yaml: apiVersion: expected 'kschedctl.io/v1alpha1'"),
        ({"extra": 1}, "s.yaml: extra: unknown field"),
    ],
    ids=["version", "unknown field"],
)
def test_validate_a_bad_snapshot_exits_3(
    run, tmp_path: Path, change: dict[str, Any], message: str
) -> None:
    doc = yaml.safe_load(dump(GOOD))
    doc.update(change)
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(doc))
    result = run("validate", "s.yaml")
    assert result.exit_code == 3
    assert result.stdout.startswith(message)


def test_validate_a_pod_on_a_missing_node_exits_3(run, tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text(dump(GOOD).replace("nodeName: n1", "nodeName: n9"))
    result = run("validate", "s.yaml")
    assert result.exit_code == 3
    assert (
        result.stdout == "s.yaml: spec.pods[0].nodeName: node 'n9' is not in the snapshot's nodes\n"
    )


def _with(snap: ClusterSnapshot, **changes: Any) -> ClusterSnapshot:
    from dataclasses import replace

    return replace(snap, **changes)


@pytest.mark.parametrize(
    ("snap", "lines"),
    [
        pytest.param(
            _with(GOOD, nodes=[*GOOD.nodes, SnapshotNode(name="../../x")]),
            ["s.yaml: spec.nodes[1].name: '../../x' is not a DNS-1123 subdomain"],
            id="node-name-path",
        ),
        pytest.param(
            _with(GOOD, nodes=[SnapshotNode(name="n1", labels={"app": "<script>", "a/b/c": "x"},
                                            taints=[{"key": "k k", "value": "v", "effect": "NoSchedule"}],
                                            capacity={"cpu\n": "1"})]),
            ["s.yaml: spec.nodes[0].labels.app: label value '<script>': a valid label must consist of",
             "s.yaml: spec.nodes[0].labels.a/b/c: label key 'a/b/c': a qualified name must consist of",
             "s.yaml: spec.nodes[0].taints[0].key: taint key 'k k': name part must consist of",
             "s.yaml: spec.nodes[0].capacity['cpu\\n']: resource name 'cpu\\n': name part must consist"],
            id="labels-taints-resources",
        ),
        pytest.param(
            _with(GOOD, pending_pods=[SnapshotPod(namespace="../etc", name="q/../r", labels={"x": "1" * 64})]),
            ["s.yaml: spec.pendingPods[0].namespace: '../etc' is not a DNS-1123 label",
             "s.yaml: spec.pendingPods[0].name: 'q/../r' is not a DNS-1123 subdomain",
             "s.yaml: spec.pendingPods[0].labels.x: label value '1111",
             "must be no more than 63 characters"],
            id="pod-namespace-name-label",
        ),
    ],
)  # fmt: skip
def test_validate_checks_names_and_labels_by_the_api_rules(
    run, tmp_path: Path, snap: ClusterSnapshot, lines: list[str]
) -> None:
    """Issue 22: such a snapshot passed `validate` and was refused only once a lab ran."""
    (tmp_path / "s.yaml").write_text(dump(snap))
    result = run("validate", "s.yaml")
    assert result.exit_code == 3, result.stdout
    for line in lines:
        assert line in result.stdout
    assert "\n" not in result.stdout.rstrip("\n").replace("\ns.yaml: ", " ")  # one problem a line


def test_a_snapshot_with_too_many_nodes_is_refused_before_it_is_read(run, tmp_path: Path) -> None:
    doc = yaml.safe_load(dump(GOOD))
    doc["spec"]["nodes"] = [{"name": f"n{i}"} for i in range(5001)]
    (tmp_path / "s.json").write_text(json.dumps(doc))
    result = run("validate", "s.json")
    assert result.exit_code == 3
    assert "s.json: spec.nodes: 5,001 nodes is more than the limit of 5,000 nodes" in result.stdout
