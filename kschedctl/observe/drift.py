"""Drift: where the live objects differ from what the last revision rendered (pure).

Only the fields the render sets are compared (the API server's defaults and status are not
drift); each difference names its path, the revision's value, the live value, and the field
manager that last wrote that field according to the live object's ``managedFields`` (someone's
``kubectl edit`` or ``kubectl scale``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from kschedctl.base.errors import printable

# What is compared of metadata: the rest (uid, resourceVersion, managedFields…) is the server's.
_METADATA = ("labels", "annotations")
_MANAGER_LIMIT = 128


@dataclass(frozen=True)
class Drift:
    object: str  # kind/name (-n namespace)
    path: str  # spec.replicas, spec.template.spec.containers[name=x].image
    recorded: Any  # the revision's value
    live: Any  # None: absent
    manager: str | None  # who last wrote it (managedFields), sanitised; None: unknown

    def to_dict(self) -> dict[str, Any]:
        return {
            "object": self.object,
            "path": self.path,
            "revision": self.recorded,
            "live": self.live,
            "manager": self.manager,
        }


def _ref(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    ref = f"{str(obj.get('kind', '')).lower()}/{meta.get('name')}"
    return f"{ref} -n {meta['namespace']}" if meta.get("namespace") else ref


def _key(obj: dict[str, Any]) -> tuple[str, str, str]:
    meta = obj.get("metadata") or {}
    return (str(obj.get("kind")), str(meta.get("namespace") or ""), str(meta.get("name")))


def drifts(rendered: list[dict[str, Any]], live: list[dict[str, Any]]) -> list[Drift]:
    """The differences of each of ``rendered`` from its namesake in ``live`` (an object that
    is gone is one drift at its root)."""
    by_key = {_key(o): o for o in live}
    found: list[Drift] = []
    for want in rendered:
        have = by_key.get(_key(want))
        if have is None:
            found.append(Drift(_ref(want), "(object)", "present", None, None))
            continue
        differences: list[tuple[list[str], list[str], Any, Any]] = []
        for top, value in want.items():
            if top in ("apiVersion", "kind", "status"):
                continue
            if top == "metadata":
                meta = have.get("metadata") or {}
                for part in _METADATA:
                    if part in value:
                        _walk(value[part], meta.get(part), [top, part], [f"f:{part}"], differences)
                continue
            _walk(value, have.get(top), [top], [f"f:{top}"], differences)
        managed = have.get("metadata", {}).get("managedFields") or []
        for path, fields, recorded, now in differences:
            found.append(Drift(_ref(want), _dotted(path), recorded, now, manager(managed, fields)))
    return found


def _walk(
    want: Any, have: Any, path: list[str], fields: list[str],
    out: list[tuple[list[str], list[str], Any, Any]],
) -> None:  # fmt: skip
    if isinstance(want, dict) and isinstance(have, dict):
        for key, value in want.items():
            _walk(value, have.get(key), [*path, key], [*fields, f"f:{key}"], out)
        return
    if isinstance(want, list) and isinstance(have, list) and _named(want) and _named(have):
        theirs = {item["name"]: item for item in have}
        for item in want:
            name = item["name"]
            key = "k:" + json.dumps({"name": name}, separators=(",", ":"))
            _walk(item, theirs.get(name), [*path, f"[name={name}]"], [*fields, key], out)
        return
    if isinstance(want, list) and isinstance(have, list) and len(want) == len(have):
        # by position; its manager is the list's owner (a list of unnamed items is atomic)
        for i, (item, theirs) in enumerate(zip(want, have, strict=True)):
            _walk(item, theirs, [*path, f"[{i}]"], fields, out)
        return
    if not _same(want, have):
        out.append((path, fields, want, have))


def _named(items: list[Any]) -> bool:
    return all(isinstance(i, dict) and isinstance(i.get("name"), str) for i in items)


def _same(want: Any, have: Any) -> bool:
    if want == have:
        return True
    # an int the template wrote where the server keeps a string (or back): one value
    scalars = (str, int, float)
    return isinstance(want, scalars) and isinstance(have, scalars) and str(want) == str(have)


def _dotted(path: list[str]) -> str:
    return "".join(p if p.startswith("[") else f".{p}" for p in path).lstrip(".")


def manager(managed: list[Any], fields: list[str]) -> str | None:
    """The manager whose entry owns the field at ``fields`` (an atomic list is owned whole),
    the latest when several share it; None when no entry does (a removed field)."""
    best: tuple[str, str] | None = None
    for entry in managed:
        if not isinstance(entry, dict) or not _owns(entry.get("fieldsV1"), fields):
            continue
        name = str(entry.get("manager") or "?")
        if entry.get("subresource"):
            name += f" ({entry['subresource']})"
        candidate = (str(entry.get("time") or ""), name)
        if best is None or candidate[0] > best[0]:
            best = candidate
    return printable(best[1], _MANAGER_LIMIT) if best else None


def _owns(tree: Any, fields: list[str]) -> bool:
    for part in fields:
        if not isinstance(tree, dict) or part not in tree:
            return False
        tree = tree[part]
    return True
