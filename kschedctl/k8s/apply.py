"""Server-side apply of a scheduler's objects; never touches what kschedctl did not create."""

from __future__ import annotations

from collections.abc import Collection
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from kschedctl.base.errors import ApplyError, ClusterError, KschedError, NotFoundError, SpecError
from kschedctl.k8s.resources import RESOURCES, describe, object_path, resource_of
from kschedctl.kubeclient.client import Cluster
from kschedctl.observe.revisions import SECRET_TYPE
from kschedctl.observe.schedulers import owned, owner, owner_selectors
from kschedctl.render.kinds import KINDS, SECRET, Kind
from kschedctl.render.objects import ObjectKey, describe_key, object_key


@dataclass
class Outcome:
    ref: str
    action: str  # created | configured | unchanged | failed | would create | would configure
    detail: str = ""


def owned_by(obj: dict[str, Any], instance: str) -> bool:
    """``obj`` carries kschedctl's mark for scheduler ``instance`` (observe.schedulers.owner)."""
    return owner(obj) == instance


def list_owned(
    cluster: Cluster, collection: str, instance: str | None = None, extra: str = ""
) -> list[dict[str, Any]]:
    """The objects of ``collection`` kschedctl marked (for scheduler ``instance``), each once;
    ``extra``: more label requirements (``key=value,…``) every one must meet too."""
    suffix = f",{extra}" if extra else ""
    selectors = owner_selectors(instance)
    return owned(
        (cluster.list(collection, labelSelector=f"{sel}{suffix}") for sel in selectors), instance
    )


def current(cluster: Cluster, obj: dict[str, Any]) -> dict[str, Any] | None:
    try:
        return cluster.get(object_path(obj))
    except NotFoundError:
        return None


def live_objects(
    cluster: Cluster, objects: list[dict[str, Any]]
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(rendered, live) for each of ``objects`` that exists in the cluster."""
    return [(obj, live) for obj in objects if (live := current(cluster, obj)) is not None]


def foreign_objects(cluster: Cluster, objects: list[dict[str, Any]], instance: str) -> list[str]:
    """Objects that exist under our names but are not kschedctl's ``instance``: never overwrite."""
    return [
        describe(obj)
        for obj, live in live_objects(cluster, objects)
        if not owned_by(live, instance)
    ]


def require_served(cluster: Cluster, objects: list[dict[str, Any]]) -> None:
    """ClusterError (before anything is sent) when ``objects`` hold a kind the cluster does
    not serve at their apiVersion (a ServiceMonitor without the Prometheus Operator, a
    MutatingAdmissionPolicy on an API server without it): applying would stop midway, after
    the scheduler itself."""
    optional = {kind for kind, resource in RESOURCES.items() if resource.optional}
    wanted = {(str(o.get("kind")), str(o.get("apiVersion"))) for o in objects}
    for kind, api_version in sorted(k for k in wanted if k[0] in optional):
        resource = RESOURCES[kind].at(api_version)
        try:
            served = cluster.get(resource.base())
        except NotFoundError:
            served = {}
        if not any(r.get("name") == resource.plural for r in served.get("resources") or []):
            raise ClusterError(
                f"the API server does not serve {resource.api_version} {kind} "
                f"({resource.plural}); nothing was sent",
                hint=_NOT_SERVED_HINTS.get(
                    resource.group, "install what serves {api_version}, or leave it out of the spec"
                ).format(api_version=resource.api_version),
            )


# Why an optional kind is not served, and what to do, by API group.
_NOT_SERVED_HINTS = {
    "monitoring.coreos.com": "install the Prometheus Operator (its CRDs), or set "
    "spec.metrics.serviceMonitor: false and scrape the metrics Service another way",
    "admissionregistration.k8s.io": "spec.routing needs MutatingAdmissionPolicy at "
    "{api_version}: GA in Kubernetes 1.36 (v1); on 1.34-1.35 target that release "
    "(--kubernetes-version 1.35 renders v1beta1) and start kube-apiserver with "
    "--feature-gates=MutatingAdmissionPolicy=true "
    "--runtime-config=admissionregistration.k8s.io/v1beta1=true; or leave spec.routing out",
}


def refuse_unrendered(objects: list[dict[str, Any]], allowed: Collection[ObjectKey]) -> None:
    """SpecError (exit 3) before the first request when an object is not in ``allowed``: every
    (apiVersion, kind, namespace, name) the caller rendered and means to send."""
    for obj in objects:
        key = object_key(obj) if isinstance(obj, dict) else ("", "", "", "")
        if key not in allowed:
            raise SpecError(
                "",
                f"refusing to apply {describe_key(key)}: not an object kschedctl rendered "
                "for this scheduler; nothing was sent",
            )


def dry_run_merged(cluster: Cluster, obj: dict[str, Any]) -> dict[str, Any]:
    """The object as the API server would make it from ``obj`` (server-side apply with
    ``dryRun=All``, field manager kschedctl): defaults, admission and the live fields merged;
    nothing is kept."""
    try:
        return cluster.apply(object_path(obj), obj, dry_run=True)
    except KschedError as err:
        raise ApplyError(
            f"the API server refuses {describe(obj)} (server dry run): {err.message}",
            err.hint or "fix the cause; deploy would fail there too",
            [],
            err.exit_code,
        ) from err


def apply_objects(
    cluster: Cluster,
    objects: list[dict[str, Any]],
    *,
    allowed: Collection[ObjectKey],
    dry_run: bool = False,
) -> list[Outcome]:
    """Apply in order; on the first failure raise ApplyError listing what was done so far.

    ``allowed`` is every (apiVersion, kind, namespace, name) the caller means to send: an
    object outside it stops the whole apply before the first request (SpecError, exit 3).
    """
    refuse_unrendered(objects, allowed)
    outcomes: list[Outcome] = []
    for obj in objects:
        before = current(cluster, obj)
        try:
            after = cluster.apply(object_path(obj), obj, dry_run=dry_run)
        except KschedError as err:
            done = [o.ref for o in outcomes if o.action != "unchanged"]
            outcomes.append(Outcome(describe(obj), "failed", err.message))
            applied = f"; applied before it: {', '.join(done)}" if done else ""
            raise ApplyError(
                f"applying {describe(obj)} failed: {err.message}{applied}",
                (f"{err.hint}; " if err.hint else "")
                + "fix the cause and deploy again, or undo it all with `kschedctl remove NAME`",
                outcomes,
                err.exit_code,
            ) from err
        if before is None:
            action = "created"
        elif before["metadata"].get("resourceVersion") == after["metadata"].get("resourceVersion"):
            action = "unchanged"
        else:
            action = "configured"
        if dry_run and action != "unchanged":
            action = f"would {'create' if before is None else 'configure'}"
        outcomes.append(Outcome(describe(obj), action))
    return outcomes


# requests managed_objects keeps in flight: its ~22 lists one after the other were most of
# `status`'s wall time on a big cluster
MANAGED_READERS = 8


def managed_objects(
    cluster: Cluster, instance: str, kinds: tuple[Kind, ...] = KINDS
) -> list[dict[str, Any]]:
    """Every object of ``kinds`` kschedctl created for ``instance``, in deletion order (with
    kind set); of Secrets (MANAGED_KINDS: ``remove``) only its revisions.

    The lists (each kind, each of :func:`owner_selectors`) are read concurrently; the result
    and the error raised (the first kind's, in deletion order) are those of reading them in
    turn."""
    selectors = owner_selectors(instance)

    def read(task: tuple[Kind, str]) -> tuple[str, list[dict[str, Any]]] | None:
        """(the apiVersion served, the items) — a kind rendered at several versions (a
        MutatingAdmissionPolicy: v1, v1beta1 on 1.34-1.35) is read where the server has it."""
        kind, selector = task
        revisions = {"fieldSelector": f"type={SECRET_TYPE}"} if kind is SECRET else {}
        for version in kind.api_versions:
            try:
                listed = cluster.list(
                    kind.at(version).collection(), labelSelector=selector, **revisions
                )
            except NotFoundError:
                if kind.optional:
                    continue  # not served at this version (a CRD not installed, a beta API)
                raise
            return version, listed
        return None  # served at no version: none exist

    tasks = [(kind, selector) for kind in kinds for selector in selectors]
    with ThreadPoolExecutor(max_workers=MANAGED_READERS) as pool:
        answers = iter(list(pool.map(read, tasks)))
    found: list[dict[str, Any]] = []
    for kind in kinds:
        batches = [next(answers) for _ in selectors]
        if any(batch is None for batch in batches):
            continue
        versions = {b[0] for b in batches if b is not None}
        for item in owned((b[1] for b in batches if b is not None), instance):
            item.setdefault("kind", kind.name)
            item.setdefault("apiVersion", min(versions))  # one version: one API server
            found.append(item)
    return found


def delete_object(cluster: Cluster, obj: dict[str, Any], *, dry_run: bool = False) -> bool:
    """Delete (foreground for workloads, so their pods go first); False if already gone.
    ``dry_run``: the server checks the request (authorization, admission) and deletes nothing."""
    resource = resource_of(obj)
    query: dict[str, Any] = {"dryRun": "All"} if dry_run else {}
    if obj.get("kind") in ("Deployment",):
        query["propagationPolicy"] = "Foreground"
    meta = obj["metadata"]
    try:
        cluster.delete(resource.item(meta["name"], meta.get("namespace")), **query)
        return True
    except NotFoundError:
        return False
