"""kschedctl's routing (MutatingAdmissionPolicies, ``spec.routing``) as the cluster holds it.

Pure readings of the live policies and namespaces: the rule in short, the namespaces it matches
now, the rule that routed a pod, whether two routings can match one pod, and a pod that a
routing would rewrite (remove's probe). Read from the policy objects themselves (what the API
server applies), not from a spec.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kschedctl.model.filters.selectors import (
    Requirement,
    Selector,
    SelectorError,
    label_selector,
)
from kschedctl.observe.findings import Finding
from kschedctl.observe.schedulers import SCHEDULER_LABEL, owner

NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"  # set on every namespace by the API server
# What the policy sets on each pod it routes: NAMESPACE/NAME of the scheduler (the render's
# kschedctl.render.routing.ROUTED_BY_ANNOTATION; tests/unit/test_observe_routing.py pins them).
ROUTED_BY_ANNOTATION = "kschedctl.io/routed-by"
POLICY_KIND = "MutatingAdmissionPolicy"
# The matchCondition kschedctl renders for spec.routing.priorityClassNames (its CEL list is
# JSON's string syntax: kschedctl.render.routing.cel).
PRIORITY_CONDITION = "priority-class"


@dataclass(frozen=True)
class Route:
    """One kschedctl routing policy: which new pods it sends to ``scheduler``."""

    scheduler: str  # the scheduler it routes to (kschedctl's owner label of the policy)
    name: str  # the policy's name
    namespaces: Selector  # matchConstraints.namespaceSelector
    pods: Selector  # matchConstraints.objectSelector
    priority_classes: tuple[str, ...] | None  # None: any priority class

    @property
    def rule(self) -> str:
        """The rule in short, e.g. ``ns:team=ml``, ``ns:team=ml pod:tier=batch pc:high``."""
        parts = [
            f"{what}:{text}"
            for what, selector in (("ns", self.namespaces), ("pod", self.pods))
            if (text := _told(selector))
        ]
        if self.priority_classes is not None:
            parts.append("pc:" + ",".join(self.priority_classes))
        return " ".join(parts) or "ns:*"


def route_of(policy: Mapping[str, Any], prefix: str) -> Route | None:
    """The :class:`Route` of a MutatingAdmissionPolicy kschedctl rendered (owner label, and
    named ``prefix`` + that owner), else None: another tool's policy, or not a readable one."""
    scheduler = owner(dict(policy))
    meta = policy.get("metadata") or {}
    if policy.get("kind") != POLICY_KIND or not scheduler or meta.get("name") != prefix + scheduler:
        return None
    spec = policy.get("spec") or {}
    constraints = spec.get("matchConstraints") or {}
    try:
        namespaces = label_selector(constraints.get("namespaceSelector") or {})
        pods = label_selector(constraints.get("objectSelector") or {})
    except (SelectorError, AttributeError, TypeError):
        return None
    return Route(scheduler, str(meta["name"]), namespaces, pods, _classes(spec))


def _classes(spec: Mapping[str, Any]) -> tuple[str, ...] | None:
    for condition in spec.get("matchConditions") or []:
        if not isinstance(condition, dict) or condition.get("name") != PRIORITY_CONDITION:
            continue
        text = str(condition.get("expression", ""))
        start, end = text.rfind("["), text.rfind("]")
        try:
            listed = json.loads(text[start : end + 1]) if 0 <= start < end else None
        except ValueError:
            listed = None
        # Unreadable: any class (a conservative overlap check assumes the widest reach).
        if isinstance(listed, list) and all(isinstance(c, str) for c in listed):
            return tuple(listed)
    return None


def _told(selector: Selector) -> str:
    """The selector as the user wrote it: without what kschedctl adds to every routing (not
    kube-system, not a kschedctl scheduler's own pods)."""
    shown = [r for r in selector.requirements if not _added(r)]
    return Selector(tuple(shown)).describe() if shown else ""


def _added(r: Requirement) -> bool:
    return (r.key == NAMESPACE_NAME_LABEL and r.op == "NotIn" and r.values == ("kube-system",)) or (
        r.key == SCHEDULER_LABEL and r.op == "DoesNotExist"
    )


def routed_to(pod: Mapping[str, Any]) -> str | None:
    """The scheduler name a pod's routed-by annotation names (cluster text: a claim that
    callers check against a live kschedctl policy), None without one."""
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    value = annotations.get(ROUTED_BY_ANNOTATION) if isinstance(annotations, dict) else None
    if not isinstance(value, str) or "/" not in value:
        return None
    return value.partition("/")[2] or None


def labels_of(obj: Mapping[str, Any]) -> dict[str, str]:
    labels = (obj.get("metadata") or {}).get("labels") or {}
    return {str(k): str(v) for k, v in labels.items()} if isinstance(labels, dict) else {}


def matched_namespaces(route: Route, namespaces: Iterable[Mapping[str, Any]]) -> list[str]:
    """The names of the namespaces ``route`` selects now, sorted."""
    return sorted(
        str((ns.get("metadata") or {}).get("name"))
        for ns in namespaces
        if route.namespaces.matches(labels_of(ns))
    )


def why_routed(route: Route, namespace: Mapping[str, Any], pod: Mapping[str, Any]) -> str | None:
    """``namespace team-a matches team=ml`` (and the pod's part) when ``route`` selects the pod
    in ``namespace`` today, else None (its labels or the routing changed since it was routed)."""
    ns_labels, pod_labels = labels_of(namespace), labels_of(pod)
    if not (route.namespaces.matches(ns_labels) and route.pods.matches(pod_labels)):
        return None
    name = (namespace.get("metadata") or {}).get("name", "")
    parts = [f"namespace {name} matches {_told(route.namespaces) or 'every namespace'}"]
    if told := _told(route.pods):
        parts.append(f"its labels match {told}")
    if route.priority_classes is not None:
        parts.append(f"priority class {(pod.get('spec') or {}).get('priorityClassName', '')}")
    return ", ".join(parts)


def both_match(a: Selector, b: Selector) -> bool:
    """Whether some set of labels meets both selectors (exact: each key on its own)."""
    if a.nothing or b.nothing:
        return False
    by_key: dict[str, list[Requirement]] = {}
    for r in (*a.requirements, *b.requirements):
        by_key.setdefault(r.key, []).append(r)
    return all(_satisfiable(key, reqs) for key, reqs in by_key.items())


def _satisfiable(key: str, reqs: list[Requirement]) -> bool:
    # The label absent, any value a requirement names, or a value none names: enough cases.
    mentioned = {v for r in reqs for v in r.values}
    fresh = "\x00" + "".join(sorted(mentioned))
    cases: list[dict[str, str]] = [{}, {key: fresh}, *({key: v} for v in mentioned)]
    return any(all(r.matches(labels) for r in reqs) for labels in cases)


def overlap(a: Route, b: Route, namespaces: Iterable[Mapping[str, Any]]) -> str | None:
    """A live namespace where routings ``a`` and ``b`` can both match one new pod, else None.

    Conservative: both select the namespace, their pod selectors can hold together, and
    their priority classes share one (or either takes any); the scheduler-name conditions are
    not told apart (a pod asking for default-scheduler meets both)."""
    if not both_match(a.pods, b.pods):
        return None
    if a.priority_classes is not None and b.priority_classes is not None:
        if not set(a.priority_classes) & set(b.priority_classes):
            return None
    shared = sorted(set(matched_namespaces(a, namespaces)) & set(matched_namespaces(b, namespaces)))
    return shared[0] if shared else None


@dataclass(frozen=True)
class Probe:
    """A pod ``route`` would rewrite: created with ``dryRun=All``, it shows whether the API
    server still applies the policy."""

    namespace: str
    labels: dict[str, str]
    priority_class: str | None


def probe(route: Route, namespaces: Iterable[Mapping[str, Any]]) -> Probe | None:
    """A probe pod in a namespace ``route`` selects now, None when no namespace does (no new
    pod can be routed) or its pod selector asks for labels no simple pod has."""
    matched = matched_namespaces(route, namespaces)
    if not matched:
        return None
    labels: dict[str, str] = {}
    for r in route.pods.requirements:
        if r.op == "In":
            labels[r.key] = r.values[0]
        elif r.op == "Exists":
            labels[r.key] = "probe"
    if not route.pods.matches(labels):
        return None
    classes = route.priority_classes
    return Probe(matched[0], labels, classes[0] if classes else None)


def routed_finding(
    pod: Mapping[str, Any],
    namespace: Mapping[str, Any] | None,
    routes: Iterable[Route],
    serving: bool | None,
) -> Finding | None:
    """``why``'s finding for a pod kschedctl routing sent to its scheduler (None: the pod
    carries no routed-by annotation). The annotation is only a claim: the routing it names
    must exist as kschedctl's policy, and its selectors are evaluated again on the live
    namespace and pod. ``serving``: whether the scheduler serves now (None: not known)."""
    target = routed_to(pod)
    if target is None:
        return None
    asks = (pod.get("spec") or {}).get("schedulerName")
    route = next((r for r in routes if r.scheduler == target), None)
    if route is None or asks != target:
        return Finding(
            "routed-by-unknown",
            "warning",
            f"the pod's {ROUTED_BY_ANNOTATION} annotation names {target}, but no kschedctl "
            "routing of that name sends it pods now (removed since, or the annotation was "
            "written by hand)",
            fix="`kschedctl list` shows each scheduler's ROUTING",
        )
    rule = why_routed(route, namespace, pod) if namespace is not None else None
    because = rule or f"its rule {route.rule} (which no longer matches the pod or namespace)"
    message = f"routed to {target} by kschedctl routing of {route.scheduler}: {because}"
    if serving is False:
        return Finding(
            "routed-to-down-scheduler",
            "error",
            f"{message}; {target} is not serving, so the pod waits for it",
            fix=f"start {target} again (`kschedctl status {target}`), or `kschedctl remove "
            f"{target}` (its routing goes first, new pods go to default-scheduler) and "
            "re-create the pod",
        )
    return Finding("routed", "info", message)
