"""``FILTERS``: kube-scheduler's Filter plugins in the order it runs them — the one table
``evaluate`` (``kschedctl why``) and ``feasible_nodes`` (the scheduler) derive their checks from.

The order is the default profile's (``pkg/scheduler/apis/config/v1/default_plugins.go``,
v1.36), with the DynamicResources plugin inserted before DefaultPreemption and
NodeDeclaredFeatures appended, as kube-scheduler v1.36 runs them. The default Filter plugins
not modelled are declared, with what goes unchecked, in ``unevaluated.UNEVALUATED``. Each row
names the plugin and how kschedctl evaluates it:

- ``explain(cycle, node, all_reasons)``: the reasons the plugin rejects the node with (empty:
  it passes); used by ``evaluate``;
- ``check(cycle)``: once per pod, a per-node boolean for ``feasible_nodes`` that builds no
  reason (a plain comparison where one answers); default: "``explain`` found nothing";
- ``skip(inc)``: PreFilter ``Skip`` decided from the pod alone (the filter cannot fail);
- ``prefilter(inc, snapshot, notes)``: state over all pods, computed once per pod and kept
  current as nominated pods and preemption victims come and go (``CycleState.add`` and
  ``remove``); returning None skips the filter. The state is ``cycle.states[plugin]``;
- ``first_reason_only``: kube-scheduler records one reason of this plugin per node even when
  ``all_reasons`` lists several;
- rows without ``explain`` are not modelled: they only hold their place in the order, and
  ``not_evaluated`` (``cycle.py``) tells when a pod needs them.

How to add a filter
-------------------
Write its explaining function (per node, returning ``Reason`` objects: in ``nodefilters.py`` when it
needs no state over other pods, else in its own module with a PreFilter state class having
``update_with_pod`` and ``filter``), optionally a faster ``*_check``, and add ONE row to
``FILTERS`` at kube-scheduler's position. ``evaluate``, ``feasible_nodes`` and
``FILTER_ORDER`` follow; ``tests/unit/test_filters_feasible.py`` checks that both paths agree.
"""

from __future__ import annotations

from collections.abc import Callable

from .dra import pod_dra_state, unsupported_reason
from .interpod import interpod_state
from .nodefeatures import features_state
from .nodefilters import (
    Incoming,
    NodeCheck,
    node_affinity,
    node_affinity_check,
    node_name,
    node_name_check,
    node_ports,
    node_ports_check,
    node_resources_fit,
    node_resources_fit_check,
    node_unschedulable,
    node_unschedulable_check,
    taint_toleration,
    taint_toleration_check,
    tolerates_unschedulable,
)
from .nodeinfo import NodeInfo
from .plugin import Cycle, Filter, PodState, PreFilter
from .snapshot import NodeInfoSnapshot
from .spread import spread_state
from .verdicts import (
    DYNAMIC_RESOURCES,
    INTER_POD_AFFINITY,
    NODE_AFFINITY,
    NODE_DECLARED_FEATURES,
    NODE_NAME,
    NODE_PORTS,
    NODE_RESOURCES_FIT,
    NODE_UNSCHEDULABLE,
    NODE_VOLUME_LIMITS,
    POD_TOPOLOGY_SPREAD,
    TAINT_TOLERATION,
    VOLUME_BINDING,
    VOLUME_RESTRICTIONS,
    VOLUME_ZONE,
    Reason,
)
from .volumes import binding_state, rwop_state, zone_state

__all__ = ["FILTERS", "FILTER_ORDER"]


def _per_node(
    plugin: str,
    explain: Callable[[Incoming, NodeInfo], list[Reason]],
    check: Callable[[Incoming], NodeCheck],
    skip: Callable[[Incoming], bool] | None = None,
) -> Filter:
    """A row for a filter that reads the pod and the node alone (no PreFilter state)."""
    return Filter(
        plugin, lambda c, node, _all: explain(c.inc, node), lambda c: check(c.inc), skip=skip
    )


def _stateful(plugin: str, prefilter: PreFilter, *, first_reason_only: bool = False) -> Filter:
    """A row for a filter whose PreFilter state (``cycle.states[plugin]``) does the filtering."""

    def explain(cycle: Cycle, node: NodeInfo, all_reasons: bool) -> list[Reason]:
        return cycle.states[plugin].filter(node, all_reasons=all_reasons)

    def check(cycle: Cycle) -> NodeCheck:
        state_filter = cycle.states[plugin].filter
        return lambda node: not state_filter(node)

    return Filter(plugin, explain, check, prefilter=prefilter, first_reason_only=first_reason_only)


def _dra_prefilter(
    inc: Incoming, snapshot: NodeInfoSnapshot, notes: list[str] | None
) -> PodState | None:
    # Without the cluster's DRA objects the row does not run (``not_evaluated`` says so); a
    # PreFilter rejection is the engine's to report (``DraState.rejection``).
    if snapshot.dra is None:
        return None
    state = pod_dra_state(inc, snapshot.dra)
    if state is None or state.rejection is not None:
        return None
    if unsupported_reason(state, snapshot.nodes):
        return None
    return state


def _spread_prefilter(
    inc: Incoming, snapshot: NodeInfoSnapshot, notes: list[str] | None
) -> PodState | None:
    return spread_state(inc, snapshot)


FILTERS: tuple[Filter, ...] = (
    _per_node(
        NODE_UNSCHEDULABLE, node_unschedulable, node_unschedulable_check, tolerates_unschedulable
    ),
    _per_node(NODE_NAME, node_name, node_name_check, lambda inc: not inc.node_name),
    _per_node(TAINT_TOLERATION, taint_toleration, taint_toleration_check),
    _per_node(NODE_AFFINITY, node_affinity, node_affinity_check, lambda inc: inc.affinity.empty),
    _per_node(NODE_PORTS, node_ports, node_ports_check, lambda inc: not inc.ports),
    Filter(
        NODE_RESOURCES_FIT,
        lambda c, node, _all: node_resources_fit(c.inc, node, c.snapshot.dra_resources),
        lambda c: node_resources_fit_check(c.inc, c.snapshot.dra_resources),
    ),
    # VolumeRestrictions: inline disks in use on the node, then ReadWriteOncePod claims.
    _stateful(VOLUME_RESTRICTIONS, rwop_state),
    Filter(NODE_VOLUME_LIMITS),  # CSI attach limits: ``not_evaluated`` for CSI volumes
    _stateful(VOLUME_BINDING, binding_state),
    _stateful(VOLUME_ZONE, zone_state, first_reason_only=True),
    _stateful(POD_TOPOLOGY_SPREAD, _spread_prefilter),
    # InterPodAffinity stops at its first failing check.
    _stateful(INTER_POD_AFFINITY, interpod_state, first_reason_only=True),
    # DynamicResources: structured-parameters allocation per node (``dra``, ``draalloc``).
    _stateful(DYNAMIC_RESOURCES, _dra_prefilter),
    _stateful(NODE_DECLARED_FEATURES, features_state),
)

FILTER_ORDER: tuple[str, ...] = tuple(f.plugin for f in FILTERS)
