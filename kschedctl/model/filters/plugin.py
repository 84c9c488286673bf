"""What one row of ``FILTERS`` is: ``Filter`` (how a Filter plugin is explained and checked),
``PodState`` (its PreFilter state over all pods) and ``Cycle`` (what a row reads of the pod's
scheduling cycle; ``CycleState`` in ``cycle.py`` is the one implementation).

Both the table (``table.py``) and the cycle (``cycle.py``) import these; neither imports the
other's types, so the table can be read without the cycle and the cycle runs any table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from .nodefilters import Incoming, NodeCheck
from .nodeinfo import NodeInfo, PodInfo
from .snapshot import NodeInfoSnapshot
from .verdicts import Reason

__all__ = ["Check", "Cycle", "Explain", "Filter", "PodState", "PreFilter"]


class PodState(Protocol):
    """A filter's PreFilter state over all pods (``SpreadState``, ``InterPodState``)."""

    def update_with_pod(self, pod: PodInfo, node: NodeInfo, delta: int) -> None: ...

    def filter(self, node: NodeInfo, *, all_reasons: bool = False) -> list[Reason]: ...


class Cycle(Protocol):
    """What a row reads of one pod's scheduling cycle (``cycle.CycleState``)."""

    inc: Incoming
    snapshot: NodeInfoSnapshot
    states: dict[str, PodState]


Explain = Callable[[Cycle, NodeInfo, bool], list[Reason]]
Check = Callable[[Cycle], NodeCheck]
PreFilter = Callable[[Incoming, NodeInfoSnapshot, "list[str] | None"], "PodState | None"]


@dataclass(frozen=True)
class Filter:
    """One row of ``FILTERS`` (see ``table``'s docstring)."""

    plugin: str
    explain: Explain | None = None  # None: not modelled
    check: Check | None = None
    skip: Callable[[Incoming], bool] | None = None
    prefilter: PreFilter | None = None
    first_reason_only: bool = False

    def node_check(self, cycle: Cycle) -> NodeCheck:
        """The per-node boolean for this pod (``check``, else "``explain`` found nothing")."""
        if self.check is not None:
            return self.check(cycle)
        explain = self.explain
        assert explain is not None, f"{self.plugin} is not modelled"
        return lambda node: not explain(cycle, node, False)
