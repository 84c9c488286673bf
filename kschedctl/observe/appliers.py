"""Who applied a scheduler's objects: ``kschedctl deploy``, or a GitOps tool or kubectl (pure).

``deploy`` applies server-side as field manager ``kschedctl`` (kschedctl.kubeclient.client
FIELD_MANAGER), so its objects name that manager in ``metadata.managedFields``. Objects applied
from rendered files (``kubectl apply -f``, Argo CD, Flux, Helm) carry kschedctl's labels and
annotations too, but other managers and, for the GitOps tools, their own marks: ``remove`` uses
this to warn that such a tool will apply them again.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = [
    "KSCHEDCTL_MANAGER",
    "GITOPS_TOOLS",
    "applied_by",
    "appliers",
    "helm_command",
    "helm_releases",
]

# kschedctl.kubeclient.client.FIELD_MANAGER (observe sits below k8s and may not import it).
KSCHEDCTL_MANAGER = "kschedctl"

# Marks a tool leaves on what it applies: (label or annotation key prefix, the tool).
_MARKS = (
    ("argocd.argoproj.io/", "Argo CD"),
    ("kustomize.toolkit.fluxcd.io/", "Flux"),
    ("helm.toolkit.fluxcd.io/", "Flux"),
    ("meta.helm.sh/", "Helm"),
)
# The tools that apply objects again after they changed or went: deploy must not fight them.
GITOPS_TOOLS = frozenset({"Argo CD", "Flux", "Helm"})
# Where Helm records the release an object belongs to (helm.sh/helm/v4 pkg/action/validate.go).
HELM_RELEASE_NAME = "meta.helm.sh/release-name"
HELM_RELEASE_NAMESPACE = "meta.helm.sh/release-namespace"
# Field managers of the same tools, for objects without their marks.
_MANAGERS = {
    "argocd-controller": "Argo CD",
    "argocd-application-controller": "Argo CD",
    "kustomize-controller": "Flux",
    "helm-controller": "Flux",
    "helm": "Helm",
}


def applied_by(obj: dict[str, Any]) -> str | None:
    """What applied ``obj`` if not ``kschedctl deploy`` (a tool, or the field managers); None
    when kschedctl's manager is among its managers and no tool marked it."""
    meta = obj.get("metadata") or {}
    keys = [*(meta.get("labels") or {}), *(meta.get("annotations") or {})]
    for prefix, tool in _MARKS:
        if any(str(key).startswith(prefix) for key in keys):
            return tool
    if (meta.get("labels") or {}).get("app.kubernetes.io/managed-by") == "Helm":
        return "Helm"
    managers = sorted(
        {str(entry.get("manager")) for entry in meta.get("managedFields") or [] if entry}
    )
    for manager in managers:
        if manager in _MANAGERS:
            return _MANAGERS[manager]
    if not managers or KSCHEDCTL_MANAGER in managers:
        return None
    return f"field manager {', '.join(managers)}"


def appliers(objects: Iterable[dict[str, Any]]) -> list[str]:
    """The distinct :func:`applied_by` answers of ``objects``, in first-seen order."""
    found: list[str] = []
    for obj in objects:
        who = applied_by(obj)
        if who and who not in found:
            found.append(who)
    return found


def helm_releases(objects: Iterable[dict[str, Any]]) -> list[tuple[str, str]]:
    """The Helm releases (name, namespace) ``objects`` belong to, in first-seen order; the
    namespace is empty when an object does not record it."""
    found: list[tuple[str, str]] = []
    for obj in objects:
        annotations = (obj.get("metadata") or {}).get("annotations") or {}
        name = annotations.get(HELM_RELEASE_NAME)
        if not isinstance(name, str) or not name:
            continue
        namespace = annotations.get(HELM_RELEASE_NAMESPACE)
        release = (name, namespace if isinstance(namespace, str) else "")
        if release not in found:
            found.append(release)
    return found


def helm_command(verb: str, release: tuple[str, str]) -> str:
    """``helm VERB RELEASE -n NAMESPACE`` for a release of :func:`helm_releases`."""
    name, namespace = release
    return f"helm {verb} {name}" + (f" -n {namespace}" if namespace else "")
