"""`top nodes` and `events --timeline`: usage errors exit 2 before any connection, no
cluster exits 4, and with a cluster faked at the use-case boundary the command prints the
picture, the data or writes the export."""

from __future__ import annotations

import json
import re
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import Run
from test_offline_imports import _loaded

from kschedctl.observe.events import normalize
from kschedctl.observe.placement import placement
from kschedctl.observe.timeline import timeline

SNAPSHOT = Path(__file__).parent.parent / "unit" / "fixtures" / "pictures" / "snapshot.yaml"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["top", "nodes", "--export", "top.png"], "unknown picture format '.png'"),
        (
            ["top", "nodes", "--sort-by", "age"],
            'invalid value "age" for --sort-by: one of name, cpu, memory, pods',
        ),
        (["top", "nodes", "-l", "a in (b"], "-l a in (b"),
        (["top", "nodes", "--limit", "-1"], "-1 is not in the range"),
        (["events", "--timeline", "--export", "t.pdf"], "unknown picture format '.pdf'"),
        (["events", "--export", "t.svg"], "--export goes with --timeline"),
        (["events", "--limit", "5"], "--limit goes with --timeline"),
        (["events", "--timeline", "-w"], "--timeline and -w/--watch cannot be combined"),
        (["events", "--timeline", "-o", "wide"], "unknown output format 'wide'"),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) else None,
)
def test_usage_errors(run: Run, args: list[str], message: str) -> None:
    result = run(*args)
    assert result.exit_code == 2, result.output
    assert message in result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize("args", [["top", "nodes"], ["events", "--timeline"]], ids=" ".join)
def test_no_cluster_is_exit_4(run: Run, args: list[str]) -> None:
    result = run(*args)  # KUBECONFIG points at a missing file (tests/conftest.py)
    assert result.exit_code == 4
    assert "kubeconfig" in result.stderr and result.stdout == ""


@pytest.mark.parametrize("args", [["top", "--help"], ["top", "nodes", "--help"]], ids=" ".join)
def test_help_does_not_import_kubernetes(args: list[str], tmp_path: Path) -> None:
    assert _loaded(args, tmp_path) == ""


@pytest.fixture
def snapshot() -> dict[str, Any]:
    return yaml.safe_load(SNAPSHOT.read_text(encoding="utf-8"))


@pytest.fixture
def fake_cluster(monkeypatch: pytest.MonkeyPatch, snapshot: dict[str, Any]) -> list[dict[str, Any]]:
    """The use cases answer from the snapshot; the calls they got are recorded."""
    from kschedctl.cli import common, events_timeline, top
    from kschedctl.ops import timeline as timeline_ops
    from kschedctl.ops import top as top_ops

    calls: list[dict[str, Any]] = []

    def top_nodes(cluster: Any, **kwargs: Any) -> Any:
        calls.append(kwargs)
        return placement(snapshot["nodes"], snapshot["pods"], scheduler=kwargs["scheduler"],
                         sort_by=kwargs["sort_by"])  # fmt: skip

    def event_timeline(source: Any) -> Any:
        return timeline(normalize(e) for e in snapshot["events"])

    monkeypatch.setattr(top, "connect", lambda *a: nullcontext(None))
    monkeypatch.setattr(common, "connect", lambda *a: nullcontext(None))
    monkeypatch.setattr(events_timeline, "connect", lambda *a: nullcontext(None))
    monkeypatch.setattr(events_timeline, "open_events", lambda *a, **k: None)
    monkeypatch.setattr(events_timeline, "event_timeline", event_timeline)
    monkeypatch.setattr(top_ops, "top_nodes", top_nodes)
    monkeypatch.setattr(timeline_ops, "event_timeline", event_timeline)
    return calls


def test_top_nodes_table(run: Run, fake_cluster: list[dict[str, Any]]) -> None:
    result = run("top", "nodes", "-l", "pool=general", "--sort-by", "cpu")
    assert result.exit_code == 0, result.stderr
    assert fake_cluster == [
        {
            "selector": "pool=general",
            "scheduler": None,
            "sort_by": "cpu",
            "pod_usage": False,
            "namespace": None,
        }  # fmt: skip
    ]
    lines = result.stdout.splitlines()
    assert "binpack" in lines[0] and "(none)" in lines[0]
    assert [line.split()[0] for line in lines if line.startswith("node-")] == [
        "node-c",
        "node-a",
        "node-b",
    ]
    assert "2.5 (125%) ⚠" in result.stdout
    assert "3 nodes · 8 pods" in result.stdout and "1 node over-committed" in result.stdout
    header = next(line for line in lines if line.startswith("NODE"))
    assert re.split(" {3,}", header) == ["NODE", "CPU REQUESTS", "CPU LIMITS", "MEMORY REQUESTS",
                                   "MEMORY LIMITS", "PODS", "CPU BY SCHEDULER", "TAINTS"]  # fmt: skip
    assert "usage: metrics-server not available" in result.stderr
    # one row per node; without colour each bar still says whose share it is: legend letters
    assert lines[0].startswith("a binpack (2 pods)   b default-scheduler (2 pods)")
    row_c = next(line for line in lines if line.startswith("node-c"))
    assert "bbbb" in row_c and row_c.endswith("cordoned")
    assert all(line == line.rstrip() for line in lines)


def test_top_nodes_wide_adds_bars_and_lists_taints(
    run: Run, fake_cluster: list[dict[str, Any]]
) -> None:
    result = run("top", "nodes", "-o", "wide")
    assert result.exit_code == 0, result.stderr
    header = next(line for line in result.stdout.splitlines() if line.startswith("NODE"))
    assert "MEMORY BY SCHEDULER" in header and "PODS BY SCHEDULER" in header


def test_top_nodes_pods_view(run: Run, fake_cluster: list[dict[str, Any]]) -> None:
    result = run("top", "nodes", "--pods")
    assert result.exit_code == 0, result.stderr
    assert fake_cluster[0]["pod_usage"] is True
    header, *rows = result.stdout.splitlines()
    assert re.split(" {3,}", header)[:4] == ["NAMESPACE", "POD", "NODE", "SCHEDULER"]
    assert len(rows) == 8
    assert any(r.split()[:4] == ["shop", "db-0", "node-c", "default-scheduler"] for r in rows)
    data = run("top", "nodes", "--pods", "-o", "json")
    items = json.loads(data.stdout)["items"]
    assert {i["kind"] for i in items} == {"PodUsage"} and len(items) == 8
    assert set(items[0]) == {"kind", "metadata", "namespace", "node", "scheduler", "requests",
                             "limits"}  # fmt: skip


def test_top_nodes_limit_says_what_is_left_out(
    run: Run, fake_cluster: list[dict[str, Any]]
) -> None:
    result = run("top", "nodes", "--limit", "1", "--no-headers")
    assert result.exit_code == 0, result.stderr
    assert "NODE" not in result.stdout
    assert "showing 1 of 3 nodes by name" in result.stdout


def test_top_nodes_json(run: Run, fake_cluster: list[dict[str, Any]]) -> None:
    result = run("top", "nodes", "-o", "json", "--scheduler", "spread")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert [i["metadata"]["name"] for i in data["items"]] == ["node-a", "node-b"]
    assert data["items"][1]["bySchedulers"]["(none)"] == {
        "cpu": 350,
        "memory": 356 * 2**20,
        "pods": 2,
    }
    names = run("top", "nodes", "-o", "name").stdout
    assert names == "nodeusage/node-a\nnodeusage/node-b\nnodeusage/node-c\n"


def test_top_nodes_export(run: Run, fake_cluster: list[dict[str, Any]], tmp_path: Path) -> None:
    result = run("top", "nodes", "-o", "yaml", "--export", "out/top.html")
    assert result.exit_code == 5  # out/ does not exist
    assert "writing the picture to out/top.html failed" in result.stderr
    result = run("top", "nodes", "-o", "yaml", "--export", "top.svg")
    assert result.exit_code == 0, result.stderr
    assert "wrote top.svg" in result.stderr
    assert yaml.safe_load(result.stdout)["kind"] == "List"
    assert (tmp_path / "top.svg").read_text(encoding="utf-8").startswith("<svg")


def test_timeline_table_json_and_export(
    run: Run, fake_cluster: list[dict[str, Any]], tmp_path: Path
) -> None:
    result = run("events", "spread", "--timeline")
    assert result.exit_code == 0, result.stderr
    assert "scheduled 3" in result.stdout and "failed 4" in result.stdout
    assert "2026-12-03 09:40" in result.stdout and "09:43" in result.stdout
    result = run(
        "events", "spread", "--timeline", "--limit", "2", "-o", "json", "--export", "t.html"
    )
    assert result.exit_code == 0, result.stderr
    minutes = [i["minute"] for i in json.loads(result.stdout)["items"]]
    assert minutes == ["2026-12-03T09:42:00Z", "2026-12-03T09:43:00Z"]
    page = (tmp_path / "t.html").read_text(encoding="utf-8")
    assert "<title>kschedctl events spread --timeline</title>" in page
    assert "2 earlier minutes not shown" in page


def test_timeline_without_decisions_says_so_on_stderr(
    run: Run, fake_cluster: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    from kschedctl.cli import events_timeline

    class Source:
        namespace = "shop"

    monkeypatch.setattr(events_timeline, "open_events", lambda *a, **k: Source())
    monkeypatch.setattr(events_timeline, "event_timeline", lambda source: timeline([]))
    result = run("events", "ghost", "--timeline")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == ""
    assert "no scheduling decisions in namespace shop from ghost" in result.stderr
    assert json.loads(run("events", "ghost", "--timeline", "-o", "json").stdout)["items"] == []
