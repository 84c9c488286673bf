"""`kschedctl remove`: delete exactly what kschedctl deployed for a scheduler."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from kschedctl import output
from kschedctl.cli.common import connect
from kschedctl.cli.options import Context, Kubeconfig
from kschedctl.errors import KschedError, NotFoundError

if TYPE_CHECKING:
    from kschedctl.k8s.client import Cluster

WORKLOADS = ("Deployment", "Pod")


def remove(
    name: Annotated[str, typer.Argument(help="The scheduler name kschedctl deployed.")],
    kubeconfig: Kubeconfig = None,
    context: Context = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Only list what would be removed.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Remove even if pods still ask for this scheduler.")] = False,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds to wait for its pods to stop.")] = 120.0,
) -> None:  # fmt: skip
    """Remove exactly what kschedctl deployed for a scheduler, its Lease included.

    Namespaced and cluster-scoped objects, and for the service and static-pod forms the host
    files (stopping the unit). Refuses while pods still ask for it (--force overrides); exits 5
    if nothing is there.
    """
    from kschedctl.k8s import apply

    cluster = connect(kubeconfig, context)
    try:
        objects = apply.managed_objects(cluster, name)
        objects = [o for o in objects if not _is_canary(o)] + [o for o in objects if _is_canary(o)]
        leases, host_files, labs = _records(objects)
        if not objects:
            raise NotFoundError(
                f"nothing kschedctl deployed is named {name!r}",
                hint="`kschedctl list` shows the schedulers in this cluster",
            )
        waiting = _pods_asking_for(cluster, name)
        if waiting and not force and not dry_run:
            listing = ", ".join(waiting[:10]) + (" …" if len(waiting) > 10 else "")
            raise KschedError(
                f"{len(waiting)} pod(s) still ask for scheduler {name!r}: {listing}; without it "
                "the Pending ones would hang with no events",
                hint="point them at another scheduler or delete them, or pass --force",
            )
        if dry_run:
            if waiting and not force:
                output.warn(
                    f"without --force, remove refuses: {len(waiting)} pod(s) still ask for {name!r}"
                )
            for obj in objects:
                typer.echo(f"{_ref(obj)} would be deleted")
            for lease in leases:
                typer.echo(f"lease/{lease[1]} -n {lease[0]} would be deleted")
            for path in host_files:
                typer.echo(f"file {path} would be removed")
            return
        _remove(cluster, name, objects, leases, host_files, labs, time.monotonic() + timeout)
        if waiting:
            output.warn(f"{len(waiting)} pod(s) still ask for {name!r} and will stay Pending")
    finally:
        cluster.close()


def _is_canary(obj: dict[str, Any]) -> bool:
    labels = obj["metadata"].get("labels") or {}
    return labels.get("app.kubernetes.io/component") == "canary"


def _ref(obj: dict[str, Any]) -> str:
    from kschedctl.k8s.resources import describe

    return describe(obj)


def _records(objects: list[dict[str, Any]]) -> tuple[set[tuple[str, str]], list[Path], set[str]]:
    """Leases, host files and lab directories recorded in the objects' annotations."""
    from kschedctl.observe.schedulers import HOST_FILES_ANNOTATION, LAB_ANNOTATION, LEASE_ANNOTATION

    leases: set[tuple[str, str]] = set()
    files: set[str] = set()
    labs: set[str] = set()
    for obj in objects:
        annotations = obj["metadata"].get("annotations") or {}
        if LEASE_ANNOTATION in annotations:
            namespace, _, lease = annotations[LEASE_ANNOTATION].partition("/")
            leases.add((namespace, lease))
        files.update(json.loads(annotations.get(HOST_FILES_ANNOTATION, "[]")))
        if LAB_ANNOTATION in annotations:
            labs.add(annotations[LAB_ANNOTATION])
    return leases, sorted(Path(f) for f in files), labs


def _pods_asking_for(cluster: Cluster, name: str) -> list[str]:
    pods = cluster.list("/api/v1/pods", fieldSelector=f"spec.schedulerName={name}")
    return [
        f"{p['metadata']['namespace']}/{p['metadata']['name']}"
        for p in pods
        if (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
        and not _is_canary(p)
        and not p["metadata"].get("deletionTimestamp")
    ]


def _remove(
    cluster: Cluster,
    name: str,
    objects: list[dict[str, Any]],
    leases: set[tuple[str, str]],
    host_files: list[Path],
    labs: set[str],
    until: float,
) -> None:
    from kschedctl.hosts import lab as services
    from kschedctl.hosts import systemd as host
    from kschedctl.k8s import apply
    from kschedctl.lab.cluster import Lab
    from kschedctl.ops import rollout

    # Stop the scheduler first, or it would take its Lease again as soon as we delete it.
    for obj in objects:
        if obj["kind"] in WORKLOADS and apply.delete_object(cluster, obj):
            typer.echo(f"{_ref(obj)} deleted")
    for lab_dir in labs:
        if services.stop(Lab(Path(lab_dir)), host.unit_name_for(name)):
            output.info(f"lab: stopped {host.unit_name_for(name)}")
    if any(p.name == host.unit_name_for(name) for p in host_files) and host.systemd_running(
        Path("/")
    ):
        host.systemctl("disable", "--now", host.unit_name_for(name))
    for path in host.remove_files(host_files):
        typer.echo(f"file {path} removed")
    rollout.poll(
        lambda: not _scheduler_pods(cluster, name), until, f"the pods of {name} to stop",
        hint="`kubectl get pods -A -l app.kubernetes.io/instance=" + name + "` shows them",
    )  # fmt: skip
    for obj in objects:
        if obj["kind"] not in WORKLOADS and apply.delete_object(cluster, obj):
            typer.echo(f"{_ref(obj)} deleted")
    for namespace, lease in sorted(leases):
        try:
            cluster.delete(f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{lease}")
            typer.echo(f"lease/{lease} -n {namespace} deleted")
        except NotFoundError:
            pass
    output.info(f"{name} removed")


def _scheduler_pods(cluster: Cluster, name: str) -> list[dict[str, Any]]:
    return cluster.list(
        "/api/v1/pods",
        labelSelector=f"app.kubernetes.io/managed-by=kschedctl,app.kubernetes.io/instance={name},"
        "app.kubernetes.io/component=scheduler",
    )


def register(app: typer.Typer) -> None:
    app.command("remove")(remove)
