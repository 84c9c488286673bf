"""Every command's table at 80 and 200 columns, with names longer than any terminal: no cell
cut (no `…`), no trailing space, headers in upper case, columns lined up. The commands' rows
are built from plain data by the functions the commands print with; the one printer lays
them out (kschedctl/printers/table.py)."""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml
from rich.console import Console

from kschedctl.cli import eventrows, inventory, output, pictures, why_view
from kschedctl.cli.status import _print_status
from kschedctl.model.filters import NodeInfoSnapshot
from kschedctl.observe.diagnosis import Diagnosis, diagnose
from kschedctl.observe.events import Event
from kschedctl.observe.pending import pending_reasons
from kschedctl.observe.placement import placement
from kschedctl.observe.schedulers import Lease, Scheduler
from kschedctl.ops.list import SchedulerList
from kschedctl.ops.status import SchedulerStatus
from kschedctl.printers.formats import parse_output

CLI = Path(__file__).resolve().parents[2] / "kschedctl" / "cli"
SNAPSHOT = Path(__file__).parent.parent / "unit" / "fixtures" / "pictures" / "snapshot.yaml"
LONG = "a-scheduler-whose-name-is-longer-than-any-terminal-is-wide-" * 2
NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)


@pytest.fixture(params=[80, 200], ids=["80-columns", "200-columns"])
def width(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setenv("COLUMNS", str(request.param))
    return int(request.param)


def _event(i: int) -> Event:
    return Event(NOW - timedelta(seconds=30), NOW - timedelta(minutes=5), "Warning",
                 "FailedScheduling", f"0/4 nodes are available: {LONG} [NodeAffinity]", 3,
                 LONG, "x", "Pod", f"team-{LONG}", f"pod-{i}-{LONG}", "u", "e")  # fmt: skip


def _events(out: str) -> Callable[[], None]:
    def show() -> None:
        columns = eventrows.event_columns(out, True)
        output.print_table(columns, [eventrows.row(_event(i), out, True, NOW, True)
                                     for i in range(3)])  # fmt: skip

    return show


def _list(out: str) -> Callable[[], None]:
    found = SchedulerList([Scheduler(LONG, "deployment", True, "kube-system", f"deployment/{LONG}",
                                     2, 2, leader=f"{LONG}-abc12", pending=3),
                           Scheduler("default-scheduler", "static-pod")])  # fmt: skip
    fmt = parse_output(out, ("table", "wide"))

    def show() -> None:
        output.print_table(inventory.list_columns(fmt), inventory.list_rows(found, fmt))

    return show


def _top(wide: bool) -> Callable[[], None]:
    snapshot = yaml.safe_load(SNAPSHOT.read_text(encoding="utf-8"))
    for node in snapshot["nodes"]:
        node["metadata"]["name"] += f"-{LONG}"
    for pod in snapshot["pods"]:
        if pod["spec"].get("nodeName"):
            pod["spec"]["nodeName"] += f"-{LONG}"
        pod["spec"]["schedulerName"] = LONG
    shown = placement(snapshot["nodes"], snapshot["pods"])

    def show() -> None:
        console = output.stdout_console()
        console.print(pictures.nodes_picture(shown, wide=wide), soft_wrap=True, crop=False)
        output.print_table(*pictures.pod_rows(shown))

    return show


def _status() -> None:
    replica = {
        "pod": f"{LONG}-abc12",
        "leader": True,
        "health": None,
        "problem": None,
        "sent": None,
        "summary": {
            "attempts": {"scheduled": 12, "unschedulable": 3, "error": 0},
            "pending": {"active": 1, "unschedulable": 3},
            "attemptLatency": {"p50": 0.0012, "p99": 0.0089},
        },
    }
    _print_status(SchedulerStatus(
        name=LONG,
        scheduler=Scheduler(name=LONG, form="deployment", managed=True, namespace=f"ns-{LONG}",
                            desired=1, ready=1, lease=Lease(f"ns-{LONG}", LONG, f"{LONG}-abc12",
                                                            1.0, 15)),
        objects=[{"ref": f"deployment/{LONG}", "kind": "Deployment", "state": "ready 1/1"},
                 {"ref": f"clusterrolebinding/{LONG}", "kind": "ClusterRoleBinding",
                  "state": "present"}],
        access=None,
        rbac={"mode": "leastPrivilege", "clusterRoles": [LONG], "defaultLeaseUpdate": False},
        version={"server": "v1.36.3", "image": f"registry.example/{LONG}:v1.36.3", "skew": "ok"},
        events=[{"time": "1m", "type": "Warning", "reason": "FailedScheduling",
                 "object": f"pod/{LONG}", "message": f"0/4 nodes are available: {LONG}"}],
        pending_pods=[f"team/{LONG}"],
        warnings=[],
        metrics={"problem": None, "readerProblem": None, "replicas": [replica]},
    ))  # fmt: skip


def _pending(i: int) -> Diagnosis:
    """A pod of scheduler LONG asking for more cpu than any of three nodes has."""
    nodes = [{"metadata": {"name": f"node-{n}-{LONG}", "labels": {}}, "spec": {},
              "status": {"allocatable": {"cpu": "2", "memory": "8Gi", "pods": "110"}}}
             for n in range(3)]  # fmt: skip
    pod = {"metadata": {"name": f"pod-{i}-{LONG}", "namespace": f"team-{LONG}", "uid": f"u{i}"},
           "spec": {"schedulerName": LONG, "containers": [
               {"name": "c", "resources": {"requests": {"cpu": "8"}}}]},
           "status": {"phase": "Pending"}}  # fmt: skip
    scheduler = Scheduler(name=LONG, form="deployment", managed=True, desired=1, ready=1)
    return diagnose(pod, NodeInfoSnapshot(nodes, []), [scheduler])


def _why(nodes: str) -> Callable[[], None]:
    return lambda: why_view.print_diagnosis(_pending(0), True, nodes=nodes)


def _why_all(pods: bool) -> Callable[[], None]:
    def show() -> None:
        diagnoses = [_pending(i) for i in range(8)]
        why_view.print_summary(pending_reasons(diagnoses), True)
        if pods:
            why_view.print_pending(diagnoses, True)

    return show


TABLES: dict[str, Callable[[], None]] = {
    "events": _events("table"),
    "events -o wide": _events("wide"),
    "list": _list("table"),
    "list -o wide": _list("wide"),
    "top nodes": _top(False),
    "top nodes -o wide / --pods": _top(True),
    "status": _status,
    "why POD": _why("all"),
    "why POD --nodes grouped": _why("grouped"),
    "why --all": _why_all(False),
    "why --all -A --pods": _why_all(True),
}


@pytest.mark.parametrize("name", list(TABLES))
def test_no_cell_is_cut(name: str, width: int, capsys: pytest.CaptureFixture[str]) -> None:
    TABLES[name]()
    out = capsys.readouterr().out
    assert LONG in out  # whole
    assert "…" not in out.replace(", …", "")
    for line in out.splitlines():
        assert line == line.rstrip(), repr(line)
    headers = [line for line in out.splitlines() if re.match(r"^[A-Z][A-Z -]+   [A-Z]", line)]
    assert headers, out
    for header in headers:
        assert header == header.upper()


def test_columns_line_up_under_their_headers(capsys: pytest.CaptureFixture[str]) -> None:
    _list("wide")()
    header, *rows = capsys.readouterr().out.splitlines()
    starts = [m.start() for m in re.finditer(r"(?:^|(?<=   ))\S", header)]
    for row in rows:
        for start in (s for s in starts[1:] if s < len(row)):  # a last cell may be empty
            assert row[start - 3 : start] == "   " and row[start] != " ", (row, start)


def test_no_command_draws_a_table_of_its_own() -> None:
    """One printer: no rich Table, no hand padding in the commands."""
    for path in sorted(CLI.glob("*.py")):
        source = path.read_text(encoding="utf-8")
        assert "rich.table" not in source, path.name
        assert not re.search(r"\.(ljust|rjust)\(\d", source) or path.name == "pictures.py", path


def test_a_colour_terminal_gets_the_same_text() -> None:
    plain, coloured = io.StringIO(), io.StringIO()
    rows = [eventrows.row(_event(0), "table", False, NOW, color) for color in (False, True)]
    for out, row in ((plain, rows[0]), (coloured, rows[1])):
        console = Console(file=out, force_terminal=True, width=80, no_color=out is plain)
        for line in output.table_lines([output.cells(row)]):
            console.print(line, soft_wrap=True, crop=False, highlight=False)
    assert re.sub(r"\x1b\[[0-9;]*m", "", coloured.getvalue()) == re.sub(
        r"\x1b\[[0-9;]*m", "", plain.getvalue()
    )
