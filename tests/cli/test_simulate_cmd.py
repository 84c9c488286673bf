"""`kschedctl simulate`: everything wrong with its inputs is refused before a lab starts, with
the documented exit code and a message naming the file and field."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from conftest import Run

FIXTURES = Path(__file__).parent.parent / "fixtures" / "simulate"


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("cluster.yaml", "spread.yaml", "binpack.yaml", "fallback.yaml"):
        shutil.copy(FIXTURES / name, tmp_path / name)

    def no_lab(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("a lab was started for inputs that should have been refused")

    monkeypatch.setattr("kschedctl.ops.simulate.simulate", no_lab)
    return tmp_path


def edited(path: Path, change: object) -> Path:
    doc = yaml.safe_load(path.read_text())
    change(doc)  # type: ignore[operator]
    path.write_text(yaml.safe_dump(doc))
    return path


@pytest.mark.parametrize(
    ("change", "code", "message"),
    [
        pytest.param(lambda d: d.update(apiVersion="kschedctl.io/v1"), 3,
                     "cluster.yaml: apiVersion: expected 'kschedctl.io/v1alpha1'", id="version"),
        pytest.param(lambda d: d["spec"]["nodes"][0].update(gpus=2), 3,
                     "spec.nodes[0].gpus", id="unknown-field"),
        pytest.param(lambda d: d["spec"]["pods"][0].update(nodeName="gone"), 3,
                     "spec.pods[0].nodeName: node 'gone' is not in the snapshot's nodes", id="missing-node"),
        pytest.param(lambda d: d["spec"]["pendingPods"][0].update(priorityClassName="urgent"), 3,
                     "names PriorityClass 'urgent', which the snapshot does not hold", id="priority-class"),
        # issue 22: the API's name and label rules, checked before any lab starts
        pytest.param(lambda d: d["spec"]["nodes"].append({"name": "../../x"}), 3,
                     "spec.nodes[10].name: '../../x' is not a DNS-1123 subdomain", id="node-name-path"),
        pytest.param(lambda d: d["spec"]["nodes"][0]["labels"].update(app="<script>"), 3,
                     "spec.nodes[0].labels.app: label value '<script>': a valid label must consist of",
                     id="label-value-markup"),
        pytest.param(lambda d: d["spec"]["pendingPods"][0].update(namespace="Team_B"), 3,
                     "spec.pendingPods[0].namespace: 'Team_B' is not a DNS-1123 label", id="namespace"),
    ],
)  # fmt: skip
def test_bad_snapshots(run: Run, files: Path, change: object, code: int, message: str) -> None:
    edited(files / "cluster.yaml", change)
    result = run("simulate", "cluster.yaml", "--scheduler", "spread.yaml")
    assert result.exit_code == code, result.stderr
    assert message in result.stderr
    assert result.stdout == ""


def test_missing_inputs(run: Run, files: Path) -> None:
    result = run("simulate", "nothing.yaml", "--scheduler", "spread.yaml")
    assert result.exit_code == 5 and "nothing.yaml" in result.stderr
    result = run("simulate", "cluster.yaml", "--scheduler", "nowhere")
    assert result.exit_code == 5
    assert "--scheduler 'nowhere'" in result.stderr or "--scheduler nowhere" in result.stderr
    result = run("simulate", "cluster.yaml", "--scheduler", "spread.yaml", "--workload", "w.yaml")
    assert result.exit_code == 5 and "workload file w.yaml does not exist" in result.stderr


def test_bad_specs(run: Run, files: Path) -> None:
    edited(files / "binpack.yaml", lambda d: d["spec"]["builtin"].update(strategy="pack-hard"))
    result = run(
        "simulate", "cluster.yaml", "--scheduler", "spread.yaml", "--scheduler", "binpack.yaml"
    )
    assert result.exit_code == 3
    assert "binpack.yaml" in result.stderr and "spec.builtin.strategy" in result.stderr
    edited(
        files / "fallback.yaml",
        lambda d: d["spec"]["builtin"]["policy"]["fallbacks"][0]["tolerate"][0].pop("key"),
    )
    result = run("simulate", "cluster.yaml", "--scheduler", "fallback.yaml")
    assert result.exit_code == 3 and "tolerate[0].key" in result.stderr


def test_usage_errors(run: Run, files: Path) -> None:
    result = run("simulate", "cluster.yaml")
    assert result.exit_code == 2
    result = run("simulate", "cluster.yaml", "--scheduler", "spread.yaml", "--report", "r.png")
    assert result.exit_code == 2 and "r.png" in result.stderr
    result = run("simulate", "cluster.yaml", "--scheduler", "spread.yaml", "-o", "name")
    assert result.exit_code == 2
    result = run("simulate", "cluster.yaml", "--scheduler", "spread.yaml", "--no-pending")
    assert result.exit_code == 2 and "nothing to schedule" in result.stderr


WORKLOAD_LIMIT = "is more than the limit of 100,000 pods"


@pytest.mark.parametrize(
    ("kind", "spec", "field"),
    [
        pytest.param("Deployment", {"replicas": 1_000_000_000}, "[0].spec.replicas", id="replicas"),
        pytest.param("StatefulSet", {"replicas": 2**63 - 1}, "[0].spec.replicas", id="int64-replicas"),
        pytest.param("Job", {"parallelism": 1_000_000_000}, "[0].spec.parallelism", id="job-parallelism"),
        pytest.param("Job", {"parallelism": 10**12, "completions": 10**10}, "[0].spec.completions",
                     id="job-completions"),
    ],
)  # fmt: skip
def test_a_huge_workload_is_refused_before_it_is_expanded(
    run: Run, files: Path, kind: str, spec: dict[str, int], field: str
) -> None:
    """Issue 22: `replicas: 1000000000` grew to 2 GB and a MemoryError traceback."""
    template = {"spec": {"containers": [{"name": "c", "image": "x"}]}}
    doc = {"kind": kind, "metadata": {"name": "big"}, "spec": {**spec, "template": template}}
    (files / "w.yaml").write_text(yaml.safe_dump(doc))
    result = run("simulate", "cluster.yaml", "--scheduler", "spread.yaml", "--workload", "w.yaml")
    assert result.exit_code == 3, result.stderr
    assert f"w.yaml: {field}: " in result.stderr and WORKLOAD_LIMIT in result.stderr
    assert "Traceback" not in result.output


def test_the_snapshot_and_the_workload_share_the_pod_limit(run: Run, files: Path) -> None:
    template = {"spec": {"containers": [{"name": "c", "image": "x"}]}}
    doc = {"kind": "Deployment", "metadata": {"name": "web"},
           "spec": {"replicas": 99_999, "template": template}}  # fmt: skip
    (files / "w.yaml").write_text(yaml.safe_dump(doc))
    result = run("simulate", "cluster.yaml", "--scheduler", "spread.yaml", "--workload", "w.yaml")
    assert result.exit_code == 3, result.stderr
    assert "[0].spec.replicas: 99,999 pods on top of the snapshot's" in result.stderr


def test_workload_names_and_labels_are_checked(run: Run, files: Path) -> None:
    doc = {"kind": "Pod", "metadata": {"name": "../../x", "labels": {"app": "<script>"}},
           "spec": {"containers": [{"name": "c", "image": "x"}]}}  # fmt: skip
    (files / "w.yaml").write_text(yaml.safe_dump(doc))
    result = run("simulate", "cluster.yaml", "--scheduler", "spread.yaml", "--workload", "w.yaml")
    assert result.exit_code == 3, result.stderr
    assert "[0].metadata.name: '../../x' is not a DNS-1123 subdomain" in result.stderr
