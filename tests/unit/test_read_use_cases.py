"""The parts of the read-side use cases (ops/) that need no cluster: argument parsing, result
shapes, the de-duplication of an events watch, validate's summary, scheduler run's settings."""

from __future__ import annotations

from dataclasses import fields, replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import typer.main

from kschedctl.base.errors import UsageError
from kschedctl.observe.events import SCHEDULER_REASONS, Event
from kschedctl.observe.schedulers import Lease, Scheduler
from kschedctl.ops.events import EventFilter, event_filter, new_events
from kschedctl.ops.list import SchedulerList
from kschedctl.ops.run_scheduler import RunSettings, check_settings
from kschedctl.ops.status import SchedulerStatus
from kschedctl.ops.validate import validate_files
from kschedctl.ops.why import Explanation, pod_name

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=timezone.utc)


# --- why ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argument", "name"),
    [("web", "web"), ("pod/web", "web"), ("po/web", "web"), ("Pods/web", "web")],
)
def test_pod_argument(argument: str, name: str) -> None:
    assert pod_name(argument) == name


def test_pod_argument_of_another_kind_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="'deploy/web' is not a pod"):
        pod_name("deploy/web")


def test_no_pending_pod_is_schedulable_and_an_empty_list() -> None:
    found = Explanation([], one_pod=False, namespace="team-a")
    assert found.schedulable
    assert found.to_dict() == {
        "apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": [],
        "summary": [],
    }  # fmt: skip


# --- events ------------------------------------------------------------------------------


def _event(uid: str, count: int = 1, *, age: float = 0, type_: str = "Normal") -> Event:
    return Event(
        time=NOW - timedelta(seconds=age), first_time=None, type=type_, reason="Scheduled",
        message="ok", count=count, controller="mine", instance="mine-1", kind="Pod",
        namespace="ns", name="p", uid="u", event_uid=uid,
    )  # fmt: skip


def test_event_filter_from_arguments() -> None:
    wanted = event_filter("mine", "pod/web", "warning", "10m")
    assert wanted == EventFilter("mine", "Pod", "web", ("Warning",), timedelta(minutes=10))
    assert wanted.reasons is None  # a named scheduler: every reason it reports
    query = wanted.query("ns")
    assert (query.namespace, query.controller, query.kind, query.name, query.type) == (
        "ns", "mine", "Pod", "web", "Warning",
    )  # fmt: skip


def test_event_filter_defaults_to_every_scheduler_and_both_types() -> None:
    wanted = event_filter()
    assert wanted.reasons == SCHEDULER_REASONS
    assert wanted.query(None).type is None  # two types: filtered here, not on the server
    assert wanted.since is None


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"types": "Error"}, "unknown event type 'Error'"),
        ({"for_object": "pod/"}, "use KIND/NAME"),
        ({"since": "5x"}, "invalid --since '5x'"),
    ],
    ids=["types", "for", "since"],
)
def test_event_filter_usage_errors(args: dict[str, str], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        event_filter(**args)


def test_a_watch_shows_each_event_once_per_count_and_bounds_only_the_initial_ones() -> None:
    wanted = EventFilter(None, since=timedelta(minutes=5))
    changes = [
        (True, _event("old", age=600)),  # before --since: dropped
        (True, _event("a")),
        (True, _event("a")),  # a relist repeats it: dropped
        (False, _event("a", count=2)),  # its count grew: shown again
        (False, _event("new", age=600)),  # new while watching: --since does not apply
        (False, _event("warn", type_="Warning")),
    ]
    shown = list(new_events(changes, wanted, now=lambda: NOW))
    assert [(e.event_uid, e.count) for e in shown] == [("a", 1), ("a", 2), ("new", 1), ("warn", 1)]


def test_a_watch_keeps_to_the_types_asked_for() -> None:
    wanted = EventFilter(None, types=("Warning",))
    changes = [(True, _event("n")), (False, _event("w", type_="Warning"))]
    assert [e.event_uid for e in new_events(changes, wanted, now=lambda: NOW)] == ["w"]


# --- list and status ---------------------------------------------------------------------


def test_list_flags_names_nothing_serves_that_pods_wait_for() -> None:
    served = Scheduler("mine", "deployment", desired=1, ready=1, pending=2)
    unserved = Scheduler("ghost", "none", served=False, pending=3)
    asked_by_nobody = Scheduler("idle", "none", served=False, pending=0)
    found = SchedulerList([served, unserved, asked_by_nobody])
    assert found.unserved == [unserved]
    assert [s["name"] for s in found.to_dict()["items"]] == ["mine", "ghost", "idle"]


def test_status_keys_and_their_order_are_the_json_contract() -> None:
    entry = Scheduler("mine", "deployment", namespace="kube-system", desired=1, ready=1,
                      lease=Lease("kube-system", "mine", "mine-1", 1.04, 15))  # fmt: skip
    status = SchedulerStatus(
        name="mine",
        scheduler=entry,
        objects=[{"ref": "Deployment kube-system/mine", "kind": "Deployment", "state": "1/1"}],
        access=None,
        rbac={
            "mode": "leastPrivilege",
            "clusterRoles": ["mine-scheduler"],
            "defaultLeaseUpdate": False,
        },
        version={"server": "v1.36.3", "image": None, "skew": "unknown"},
        events=[],
        pending_pods=["ns/p"],
        warnings=[],
    )
    data = status.to_dict()
    assert list(data) == [
        "name", "scheduler", "objects", "access", "rbac", "version", "events", "pendingPods",
        "warnings", "problems", "metrics", "doubleBooking", "revision", "drift", "routing",
    ]  # fmt: skip
    assert data["problems"] == []  # its pods run
    assert data["metrics"] is None  # not read (--no-metrics)
    assert list(data["rbac"]) == ["mode", "clusterRoles", "defaultLeaseUpdate"]
    assert data["scheduler"] == entry.to_dict()  # the entry `list -o json` shows
    assert data["scheduler"]["lease"]["renewAgeSeconds"] == 1.0


# --- validate ----------------------------------------------------------------------------

SPEC = "apiVersion: kschedctl.io/v1alpha1\nkind: Scheduler\nmetadata: {name: s}\n"


def test_validate_files_reports_every_file_and_the_rules(tmp_path: Path) -> None:
    good = tmp_path / "good.yaml"
    good.write_text(SPEC)
    bad = tmp_path / "bad.yaml"
    bad.write_text("just text\n")
    result = validate_files([str(good), str(bad), str(tmp_path / "missing.yaml")])
    assert [r.valid for r in result.reports] == [True, False, False]
    assert result.invalid == result.reports[1:]
    assert result.problem_count == 2
    assert result.rules == "rules of each spec's kubernetesVersion, 1.36 for configs"
    assert list(result.reports[0].to_dict()) == ["file", "valid", "checked", "problems"]
    assert validate_files([str(good)], "1.34").rules == "Kubernetes 1.34 rules"


def test_validate_files_refuses_an_unsupported_version(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        validate_files([str(tmp_path)], "1.2")


# --- scheduler run -----------------------------------------------------------------------


def test_run_settings_defaults_are_the_commands() -> None:
    """A library caller gets what `kschedctl scheduler run --name X` runs."""
    from kschedctl.cli import app

    root = typer.main.get_command(app)
    run = root.commands["scheduler"].commands["run"]  # type: ignore[attr-defined]
    defaults = {p.name: p.default for p in run.params if p.name != "name"}
    defaults["strategy"] = defaults["strategy"].value
    defaults["plugins"] = tuple(defaults["plugins"] or ())  # a repeatable option: None is none
    settings = RunSettings(name="x")
    assert defaults == {f.name: getattr(settings, f.name) for f in fields(settings)[1:]}


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"name": "Bad_Name"}, "--name 'Bad_Name': scheduler name"),
        ({"lease_name": "kube-scheduler"}, "the default scheduler's lock"),
        ({"lease_duration": 5.0}, "lease timing: need leaseDuration > renewDeadline"),
        ({"burst": 0}, "--burst at least 1"),
        ({"name": "default-scheduler"}, "the cluster's own scheduler"),
        ({"replaces_default": True}, "--replaces-default serves default-scheduler, not 'mine'"),
        (
            {"name": "default-scheduler", "replaces_default": True, "lease_name": "mine"},
            "holds kube-scheduler's Lease kube-system/kube-scheduler, not kube-system/mine",
        ),
    ],
    ids=["name", "lease", "timing", "burst", "default", "replacing-mine", "replacing-own-lease"],
)
def test_run_settings_checks(changes: dict[str, object], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        check_settings(replace(RunSettings(name="mine"), **changes))  # type: ignore[arg-type]


def test_a_replacement_serves_default_scheduler_on_kube_scheduler_lease() -> None:
    settings = RunSettings(name="default-scheduler", replaces_default=True)
    check_settings(settings)
    assert (settings.lease_namespace, settings.lease) == ("kube-system", "kube-scheduler")


def test_without_leader_election_the_lease_is_not_checked() -> None:
    check_settings(RunSettings(name="mine", leader_elect=False, lease_name="kube-scheduler"))
