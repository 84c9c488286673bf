"""`kschedctl list`: every scheduler the cluster runs, or that pods ask for."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kschedctl.k8s.client import Cluster
from kschedctl.k8s.inventory import snapshot
from kschedctl.observe.schedulers import Scheduler, discover


@dataclass
class SchedulerList:
    schedulers: list[Scheduler]

    @property
    def unserved(self) -> list[Scheduler]:
        """Names pods ask for that nothing serves: those pods stay Pending with no events."""
        return [s for s in self.schedulers if not s.served and s.pending]

    def to_dict(self) -> dict[str, Any]:
        """``list -o json|yaml`` (its keys are a contract)."""
        return {"schedulers": [s.to_dict() for s in self.schedulers]}


def scheduler_list(cluster: Cluster) -> SchedulerList:
    return SchedulerList(discover(snapshot(cluster)))
