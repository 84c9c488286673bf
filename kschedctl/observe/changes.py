"""What `diff` compares (pure): a live object and what the API server would make of the rendered
one, with the noise the server writes by itself removed and Secrets' values masked.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# Written by the API server (or bumped by a dry run itself), not by anyone's change.
NOISE_METADATA = (
    "managedFields",
    "resourceVersion",
    "uid",
    "creationTimestamp",
    "generation",
    "selfLink",
)
MASK = "***"  # kubectl diff's mask for a Secret's values
_SECRET_FIELDS = ("data", "stringData")


def _sorted(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value


def normalised(obj: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """``obj`` without ``status`` and the metadata the server writes by itself, keys sorted
    (as kubectl diff prints them); None stays None (the object does not exist)."""
    if obj is None:
        return None
    clean = {k: v for k, v in obj.items() if k != "status"}
    meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in NOISE_METADATA}
    if meta.get("annotations") == {}:
        del meta["annotations"]
    clean["metadata"] = meta
    result: dict[str, Any] = _sorted(clean)
    return result


def masked(
    live: dict[str, Any] | None, merged: dict[str, Any] | None
) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """A Secret's values replaced by ``***`` on both sides, as kubectl diff does: a key whose
    value changes shows ``*** (before)`` and ``*** (after)``, so the change is seen, never the
    value. Other kinds are returned as they are."""
    if not any(o is not None and o.get("kind") == "Secret" for o in (live, merged)):
        return live, merged
    live = _copy_secret(live)
    merged = _copy_secret(merged)
    for field in _SECRET_FIELDS:
        before = _values(live, field)
        after = _values(merged, field)
        for key in set(before) | set(after):
            changed = key in before and key in after and before[key] != after[key]
            if key in before:
                before[key] = f"{MASK} (before)" if changed else MASK
            if key in after:
                after[key] = f"{MASK} (after)" if changed else MASK
    return live, merged


def _values(obj: dict[str, Any] | None, field: str) -> dict[str, Any]:
    values = (obj or {}).get(field)
    return values if isinstance(values, dict) else {}  # the copy's own dict: masked in place


def _copy_secret(obj: dict[str, Any] | None) -> dict[str, Any] | None:
    if obj is None:
        return None
    copy = dict(obj)
    for field in _SECRET_FIELDS:
        if isinstance(copy.get(field), Mapping):
            copy[field] = dict(copy[field])
        elif field in copy:
            copy[field] = MASK  # not a map: nothing of it is shown either
    return copy


def projected(live: Any, rendered: Any) -> Any:
    """``live`` cut to the fields ``rendered`` sets (lists of the same length item by item):
    a bare Pod deploy replaces is compared on what kschedctl writes, not on the defaults the
    server filled in."""
    if isinstance(live, Mapping) and isinstance(rendered, Mapping):
        return {k: projected(live[k], rendered[k]) for k in rendered if k in live}
    if isinstance(live, list) and isinstance(rendered, list) and len(live) == len(rendered):
        return [projected(a, b) for a, b in zip(live, rendered, strict=True)]
    return live


def object_name(obj: Mapping[str, Any]) -> str:
    """kubectl diff's file name for an object: ``apps.v1.Deployment.kube-system.NAME``."""
    meta = obj.get("metadata") or {}
    version = str(obj.get("apiVersion", "")).replace("/", ".")
    namespace = meta.get("namespace")
    parts = [version, str(obj.get("kind", "")), *([namespace] if namespace else []), meta["name"]]
    return ".".join(parts)
