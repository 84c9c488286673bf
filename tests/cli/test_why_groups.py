"""`why` on a large cluster through the CLI (faked cluster, real decision tree): the grouped
node table, --nodes, why --all's table by scheduler and reason, --pods, and the JSON."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml
from conftest import Run

from kschedctl.lab.nodes import lab_node
from kschedctl.model.filters import NodeInfoSnapshot
from kschedctl.observe.diagnosis import Diagnosis, diagnose
from kschedctl.observe.schedulers import Lease, Scheduler

GPU = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
SMALL = {"cpu": "1", "memory": "8Gi", "pods": "110"}


def _pod(name: str, *, cpu: str = "2", namespace: str = "default", **spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}"},
        "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}],
                 "nodeSelector": {"disk": "ssd"}, **spec},
        "status": {"phase": "Pending"},
    }  # fmt: skip


def _cluster(small: int = 12, hdd: int = 6) -> NodeInfoSnapshot:
    """3 nodes that fit, ``small`` short of cpu, ``hdd`` without the label, 4 with a taint."""
    ssd = {"disk": "ssd"}
    nodes = (
        [lab_node(f"fit-{i}", labels=ssd) for i in range(3)]
        + [lab_node(f"small-{i:02d}", labels=ssd, capacity=SMALL) for i in range(small)]
        + [lab_node(f"hdd-{i}") for i in range(hdd)]
        + [lab_node(f"gpu-{i}", labels=ssd, taints=[GPU]) for i in range(4)]
    )
    return NodeInfoSnapshot(nodes)


def _scheduler() -> list[Scheduler]:
    lease = Lease("kube-system", "kube-scheduler", holder="cp-1_abc", renew_age=2, duration=15)
    return [Scheduler(name="default-scheduler", form="process", lease=lease)]


def _table(stdout: str) -> list[list[str]]:
    """The rows of the node table (after the blank line that ends the findings)."""
    lines = stdout.split("\n\n")[-1].strip().splitlines()
    return [line.split() for line in lines]


def test_a_large_cluster_gets_one_row_per_reason(run: Run, why: dict) -> None:
    why["pod"] = [diagnose(_pod("p", cpu="8"), _cluster(), _scheduler())]
    result = run("why", "p")
    assert result.exit_code == 6
    lines = result.stdout.split("\n\n")[-1].strip().splitlines()
    assert lines[0].split() == ["NODES", "FITS", "FILTER", "REASON", "DETAIL", "EXAMPLES"]
    # 15 nodes short of cpu (small-* and fit-*), 6 without the label, 4 tainted: 25
    assert [line.split()[:3] for line in lines[1:]] == [
        ["15", "no", "NodeResourcesFit"], ["6", "no", "NodeAffinity"],
        ["4", "no", "TaintToleration"],
    ]  # fmt: skip
    assert "fit-0, fit-1, fit-2, …" in lines[1]  # sorted examples, more than shown
    assert "e.g. fit-0: cpu: requests 8, free 4 of 4 (2 different)" in lines[1]
    assert "taint dedicated=gpu:NoSchedule is not tolerated" in lines[3]
    assert "gpu-0, gpu-1, gpu-2, …" in lines[3]
    assert "25 nodes in 3 group(s) by reason; --nodes all shows one row per node" in result.stderr
    # The summary is kube-scheduler's message, untouched by the grouping.
    assert "Summary:    0/25 nodes are available: 15 Insufficient cpu, 4 node(s) had " in (
        result.stdout
    )


def test_nodes_that_fit_are_a_group_too(run: Run, why: dict) -> None:
    why["pod"] = [diagnose(_pod("p"), _cluster(), _scheduler())]
    result = run("why", "p")
    assert result.exit_code == 0
    rows = _table(result.stdout)
    assert rows[1] == ["12", "no", "NodeResourcesFit", "Insufficient", "cpu", "cpu:", "requests",
                       "2,", "free", "1", "of", "1", "small-00,", "small-01,", "small-02,", "…"]  # fmt: skip
    assert ["3", "yes", "fit-0,", "fit-1,", "fit-2"] in rows  # all three: no "…"


def test_nodes_all_and_first_n(run: Run, why: dict) -> None:
    why["pod"] = [diagnose(_pod("p", cpu="8"), _cluster(), _scheduler())]
    every = run("why", "p", "--nodes", "all")
    rows = _table(every.stdout)
    assert rows[0][:2] == ["NODE", "FITS"] and len(rows) == 1 + 25
    assert [r[0] for r in rows[1:4]] == ["fit-0", "fit-1", "fit-2"]  # the cluster's order
    assert every.stderr == ""
    first = run("why", "p", "--nodes", "4")
    rows = _table(first.stdout)
    assert [r[0] for r in rows[1:]] == ["fit-0", "fit-1", "fit-2", "small-00"]
    assert "… 21 more node(s): --nodes all lists them" in first.stderr
    assert _table(run("why", "p", "--nodes", "25").stdout) == _table(every.stdout)


def test_small_clusters_keep_one_row_per_node_unless_asked(run: Run, why: dict) -> None:
    why["pod"] = [diagnose(_pod("p", cpu="8"), _cluster(small=0, hdd=3), _scheduler())]
    rows = _table(run("why", "p").stdout)
    assert rows[0][0] == "NODE" and len(rows) == 1 + 10
    grouped = _table(run("why", "p", "--nodes", "grouped").stdout)
    assert grouped[0][0] == "NODES" and [r[0] for r in grouped[1:]] == ["4", "3", "3"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["why", "p", "--nodes", "0"], "--nodes 0: expected grouped, all or a positive number"),
        (["why", "p", "--nodes", "some"], "--nodes some: expected grouped, all"),
        (["why", "--all", "--nodes", "all"], "--nodes shapes the node table of one pod"),
        (["why", "p", "--pods"], "--pods goes with --all"),
    ],
    ids=["zero", "word", "nodes-with-all", "pods-without-all"],
)
def test_usage_errors(run: Run, why: dict, args: list[str], message: str) -> None:
    result = run(*args)
    assert result.exit_code == 2 and message in result.stderr and result.stdout == ""


def test_json_and_yaml_keep_every_node(run: Run, why: dict) -> None:
    why["pod"] = [diagnose(_pod("p", cpu="8"), _cluster(), _scheduler())]
    data = json.loads(run("why", "p", "-o", "json", "--nodes", "2").stdout)
    assert len(data["nodes"]) == 25  # --nodes shapes the table only
    assert [(g["count"], g["examples"]) for g in data["nodeGroups"]] == [
        (15, ["fit-0", "fit-1", "fit-2"]), (6, ["hdd-0", "hdd-1", "hdd-2"]),
        (4, ["gpu-0", "gpu-1", "gpu-2"]),
    ]  # fmt: skip
    assert yaml.safe_load(run("why", "p", "-o", "yaml").stdout) == data


# -- why --all -----------------------------------------------------------------------------------


def _pending() -> list[Diagnosis]:
    snap, scheds = _cluster(), _scheduler()
    pods = [
        _pod("web-1", cpu="8"), _pod("web-2", cpu="8"), _pod("web-3", cpu="8"),
        _pod("web-4", cpu="8", namespace="shop"), _pod("ok"),
        _pod("lost", schedulerName="nowhere"),
    ]  # fmt: skip
    return [diagnose(p, snap, scheds) for p in pods]


def test_all_is_one_row_per_scheduler_and_reason(run: Run, why: dict) -> None:
    why["all"] = _pending()
    result = run("why", "--all")
    assert result.exit_code == 6
    rows = [line.split("  ") for line in result.stdout.strip().splitlines()]
    cells = [[c.strip() for c in r if c.strip()] for r in rows]
    assert cells == [
        ["SCHEDULER", "REASON", "PODS", "NODES", "EXAMPLES"],
        ["default-scheduler", "Insufficient cpu", "4", "15", "web-1, web-2, web-3, …"],
        ["default-scheduler", "node(s) didn't match Pod's node affinity/selector", "4", "6",
         "web-1, web-2, web-3, …"],
        ["default-scheduler", "node(s) had untolerated taint(s)", "4", "4",
         "web-1, web-2, web-3, …"],
        ["default-scheduler", "can be scheduled", "1", "3", "ok"],
        ["nowhere", "scheduler-not-served", "1", "lost"],
    ]  # fmt: skip
    assert "VERDICT" not in result.stdout  # the per-pod table only with --pods


def test_all_with_pods_adds_the_per_pod_table(run: Run, why: dict) -> None:
    why["all"] = _pending()
    result = run("why", "--all", "-A", "--pods")
    summary, pods = result.stdout.split("\n\n")
    assert summary.splitlines()[1].split()[0:3] == ["default-scheduler", "Insufficient", "cpu"]
    assert "default/web-1, default/web-2, default/web-3, …" in summary  # -A: namespace/name
    lines = pods.strip().splitlines()
    assert lines[0].split()[:4] == ["NAMESPACE", "POD", "SCHEDULER", "VERDICT"]
    assert [line.split()[1] for line in lines[1:]] == [
        "web-1", "web-2", "web-3", "web-4", "ok", "lost",
    ]  # fmt: skip
    assert "0/25 nodes are available: 15 Insufficient cpu" in lines[1]


def test_all_json_has_the_summary_beside_every_pod(run: Run, why: dict) -> None:
    why["all"] = _pending()
    data = json.loads(run("why", "--all", "-o", "json").stdout)
    assert list(data) == ["apiVersion", "kind", "metadata", "items", "summary"]
    assert len(data["items"]) == 6 and all(len(i["nodes"]) == 25 for i in data["items"])
    assert data["summary"][0] == {
        "scheduler": "default-scheduler", "code": "rejected-by-NodeResourcesFit",
        "reason": "Insufficient cpu", "pods": 4, "nodes": 15,
        "examples": ["default/web-1", "default/web-2", "default/web-3"],
    }  # fmt: skip
    assert data["summary"][-1]["code"] == "scheduler-not-served"
    assert run("why", "--all", "-o", "name").stdout.splitlines()[0] == "pod/web-1"
