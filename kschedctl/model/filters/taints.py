"""Taints and tolerations (``Toleration.ToleratesTaint``, k8s.io/api v0.36)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from kschedctl.model.kubetypes import Taint, Toleration

from .selectors import parse_go_int

__all__ = [
    "tolerates",
    "toleration_tolerates_taint",
    "find_untolerated_taint",
    "taint_text",
    "toleration_for",
    "DO_NOT_SCHEDULE_EFFECTS",
    "UNSCHEDULABLE_TAINT",
]

DO_NOT_SCHEDULE_EFFECTS = ("NoSchedule", "NoExecute")
UNSCHEDULABLE_TAINT: Taint = {
    "key": "node.kubernetes.io/unschedulable",
    "effect": "NoSchedule",
}


def toleration_tolerates_taint(
    toleration: Toleration,
    taint: Taint,
    *,
    comparison_operators: bool = False,
) -> bool:
    """One toleration against one taint.

    An empty effect matches every effect; an empty key (only valid with Exists) matches every
    key; operator "" or Equal compares values, Exists ignores them. Lt/Gt (alpha gate
    ``TaintTolerationComparisonOperators``, off by default in 1.35 and 1.36) never match unless
    ``comparison_operators`` is set.
    """
    t_effect = toleration.get("effect") or ""
    if t_effect and t_effect != (taint.get("effect") or ""):
        return False
    t_key = toleration.get("key") or ""
    if t_key and t_key != (taint.get("key") or ""):
        return False
    op = toleration.get("operator") or ""
    if op in ("", "Equal"):
        return (toleration.get("value") or "") == (taint.get("value") or "")
    if op == "Exists":
        return True
    if op in ("Lt", "Gt") and comparison_operators:
        want = parse_go_int(toleration.get("value") or "")
        have = parse_go_int(taint.get("value") or "")
        if want is None or have is None:
            return False
        return have < want if op == "Lt" else have > want
    return False


def tolerates(
    taint: Taint,
    tolerations: Iterable[Toleration] | None,
    *,
    comparison_operators: bool = False,
) -> bool:
    """True when any toleration tolerates the taint (``TolerationsTolerateTaint``)."""
    for tol in tolerations or ():
        if toleration_tolerates_taint(tol, taint, comparison_operators=comparison_operators):
            return True
    return False


def find_untolerated_taint(
    taints: Sequence[Taint] | None,
    tolerations: Sequence[Toleration] | None,
    *,
    effects: Sequence[str] = DO_NOT_SCHEDULE_EFFECTS,
    comparison_operators: bool = False,
) -> Taint | None:
    """The first taint (in node order) with one of ``effects`` that no toleration covers."""
    for taint in taints or ():
        if (taint.get("effect") or "") not in effects:
            continue
        if not tolerates(taint, tolerations, comparison_operators=comparison_operators):
            return taint
    return None


def taint_text(taint: Taint | Toleration) -> str:
    """``key=value:Effect`` (kubectl's notation) of a taint, or of the taint a toleration
    names."""
    key = taint.get("key") or ""
    value = taint.get("value") or ""
    effect = taint.get("effect") or ""
    return f"{key}={value}:{effect}" if value else f"{key}:{effect}"


def toleration_for(taint: Taint) -> str:
    """The toleration that would tolerate ``taint``, in flow-YAML form."""
    key = taint.get("key") or ""
    value = taint.get("value") or ""
    effect = taint.get("effect") or ""
    if value:
        return f"{{key: {key}, operator: Equal, value: {value}, effect: {effect}}}"
    return f"{{key: {key}, operator: Exists, effect: {effect}}}"
