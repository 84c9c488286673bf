"""The shapes of plain dicts that cross module boundaries (JSON contracts among them).

Typed dicts, not classes: they are what ``to_dict()`` hands to ``-o json|yaml`` and to other
layers, and a type checker holds every producer and consumer to the same keys.
"""

from __future__ import annotations

from typing import TypedDict


class LeaseEntry(TypedDict):
    """The leader Lease of a scheduler, as ``list``, ``status`` and ``why`` show it."""

    namespace: str
    name: str
    holder: str | None
    renewAgeSeconds: float | None  # seconds since renewTime, one decimal
    durationSeconds: int | None


class ClaimEntry(TypedDict):
    """Something else that claims a scheduler's name, and in which namespace."""

    namespace: str | None
    instance: str | None
    form: str
    verdict: str  # impostor: not it · candidate: one of a conflict
    reason: str | None


class SchedulerEntry(TypedDict):
    """One scheduler name as the cluster serves it: ``list``, ``status`` and ``why`` share it.

    The keys (and their order) are a tested JSON contract.
    """

    name: str
    form: str  # deployment | pod | static-pod | service | process | unknown | none
    managed: bool
    namespace: str | None
    instance: str | None  # the object (or kschedctl name) that serves it
    desired: int | None
    ready: int | None
    leader: str | None
    pending: int
    served: bool
    pods: list[str]
    sources: list[str]
    healthy: bool
    # Why its pods' scheduler container does not run (CrashLoopBackOff, ImagePullBackOff,
    # CreateContainerConfigError, FailedMount, …), None while they run.
    problem: str | None
    lease: LeaseEntry | None
    # How it is known to be the scheduler of that name (kube-system, control-plane, lease,
    # kschedctl, unverified), None when nothing known to be it serves the name.
    identity: str | None
    # Others claiming the name: impostors, or (form "conflict") the candidates none of which
    # is known to be it.
    claims: list[ClaimEntry]
    # The kschedctl routing that sends it new pods, in short (``ns:team=ml``), None: none.
    routing: str | None


class UnknownScheduler(TypedDict):
    """``why``'s scheduler entry when discovery could not be read: the name, served unknown."""

    name: str
    served: None
