"""The deploy use case's pure parts: the request, the objects and the client dry run."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kschedctl.base.errors import KschedError, UsageError
from kschedctl.hosts import SystemdHost
from kschedctl.observe.schedulers import FORM_ANNOTATION, LEASE_ANNOTATION, Scheduler
from kschedctl.ops.deploy import (
    DeployRequest,
    _refuse_taken_name,
    _warn_loopback_metrics,
    check_skew,
    client_dry_run,
    cluster_objects,
    load_target,
)
from kschedctl.ops.logs import LogStream
from kschedctl.ops.reporter import QUIET, Reporter
from kschedctl.render.forms import DEPLOY_FORMS as FORMS
from kschedctl.spec import default_spec, thawed


def test_request_defaults_match_the_cli() -> None:
    request = DeployRequest(load_target("s"), "pod")
    assert (request.wait, request.verify, request.timeout) == (True, True, 180.0)
    assert (request.server_dry_run, request.follow_server_version) == (False, False)
    assert request.canary_namespace == "default"


@pytest.mark.parametrize(
    ("name", "form", "message"),
    [
        ("s", "daemonset", "unknown form 'daemonset'"),
        ("default-scheduler", "pod", "named default-scheduler"),
    ],
    ids=["unknown-form", "default-scheduler"],
)
def test_requests_that_make_no_sense_are_usage_errors(name: str, form: str, message: str) -> None:
    spec = thawed(load_target("x"))
    spec.name = name
    with pytest.raises(UsageError, match=message):
        DeployRequest(spec, form)


def test_a_replacement_of_the_default_scheduler_may_be_deployed() -> None:
    spec = default_spec("default-scheduler", program="builtin", replaces_default=True)
    assert DeployRequest(spec, "service").spec.replaces_default


def test_load_target_applies_the_flags() -> None:
    spec = load_target("s", namespace="team", image="img:1", replicas=3, kubernetes_version="1.35")
    assert (spec.namespace, spec.image, spec.replicas) == ("team", "img:1", 3)
    assert spec.leader_election.resource_namespace == "team"  # it followed the namespace
    assert (spec.version.major, spec.version.minor) == (1, 35)


@pytest.mark.parametrize("form", FORMS)
def test_every_object_says_its_form_and_lease(form: str) -> None:
    for obj in cluster_objects(load_target("s"), form):
        annotations = obj["metadata"]["annotations"]
        assert annotations[FORM_ANNOTATION] == form
        assert annotations[LEASE_ANNOTATION] == "kube-system/s"


@pytest.mark.parametrize(
    ("server", "ok"),
    [("1.36.3", True), ("1.37.0", True), ("1.38.0", False), ("1.35.9", False)],
)
def test_skew(server: str, ok: bool) -> None:
    spec = load_target("s", kubernetes_version="1.36")
    if ok:
        check_skew(spec, server)
    else:
        with pytest.raises(Exception, match="cannot run against this API server"):
            check_skew(spec, server)


def test_client_dry_run_of_a_host_form_shows_files_then_lease_rbac(tmp_path: Path) -> None:
    request = DeployRequest(load_target("s"), "static-pod")
    text = client_dry_run(request, SystemdHost(tmp_path))
    files, _, rbac = text.partition("---\n")
    assert files.startswith(f"# file: {tmp_path}/etc/kubernetes/config/s.yaml\n")
    assert f"# file: {tmp_path}/etc/kubernetes/manifests/s.yaml\n" in files
    assert all(d["metadata"]["annotations"] for d in yaml.safe_load_all(rbac))


@pytest.mark.parametrize(
    ("form", "kinds"),
    [
        ("static-pod", ["Service", "ClusterRole", "ClusterRoleBinding"]),
        ("service", ["ClusterRole", "ClusterRoleBinding"]),
    ],
    ids=["static-pod", "service"],
)
def test_client_dry_run_of_a_host_form_with_metrics_and_no_lease(
    tmp_path: Path, form: str, kinds: list[str]
) -> None:
    """spec.metrics alone makes the host forms send objects: the static pods' metrics Service
    and the scraper RBAC; a systemd service, with no pod to select, the RBAC only."""
    spec = thawed(load_target("s"))
    spec.leader_election.leader_elect = False
    spec.metrics.service = True
    text = client_dry_run(DeployRequest(spec, form), SystemdHost(tmp_path))
    _, _, objects = text.partition("---\n")
    assert [d["kind"] for d in yaml.safe_load_all(objects)] == kinds


@pytest.mark.parametrize(
    ("address", "warned"),
    [("127.0.0.1", True), ("::1", True), ("0.0.0.0", False), ("10.0.0.5", False)],
)
def test_a_loopback_bind_serves_no_metrics_service_endpoint(address: str, warned: bool) -> None:
    spec = thawed(load_target("s"))
    spec.service.bind_address = address
    said: list[str] = []
    _warn_loopback_metrics(spec, Reporter(warn=said.append))
    assert bool(said) is warned
    if warned:
        assert "spec.service.bindAddress: 0.0.0.0" in said[0] and address in said[0]


def test_the_quiet_reporter_says_nothing_and_a_stream_closes_once_used() -> None:
    QUIET.done("x")
    said: list[str] = []
    Reporter(info=said.append).info("y")
    assert said == ["y"]
    closed: list[bool] = []
    with LogStream(iter([]), 1, lambda: closed.append(True)) as stream:
        assert list(stream.lines) == []
    assert closed == [True]


def test_a_replacement_takes_the_name_of_the_cluster_default_scheduler_only() -> None:
    cluster_default = Scheduler("default-scheduler", "process", sources=["lease"])
    replacement = default_spec("default-scheduler", program="builtin", replaces_default=True)
    _refuse_taken_name([cluster_default], replacement, "service")  # what it replaces
    other = Scheduler("default-scheduler", "deployment", managed=True, instance="x/other")
    with pytest.raises(KschedError, match="already served by x/other"):
        _refuse_taken_name([other], replacement, "service")
