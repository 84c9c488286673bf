"""Pod requests and node allocatable, computed like kube-scheduler (component-helpers v0.36).

Units in every returned dict: ``cpu`` in millicores, ``memory`` / ``ephemeral-storage`` /
``hugepages-*`` in bytes, ``pods`` and extended resources as counts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .quantity import QuantityError, parse_quantity, to_milli, to_units

__all__ = [
    "CPU",
    "MEMORY",
    "EPHEMERAL",
    "PODS",
    "is_scalar_resource",
    "pod_requests",
    "node_allocatable",
    "format_amount",
    "DEFAULT_MILLI_CPU_REQUEST",
    "DEFAULT_MEMORY_REQUEST",
]

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL = "ephemeral-storage"
PODS = "pods"
DEFAULT_MILLI_CPU_REQUEST = 100  # pkg/scheduler/util/pod_resources.go, used for scoring only
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024

_POD_LEVEL = (CPU, MEMORY)  # plus hugepages-*: resources pod-level requests may set

ResourceList = dict[str, int]  # nanos per resource name while aggregating


def is_scalar_resource(name: str) -> bool:
    """``schedutil.IsScalarResourceName``: extended, hugepages-, kubernetes.io/ prefixed, or
    attachable-volumes- resources (everything that is not cpu/memory/ephemeral-storage/pods)."""
    if name.startswith("hugepages-") or name.startswith("attachable-volumes-"):
        return True
    if "kubernetes.io/" in name:
        return True
    # extended resource: has a "/", not native, not a quota "requests." name
    return "/" in name and not name.startswith("requests.")


def _is_pod_level_resource(name: str) -> bool:
    return name in _POD_LEVEL or name.startswith("hugepages-")


def _resource_list(raw: Mapping[str, Any] | None) -> ResourceList:
    out: ResourceList = {}
    if not raw:
        return out
    for name, q in raw.items():
        try:
            out[name] = parse_quantity(q)
        except QuantityError:
            continue  # the API server never stores an invalid quantity
    return out


def _add(into: ResourceList, other: Mapping[str, int]) -> None:
    for k, v in other.items():
        into[k] = into.get(k, 0) + v


def _max_into(into: ResourceList, other: Mapping[str, int]) -> None:
    for k, v in other.items():
        if k not in into or v > into[k]:
            into[k] = v


def _max_of(*lists: Mapping[str, int]) -> ResourceList:
    out: ResourceList = dict(lists[0])
    for other in lists[1:]:
        _max_into(out, other)
    return out


def _resize_infeasible(pod: Mapping[str, Any]) -> bool:
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == "PodResizePending":
            return bool(c.get("reason") == "Infeasible")
    return False


def _effective(
    spec: ResourceList, actuated: ResourceList, allocated: ResourceList, infeasible: bool
) -> ResourceList:
    """``determineEffectiveRequests``: max of spec/actuated/allocated (in-place resize)."""
    if infeasible:
        return _max_of(actuated, allocated)
    return _max_of(spec, actuated, allocated)


def _is_sidecar(container: Mapping[str, Any]) -> bool:
    return container.get("restartPolicy") == "Always"


def _containers_total(
    spec: Mapping[str, Any], of: Callable[[Mapping[str, Any], bool], ResourceList]
) -> ResourceList:
    """``Σ containers + Σ sidecars``, at least ``max over init containers of (own + sidecars
    started before)``, per resource; ``of(container, running)``: its amounts (``running``:
    a container or sidecar, which runs with the pod; False for a plain init container)."""
    total: ResourceList = {}
    for c in spec.get("containers") or []:
        _add(total, of(c, True))
    sidecars: ResourceList = {}
    init_max: ResourceList = {}
    for c in spec.get("initContainers") or []:
        sidecar = _is_sidecar(c)
        amounts = of(c, sidecar)
        if sidecar:
            _add(total, amounts)
            _add(sidecars, amounts)
            need = sidecars
        else:
            need = dict(amounts)
            _add(need, sidecars)
        _max_into(init_max, need)
    _max_into(total, init_max)
    return total


def pod_limits(pod: Mapping[str, Any]) -> dict[str, int]:
    """The pod's limits as ``kubectl describe node`` adds them up (component-helpers
    ``resource.PodLimits``): containers and sidecars summed, at least each init container's
    (with the sidecars started before it), pod-level ``spec.resources.limits`` replacing
    cpu/memory/hugepages, ``spec.overhead`` added to the resources limited. A resource no
    container limits is absent. Millicores for cpu, bytes/counts otherwise."""
    spec = pod.get("spec") or {}
    total = _containers_total(
        spec, lambda c, _: _resource_list((c.get("resources") or {}).get("limits"))
    )
    pod_level = _resource_list((spec.get("resources") or {}).get("limits"))
    for k, v in pod_level.items():
        if _is_pod_level_resource(k):
            total[k] = v
    for k, v in _resource_list(spec.get("overhead")).items():
        if k in total:
            total[k] += v
    return _to_scheduler_units(total, keep_zero_scalars=False)


def _requests_nanos(
    pod: Mapping[str, Any], *, use_status: bool, non_missing: Mapping[str, int] | None
) -> ResourceList:
    """``resource.PodRequests`` (PodLevelResources on, overhead included), in nanos."""
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    statuses: dict[str, Mapping[str, Any]] = {}
    infeasible = False
    if use_status:
        for cs in (status.get("containerStatuses") or []) + (
            status.get("initContainerStatuses") or []
        ):
            statuses[cs.get("name", "")] = cs
        infeasible = _resize_infeasible(pod)

    def container_reqs(c: Mapping[str, Any], may_use_status: bool) -> ResourceList:
        reqs = _resource_list((c.get("resources") or {}).get("requests"))
        if may_use_status:
            cs = statuses.get(c.get("name", ""))
            if cs is not None and cs.get("resources") is not None:
                reqs = _effective(
                    reqs,
                    _resource_list(cs["resources"].get("requests")),
                    _resource_list(cs.get("allocatedResources")),
                    infeasible,
                )
        if non_missing:
            reqs = dict(reqs)
            for k, v in non_missing.items():
                if k not in reqs:
                    reqs[k] = v
        return reqs

    total = _containers_total(spec, lambda c, running: container_reqs(c, use_status and running))

    pod_level = (spec.get("resources") or {}).get("requests") or {}
    if any(_is_pod_level_resource(k) for k in pod_level):
        parsed = _resource_list(pod_level)
        if use_status and status.get("resources") is not None:
            parsed = _effective(
                parsed,
                _resource_list(status["resources"].get("requests")),
                _resource_list(status.get("allocatedResources")),
                infeasible,
            )
        for k, v in parsed.items():
            if _is_pod_level_resource(k):
                total[k] = v

    _add(total, _resource_list(spec.get("overhead")))
    return total


def _to_scheduler_units(nanos: Mapping[str, int], *, keep_zero_scalars: bool) -> dict[str, int]:
    out: dict[str, int] = {}
    for name, n in nanos.items():
        if name == CPU:
            out[CPU] = to_milli(n)
        elif name in (MEMORY, EPHEMERAL, PODS):
            out[name] = to_units(n)
        elif is_scalar_resource(name):
            v = to_units(n)
            if v or keep_zero_scalars:
                out[name] = v
    return out


def pod_requests(
    pod: Mapping[str, Any], *, use_status: bool = False, non_zero: bool = False
) -> dict[str, int]:
    """The pod's effective request, as NodeResourcesFit sees it.

    ``max(Σ containers + Σ sidecars, max over init containers of (own + sidecars started
    before))`` per resource, pod-level ``spec.resources.requests`` replacing cpu/memory/hugepages
    when set, plus ``spec.overhead``. ``use_status=True`` applies in-place resize (max of spec,
    status and allocated), which the scheduler does for pods already on a node. ``non_zero``
    gives the scoring variant (a container without a cpu/memory request counts 100m / 200Mi).
    Returns millicores for cpu, bytes/counts otherwise; scalar resources requested as 0 are kept
    (they still disable the "requests nothing" short-cut in NodeResourcesFit).
    """
    non_missing: dict[str, int] | None = None
    if non_zero:
        non_missing = {}
        spec = pod.get("spec") or {}
        pod_level = (spec.get("resources") or {}).get("requests") or {}
        pod_level_set = any(_is_pod_level_resource(k) for k in pod_level)
        plain = _requests_nanos(pod, use_status=use_status, non_missing=None)
        if not pod_level_set or CPU not in plain:
            non_missing[CPU] = DEFAULT_MILLI_CPU_REQUEST * 1_000_000
        if not pod_level_set or MEMORY not in plain:
            non_missing[MEMORY] = DEFAULT_MEMORY_REQUEST * 1_000_000_000
    nanos = _requests_nanos(pod, use_status=use_status, non_missing=non_missing)
    return _to_scheduler_units(nanos, keep_zero_scalars=True)


def node_allocatable(node: Mapping[str, Any]) -> dict[str, int]:
    """``status.allocatable`` in scheduler units (cpu millicores, pods count, bytes ...)."""
    raw = (node.get("status") or {}).get("allocatable")
    return _to_scheduler_units(_resource_list(raw), keep_zero_scalars=True)


def sum_requests(items: Iterable[Mapping[str, int]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for it in items:
        for k, v in it.items():
            out[k] = out.get(k, 0) + v
    return out


_BINARY_UNITS = (("Ei", 2**60), ("Pi", 2**50), ("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20))


def format_amount(resource: str, amount: int) -> str:
    """Human form of a scheduler-unit amount: cpu as cores, byte resources in binary units."""
    if resource == CPU:
        if amount % 1000 == 0:
            return str(amount // 1000)
        if amount < 1000:
            return f"{amount}m"
        return f"{amount / 1000:.3f}".rstrip("0").rstrip(".")
    if resource in (MEMORY, EPHEMERAL) or resource.startswith("hugepages-"):
        sign = "-" if amount < 0 else ""
        a = abs(amount)
        for suffix, size in _BINARY_UNITS:
            if a >= size:
                if a % size == 0:
                    return f"{sign}{a // size}{suffix}"
                return f"{sign}{a / size:.1f}{suffix}"
        if a >= 1024 and a % 1024 == 0:
            return f"{sign}{a // 1024}Ki"
        return f"{sign}{a}"
    return str(amount)
