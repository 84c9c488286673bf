"""`kschedctl list`: every scheduler the cluster runs, or that pods ask for."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kschedctl.base.errors import ForbiddenError, UsageError
from kschedctl.k8s.inventory import snapshot
from kschedctl.kubeclient.client import Cluster
from kschedctl.observe.discovery import discover
from kschedctl.observe.schedulers import Scheduler
from kschedctl.ops.routing import live_routes
from kschedctl.printers.formats import as_item, as_list

if TYPE_CHECKING:
    from kschedctl.model.filters.selectors import FieldRequirement, Selector


@dataclass
class SchedulerList:
    schedulers: list[Scheduler]

    @property
    def unserved(self) -> list[Scheduler]:
        """Names pods ask for that nothing serves: those pods stay Pending with no events."""
        return [s for s in self.schedulers if not s.served and s.pending]

    def to_dict(self) -> dict[str, Any]:
        """``list -o json|yaml``: a kubectl ``List`` of ``Scheduler`` items (a contract)."""
        return as_list([scheduler_item(s) for s in self.schedulers])


def scheduler_item(s: Scheduler) -> dict[str, Any]:
    """One scheduler as ``list -o json`` shows it: ``kind: Scheduler``, ``metadata`` (name,
    namespace, the labels of the object serving it), then the keys ``status -o json`` shows
    under ``scheduler``."""
    return as_item("Scheduler", s.name, dict(s.to_dict()), namespace=s.namespace, labels=s.labels)


def scheduler_fields(s: Scheduler) -> dict[str, str]:
    """What ``list --field-selector`` matches: metadata.name, metadata.namespace and every
    scalar key of the item (form, managed, healthy, leader, …), as strings."""
    fields = {"metadata.name": s.name, "metadata.namespace": s.namespace or ""}
    for key, value in s.to_dict().items():
        if value is None:
            fields[key] = ""
        elif isinstance(value, bool):
            fields[key] = "true" if value else "false"
        elif isinstance(value, (str, int)):
            fields[key] = str(value)
    return fields


def select_schedulers(
    schedulers: list[Scheduler],
    labels: Selector | None = None,
    fields: Sequence[FieldRequirement] = (),
) -> list[Scheduler]:
    """The schedulers ``-l`` and ``--field-selector`` select (computed here, not by a server:
    a scheduler is assembled from several objects). An unknown field is a usage error."""
    if fields:
        known = scheduler_fields(Scheduler(name="", form=""))
        unknown = [r.field for r in fields if r.field not in known]
        if unknown:
            raise UsageError(
                f"field label not supported: {unknown[0]}",
                hint=f"list selects on {', '.join(sorted(known))}",
            )
    return [
        s
        for s in schedulers
        if (labels is None or labels.matches(s.labels))
        and all(r.matches(scheduler_fields(s)) for r in fields)
    ]


def scheduler_list(
    cluster: Cluster,
    labels: Selector | None = None,
    fields: Sequence[FieldRequirement] = (),
    namespace: str | None = None,
) -> SchedulerList:
    """Every scheduler, or those in ``namespace`` (-n: the NAMESPACE column; a scheduler in
    none, a process or a name nothing serves, is in no namespace)."""
    found = select_schedulers(with_routing(cluster, discover(snapshot(cluster))), labels, fields)
    if namespace is not None:
        found = [s for s in found if s.namespace == namespace]
    return SchedulerList(found)


def with_routing(cluster: Cluster, schedulers: list[Scheduler]) -> list[Scheduler]:
    """``schedulers``, each with the rule of the kschedctl routing that sends it pods."""
    try:
        routes = live_routes(cluster)
    except ForbiddenError:  # one who may list schedulers need not read admission policies
        routes = []
    rules = {route.scheduler: route.rule for route in routes}
    for s in schedulers:
        s.routing = rules.get(s.name)
    return schedulers
