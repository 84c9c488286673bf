"""Limits checked before expansion (issue 22): every count read from a file goes through one
budget before a pod or node is built; names and labels follow the API's rules."""

from __future__ import annotations

import tracemalloc
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kschedctl.base import limits
from kschedctl.base.errors import SpecError
from kschedctl.clustersnapshot import snapshot_from_dict
from kschedctl.observe.events import Event
from kschedctl.observe.timeline import MAX_MINUTES, timeline
from kschedctl.observe.workload import load_workload

TEMPLATE = {"spec": {"containers": [{"name": "c", "image": "x"}]}}


def _deployment(name: str, replicas: int, kind: str = "Deployment") -> dict[str, Any]:
    key = "parallelism" if kind == "Job" else "replicas"
    return {"kind": kind, "metadata": {"name": name}, "spec": {key: replicas, "template": TEMPLATE}}


def _write(tmp_path: Path, docs: list[Any]) -> Path:
    path = tmp_path / "w.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return path


@pytest.mark.parametrize("kind", ["Deployment", "ReplicaSet", "StatefulSet", "Job"])
def test_a_billion_pods_are_refused_without_building_one(tmp_path: Path, kind: str) -> None:
    """Issue 22: `replicas: 1000000000` (or a Job's parallelism) grew to 2 GB before the
    limit was checked. Memory is measured, not time: nothing the size of the count is built."""
    path = _write(tmp_path, [_deployment("big", 1_000_000_000, kind)])
    tracemalloc.start()
    try:
        with pytest.raises(SpecError) as info:
            load_workload(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    field = "parallelism" if kind == "Job" else "replicas"
    assert info.value.exit_code == 3
    assert info.value.path == f"[0].spec.{field}"
    assert "1,000,000,000 pods is more than the limit of 100,000 pods" in info.value.message
    assert info.value.hint
    assert peak < 5 * 1024 * 1024


def test_a_job_runs_at_most_its_completions_at_once(tmp_path: Path) -> None:
    job = _deployment("train", 1_000_000_000, "Job")
    job["spec"]["completions"] = 3
    assert len(load_workload(_write(tmp_path, [job]))) == 3


def test_the_limit_counts_every_object_of_the_file(tmp_path: Path) -> None:
    docs = [_deployment("a", 60_000), {"kind": "List", "items": [_deployment("b", 60_000)]}]
    with pytest.raises(SpecError) as info:
        load_workload(_write(tmp_path, docs))
    assert info.value.path == "[1].items[0].spec.replicas"
    assert "60,000 pods on top of" not in info.value.message  # no earlier input named


@settings(max_examples=200, derandomize=True, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=2**63 - 1) | st.integers(0, 6), max_size=6))
def test_a_workload_expands_to_its_count_or_is_refused_at_the_object_that_passes_the_limit(
    counts: list[int],
) -> None:
    """With a budget of 20 pods (8 already taken): exactly the pods counted, or SpecError at
    the first object whose count passes the limit; never a pod more than the budget."""
    import tempfile

    docs = [_deployment(f"d{i}", n) for i, n in enumerate(counts)]
    budget = limits.Budget("pods", 20, 8, "the snapshot's 8 pods")
    with tempfile.TemporaryDirectory() as tmp:
        path = _write(Path(tmp), docs)
        running = 8
        over = None
        for i, n in enumerate(counts):
            running += n
            if running > 20:
                over = i
                break
        if over is None:
            assert len(load_workload(path, budget=budget)) == sum(counts)
            assert budget.used == 8 + sum(counts)
        else:
            with pytest.raises(SpecError) as info:
                load_workload(path, budget=budget)
            assert info.value.path == f"[{over}].spec.replicas"
            assert f"{counts[over]:,} pods on top of the snapshot's 8 pods" in info.value.message
            assert "limit of 20 pods" in info.value.message


@pytest.mark.parametrize(
    ("metadata", "path", "message"),
    [
        ({"name": "../../x"}, "[0].metadata.name", "'../../x' is not a DNS-1123 subdomain"),
        ({"name": "p", "namespace": "a.b"}, "[0].metadata.namespace", "'a.b' is not a DNS-1123 label"),
        ({"name": "p", "labels": {"app": "<script>"}}, "[0].metadata.labels.app", "label value '<script>'"),
        ({"name": "p", "labels": {"v": 1}}, "[0].metadata.labels.v", "must be a string, not 1"),
        ({"name": "p", "annotations": {"a b": "x"}}, "[0].metadata.annotations['a b']", "key 'a b'"),
    ],
)  # fmt: skip
def test_workload_pods_follow_the_api_rules(
    tmp_path: Path, metadata: dict[str, Any], path: str, message: str
) -> None:
    doc = {"kind": "Pod", "metadata": metadata, "spec": TEMPLATE["spec"]}
    with pytest.raises(SpecError) as info:
        load_workload(_write(tmp_path, [doc]))
    assert info.value.path == path and message in info.value.message


def test_a_controller_name_leaves_room_for_its_pod_numbers(tmp_path: Path) -> None:
    name = "a" * 250
    assert len(load_workload(_write(tmp_path, [_deployment(name, 10)]))) == 10  # a-9: 252
    with pytest.raises(SpecError, match="is not a DNS-1123 subdomain"):
        load_workload(_write(tmp_path, [_deployment(name, 1000)]))  # a-999: 254


# --- snapshots -------------------------------------------------------------------------------


def _snapshot(nodes: int, pods: int, pending: int) -> dict[str, Any]:
    return {
        "apiVersion": "kschedctl.io/v1alpha1",
        "kind": "Snapshot",
        "spec": {
            "nodes": [{"name": "n"}] * nodes,
            "pods": [{"namespace": "a", "name": "p", "nodeName": "n"}] * pods,
            "pendingPods": [{"namespace": "a", "name": "q"}] * pending,
        },
    }


@pytest.mark.parametrize(
    ("sizes", "path", "message"),
    [
        ((5_001, 0, 0), "spec.nodes", "5,001 nodes is more than the limit of 5,000 nodes"),
        ((1, 100_001, 0), "spec.pods", "100,001 pods is more than the limit of 100,000 pods"),
        ((1, 60_000, 40_001), "spec.pendingPods", "40,001 pods is more than the limit"),
    ],
)
def test_snapshot_counts_are_checked_before_decoding(
    sizes: tuple[int, int, int], path: str, message: str
) -> None:
    with pytest.raises(SpecError) as info:
        snapshot_from_dict(_snapshot(*sizes), "s.json")
    assert (info.value.path, info.value.source) == (path, "s.json")
    assert message in info.value.message


# --- events --timeline -------------------------------------------------------------------------


def _scheduled(at: datetime) -> Event:
    return Event(at, at, "Normal", "Scheduled", "", 1, "", "", "Pod", "a", "p", "u", "e")


def test_a_timeline_holds_at_most_a_week_of_minutes() -> None:
    """An event from the year 1 next to one from now would make a billion rows."""
    now = datetime(2026, 12, 4, 12, 0, tzinfo=timezone.utc)
    events = [_scheduled(datetime(1, 1, 1, tzinfo=timezone.utc)), _scheduled(now)]
    found = timeline(events)
    assert len(found.minutes) == MAX_MINUTES
    assert found.minutes[-1].start == now and found.minutes[-1].scheduled == 1
    assert found.minutes[0].start == now - timedelta(minutes=MAX_MINUTES - 1)
    assert found.omitted > 1_000_000_000
    assert found.totals["scheduled"] == 2


def test_the_snapshot_schema_states_the_same_name_rules_and_limits() -> None:
    import jsonschema

    from kschedctl.render import schemas

    validator = jsonschema.Draft202012Validator(schemas.schema("snapshot"))
    good = _snapshot(1, 1, 1)
    assert not list(validator.iter_errors(good))
    good["spec"]["nodes"] = [{"name": "../../x"}]
    good["spec"]["pendingPods"][0]["namespace"] = "Team_B"
    paths = sorted("/".join(map(str, e.absolute_path)) for e in validator.iter_errors(good))
    assert paths == ["spec/nodes/0/name", "spec/pendingPods/0/namespace"]
    assert (
        schemas.schema("snapshot")["properties"]["spec"]["properties"]["nodes"]["maxItems"] == 5000
    )
