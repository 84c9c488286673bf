"""The per-node filters that need no cluster-wide state.

NodeUnschedulable, NodeName, TaintToleration, NodeAffinity, NodePorts and NodeResourcesFit,
with the PreFilter work they do once per pod (``Incoming``). Each filter has two forms: one
that explains (its reasons, for ``evaluate``) and, where a plain comparison answers, a
``*_check`` factory that binds the pod once and returns a per-node boolean for
``feasible_nodes``. ``table.FILTERS`` pairs them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kschedctl.model.kubetypes import Node, Pod, Toleration

from .nodeinfo import HEADROOM_INDEX, NodeInfo, host_ports
from .resources import CPU, EPHEMERAL, MEMORY, PODS, format_amount, pod_requests
from .selectors import NodeSelectorTerm, node_selector_terms
from .taints import (
    UNSCHEDULABLE_TAINT,
    find_untolerated_taint,
    taint_text,
    tolerates,
    toleration_for,
)
from .verdicts import (
    NODE_AFFINITY,
    NODE_NAME,
    NODE_PORTS,
    NODE_RESOURCES_FIT,
    NODE_UNSCHEDULABLE,
    REASON_NODE_AFFINITY,
    REASON_NODE_NAME,
    REASON_PORTS,
    REASON_TAINT,
    REASON_TOO_MANY_PODS,
    REASON_UNSCHEDULABLE,
    TAINT_TOLERATION,
    UNRESOLVABLE,
    UNSCHEDULABLE,
    Reason,
)

__all__ = ["RequiredNodeAffinity", "matches_node_affinity"]

NodeCheck = Callable[[NodeInfo], bool]  # True when the node passes (no explanation)


@dataclass(frozen=True)
class RequiredNodeAffinity:
    """``nodeSelector`` AND ``requiredDuringSchedulingIgnoredDuringExecution``."""

    node_selector: Mapping[str, str] | None
    terms: tuple[NodeSelectorTerm, ...] | None  # None: no required node affinity at all
    raw_terms: tuple[Mapping[str, Any], ...] = ()

    @classmethod
    def of(cls, pod: Pod) -> RequiredNodeAffinity:
        spec = pod.get("spec") or {}
        selector = spec.get("nodeSelector") or None
        required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution"
        )
        terms = None
        raw_terms: tuple[Mapping[str, Any], ...] = ()
        if required is not None:
            raw_terms = tuple(t or {} for t in required.get("nodeSelectorTerms") or [])
            terms = tuple(node_selector_terms(raw_terms))
        return cls(selector, terms, raw_terms)

    @property
    def empty(self) -> bool:
        return not self.node_selector and self.terms is None

    def failure(self, labels: Mapping[str, str], node_name: str) -> str | None:
        """None when the node matches, else which selector entry / term failed and why."""
        for k, v in (self.node_selector or {}).items():
            if labels.get(k) != v:
                have = f"node has {k}={labels[k]}" if k in labels else f"node has no label {k}"
                return f"nodeSelector {k}={v} ({have})"
        if self.terms is None:
            return None
        if not self.terms:
            return "required node affinity has no non-empty nodeSelectorTerms (matches no node)"
        failures = []
        for t in self.terms:
            f = t.first_failure(labels, node_name)
            if f is None:
                return None
            failures.append(f if len(self.terms) == 1 else f"term {t.index}: {f}")
        if len(failures) == 1:
            return f"required node affinity: {failures[0]}"
        return "no required nodeSelectorTerm matches: " + "; ".join(failures)

    def matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        for k, v in (self.node_selector or {}).items():
            if labels.get(k) != v:
                return False
        if self.terms is None:
            return True
        for t in self.terms:
            if t.matches(labels, node_name):
                return True
        return False


def matches_node_affinity(pod: Pod, node: Node) -> bool:
    """True when ``node`` satisfies the pod's nodeSelector and required node affinity."""
    md = node.get("metadata") or {}
    return RequiredNodeAffinity.of(pod).matches(md.get("labels") or {}, md.get("name") or "")


class Incoming:
    """The pod being scheduled, with everything PreFilter computes once."""

    def __init__(
        self,
        pod: Pod,
        *,
        comparison_operators: bool = False,
        dynamic_provisioning: bool = True,
    ) -> None:
        md = pod.get("metadata") or {}
        spec = pod.get("spec") or {}
        self.raw = pod
        self.namespace: str = md.get("namespace") or "default"
        self.name: str = md.get("name") or ""
        self.uid: str = str(md.get("uid") or f"{self.namespace}/{self.name}")
        self.labels: Mapping[str, str] = md.get("labels") or {}
        prio = spec.get("priority")
        self.priority: int = prio if isinstance(prio, int) else 0
        self.tolerations: list[Toleration] = list(spec.get("tolerations") or [])
        self.node_name: str = spec.get("nodeName") or ""
        self.comparison_operators = comparison_operators
        # Whether the scheduler provisions volumes (kube-scheduler does, kschedctl's does not).
        self.dynamic_provisioning = dynamic_provisioning
        self.affinity = RequiredNodeAffinity.of(pod)
        self.request: dict[str, int] = pod_requests(pod)
        self.requests_nothing = (
            not self.request.get(CPU)
            and not self.request.get(MEMORY)
            and not self.request.get(EPHEMERAL)
            and not any(k not in (CPU, MEMORY, EPHEMERAL, PODS) for k in self.request)
        )
        self.ports = host_ports(pod)
        # The DynamicResources PreFilter state (``dra.pod_dra_state``), computed once per pod.
        self.dra_memo: tuple[object] | None = None

    def prefilter_node_names(self) -> tuple[set[str] | None, bool]:
        """NodeAffinity PreFilter: (names to keep or None for all, conflict)."""
        names: set[str] | None = None
        for t in self.affinity.raw_terms:
            term_names: set[str] | None = None
            for r in t.get("matchFields") or []:
                if r.get("key") == "metadata.name" and r.get("operator") == "In":
                    s = {str(v) for v in r.get("values") or []}
                    term_names = s if term_names is None else term_names & s
            if term_names is None:
                return None, False  # this term does not pin node names: all nodes stay
            names = term_names if names is None else names | term_names
        if names is not None and not names:
            return None, True
        return names, False


def tolerates_unschedulable(inc: Incoming) -> bool:
    """The pod tolerates cordoned nodes: NodeUnschedulable passes on every node."""
    return tolerates(
        UNSCHEDULABLE_TAINT, inc.tolerations, comparison_operators=inc.comparison_operators
    )


def node_unschedulable(inc: Incoming, node: NodeInfo) -> list[Reason]:
    if not node.unschedulable:
        return []
    if tolerates_unschedulable(inc):
        return []
    return [
        Reason(
            NODE_UNSCHEDULABLE,
            REASON_UNSCHEDULABLE,
            "node is cordoned (spec.unschedulable: true) and the pod does not tolerate "
            "node.kubernetes.io/unschedulable:NoSchedule",
            f"uncordon it (kubectl uncordon {node.name})",
            UNRESOLVABLE,
        )
    ]


def _schedulable(node: NodeInfo) -> bool:
    return not node.unschedulable


def node_unschedulable_check(inc: Incoming) -> NodeCheck:
    """For a pod that does not tolerate cordoned nodes (see ``tolerates_unschedulable``)."""
    return _schedulable


def node_name(inc: Incoming, node: NodeInfo) -> list[Reason]:
    if not inc.node_name or inc.node_name == node.name:
        return []
    return [
        Reason(
            NODE_NAME,
            REASON_NODE_NAME,
            f"pod.spec.nodeName is {inc.node_name}",
            None,
            UNRESOLVABLE,
        )
    ]


def node_name_check(inc: Incoming) -> NodeCheck:
    """For a pod with ``spec.nodeName`` set."""
    wanted = inc.node_name
    return lambda node: node.name == wanted


def taint_toleration(inc: Incoming, node: NodeInfo) -> list[Reason]:
    taint = find_untolerated_taint(
        node.taints, inc.tolerations, comparison_operators=inc.comparison_operators
    )
    if taint is None:
        return []
    text = taint_text(taint)
    return [
        Reason(
            TAINT_TOLERATION,
            REASON_TAINT,
            f"taint {text} is not tolerated",
            f"add the toleration {toleration_for(taint)} to the pod, or remove the taint "
            f"(kubectl taint nodes {node.name} {text}-)",
            UNRESOLVABLE,
            taint={"key": taint.get("key") or "", "value": taint.get("value") or ""},
        )
    ]


def taint_toleration_check(inc: Incoming) -> NodeCheck:
    tolerations, comparison_operators = inc.tolerations, inc.comparison_operators

    def fits(node: NodeInfo) -> bool:
        return not node.taints or (
            find_untolerated_taint(
                node.taints, tolerations, comparison_operators=comparison_operators
            )
            is None
        )

    return fits


def node_affinity(inc: Incoming, node: NodeInfo) -> list[Reason]:
    if inc.affinity.empty:
        return []  # PreFilter returns Skip
    failure = inc.affinity.failure(node.labels, node.name)
    if failure is None:
        return []
    fix = None
    for k, v in (inc.affinity.node_selector or {}).items():
        if node.labels.get(k) != v:
            fix = (
                f"label the node (kubectl label node {node.name} {k}={v}) "
                "or change the pod's nodeSelector"
            )
            break
    else:
        fix = "change the pod's required node affinity, or the node's labels"
    return [Reason(NODE_AFFINITY, REASON_NODE_AFFINITY, failure, fix, UNRESOLVABLE)]


def node_affinity_check(inc: Incoming) -> NodeCheck:
    """For a pod with a nodeSelector or required node affinity (else PreFilter skips)."""
    matches = inc.affinity.matches
    return lambda node: matches(node.labels, node.name)


def node_ports(inc: Incoming, node: NodeInfo) -> list[Reason]:
    for ip, proto, port in inc.ports:
        if node.port_conflict(ip, proto, port) is None:
            continue
        users = node.pods_using_port(ip, proto, port)
        by = f" by {', '.join(users)}" if users else ""
        return [
            Reason(
                NODE_PORTS,
                REASON_PORTS,
                f"hostPort {port}/{proto} on {ip} is already in use{by}",
                "use another hostPort, or a Service instead of a hostPort",
                UNSCHEDULABLE,
            )
        ]
    return []


def node_ports_check(inc: Incoming) -> NodeCheck:
    """For a pod with host ports (else PreFilter skips)."""
    return lambda node: not node_ports(inc, node)


_Shortage = tuple[str, str, int, int, int, bool]  # name, reason, request, used, capacity, unres


def _shortage(name: str, r: int, used: Mapping[str, int], alloc: Mapping[str, int]) -> _Shortage:
    cap = alloc.get(name, 0)
    return (name, f"Insufficient {name}", r, used.get(name, 0), cap, r > cap)


def node_resources_fit(
    inc: Incoming, node: NodeInfo, dra_resources: frozenset[str] = frozenset()
) -> list[Reason]:
    """``fitsRequest``: every insufficient resource, in Go's order (pods, cpu, memory,
    ephemeral-storage, then scalar resources sorted by name)."""
    found: list[_Shortage] = []
    alloc = node.allocatable
    used = node.requested
    allowed = alloc.get(PODS, 0)
    if len(node.pods) + 1 > allowed:
        found.append((PODS, REASON_TOO_MANY_PODS, 1, len(node.pods), allowed, False))
    req = inc.request
    if not inc.requests_nothing:
        for name in (CPU, MEMORY, EPHEMERAL):
            r = req.get(name, 0)
            if r > 0 and r > alloc.get(name, 0) - used.get(name, 0):
                found.append(_shortage(name, r, used, alloc))
        for name in sorted(req):
            if name in (CPU, MEMORY, EPHEMERAL, PODS):
                continue
            r = req[name]
            if r == 0:
                continue
            if name in dra_resources and alloc.get(name, 0) <= 0:
                continue  # left to the DynamicResources plugin
            if r > alloc.get(name, 0) - used.get(name, 0):
                found.append(_shortage(name, r, used, alloc))
    if not found:
        return []
    code = UNRESOLVABLE if any(f[5] for f in found) else UNSCHEDULABLE
    out = []
    for name, reason, r, u, cap, unres in found:
        if name == PODS:
            detail = f"pods: {u} of {cap} already on the node"
            fix = "add nodes, or raise the node's pod limit (kubelet maxPods)"
        else:
            free = cap - u
            detail = (
                f"{name}: requests {format_amount(name, r)}, free {format_amount(name, free)} "
                f"of {format_amount(name, cap)}"
            )
            if unres:
                fix = (
                    f"lower the pod's {name} request to at most {format_amount(name, cap)} "
                    "(it exceeds the node's allocatable), or add a bigger node"
                )
            else:
                fix = (
                    f"lower the pod's {name} request to at most "
                    f"{format_amount(name, max(free, 0))}, or free capacity on the node"
                )
        out.append(Reason(NODE_RESOURCES_FIT, reason, detail, fix, code))
    return out


def node_resources_fit_check(
    inc: Incoming, dra_resources: frozenset[str] = frozenset()
) -> NodeCheck:
    """``node_resources_fit`` as a boolean: the same comparisons in the same order, with the
    pod's non-zero requests picked once."""
    request = inc.request
    requests_nothing = inc.requests_nothing
    # (index in NodeInfo.headroom(), request) of the native resources the pod requests
    native = [(HEADROOM_INDEX[n], request.get(n, 0)) for n in (CPU, MEMORY, EPHEMERAL)]
    native = [(i, r) for i, r in native if r > 0]
    scalars = [
        (n, r)
        for n, r in sorted(request.items())
        if n not in (CPU, MEMORY, EPHEMERAL, PODS) and r != 0
    ]

    def fits(node: NodeInfo) -> bool:
        room = node.headroom()
        if room[0] < 1:  # len(pods) + 1 > allocatable pods
            return False
        if requests_nothing:
            return True
        for i, r in native:
            if r > room[i]:
                return False
        alloc, used = node.allocatable, node.requested
        for name, r in scalars:
            have = alloc.get(name, 0)
            if name in dra_resources and have <= 0:
                continue  # left to the DynamicResources plugin
            if r > have - used.get(name, 0):
                return False
        return True

    return fits
