"""A pure re-implementation of kube-scheduler's Filter plugins (v1.36) over plain API dicts.

Shared by ``kschedctl why`` and kschedctl's own scheduler. No I/O, no kubernetes client: pods,
nodes and namespaces go in as the API returns them as JSON (``{"metadata", "spec", "status"}``),
verdicts come out.

Typical use::

    from kschedctl.model.filters import NodeInfoSnapshot, evaluate, failed_scheduling_message

    snap = NodeInfoSnapshot(nodes, pods, namespaces)  # once; cheap to evaluate many pods
    ev = evaluate(pending_pod, snap)                  # first failing filter per node
    ev.schedulable, ev.feasible                       # bool, [node names]
    for v in ev.nodes:                                # NodeVerdict(name, fits, reasons)
        for r in v.reasons:                           # Reason(plugin, message, detail, fix, code)
            print(v.name, r.plugin, r.message, r.detail, r.fix)
    failed_scheduling_message(ev, (1, 36))            # "0/3 nodes are available: ..."

Public API
----------
``NodeInfoSnapshot(nodes, pods=(), namespaces=None, *, device_classes=(),
resource_slices=None, resource_claims=None, persistent_volume_claims=None,
storage_classes=None, persistent_volumes=None, csi_drivers=None, csi_storage_capacities=None,
csi_nodes=None, pod_disruption_budgets=())``
    Cluster state. ``pods`` may be all pods: terminal ones are ignored, bound ones
    (``spec.nodeName``) count on their node, pending ones with ``status.nominatedNodeName`` are
    treated as nominated. ``namespaces`` ({name: Namespace dict or labels}) is only needed for
    ``namespaceSelector`` in pod affinity; claims and classes enable the volume PreFilter checks
    ("pod has unbound immediate PersistentVolumeClaims", missing claims), with the
    PersistentVolumes too the per-node volume filters (``volumebinding``: PV node affinity,
    WaitForFirstConsumer matching, with the CSIDrivers and CSIStorageCapacities its storage
    capacity check; ``volumezone``; ``volumerestrictions``: inline disks, ReadWriteOncePod);
    the CSINodes say whether any node has an attach limit (NodeVolumeLimits, not modelled).
    Updating:
    ``upsert_pod``, ``remove_pod``, ``upsert_node``, ``remove_node``, ``assume(pod, node_name)``
    (count a pod on a node the moment a scheduler decides, so decisions never double-book),
    ``forget(pod)``.
    ``snapshot.node(name)`` gives a ``NodeInfo`` (``allocatable``, ``requested``, ``pods``,
    ``non_zero_requested()`` for scoring).
``evaluate(pod, snapshot, *, all_reasons=False, preemption=True, comparison_operators=False,
dynamic_provisioning=True)``
    -> ``Evaluation``. Runs, per node and in kube-scheduler's order, the modelled filters of
    ``FILTERS`` (NodeUnschedulable … InterPodAffinity), stopping at the first failing filter
    unless ``all_reasons``. PreFilter
    rejections (NodeAffinity "pod affinity terms conflict", the volume claim checks) and
    PreFilter node narrowing
    (``matchFields metadata.name In``) are reproduced. When no node fits, DefaultPreemption's
    PostFilter is computed (``Evaluation.preemption``: candidates and the ``chosen`` node with
    its victims, the same code kschedctl's scheduler preempts with). Filters the engine cannot
    evaluate for the pod (``unevaluated.UNEVALUATED``; volume state not given) are listed in
    ``Evaluation.not_evaluated``;
    ``fits`` then means "passes every evaluated filter".
``evaluation_key(pod)`` -> str | None
    What ``evaluate`` reads of the pod: pods with the same key get the same verdicts against one
    snapshot (``why --all`` evaluates replicas once); None for nominated pods and pods with
    ephemeral volumes (their verdicts depend on their own identity).
``FILTERS`` (``table``)
    kube-scheduler's Filter plugins in order, one row each: how ``evaluate`` explains it and
    how ``feasible_nodes`` checks it. ``FILTER_ORDER`` is the plugin names. Adding a filter is
    writing its function and adding one row (see ``table``).
``Evaluation``
    ``nodes`` (tuple of ``NodeVerdict``), ``schedulable``, ``feasible``, ``complete``,
    ``prefilter``, ``not_evaluated``, ``preemption``, ``notes``, ``histogram()``,
    ``verdict(name)``, ``to_dict()`` (JSON-ready).
``NodeVerdict(name, fits, reasons)``
    ``reasons[0].plugin`` is the first failing filter; ``scheduler_reasons`` are the reasons
    kube-scheduler records for the node; ``code`` is Unschedulable or
    UnschedulableAndUnresolvable (the latter: preemption cannot help on this node).
``Reason(plugin, message, detail, fix, code, taint)``
    ``message`` is kube-scheduler's reason string in v1.36 wording (e.g. "Insufficient cpu",
    "node(s) had untolerated taint(s)"); ``detail`` has the numbers and names ("cpu: requests
    3, free 1.5 of 4", the taint, the failing expression); ``fix`` says what to change.
``feasible_nodes(pod, snapshot, *, limit=0, start=0) -> Feasible``
    The scheduler's fast path: the names of the nodes that pass every filter (same filters,
    same order as ``evaluate``) without building explanations, optionally stopping after
    ``limit`` feasible nodes from a rotating ``start`` (``nodes_to_find(n, percentage)`` is
    kube-scheduler's ``numFeasibleNodesToFind``). ``Feasible.rejected`` when a PreFilter
    rejects the pod or it needs a filter the engine does not evaluate.
``failed_scheduling_message(evaluation, server_version=(1, 36), *, dra_enabled=None,
truncate=True) -> str | None``
    The exact FailedScheduling event text kube-scheduler of that version writes (see
    ``messages``), or None when a node fits.
``reason_text(reason, server_version)``
    One reason in a given version's wording (the taint text named the taint before 1.34.2).
Helpers for a scheduler
    ``pod_requests(pod, *, use_status=False, non_zero=False) -> dict[str, int]`` (cpu in
    millicores, bytes, counts), ``node_allocatable(node)``, ``tolerates(taint, tolerations)``,
    ``find_untolerated_taint(taints, tolerations)``, ``matches_node_affinity(pod, node)``,
    ``parse_quantity(q) -> nanos`` (exact ``resource.Quantity`` parsing), ``label_selector``.

Fidelity
--------
Reproduced from the v1.36.3 sources: filter order and status codes, every reason string,
toleration matching, label/node-selector operators incl. Gt/Lt and matchFields, host-port
conflicts with the 0.0.0.0 wildcard, the pod request formula (sidecars, init containers,
pod-level resources, overhead, in-place-resize status for running pods), pod counts, extended
resources, topology spread (minDomains, node inclusion policies, matchLabelKeys, Go's
critical-paths bookkeeping), inter-pod (anti-)affinity incl. the first-replica exception,
nominated pods, DefaultPreemption (``preemption``: eligibility, the dry run, the minimal victim
set with PodDisruptionBudgets, kube-scheduler's choice of node), and the FailedScheduling message
with the DynamicResources PostFilter text.
DynamicResources (structured parameters: ``dra``, ``draalloc`` over ``drapools``, with
``draconstraints`` and the version's features in ``drafeatures``, CEL in ``dracel``) when the
snapshot has the DeviceClasses, ResourceSlices and ResourceClaims.
Not evaluated: CSI attach limits (NodeVolumeLimits, for pods with CSI volumes),
CSIStorageCapacity for provisioning, inline disk conflicts, DynamicResources without the DRA
objects or for what ``draalloc`` does not reproduce, NodeDeclaredFeatures, the
scheduler-enforced ``addedAffinity`` and non-default profiles; such pods are flagged in
``Evaluation.not_evaluated``.
"""

from __future__ import annotations

from .engine import evaluate, evaluation_key
from .feasible import Feasible, feasible_nodes, fits_node, nodes_to_find
from .messages import failed_scheduling_message, fit_error_message, histogram, reason_text
from .nodefilters import RequiredNodeAffinity, matches_node_affinity
from .nodeinfo import NodeInfo, PodInfo, pod_key
from .plugin import Filter
from .preemption import pick_node, preempt, select_victims
from .quantity import QuantityError, parse_quantity, to_milli, to_units
from .resources import format_amount, is_scalar_resource, node_allocatable, pod_requests
from .selectors import Selector, SelectorError, label_selector
from .snapshot import NodeInfoSnapshot
from .table import FILTER_ORDER, FILTERS
from .taints import find_untolerated_taint, taint_text, tolerates, toleration_for
from .verdicts import (
    UNRESOLVABLE,
    UNSCHEDULABLE,
    Evaluation,
    NodeVerdict,
    NotEvaluated,
    Preemption,
    PreemptionCandidate,
    Reason,
)

__all__ = [
    "FILTERS",
    "FILTER_ORDER",
    "UNRESOLVABLE",
    "UNSCHEDULABLE",
    "Evaluation",
    "Feasible",
    "Filter",
    "NodeInfo",
    "NodeVerdict",
    "NotEvaluated",
    "PodInfo",
    "Preemption",
    "PreemptionCandidate",
    "QuantityError",
    "Reason",
    "RequiredNodeAffinity",
    "Selector",
    "SelectorError",
    "NodeInfoSnapshot",
    "evaluate",
    "evaluation_key",
    "failed_scheduling_message",
    "feasible_nodes",
    "find_untolerated_taint",
    "fits_node",
    "fit_error_message",
    "format_amount",
    "histogram",
    "is_scalar_resource",
    "label_selector",
    "matches_node_affinity",
    "node_allocatable",
    "nodes_to_find",
    "parse_quantity",
    "pick_node",
    "pod_key",
    "pod_requests",
    "preempt",
    "reason_text",
    "select_victims",
    "taint_text",
    "to_milli",
    "to_units",
    "toleration_for",
    "tolerates",
]
