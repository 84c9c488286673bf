"""``FILTERS``: kube-scheduler's Filter plugins in the order it runs them — the one table
``evaluate`` (``kschedctl why``) and ``feasible_nodes`` (the scheduler) derive their checks from.

The order is the default profile's (``pkg/scheduler/apis/config/v1/default_plugins.go``,
v1.36), with the DynamicResources plugin inserted before DefaultPreemption and
NodeDeclaredFeatures appended, as kube-scheduler v1.36 runs them. Each row names the plugin
and how kschedctl evaluates it:

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

from .interpod import interpod_state
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
from .plugin import Check, Cycle, Explain, Filter, PodState
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


def _stateful(plugin: str) -> Explain:
    """``explain`` of a filter whose PreFilter state does the filtering."""

    def explain(cycle: Cycle, node: NodeInfo, all_reasons: bool) -> list[Reason]:
        return cycle.states[plugin].filter(node, all_reasons=all_reasons)

    return explain


def _stateful_check(plugin: str) -> Check:
    def check(cycle: Cycle) -> NodeCheck:
        state_filter = cycle.states[plugin].filter
        return lambda node: not state_filter(node)

    return check


def _spread_prefilter(
    inc: Incoming, snapshot: NodeInfoSnapshot, notes: list[str] | None
) -> PodState | None:
    return spread_state(inc, snapshot)


FILTERS: tuple[Filter, ...] = (
    Filter(
        NODE_UNSCHEDULABLE,
        lambda c, node, _all: node_unschedulable(c.inc, node),
        lambda c: node_unschedulable_check(c.inc),
        skip=tolerates_unschedulable,
    ),
    Filter(
        NODE_NAME,
        lambda c, node, _all: node_name(c.inc, node),
        lambda c: node_name_check(c.inc),
        skip=lambda inc: not inc.node_name,
    ),
    Filter(
        TAINT_TOLERATION,
        lambda c, node, _all: taint_toleration(c.inc, node),
        lambda c: taint_toleration_check(c.inc),
    ),
    Filter(
        NODE_AFFINITY,
        lambda c, node, _all: node_affinity(c.inc, node),
        lambda c: node_affinity_check(c.inc),
        skip=lambda inc: inc.affinity.empty,
    ),
    Filter(
        NODE_PORTS,
        lambda c, node, _all: node_ports(c.inc, node),
        lambda c: node_ports_check(c.inc),
        skip=lambda inc: not inc.ports,
    ),
    Filter(
        NODE_RESOURCES_FIT,
        lambda c, node, _all: node_resources_fit(c.inc, node, c.snapshot.dra_resources),
        lambda c: node_resources_fit_check(c.inc, c.snapshot.dra_resources),
    ),
    # VolumeRestrictions: the ReadWriteOncePod check (inline disk conflicts are not modelled:
    # ``not_evaluated`` names them).
    Filter(
        VOLUME_RESTRICTIONS,
        _stateful(VOLUME_RESTRICTIONS),
        _stateful_check(VOLUME_RESTRICTIONS),
        prefilter=rwop_state,
    ),
    Filter(NODE_VOLUME_LIMITS),  # CSI attach limits: ``not_evaluated`` for CSI volumes
    Filter(
        VOLUME_BINDING,
        _stateful(VOLUME_BINDING),
        _stateful_check(VOLUME_BINDING),
        prefilter=binding_state,
    ),
    Filter(
        VOLUME_ZONE,
        _stateful(VOLUME_ZONE),
        _stateful_check(VOLUME_ZONE),
        prefilter=zone_state,
        first_reason_only=True,
    ),
    Filter(
        POD_TOPOLOGY_SPREAD,
        _stateful(POD_TOPOLOGY_SPREAD),
        _stateful_check(POD_TOPOLOGY_SPREAD),
        prefilter=_spread_prefilter,
    ),
    Filter(
        INTER_POD_AFFINITY,
        _stateful(INTER_POD_AFFINITY),
        _stateful_check(INTER_POD_AFFINITY),
        prefilter=interpod_state,
        first_reason_only=True,  # it stops at its first failing check
    ),
    Filter(DYNAMIC_RESOURCES),
    Filter(NODE_DECLARED_FEATURES),
)

FILTER_ORDER: tuple[str, ...] = tuple(f.plugin for f in FILTERS)
