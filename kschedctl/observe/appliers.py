"""Who applied a scheduler's objects: ``kschedctl deploy``, or a GitOps tool or kubectl (pure).

``deploy`` applies server-side as field manager ``kschedctl`` (kschedctl.k8s.client
FIELD_MANAGER), so its objects name that manager in ``metadata.managedFields``. Objects applied
from rendered files (``kubectl apply -f``, Argo CD, Flux, Helm) carry kschedctl's labels and
annotations too, but other managers and, for the GitOps tools, their own marks: ``remove`` uses
this to warn that such a tool will apply them again.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["KSCHEDCTL_MANAGER", "applied_by", "appliers"]

# kschedctl.k8s.client.FIELD_MANAGER (observe sits below k8s and may not import it).
KSCHEDCTL_MANAGER = "kschedctl"

# Marks a tool leaves on what it applies: (label or annotation key prefix, the tool).
_MARKS = (
    ("argocd.argoproj.io/", "Argo CD"),
    ("kustomize.toolkit.fluxcd.io/", "Flux"),
    ("helm.toolkit.fluxcd.io/", "Flux"),
    ("meta.helm.sh/", "Helm"),
)
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
