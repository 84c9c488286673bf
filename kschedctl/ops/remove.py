"""Remove exactly what kschedctl deployed for a scheduler, its Lease and host files included.

What to remove is read back from the cluster: every object labelled as kschedctl's for the
name where kschedctl deployed it (:func:`kschedctl.observe.identity.trusted_objects`: anyone
may label an object in their namespace, and such a label deletes nothing), and the annotations
``deploy`` put on them (the Lease, the host files, the lab).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kschedctl import hosts
from kschedctl.base.errors import ClusterError, KschedError, NotFoundError
from kschedctl.hosts import Host
from kschedctl.k8s import apply
from kschedctl.k8s.resources import describe
from kschedctl.kubeclient.client import Cluster
from kschedctl.model.config.shapes import shown
from kschedctl.model.config.versions import DEFAULT_SCHEDULER_NAME
from kschedctl.observe.appliers import appliers, helm_command, helm_releases
from kschedctl.observe.containers import workload_leases
from kschedctl.observe.identity import trusted_objects
from kschedctl.observe.orphans import Orphans, bounded, orphans
from kschedctl.observe.schedulers import LEASE_ANNOTATION, SCHEDULER_LABEL, recorded_host_files
from kschedctl.ops import rollout
from kschedctl.ops import routing as routing_ops
from kschedctl.ops.reporter import QUIET, Reporter
from kschedctl.render.kinds import MANAGED_KINDS

WORKLOADS = ("Deployment", "Pod")
# Where to list the controllers whose pod template may name the scheduler.
CONTROLLER_PATHS = {
    "Deployment": "/apis/apps/v1/deployments",
    "ReplicaSet": "/apis/apps/v1/replicasets",
    "StatefulSet": "/apis/apps/v1/statefulsets",
    "DaemonSet": "/apis/apps/v1/daemonsets",
    "Job": "/apis/batch/v1/jobs",
    "CronJob": "/apis/batch/v1/cronjobs",
}


@dataclass(frozen=True)
class Removal:
    """What kschedctl deployed for a scheduler, as recorded in the cluster."""

    name: str
    objects: tuple[dict[str, Any], ...]  # workloads first, canary pods last
    leases: tuple[tuple[str, str], ...]  # (namespace, name)
    files: tuple[Path, ...]  # host files
    lab_dir: str | None  # the lab whose host holds the files, if any
    orphans: Orphans  # pods and controllers that name it: which would be left without it
    # Objects labelled as its outside where kschedctl deployed it: left alone (not kschedctl's).
    foreign: tuple[dict[str, Any], ...] = ()

    @property
    def refs(self) -> list[str]:
        return [describe(obj) for obj in self.objects]


@dataclass(frozen=True)
class RemoveResult:
    removal: Removal
    dry_run: bool
    deleted: tuple[str, ...] = ()  # objects and leases deleted (already gone ones left out)
    removed_files: tuple[Path, ...] = ()
    # deleted then lists what the API server accepted deleting (and deleted nothing)
    server_dry_run: bool = False


_HOME_KINDS = frozenset({"Deployment", "Pod", "ConfigMap", "ServiceAccount"})


def find(
    cluster: Cluster, name: str, namespace: str | None = None, report: Reporter = QUIET
) -> Removal:
    """What ``remove`` would delete for ``name``; NotFoundError if there is nothing (in
    ``namespace``, when given: where its namespaced objects are)."""
    objects, foreign = trusted_objects(name, apply.managed_objects(cluster, name, MANAGED_KINDS))
    objects = [o for o in objects if not _is_canary(o)] + [o for o in objects if _is_canary(o)]
    if not objects:
        raise NotFoundError(
            f"nothing kschedctl deployed is named {name!r}"
            + (
                f" ({', '.join(describe(o) for o in foreign)} only carry its label: not "
                "kschedctl's, left alone)"
                if foreign
                else ""
            ),
            hint="`kschedctl list` shows the schedulers in this cluster",
        )
    # its namespace: where it runs (a RoleBinding in kube-system, to read the authentication
    # ConfigMap, does not make kube-system its namespace)
    where = sorted(
        {o["metadata"]["namespace"] for o in objects if o.get("kind") in _HOME_KINDS} - {None}
    )
    if namespace is not None and where and namespace not in where:
        raise NotFoundError(
            f"nothing kschedctl deployed is named {name!r} in namespace {namespace!r} (it is "
            f"in {', '.join(where)})",
            hint="pass -n with the namespace it is in, or leave -n out",
        )
    recorded: set[tuple[str, str]] = set()
    for obj in objects:
        annotations = obj["metadata"].get("annotations") or {}
        if LEASE_ANNOTATION in annotations:
            namespace, _, lease = annotations[LEASE_ANNOTATION].partition("/")
            recorded.add((namespace, lease))
    files, lab = recorded_host_files(objects)
    # What the workloads run says where their Lease is now (a kustomize overlay may have moved
    # it with the namespace); the annotation only when no workload tells (the host forms).
    running = workload_leases(objects)
    leases = running if running is not None else recorded
    return Removal(
        name,
        tuple(objects),
        tuple(sorted(leases)),
        tuple(sorted(Path(f) for f in files)),
        lab,
        _orphans(cluster, name, report),
        tuple(foreign),
    )


def remove(
    cluster: Cluster,
    name: str,
    *,
    force: bool = False,
    dry_run: bool = False,
    server_dry_run: bool = False,
    timeout: float = 120.0,
    host: Host | None = None,
    report: Reporter = QUIET,
    namespace: str | None = None,
) -> RemoveResult:
    """Remove scheduler ``name``: its routing first (until it no longer applies), then
    workloads (or it would take its Lease again), then the unit and host files, then the rest
    once its pods are gone, then its Lease.

    Refuses (KschedError) while pods wait for the scheduler (not yet bound) or controllers
    will create more that name it, unless ``force``; bound pods keep running and do not count;
    NotFoundError if kschedctl deployed nothing by that name. ``host`` defaults to the one the
    objects recorded (``hosts.for_record``). With ``dry_run`` nothing is deleted; with
    ``server_dry_run`` every DELETE is sent with ``dryRun=All`` (the API server judges
    authorization and admission, deletes nothing) and no host file is touched.
    """
    removal = find(cluster, name, namespace, report)
    if removal.foreign:
        report.warn(
            f"left alone: {', '.join(describe(o) for o in removal.foreign)} carry {name}'s "
            "kschedctl label outside the namespaces kschedctl deployed it in: kschedctl did not "
            "create them (delete them yourself if they should not exist)"
        )
    if applied := appliers(removal.objects):
        report.warn(
            f"{name} was not applied by `kschedctl deploy` but by {' and '.join(applied)}: if a "
            "GitOps tool (Argo CD, Flux) applies it from a repository, it will re-create what "
            "remove deletes; remove it from the repository (or its Application / Kustomization "
            "/ HelmRelease) too"
        )
    for release in helm_releases(removal.objects):
        report.warn(
            f"{name} belongs to Helm release {release[0]}"
            + (f" in namespace {release[1]}" if release[1] else "")
            + f": `{helm_command('uninstall', release)}` is the right tool (it removes the "
            "release record too; after `kschedctl remove` Helm still lists the release, and "
            "`helm upgrade` or a Flux HelmRelease installs the scheduler again)"
        )
    if server_dry_run:
        return _server_dry_run(cluster, removal, report)
    left = removal.orphans
    if left.bound:
        report.info(
            f"{left.bound} pod(s) {name} placed are bound to nodes: they keep running without it"
        )
    if left.stranded and not force and not dry_run:
        raise KschedError(
            f"{stranded_summary(left, name)}: {bounded(left.stranded)}",
            hint=f"with --force they stay Pending with no scheduling events until another "
            f"scheduler named {name!r} serves, and so do the controllers' new pods; point them "
            "at another scheduler (spec.schedulerName) or delete them first",
        )
    if dry_run:
        return RemoveResult(removal, dry_run=True)
    if name == DEFAULT_SCHEDULER_NAME:
        report.info(
            "pods that name no scheduler go back to kube-scheduler once it holds the Lease "
            "kube-system/kube-scheduler: start it again if you stopped it"
        )
    until = time.monotonic() + timeout
    host = host or hosts.for_record(removal.lab_dir)
    deleted: list[str] = []

    def delete(obj: dict[str, Any]) -> None:
        if apply.delete_object(cluster, obj):
            deleted.append(describe(obj))
            report.done(f"{describe(obj)} deleted")

    # The routing first, and until the API server stops applying it: no new pod is sent to a
    # scheduler going away.
    routes = [o for o in removal.objects if routing_ops.is_routing(o)]
    for obj in routes:
        delete(obj)
    routing_ops.wait_routing(cluster, routing_ops.routes_in(routes), until, report, applies=False)
    for obj in removal.objects:
        if obj["kind"] in WORKLOADS:
            delete(obj)
    host.stop_service(name, list(removal.files), report.info)
    removed_files = host.remove_files(list(removal.files), name)
    for path in removed_files:
        report.done(f"file {path} removed")
    for path in removal.files:
        if path not in removed_files and os.path.lexists(path):
            report.warn(
                f"{shown(str(path))} left in place: it is not a file kschedctl rendered for {name}"
            )
    where = {o["metadata"].get("namespace") for o in removal.objects}
    workloads = [o for o in removal.objects if o["kind"] in WORKLOADS]
    # A Deployment deleted in the foreground stays (with its finalizer) until the garbage
    # collector has removed its ReplicaSets and pods: done means it is gone too.
    rollout.poll(
        lambda: not _scheduler_pods(cluster, name, where)
        and all(_gone(cluster, o) for o in workloads),
        until, f"the pods of {name} to stop",
        hint=f"`{pods_command(name)}` shows them",
    )  # fmt: skip
    for obj in removal.objects:
        if obj["kind"] not in WORKLOADS and obj not in routes:
            delete(obj)
    for namespace, lease in removal.leases:
        try:
            cluster.delete(f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{lease}")
        except NotFoundError:
            continue
        deleted.append(f"lease/{lease} -n {namespace}")
        report.done(f"lease/{lease} -n {namespace} deleted")
    return RemoveResult(removal, False, tuple(deleted), tuple(removed_files))


def _server_dry_run(cluster: Cluster, removal: Removal, report: Reporter) -> RemoveResult:
    accepted: list[str] = []
    for obj in removal.objects:
        if apply.delete_object(cluster, obj, dry_run=True):
            accepted.append(describe(obj))
            report.done(f"{describe(obj)} deleted (server dry run)")
    for namespace, lease in removal.leases:
        ref = f"lease/{lease} -n {namespace}"
        try:
            path = f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{lease}"
            cluster.delete(path, dryRun="All")
        except NotFoundError:
            continue
        accepted.append(ref)
        report.done(f"{ref} deleted (server dry run)")
    return RemoveResult(removal, True, tuple(accepted), server_dry_run=True)


def _gone(cluster: Cluster, obj: dict[str, Any]) -> bool:
    live = apply.current(cluster, obj)
    # the same name created again since is not the object remove deleted
    uid = obj["metadata"].get("uid")
    return live is None or (bool(uid) and (live.get("metadata") or {}).get("uid") != uid)


def _is_canary(obj: dict[str, Any]) -> bool:
    labels = obj["metadata"].get("labels") or {}
    return labels.get("app.kubernetes.io/component") == "canary"


def stranded_summary(left: Orphans, name: str) -> str:
    """ "2 Pending pod(s) wait for scheduler 'x' and 1 controller(s) will create more"."""
    parts = []
    if left.waiting:
        parts.append(f"{len(left.waiting)} Pending pod(s) wait for scheduler {name!r}")
    if left.controllers:
        parts.append(
            f"{len(left.controllers)} controller(s) will create more pods that name {name!r}"
        )
    return " and ".join(parts)


def _orphans(cluster: Cluster, name: str, report: Reporter) -> Orphans:
    if name == DEFAULT_SCHEDULER_NAME:
        return orphans(name, [], [])  # a replacement's pods go back to kube-scheduler
    pods = cluster.list("/api/v1/pods", fieldSelector=f"spec.schedulerName={name}")
    controllers: list[dict[str, Any]] = []
    for kind, path in CONTROLLER_PATHS.items():
        try:
            items = cluster.list(path)
        except (ClusterError, NotFoundError) as err:  # a remover need not read every workload
            report.warn(f"cannot tell whether {kind}s will create pods for {name}: {err.message}")
            continue
        controllers += [{**item, "kind": kind} for item in items]
    return orphans(name, pods, controllers)


def pods_command(name: str) -> str:
    """The kubectl command that lists scheduler ``name``'s pods wherever they run: by the label
    kschedctl sets on every object it renders, which a Helm release keeps (its instance label
    is the release's name, not the scheduler's)."""
    return f"kubectl get pods -A -l {SCHEDULER_LABEL}={name}"


def _scheduler_pods(
    cluster: Cluster, name: str, namespaces: set[str | None]
) -> list[dict[str, Any]]:
    """Its pods still running, in the namespaces of the objects removed (labels elsewhere are
    only claims: nothing remove deletes runs them)."""
    pods = apply.list_owned(cluster, "/api/v1/pods", name, "app.kubernetes.io/component=scheduler")
    return [p for p in pods if p["metadata"].get("namespace") in namespaces]
