"""Snapshot files: a portable copy of what scheduling needs from a cluster.

``model``: the versioned format (:class:`ClusterSnapshot`); ``reading``: its strict loader;
``writing``: its writer and the way back to API objects. Pure: ``kschedctl snapshot`` (ops)
reads the cluster, ``kschedctl simulate`` replays a snapshot on a lab.
"""

from kschedctl.clustersnapshot.model import (
    API_VERSION,
    KIND,
    ClusterSnapshot,
    Omission,
    PodDisruptionBudget,
    PriorityClass,
    SnapshotContainer,
    SnapshotMetadata,
    SnapshotNamespace,
    SnapshotNode,
    SnapshotPod,
    SnapshotSource,
)
from kschedctl.clustersnapshot.reading import (
    MAX_SNAPSHOT_BYTES,
    load_snapshot,
    snapshot_from_dict,
    snapshot_from_text,
)
from kschedctl.clustersnapshot.storage import storage_objects
from kschedctl.clustersnapshot.writing import (
    claim_template_objects,
    dra_objects,
    dump,
    node_object,
    pod_object,
    snapshot_to_dict,
)

__all__ = [
    "API_VERSION",
    "KIND",
    "MAX_SNAPSHOT_BYTES",
    "ClusterSnapshot",
    "Omission",
    "PodDisruptionBudget",
    "PriorityClass",
    "SnapshotContainer",
    "SnapshotMetadata",
    "SnapshotNamespace",
    "SnapshotNode",
    "SnapshotPod",
    "SnapshotSource",
    "dump",
    "load_snapshot",
    "node_object",
    "pod_object",
    "dra_objects",
    "claim_template_objects",
    "snapshot_from_dict",
    "snapshot_from_text",
    "snapshot_to_dict",
    "storage_objects",
]
