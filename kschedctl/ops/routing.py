"""The routing's safe order on the cluster: the live kschedctl routings, deploy's overlap
refusal, and remove's wait until the API server no longer routes to a scheduler going away."""

from __future__ import annotations

import json
from typing import Any

import yaml

from kschedctl.base.errors import ClusterError, KschedError, NotFoundError
from kschedctl.k8s import apply
from kschedctl.kubeclient.client import Cluster
from kschedctl.observe.routing import Route, overlap, probe, route_of
from kschedctl.observe.schedulers import owned, owner_selectors
from kschedctl.ops import rollout
from kschedctl.ops.reporter import QUIET, Reporter
from kschedctl.render import kinds
from kschedctl.render.forms import render
from kschedctl.render.objects import object_key
from kschedctl.render.routing import ROUTE_PREFIX
from kschedctl.spec import Spec, ensure_valid

POLICY = kinds.MUTATING_ADMISSION_POLICY
ROUTING_KINDS = frozenset({POLICY.name, kinds.MUTATING_ADMISSION_POLICY_BINDING.name})


def is_routing(obj: dict[str, Any]) -> bool:
    return obj.get("kind") in ROUTING_KINDS


def routes_in(objects: list[dict[str, Any]]) -> list[Route]:
    """The kschedctl routing policies among ``objects`` (rendered or read back)."""
    return [r for o in objects if (r := route_of(o, ROUTE_PREFIX)) is not None]


def live_routes(cluster: Cluster) -> list[Route]:
    """Every kschedctl routing policy on the cluster (none where the API is not served)."""
    for version in POLICY.api_versions:
        selectors = owner_selectors()
        try:
            batches = [
                cluster.list(POLICY.at(version).collection(), labelSelector=s) for s in selectors
            ]
        except NotFoundError:
            continue
        # Cluster-scoped: only who may write admission policies labels one (trusted).
        return routes_in([{**p, "kind": POLICY.name} for p in owned(batches)])
    return []


def namespaces(cluster: Cluster) -> list[dict[str, Any]]:
    return cluster.list("/api/v1/namespaces")


def refuse_overlap(cluster: Cluster, name: str, objects: list[dict[str, Any]]) -> None:
    """KschedError (exit 1, nothing sent) when another scheduler's routing can match a pod the
    routing in ``objects`` matches, in a namespace that exists now (observe.routing.overlap)."""
    ours = routes_in(objects)
    if not ours:
        return
    others = [r for r in live_routes(cluster) if r.scheduler != name]
    if not others:
        return
    live = namespaces(cluster)
    for other in others:
        where = overlap(ours[0], other, live)
        if where is not None:
            raise KschedError(
                f"refusing to route pods to {name}: its routing ({ours[0].rule}) and "
                f"{other.scheduler}'s ({other.rule}) can both match a new pod, e.g. in "
                f"namespace {where}; one pod would go to whichever policy the API server runs "
                "last; nothing was sent",
                hint="make the selectors exclusive (a namespace label only one selects, or "
                "disjoint podSelector / priorityClassNames), or `kschedctl remove "
                f"{other.scheduler}` first",
            )


def wait_routing(
    cluster: Cluster, routes: list[Route], until: float, report: Reporter = QUIET,
    *, applies: bool,
) -> None:  # fmt: skip
    """Wait until the API server applies ``routes`` (``applies``: just created) or no longer
    does (deleted): its admission reads policies from a cache, so a change takes effect a
    little later. A server-side dry-run pod in a namespace each matches shows it; nothing is
    created. No namespace matched: no new pod can be routed, nothing to wait for."""
    live = namespaces(cluster) if routes else []
    for route in routes:
        pod = probe(route, live)
        if pod is None:
            continue
        body = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"generateName": "kschedctl-route-probe-", "labels": pod.labels},
            "spec": {
                "containers": [{"name": "probe", "image": "registry.k8s.io/pause:3.10"}],
                **({"priorityClassName": pod.priority_class} if pod.priority_class else {}),
            },
        }
        path = f"/api/v1/namespaces/{pod.namespace}/pods"
        target = route.scheduler

        def settled(path: str = path, body: dict[str, Any] = body, target: str = target) -> bool:
            created = cluster.create(path, body, dryRun="All")
            return ((created.get("spec") or {}).get("schedulerName") == target) == applies

        state = "routed" if applies else "no longer routed"
        try:
            if settled():
                continue
        except ClusterError as err:  # e.g. not allowed to create pods there
            report.warn(
                f"cannot check that new pods in namespace {pod.namespace} are {state} to "
                f"{target} (a dry-run pod was refused: {err.message}); going on"
            )
            continue
        report.info(f"waiting until new pods in namespace {pod.namespace} are {state} to {target}")
        rollout.poll(
            settled, until, f"the API server to apply the change of {route.name}",
            hint=f"a server-side dry-run pod in namespace {pod.namespace} is still "
            f"{'not ' if applies else ''}given schedulerName {json.dumps(target)}",
        )  # fmt: skip


def apply_routing(cluster: Cluster, spec: Spec, until: float) -> list[dict[str, Any]]:
    """Apply ``spec``'s rendered routing (simulate's lab: nothing else runs there) and wait
    until the API server applies it; the objects applied (none without ``spec.routing``)."""
    if spec.routing is None:
        return []
    docs = [d for d in yaml.safe_load_all(render(ensure_valid(spec), "routing")) if d]
    apply.apply_objects(cluster, docs, allowed=frozenset(object_key(d) for d in docs))
    wait_routing(cluster, routes_in(docs), until, applies=True)
    return docs


def routed_scheduler(cluster: Cluster, pod: dict[str, Any]) -> str:
    """The schedulerName the API server gives ``pod`` on creation (a server-side dry run: the
    live admission policies decide, nothing is created)."""
    namespace = pod["metadata"].get("namespace") or "default"
    created = cluster.create(f"/api/v1/namespaces/{namespace}/pods", pod, dryRun="All")
    return str((created.get("spec") or {}).get("schedulerName") or "default-scheduler")
