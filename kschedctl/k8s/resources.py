"""REST paths of the objects kschedctl creates: the rows of :data:`kschedctl.render.kinds.KINDS`.

How to extend it: add the kind's row to that table (its place there is its deletion order);
everything here derives from it.
"""

from __future__ import annotations

from typing import Any

from kschedctl.render.kinds import MANAGED_KINDS, Kind

# The table's rows by kind (``Role``): the REST paths of an object kschedctl manages.
RESOURCES = {kind.name: kind for kind in MANAGED_KINDS}


def resource_of(obj: dict[str, Any]) -> Kind:
    kind = obj.get("kind", "")
    resource = RESOURCES.get(kind)
    if resource is None or obj.get("apiVersion") not in resource.api_versions:
        raise ValueError(f"kschedctl does not manage {obj.get('apiVersion')} {kind} objects")
    return resource.at(obj["apiVersion"])


def object_path(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    return resource_of(obj).item(meta["name"], meta.get("namespace"))


def describe(obj: dict[str, Any]) -> str:
    """kubectl-style reference: ``deployment/my-scheduler -n kube-system``."""
    meta = obj.get("metadata") or {}
    ref = f"{obj.get('kind', '').lower()}/{meta.get('name')}"
    return f"{ref} -n {meta['namespace']}" if meta.get("namespace") else ref
