"""``ShapeMemo``: one pod shape's answers on every node, kept from one decision to the next.

A burst of one workload's replicas asks every node the same questions again and again, and
between two replicas only a few nodes change (the one the previous replica was assumed on,
those whose pods the watch confirmed). A ``ShapeMemo`` holds, aligned with the snapshot's
node order, whether each node passes the filters and its raw scores; the snapshot's change
log (``NodeInfoSnapshot.changes``, a node's name at each of its new generations) says which
nodes to ask again. ``feasible_nodes`` and the scheduler's scoring use it only when the
answers are the node's alone: filters without PreFilter state, no nominated pods, no
plugins, no spreading or inter-pod scoring — then every decision is the one a full
evaluation gives. What a node's change does not cover (the node set; the DRA-backed
resource names) moves ``node_epoch``, and a memo of an older epoch is not used.

The caller keys memos by everything of the pod a filter or score reads (the scheduler's
``NodeMemo``).
"""

from __future__ import annotations

from .nodeinfo import NodeInfo
from .snapshot import NodeInfoSnapshot

__all__ = ["ShapeMemo"]


class ShapeMemo:
    def __init__(self, snapshot: NodeInfoSnapshot) -> None:
        self.epoch = snapshot.node_epoch
        self.cursor = len(snapshot.changes)  # how much of the change log has been read
        self.infos: list[NodeInfo] = snapshot.nodes
        self.names = [node.name for node in self.infos]
        self.index = {name: i for i, name in enumerate(self.names)}
        # Whether each node passes every filter (None: not asked yet for this shape), and
        # the nodes whose verdict is out of date.
        self.fits: list[bool] | None = None
        self.refilter: set[int] = set()
        # The raw scores, a column per score plugin (the scorer's to fill), and whether each
        # node's are current.
        self.columns: list[list[int]] = []
        self.nonzero: list[int] = []  # per column, how many of its values are not 0
        self.scored = [False] * len(self.names)

    def current(self, snapshot: NodeInfoSnapshot) -> bool:
        return self.epoch == snapshot.node_epoch

    def sync(self, snapshot: NodeInfoSnapshot) -> None:
        """Read the change log since the last call: the nodes named there lose their raw
        scores and are filtered again (``refilter``) before their verdict is read."""
        log = snapshot.changes
        if self.cursor == len(log):
            return
        index, scored = self.index, self.scored
        for name in log[self.cursor :]:
            i = index.get(name)
            if i is not None:
                scored[i] = False
                self.refilter.add(i)
        self.cursor = len(log)
