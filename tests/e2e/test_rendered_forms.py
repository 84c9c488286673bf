"""The rendered artefacts work on a real control plane (kube-scheduler v1.36.3 of the lab)."""

from __future__ import annotations

import copy
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from e2e_helpers import exists, pod_events, pod_manifest, token_kubeconfig, wait_for

from kschedctl.base.errors import NotFoundError
from kschedctl.hosts import systemd as host
from kschedctl.k8s.resources import object_path
from kschedctl.kubeclient.client import Cluster
from kschedctl.lab import processes
from kschedctl.lab.cluster import Lab
from kschedctl.lab.components import free_port
from kschedctl.render.forms import render
from kschedctl.spec import Spec, default_spec

LEASES = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"


def _docs(text: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(text) if isinstance(d, dict)]


def _lease_holder(cluster: Cluster, name: str) -> str | None:
    try:
        return cluster.get(f"{LEASES}/{name}")["spec"].get("holderIdentity")
    except NotFoundError:
        return None


def _delete(cluster: Cluster, objects: list[dict[str, Any]]) -> None:
    for obj in reversed(objects):
        try:
            cluster.delete(object_path(obj))
        except NotFoundError:
            pass


@pytest.fixture()
def scheduler_process(lab: Lab) -> Iterator[list[tuple[int, str]]]:
    """Processes a test starts; stopped (by pid) whatever happens."""
    started: list[tuple[int, str]] = []
    yield started
    for pid, exe in started:
        processes.stop(pid, exe)


def _start(lab: Lab, argv: list[str], log: Path, started: list[tuple[int, str]]) -> None:
    pid = processes.start(argv, log, processes.proxy_free_environment(), cwd=lab.dir)
    started.append((pid, os.path.realpath(argv[0])))


def _wait_bound_by(cluster: Cluster, namespace: str, pod: str, scheduler: str) -> dict[str, Any]:
    def scheduled() -> dict[str, Any] | None:
        for event in pod_events(cluster, namespace, pod):
            if event["reason"] == "Scheduled":
                return event
        return None

    event = wait_for(scheduled, 60, f"a Scheduled event for {pod}")
    assert event["reportingController"] == scheduler
    assert cluster.get(f"/api/v1/namespaces/{namespace}/pods/{pod}")["spec"]["nodeName"]
    return event


def test_systemd_unit_execstart_with_rendered_config_schedules_pods(
    lab: Lab,
    cluster: Cluster,
    namespace: str,
    lab_binaries: dict[str, Path],
    scheduler_process: list[tuple[int, str]],
    tmp_path: Path,
) -> None:
    name = "my-scheduler"
    cluster.create(
        f"/api/v1/namespaces/{namespace}/pods", pod_manifest("waiting", schedulerName=name)
    )
    default_holder = wait_for(lambda: _lease_holder(cluster, "kube-scheduler"), 30, "default Lease")

    spec = default_spec(name)
    # The host paths, remapped into the lab: the lab's binary, config dir and scheduler identity.
    spec.service.binary = str(lab_binaries["kube-scheduler"])
    spec.service.config_dir = str(tmp_path / "etc-kubernetes-config")
    spec.service.kubeconfig = str(lab.dir / "scheduler.kubeconfig")  # user system:kube-scheduler
    spec.service.secure_port = free_port()
    rbac = _docs(render(spec, "host-rbac"))
    for obj in rbac:
        cluster.apply(object_path(obj), obj)
    try:
        host.write_files(host.service_files(spec, Path("/")), [Path("/")])
        argv = host.exec_start(render(spec, "service"))
        assert argv[0] == spec.service.binary and f"--config={spec.host_config_path}" in argv
        _start(lab, argv, tmp_path / "my-scheduler.log", scheduler_process)

        _wait_bound_by(cluster, namespace, "waiting", name)
        holder = wait_for(lambda: _lease_holder(cluster, name), 30, f"Lease {name}")
        assert holder != default_holder
        assert _lease_holder(cluster, "kube-scheduler") == default_holder
    finally:
        for pid, exe in scheduler_process:
            processes.stop(pid, exe)
        _delete(cluster, rbac)
        cluster.delete(f"{LEASES}/{name}")


def test_deployment_bundle_passes_server_dry_run_and_its_rbac_suffices(
    lab: Lab,
    cluster: Cluster,
    namespace: str,
    lab_binaries: dict[str, Path],
    scheduler_process: list[tuple[int, str]],
    tmp_path: Path,
) -> None:
    name = "rbac-check"
    spec: Spec = default_spec(name)
    bundle = _docs(render(spec, "deployment"))
    kinds = [o["kind"] for o in bundle]
    assert {"ServiceAccount", "ClusterRoleBinding", "Role", "RoleBinding", "ConfigMap",
            "Deployment"} <= set(kinds)  # fmt: skip
    for obj in bundle:
        cluster.apply(object_path(obj), obj, dry_run=True)
        assert not exists(cluster, object_path(obj)), "a dry run must not create anything"

    # Apply everything but the Deployment, and run kube-scheduler as its ServiceAccount.
    objects = [o for o in bundle if o["kind"] != "Deployment"]
    for obj in objects:
        cluster.apply(object_path(obj), obj)
    try:
        kubeconfig = tmp_path / "sa.kubeconfig"
        token_kubeconfig(lab, cluster, spec.namespace, name, kubeconfig)
        configmap = next(o for o in objects if o["kind"] == "ConfigMap")
        config = yaml.safe_load(next(iter(configmap["data"].values())))
        config = copy.deepcopy(config)
        config["clientConnection"] = {
            **config.get("clientConnection", {}),
            "kubeconfig": str(kubeconfig),
        }
        config_path = tmp_path / "config.yaml"
        config_path.write_text(yaml.safe_dump(config))
        log = tmp_path / "rbac-check.log"
        _start(lab, [str(lab_binaries["kube-scheduler"]), f"--config={config_path}",
                     "--bind-address=127.0.0.1", f"--secure-port={free_port()}", "--v=2"],
               log, scheduler_process)  # fmt: skip

        cluster.create(
            f"/api/v1/namespaces/{namespace}/pods", pod_manifest("app", schedulerName=name)
        )
        _wait_bound_by(cluster, namespace, "app", name)
        holder = wait_for(lambda: _lease_holder(cluster, name), 30, f"Lease {name}")
        assert holder
        wait_for(lambda: "Successfully acquired lease" in log.read_text(), 10, "the lease log line")
        text = log.read_text()
        forbidden = [line for line in text.splitlines() if "forbidden" in line.lower()]
        assert not forbidden, forbidden[:3]
    finally:
        for pid, exe in scheduler_process:
            processes.stop(pid, exe)
        _delete(cluster, objects)
        cluster.delete(f"{LEASES}/{name}")
