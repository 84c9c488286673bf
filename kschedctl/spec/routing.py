"""``spec.routing``'s rules: which pods a scheduler takes without their manifests naming it.

Pure. The policy it renders to is :mod:`kschedctl.render.routing`'s; here only what makes a
routing valid: LabelSelectors as the API server validates them, priority class names, a
target Kubernetes that serves MutatingAdmissionPolicy, kube-system only on purpose, and no
silent catch-all.
"""

from __future__ import annotations

from kschedctl.base.errors import Problem
from kschedctl.model.config import shapes, versions
from kschedctl.model.config.plugin_args import label_selector_problems
from kschedctl.spec.model import Spec

# MutatingAdmissionPolicy: beta (admissionregistration.k8s.io/v1beta1, behind the
# MutatingAdmissionPolicy gate) since 1.34, GA (v1) since 1.36. The REST side of the same fact
# is the kind's row (kschedctl.render.kinds); tests/unit/test_routing.py pins the two equal.
ROUTING_MIN_MINOR = 34
KUBE_SYSTEM = "kube-system"
PATH = "spec.routing"


def check_routing(spec: Spec, version: versions.KubeVersion | None) -> list[Problem]:
    """The problems of ``spec.routing`` (none when it is absent)."""
    routing = spec.routing
    if routing is None:
        return []
    out: list[Problem] = []
    if version is not None and not version.at_least(ROUTING_MIN_MINOR):
        out.append(
            Problem(
                PATH,
                f"Kubernetes {version.minor_version} has no MutatingAdmissionPolicy (beta "
                f"since 1.{ROUTING_MIN_MINOR} behind the MutatingAdmissionPolicy feature gate, "
                "GA since 1.36): target 1.34 or later, or leave routing out and let pods name "
                "the scheduler in spec.schedulerName",
            )
        )
    for key, selector in (
        ("namespaceSelector", routing.namespace_selector),
        ("podSelector", routing.pod_selector),
    ):
        if selector is not None:
            out.extend(label_selector_problems(selector, f"{PATH}.{key}"))
    for i, name in enumerate(routing.priority_class_names):
        where = f"{PATH}.priorityClassNames[{i}]"
        if not isinstance(name, str):
            out.append(Problem(where, f"must be a string, not {shapes.shown(name)}"))
            continue
        out.extend(_shaped(where, shapes.dns_subdomain_problem(name)))
    if routing.allow_kube_system and spec.namespace != KUBE_SYSTEM:
        out.append(
            Problem(
                f"{PATH}.allowKubeSystem",
                f"routes kube-system's pods only for a scheduler that lives there itself "
                f"(spec.namespace is {spec.namespace}): move it to kube-system or drop "
                "allowKubeSystem",
            )
        )
    if not _restricts(routing.pod_selector) and not routing.priority_class_names:
        if routing.namespace_selector is None:
            out.append(
                Problem(
                    PATH,
                    "would route every new pod of the cluster: restrict it with "
                    "namespaceSelector, podSelector or priorityClassNames, or write "
                    "namespaceSelector: {} to route every namespace on purpose",
                )
            )
    return out


def _restricts(selector: object) -> bool:
    """A LabelSelector with at least one requirement (an empty one selects everything)."""
    return isinstance(selector, dict) and bool(
        selector.get("matchLabels") or selector.get("matchExpressions")
    )


def _shaped(path: str, problem: str | None) -> list[Problem]:
    return [Problem(path, f"priority class name {problem}")] if problem else []
