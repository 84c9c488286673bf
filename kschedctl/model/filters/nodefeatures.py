"""NodeDeclaredFeatures (kube-scheduler v1.36.3 ``nodedeclaredfeatures/nodedeclaredfeatures.go``,
on by default from 1.36 with its feature gate): a pod whose spec needs a node feature goes only
to nodes that list it in ``status.declaredFeatures``.

The features a pod needs are inferred from its spec as ``k8s.io/component-helpers``
v0.36.3 ``nodedeclaredfeatures`` does for scheduling (``InferForPodScheduling``; no feature of
that release has a MaxVersion). Of its five registered features two infer anything for
scheduling (the others only for in-place updates):

- ``RestartAllContainersOnContainerExits``: a container or init container with a
  ``restartPolicyRules`` rule of action ``RestartAllContainers``;
- ``UserNamespacesHostNetworkSupport``: ``hostNetwork: true`` with ``hostUsers: false``.

PreFilter skips a pod that needs none; Filter rejects a node missing one with
UnschedulableAndUnresolvable ``node(s) didn't match Pod's required features``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .nodefilters import Incoming
from .nodeinfo import NodeInfo, PodInfo
from .snapshot import NodeInfoSnapshot
from .verdicts import NODE_DECLARED_FEATURES, UNRESOLVABLE, Reason

__all__ = ["REASON_NODE_FEATURES", "required_features", "features_state"]

REASON_NODE_FEATURES = "node(s) didn't match Pod's required features"
RESTART_ALL_CONTAINERS = "RestartAllContainersOnContainerExits"
USER_NAMESPACES_HOST_NETWORK = "UserNamespacesHostNetworkSupport"


def _restarts_all_containers(spec: Mapping[str, Any]) -> bool:
    return any(
        rule.get("action") == "RestartAllContainers"
        for key in ("containers", "initContainers")
        for c in spec.get(key) or []
        for rule in c.get("restartPolicyRules") or []
    )


def required_features(pod: Mapping[str, Any]) -> tuple[str, ...]:
    """The node features ``pod`` needs, sorted (``InferForPodScheduling``)."""
    spec = pod.get("spec") or {}
    out = []
    if _restarts_all_containers(spec):
        out.append(RESTART_ALL_CONTAINERS)
    if spec.get("hostNetwork") and spec.get("hostUsers") is False:
        out.append(USER_NAMESPACES_HOST_NETWORK)
    return tuple(sorted(out))


@dataclass(frozen=True)
class FeaturesState:
    """The pod's required features (other pods change nothing: no PreFilterExtensions)."""

    required: tuple[str, ...]

    def update_with_pod(self, pod: PodInfo, node: NodeInfo, delta: int) -> None:
        """Other pods do not change what a node declares."""

    def filter(self, node: NodeInfo, *, all_reasons: bool = False) -> list[Reason]:
        declared = set((node.raw.get("status") or {}).get("declaredFeatures") or ())
        missing = [f for f in self.required if f not in declared]
        if not missing:
            return []
        return [
            Reason(
                NODE_DECLARED_FEATURES,
                REASON_NODE_FEATURES,
                f"the pod needs node feature(s) {', '.join(missing)}, which the node does not "
                "declare (status.declaredFeatures)",
                "run the pod on nodes whose kubelet declares the feature (a kubelet with its "
                "feature gate on), or drop what needs it from the pod",
                UNRESOLVABLE,
            )
        ]


def features_state(
    inc: Incoming, snapshot: NodeInfoSnapshot, notes: list[str] | None
) -> FeaturesState | None:
    """NodeDeclaredFeatures' PreFilter; None: Skip (the pod needs no feature)."""
    required = required_features(inc.raw)
    return FeaturesState(required) if required else None
