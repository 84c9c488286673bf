"""``spec.routing`` → the MutatingAdmissionPolicy and its binding that send new pods to the
scheduler (``templates/_routing.yaml.j2``): the values that template reads.

Pure. What the policy matches, and why:

- CREATE of core v1 ``pods`` only: routing decides where a pod starts, never moves one;
- the namespaces ``namespaceSelector`` selects (``matchConstraints.namespaceSelector``), never
  ``kube-system`` unless the scheduler lives there and ``allowKubeSystem`` says so;
- the pods ``podSelector`` selects (``matchConstraints.objectSelector``), never a pod carrying
  kschedctl's scheduler label: a scheduler's own pods are scheduled by default-scheduler, or
  nothing would ever start them;
- not mirror pods nor pods whose ``spec.nodeName`` is set (bound already: no scheduler sees
  them; the API server refuses a mirror pod without ``spec.nodeName``, so the annotation's
  condition is a second guard);
- only pods asking for ``default-scheduler`` (the API server defaults an unset
  ``schedulerName`` while decoding, before admission), unless ``includeNamedPods``; never one
  asking for this scheduler already (it would only gain the routed-by annotation);
- only the priority classes ``priorityClassNames`` lists, when it lists any.

Routed pods get ``spec.schedulerName`` and the annotation :data:`ROUTED_BY_ANNOTATION`
(``NAMESPACE/NAME`` of the scheduler), which ``status`` counts.
"""

from __future__ import annotations

import json
from typing import Any

from kschedctl.base.errors import SpecError
from kschedctl.render import kinds
from kschedctl.spec import Spec

ROUTED_BY_ANNOTATION = "kschedctl.io/routed-by"
# Its objects' name: cluster-scoped, so named after the scheduler, whose name is cluster-wide
# (pods ask for it); kschedctl-route- keeps them apart from policies of other tools.
ROUTE_PREFIX = "kschedctl-route-"
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"  # set on every namespace by the API server
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
DEFAULT_SCHEDULER = "default-scheduler"


def route_name(spec: Spec) -> str:
    """The name of the MutatingAdmissionPolicy and its binding."""
    return ROUTE_PREFIX + spec.name


def routing_context(spec: Spec, scheduler_label: str) -> dict[str, Any] | None:
    """What ``templates/_routing.yaml.j2`` renders for ``spec`` (None: no ``spec.routing``).
    ``scheduler_label``: the label every kschedctl scheduler's pod carries."""
    routing = spec.routing
    if routing is None:
        return None
    kind = kinds.MUTATING_ADMISSION_POLICY.for_minor(spec.version.minor)
    if kind is None:  # check_routing refuses it first; a guard for a spec built in code
        raise SpecError("spec.routing", f"Kubernetes {spec.version.minor_version} has none")
    namespaces = namespace_selector(spec)
    if not (routing.allow_kube_system and spec.namespace == "kube-system"):
        namespaces.setdefault("matchExpressions", []).append(
            {"key": NAMESPACE_NAME_LABEL, "operator": "NotIn", "values": ["kube-system"]}
        )
    pods = _with(routing.pod_selector)
    own = {"key": scheduler_label, "operator": "DoesNotExist"}
    pods.setdefault("matchExpressions", []).append(own)
    routed_by = f"{spec.namespace}/{spec.name}"
    return {
        "name": route_name(spec),
        "api_version": kind.api_version,
        "beta": kind.api_version != kinds.MUTATING_ADMISSION_POLICY.api_version,
        "namespace_selector": namespaces,
        "object_selector": pods,
        "match_conditions": match_conditions(spec),
        "apply": (
            f"Object{{metadata: Object.metadata{{annotations: {{{cel(ROUTED_BY_ANNOTATION)}: "
            f"{cel(routed_by)}}}}}, spec: Object.spec{{schedulerName: {cel(spec.name)}}}}}"
        ),
    }


def namespace_selector(spec: Spec) -> dict[str, Any]:
    """A copy of ``spec.routing.namespaceSelector`` (the chart's base of its own too)."""
    assert spec.routing is not None
    return _with(spec.routing.namespace_selector)


def match_conditions(spec: Spec) -> list[dict[str, str]]:
    """The CEL conditions a pod must meet besides the selectors (names say which failed)."""
    assert spec.routing is not None
    annotations = "object.metadata.annotations"
    name = "object.spec.schedulerName"
    out = [
        {
            "name": "not-a-mirror-pod",
            "expression": f"!has({annotations}) || !({cel(MIRROR_ANNOTATION)} in {annotations})",
        },
        {
            "name": "not-bound-yet",
            "expression": '!has(object.spec.nodeName) || object.spec.nodeName == ""',
        },
    ]
    if spec.routing.include_named_pods:
        out.append({"name": "not-named-here", "expression": f"{name} != {cel(spec.name)}"})
    else:
        out.append(
            {
                "name": "asks-for-default-scheduler",
                "expression": f"{name} == {cel(DEFAULT_SCHEDULER)}",
            }
        )
    classes = spec.routing.priority_class_names
    if classes:
        listed = ", ".join(cel(c) for c in classes)
        out.append(
            {
                "name": "priority-class",
                "expression": "has(object.spec.priorityClassName) && "
                f"object.spec.priorityClassName in [{listed}]",
            }
        )
    return out


def cel(text: str) -> str:
    """``text`` as a CEL string literal (JSON's escapes are CEL's: quotes, backslashes, \\u)."""
    return json.dumps(text, ensure_ascii=True)


def _with(selector: dict[str, Any] | None) -> dict[str, Any]:
    """A copy of a LabelSelector, its empty parts left out ({} selects everything)."""
    selector = selector or {}
    out: dict[str, Any] = {}
    if selector.get("matchLabels"):
        out["matchLabels"] = dict(selector["matchLabels"])
    if selector.get("matchExpressions"):
        out["matchExpressions"] = [dict(e) for e in selector["matchExpressions"]]
    return out
