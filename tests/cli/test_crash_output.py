"""How `list` and `status` show a scheduler whose pods do not run."""

from __future__ import annotations

import pytest

from kschedctl.cli.inventory import health_text
from kschedctl.cli.status import _print_problems
from kschedctl.observe.crash import ContainerProblem, CrashReport
from kschedctl.observe.schedulers import Scheduler
from kschedctl.ops.status import SchedulerStatus


@pytest.mark.parametrize(
    ("facts", "shown"),
    [
        ({"desired": 1, "ready": 1}, "ok"),
        ({"desired": 1, "ready": 0}, "unhealthy"),
        ({"desired": 1, "ready": 0, "problem": "CrashLoopBackOff"}, "CrashLoopBackOff"),
        ({"desired": 2, "ready": 1, "problem": "ImagePullBackOff"}, "degraded (ImagePullBackOff)"),
        ({"served": False}, "NOT SERVED"),
    ],
)
def test_list_health_names_the_kubelets_reason(facts: dict[str, object], shown: str) -> None:
    assert health_text(Scheduler("s", "deployment", **facts)) == shown  # type: ignore[arg-type]


def _status(*reports: CrashReport) -> SchedulerStatus:
    return SchedulerStatus(
        name="s", scheduler=None, objects=[], access=None,
        rbac={"mode": None, "clusterRoles": [], "defaultLeaseUpdate": None},
        version={"server": "v1.36.3", "image": None, "skew": "unknown"},
        events=[], pending_pods=[], warnings=[], problems=list(reports),
    )  # fmt: skip


def test_status_problems_section(capsys: pytest.CaptureFixture[str]) -> None:
    problem = ContainerProblem(
        "ns", "s-1", "kube-scheduler", "CrashLoopBackOff", "back-off 20s restarting",
        restarts=2, last_reason="Error", exit_code=1, finished_at="2026-12-03T09:00:00Z",
        hint="kschedctl logs s --previous",
    )  # fmt: skip
    _print_problems(_status(CrashReport(problem, ["I1203 start", "Error: unknown flag: --x"])))
    assert capsys.readouterr().out.splitlines() == [
        "",
        "Problems:",
        "  pod/s-1 container kube-scheduler: CrashLoopBackOff (last termination: Error, exit "
        "code 1; 2 restart(s))",
        "    message:  back-off 20s restarting",
        "    finished: 2026-12-03T09:00:00Z",
        "    fix:      kschedctl logs s --previous",
        "    last 2 line(s) of the previous container:",
        "      I1203 start",
        "      Error: unknown flag: --x",
    ]


def test_status_problems_unreadable_log_and_none(capsys: pytest.CaptureFixture[str]) -> None:
    problem = ContainerProblem("ns", "s-1", "kube-scheduler", "ImagePullBackOff", "", hint="h")
    _print_problems(_status(CrashReport(problem, [], "previous terminated container not found")))
    out = capsys.readouterr().out
    assert "not readable (previous terminated container not found)" in out
    _print_problems(_status())
    assert capsys.readouterr().out == ""
