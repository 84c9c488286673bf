"""The Kubernetes object shapes the model reads, as TypedDicts (core/v1, the fields scheduling
reads; the API lets every one of them be absent, hence ``total=False``).

They are plain dicts at run time: a pod from the API server (``json.loads``), a YAML fixture
or :func:`kschedctl.model.scheduling.slim.slim_pod` is one as it is. They document, and let
mypy check, what crosses the model's boundaries: a :class:`Taint` in, a :class:`Toleration`
in, a :class:`Pod` out. Fields the model never reads are left out; a shape reads them as
``Any`` only through ``Mapping[str, Any]``.
"""

from __future__ import annotations

from typing import Any, TypedDict

__all__ = [
    "Container",
    "Node",
    "NodeSpec",
    "NodeStatus",
    "ObjectMeta",
    "OwnerReference",
    "Pod",
    "PodCondition",
    "PodSpec",
    "PodStatus",
    "ResourceRequirements",
    "Taint",
    "Toleration",
]


class OwnerReference(TypedDict, total=False):
    apiVersion: str
    kind: str
    name: str
    uid: str
    controller: bool


class ObjectMeta(TypedDict, total=False):
    name: str
    namespace: str
    uid: str
    resourceVersion: str
    creationTimestamp: str
    deletionTimestamp: str
    labels: dict[str, str]
    annotations: dict[str, str]
    ownerReferences: list[OwnerReference]


class Taint(TypedDict, total=False):
    key: str
    value: str
    effect: str  # NoSchedule, PreferNoSchedule or NoExecute
    timeAdded: str


class Toleration(TypedDict, total=False):
    key: str
    operator: str  # Exists or Equal (Lt and Gt with the comparison operators gate)
    value: str
    effect: str  # "" tolerates every effect
    tolerationSeconds: int


class ResourceRequirements(TypedDict, total=False):
    requests: dict[str, str]  # quantities as the API writes them ("500m", "1Gi")
    limits: dict[str, str]


class Container(TypedDict, total=False):
    name: str
    image: str
    resources: ResourceRequirements
    restartPolicy: str  # "Always" on an init container: a sidecar
    restartPolicyRules: list[dict[str, Any]]
    ports: list[dict[str, Any]]


class PodSpec(TypedDict, total=False):
    nodeName: str
    schedulerName: str
    priority: int
    preemptionPolicy: str
    nodeSelector: dict[str, str]
    affinity: dict[str, Any]
    tolerations: list[Toleration]
    topologySpreadConstraints: list[dict[str, Any]]
    overhead: dict[str, str]
    resources: ResourceRequirements  # pod-level resources
    hostNetwork: bool
    hostUsers: bool
    resourceClaims: list[dict[str, Any]]
    containers: list[Container]
    initContainers: list[Container]
    volumes: list[dict[str, Any]]
    schedulingGates: list[dict[str, str]]


class PodCondition(TypedDict, total=False):
    type: str
    status: str
    reason: str
    message: str
    lastProbeTime: str | None
    lastTransitionTime: str


class PodStatus(TypedDict, total=False):
    phase: str
    nominatedNodeName: str
    startTime: str
    conditions: list[PodCondition]


class Pod(TypedDict, total=False):
    metadata: ObjectMeta
    spec: PodSpec
    status: PodStatus


class NodeSpec(TypedDict, total=False):
    taints: list[Taint]
    unschedulable: bool


class NodeStatus(TypedDict, total=False):
    allocatable: dict[str, str]
    images: list[dict[str, Any]]
    declaredFeatures: list[str]


class Node(TypedDict, total=False):
    metadata: ObjectMeta
    spec: NodeSpec
    status: NodeStatus
