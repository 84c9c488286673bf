"""`why` through the CLI when the pod's scheduler runs Python plugins `why` did not run (faked
cluster, real decision tree): the verdict, the node table, `--all` and the JSON say "passes the
built-in filters; plugins not run", never "fits"; exit 6. And the opt-in flag's shape."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import Run

from kschedctl.lab.nodes import lab_node
from kschedctl.model.filters import NodeInfoSnapshot
from kschedctl.observe.diagnosis import diagnose
from kschedctl.observe.plugin_files import ClusterPluginsRef, UnrunPlugins
from kschedctl.observe.schedulers import Lease, Scheduler

DIGEST = "cd" * 32
FLAG = f"--run-cluster-plugins team-b/racks-config@sha256:{DIGEST}"
UNRUN = UnrunPlugins("racks", "ConfigMap team-b/racks-config", ("rack.py",), DIGEST, run_with=FLAG)


def _diagnosis(name: str, cpu: str, unrun: UnrunPlugins | None = UNRUN) -> Any:
    pod = {
        "metadata": {"name": name, "namespace": "team-b", "uid": f"uid-{name}"},
        "spec": {"schedulerName": "racks",
                 "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]},
        "status": {"phase": "Pending"},
    }  # fmt: skip
    nodes = [lab_node("roomy"), lab_node("tiny", capacity={"cpu": "1", "pods": "110"})]
    lease = Lease("team-b", "racks", holder="racks-1_x", renew_age=1, duration=15)
    racks = Scheduler("racks", "deployment", managed=True, lease=lease, desired=1, ready=1)
    return diagnose(pod, NodeInfoSnapshot(nodes), [racks], unrun=unrun)


def test_the_table_withholds_the_verdict_and_names_the_flag(run: Run, why: dict) -> None:
    why["pod"] = [_diagnosis("p", "2")]
    result = run("why", "p", "-n", "team-b")
    assert result.exit_code == 6
    lines = result.stdout.splitlines()
    assert (
        "Verdict:    passes the built-in filters; plugins not run (no verdict: see "
        "plugins-not-run)" in lines
    )
    assert "can be scheduled" not in result.stdout
    assert f"kschedctl why p -n team-b {FLAG}" in result.stdout.replace("\n      ", " ")
    rows = [line.split(None, 2) for line in result.stdout.split("\n\n")[-1].splitlines()]
    assert rows[0][:2] == ["NODE", "FITS"]
    assert ["roomy", "unknown", "passes the built-in filters; plugins not run"] in [
        [r[0], r[1], r[2].strip()] for r in rows[1:]
    ]
    assert ["tiny", "no"] == rows[2][:2]


def test_json_says_null_where_it_cannot_tell(run: Run, why: dict) -> None:
    why["pod"] = [_diagnosis("p", "2")]
    result = run("why", "p", "-n", "team-b", "-o", "json")
    assert result.exit_code == 6
    data = json.loads(result.stdout)
    assert data["schedulable"] is None
    assert [n["fits"] for n in data["nodes"]] == [None, False]
    assert data["pluginsNotRun"]["runWith"] == FLAG


def test_a_pod_rejected_by_the_built_in_filters_keeps_its_verdict(run: Run, why: dict) -> None:
    why["pod"] = [_diagnosis("p", "64")]
    result = run("why", "p", "-n", "team-b")
    assert result.exit_code == 6
    assert "Verdict:    cannot be scheduled" in result.stdout
    assert "plugins-not-run" in result.stdout


def test_why_all_counts_the_withheld_pods_under_their_own_row(run: Run, why: dict) -> None:
    why["all"] = [_diagnosis("a", "2"), _diagnosis("b", "2", unrun=None)]
    result = run("why", "--all", "-n", "team-b", "--pods")
    assert result.exit_code == 6
    summary, pods = result.stdout.split("\n\n")
    cells = [[c.strip() for c in line.split("  ") if c.strip()] for line in summary.splitlines()]
    assert ["racks", "passes the built-in filters; plugins not run", "1", "1", "a"] in cells
    assert ["racks", "can be scheduled", "1", "1", "b"] in cells
    rows = [[c.strip() for c in line.split("  ") if c.strip()] for line in pods.splitlines()]
    assert ["a", "racks", "plugins-not-run", "passes the built-in filters; plugins not run"] in (
        rows
    )
    assert rows[-1][:3] == ["b", "racks", "schedulable"]


def test_the_opt_in_flag_reaches_the_use_case_parsed(run: Run, why: dict) -> None:
    why["pod"] = [_diagnosis("p", "2")]
    run("why", "p", "-n", "team-b", "--run-cluster-plugins", FLAG.split()[1])
    assert why["options"]["run_cluster_plugins"] == [
        ClusterPluginsRef("team-b", "racks-config", DIGEST)
    ]
    assert why["options"]["plugins"] == ()


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("racks", "expected --run-cluster-plugins NAMESPACE/NAME-config@sha256:HEX"),
        (f"team-b/racks@sha256:{DIGEST}", "is not a kschedctl scheduler's ConfigMap"),
        ("team-b/racks-config@sha256:abc", "64 lowercase hex digits"),
    ],
)
def test_a_malformed_opt_in_is_a_usage_error_before_any_request(
    run: Run, why: dict, value: str, said: str
) -> None:
    result = run("why", "p", "--run-cluster-plugins", value)
    assert result.exit_code == 2 and said in result.stderr
    assert "options" not in why  # explain was never called


def test_plugin_files_and_cluster_plugins_together_are_refused(
    run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import contextlib

    monkeypatch.setattr("kschedctl.cli.why.connect", lambda *a: contextlib.nullcontext(object()))
    mine = tmp_path / "mine.py"
    mine.write_text("def filter(pod, node, ctx):\n    return None\n")
    result = run("why", "p", "--plugin", str(mine), "--run-cluster-plugins", FLAG.split()[1])
    assert result.exit_code == 2
    assert "--plugin and --run-cluster-plugins both name the plugins to run" in result.stderr
