"""How much one input may stand for, checked before anything is built from it.

Pure. A count read from a user file (a Deployment's ``replicas``, a Job's ``parallelism``, a
nodes file's ``count``, the lists of a snapshot) multiplies into objects held in memory and
created in a lab. Each reader adds its counts to one :class:`Budget` *before* it expands
them, so ``replicas: 1000000000`` is refused with the field, the value and the limit named
(exit 3), never after gigabytes were allocated.
"""

from __future__ import annotations

from dataclasses import dataclass

from kschedctl.base.errors import SpecError

# Kubernetes' own scalability thresholds bound what a copy of a real cluster holds: 5,000 nodes
# (also the most a lab brings up in reasonable time) and, below its 150,000 pods, the most a
# lab seeds and schedules within a run's timeout.
MAX_NODES = 5_000
MAX_PODS = 100_000


@dataclass
class Budget:
    """``limit`` objects of one kind (``what``: "pods", "nodes") shared by several inputs."""

    what: str
    limit: int
    used: int = 0
    already: str = ""  # what ``used`` started as, for the message ("the snapshot's 900 pods")

    def take(self, count: int, path: str, source: str = "", hint: str | None = None) -> None:
        """Count ``count`` more before building them; SpecError (exit 3) naming ``path``."""
        if count <= self.limit - self.used:
            self.used += count
            return
        plus = f" on top of {self.already}" if self.already else ""
        raise SpecError(
            path,
            f"{count:,} {self.what}{plus} is more than the limit of {self.limit:,} {self.what}",
            hint=hint or f"kschedctl handles at most {self.limit:,} {self.what} in one run",
            source=source,
        )


def pod_budget(used: int = 0, already: str = "") -> Budget:
    return Budget("pods", MAX_PODS, used, already)


def node_budget(used: int = 0, already: str = "") -> Budget:
    return Budget("nodes", MAX_NODES, used, already)
