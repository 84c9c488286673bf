"""Extended resources backed by a DeviceClass (``spec.extendedResourceName``, or the implicit
``deviceclass.resource.kubernetes.io/<class>``), as kube-scheduler v1.36's DynamicResources
plugin serves them (feature gate DRAExtendedResource, beta and on by default from 1.36;
pkg/scheduler/framework/plugins/dynamicresources/extendeddynamicresources.go):

- PreFilter: the pod's special claim from an earlier attempt (annotated
  ``resource.kubernetes.io/extended-resource-claim: "true"``, controlled by the pod), else an
  in-memory one named ``<extended-resources>`` that PreBind creates with ``generateName``
  ``<pod>-extended-resources-``;
- Filter: on a node whose allocatable lacks the resource, one ExactCount request per
  container (``container-<i>-request-<j>``: the container's index among init containers
  then containers, the resource's index among the container's sorted requests), plus the
  pod's ``status.extendedResourceClaimStatus.requestMappings``.

Pure: plain dicts in, plain dicts out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .quantity import NANO, QuantityError, parse_quantity

__all__ = [
    "ANNOTATION",
    "SPECIAL_NAME",
    "find_extended_claim",
    "is_dra_extended_name",
    "is_special",
    "requests_and_mappings",
    "special_claim",
]

ANNOTATION = "resource.kubernetes.io/extended-resource-claim"  # ExtendedResourceClaimAnnotation
SPECIAL_NAME = "<extended-resources>"  # specialClaimInMemName: never a valid claim name
IMPLICIT_PREFIX = "deviceclass.resource.kubernetes.io/"  # ResourceDeviceClassPrefix


def is_special(claim: Mapping[str, Any]) -> bool:
    """The in-memory claim, not yet created (``isSpecialClaimName``)."""
    return str((claim.get("metadata") or {}).get("name") or "").startswith(SPECIAL_NAME)


def is_dra_extended_name(name: str) -> bool:
    """``schedutil.IsDRAExtendedResourceName``: an extended resource name (has a "/", not in
    a kubernetes.io namespace, not a quota ``requests.`` name) or an implicit class name."""
    if name.startswith(IMPLICIT_PREFIX):
        return True
    return "/" in name and "kubernetes.io/" not in name and not name.startswith("requests.")


def find_extended_claim(
    pod: Mapping[str, Any], claims: Iterable[Mapping[str, Any]]
) -> Mapping[str, Any] | None:
    """``findExtendedResourceClaim``: the annotated claim the pod controls (by name and uid)."""
    md = pod.get("metadata") or {}
    name, uid = md.get("name"), md.get("uid")
    for claim in claims:
        cmd = claim.get("metadata") or {}
        if (cmd.get("annotations") or {}).get(ANNOTATION) != "true" or is_special(claim):
            continue
        for ref in cmd.get("ownerReferences") or []:
            if ref.get("name") == name and ref.get("controller") and ref.get("uid") == uid:
                return claim
    return None


def special_claim(pod: Mapping[str, Any]) -> dict[str, Any]:
    """The in-memory claim of ``preFilterExtendedResources`` (no requests yet)."""
    md = pod.get("metadata") or {}
    name = str(md.get("name") or "")
    owner = {"apiVersion": "v1", "kind": "Pod", "name": name, "uid": str(md.get("uid") or ""),
             "controller": True}  # fmt: skip
    return {
        "metadata": {
            "namespace": str(md.get("namespace") or "default"),
            "name": SPECIAL_NAME,
            "generateName": f"{name}-extended-resources-",
            "ownerReferences": [owner],
            "annotations": {ANNOTATION: "true"},
        },
        "spec": {},
    }


def _whole(value: object) -> int:
    """``Quantity.AsInt64``: the whole number, 0 when it is none (or not a quantity)."""
    try:
        nanos = parse_quantity(value)
    except QuantityError:
        return 0
    return nanos // NANO if nanos % NANO == 0 else 0


def _request(
    index: int,
    container: Mapping[str, Any],
    resource: str,
    cls: str,
    reusable: list[dict[str, Any] | None],
) -> tuple[dict[str, Any] | None, list[dict[str, str]]]:
    """``createResourceRequestAndMappings``: the container's request for ``resource`` (None
    when the ``reusable`` requests of later long-lived containers cover it) and its mappings."""
    creqs = (container.get("resources") or {}).get("requests") or {}
    if resource not in creqs:
        return None, []
    wanted = _whole(creqs[resource])
    if wanted == 0:
        return None, []
    cname = str(container.get("name") or "")
    mappings: list[dict[str, str]] = []
    have = 0
    for r in reusable:
        if r is None:
            continue
        have += int(r["exactly"]["count"])
        mapping = {"containerName": cname, "resourceName": resource, "requestName": r["name"]}
        mappings.append(mapping)
        if have >= wanted:
            return None, mappings
    name = f"container-{index}-request-{sorted(creqs).index(resource)}"
    request = {
        "name": name,
        "exactly": {"deviceClassName": cls, "allocationMode": "ExactCount", "count": wanted - have},
    }
    mappings.append({"containerName": cname, "resourceName": resource, "requestName": name})
    return request, mappings


def requests_and_mappings(
    pod: Mapping[str, Any], resources: Iterable[str], class_of: Mapping[str, str]
) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """``createRequestsAndMappings`` for the extended ``resources`` a node must serve through
    DRA: the special claim's requests (sorted by name) and the pod's request mappings.
    Non-sidecar init containers run one at a time: they reuse the requests of the
    long-lived containers after them and share the largest request of their own."""
    spec = pod.get("spec") or {}
    inits = list(spec.get("initContainers") or [])
    containers = inits + list(spec.get("containers") or [])
    long_lived = [
        i for i, c in enumerate(containers)
        if i >= len(inits) or c.get("restartPolicy") == "Always"
    ]  # fmt: skip
    short_lived = [i for i in range(len(inits)) if i not in long_lived]
    requests: list[dict[str, Any]] = []
    mappings: list[dict[str, str]] = []
    for resource in sorted(resources):
        cls = class_of.get(resource)
        if cls is None:
            continue
        own: list[dict[str, Any] | None] = [None] * len(containers)
        long_maps: list[dict[str, str]] = []
        for i in long_lived:
            own[i], found = _request(i, containers[i], resource, cls, [])
            long_maps += found
        biggest: dict[str, Any] | None = None
        names: set[str] = set()
        short_maps: list[dict[str, str]] = []
        for i in short_lived:
            req, found = _request(i, containers[i], resource, cls, own[i:])
            if req is not None:
                names.add(req["name"])
                if biggest is None or biggest["exactly"]["count"] < req["exactly"]["count"]:
                    biggest = req
            short_maps += found
        if biggest is not None and len(names) > 1:
            names.discard(biggest["name"])
            for m in short_maps:
                if m["requestName"] in names:
                    m["requestName"] = biggest["name"]
        if biggest is not None:
            requests.append(biggest)
        requests += [r for r in own if r is not None]
        mappings += long_maps + short_maps
    requests.sort(key=lambda r: str(r["name"]))
    return requests, mappings
