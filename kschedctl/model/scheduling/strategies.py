"""``STRATEGIES``: the scoring strategies of kschedctl's scheduler, name → resource scorer.

A strategy decides the NodeResourcesFit part of the score (see :mod:`.scoring`): how full a
node may be after placing the pod, as 0..100 per resource (cpu and memory, averaged). Every
list of strategy names derives from this table: ``kschedctl scheduler run --strategy``
(choices and help), ``spec.builtin.strategy`` validation and the scoring functions, which
refuse a name that is not here.

This module imports nothing from kschedctl, so the CLI can build its choices from it without
loading the filters at start-up.

How to add a strategy
---------------------
Write the per-resource score ``(requested, allocatable) -> 0..MAX_SCORE`` (integer arithmetic,
like kube-scheduler's ``noderesources`` scorers) and add ONE row to ``STRATEGIES``: its name
and the one-line summary ``--help`` shows.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

__all__ = [
    "BINPACK",
    "DEFAULT_STRATEGY",
    "MAX_SCORE",
    "SPREAD",
    "STRATEGIES",
    "Scorer",
    "least_allocated",
    "most_allocated",
    "scorer_for",
]

MAX_SCORE = 100  # framework.MaxNodeScore


def least_allocated(requested: int, allocatable: int) -> int:
    """``leastRequestedScore`` (pkg/scheduler/framework/plugins/noderesources/
    least_allocated.go, v1.36): the free share after placing the pod."""
    if allocatable <= 0:
        return 0
    if requested > allocatable:
        return 0
    return (allocatable - requested) * MAX_SCORE // allocatable


def most_allocated(requested: int, allocatable: int) -> int:
    """``mostRequestedScore`` (pkg/scheduler/framework/plugins/noderesources/
    most_allocated.go, v1.36): the used share after placing the pod, capped at 100."""
    if allocatable <= 0:
        return 0
    return min(requested, allocatable) * MAX_SCORE // allocatable


@dataclass(frozen=True)
class Scorer:
    """One row of ``STRATEGIES``: the per-resource score and its one-line summary."""

    fraction: Callable[[int, int], int]  # (requested after placing, allocatable) -> 0..100
    summary: str  # for --help: "<name>: <summary>"


SPREAD, BINPACK = "spread", "binpack"

STRATEGIES: Mapping[str, Scorer] = MappingProxyType(
    {
        SPREAD: Scorer(least_allocated, "least allocated first"),
        BINPACK: Scorer(most_allocated, "most allocated first"),
    }
)
DEFAULT_STRATEGY = SPREAD


def scorer_for(strategy: str) -> Scorer:
    """The row of ``strategy``; a ValueError naming the known ones for any other name."""
    try:
        return STRATEGIES[strategy]
    except KeyError:
        raise ValueError(
            f"unknown scoring strategy {strategy!r}: known strategies are {', '.join(STRATEGIES)}"
        ) from None
