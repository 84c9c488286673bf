"""Fallback policies: what kschedctl's scheduler may relax when no node passes the normal rules.

A policy is an ordered list of steps. The scheduler tries them one at a time, in order, and
only when the pod fits no node under its own rules. Each step is applied to the pod as it was
written (steps do not accumulate: list several relaxations in one step to combine them), and
the same filters run again on the relaxed copy. Whatever a step does not name stays a hard
rule. Some rules have no step at all, because the kubelet would not catch a violation or the
node cannot run the pod: resources, host ports, cordoned nodes, node readiness.

File form (``kschedctl scheduler run --policy FILE``)::

    apiVersion: kschedctl.io/v1alpha1
    kind: FallbackPolicy
    strictPreferences: false     # true: preferred node affinity and PreferNoSchedule taints
                                 # are hard until a step says dropPreferred
    fallbacks:
    - name: spare-pool
      nodePool: {pool: spare}                    # also allow nodes with these labels
      tolerate:                                  # and ignore these taints
      - {key: pool, operator: Equal, value: spare, effect: NoSchedule}
    - name: any-zone
      nodeSelector: {disktype: ssd}              # replaces nodeSelector + required affinity
    - name: bunch-up
      relax: [topologySpread]                    # DoNotSchedule spread becomes ScheduleAnyway

Per pod, the annotation ``kschedctl.io/fallback-policy`` holds the same document (apiVersion
and kind optional; YAML or JSON) and replaces the scheduler's policy for that pod. It grants
nothing the pod's author could not write into the pod spec directly.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kschedctl.model.filters.taints import taint_text
from kschedctl.model.kubetypes import Pod, PodSpec, Toleration

__all__ = [
    "API_VERSION",
    "KIND",
    "POD_POLICY_ANNOTATION",
    "STEP_ANNOTATION",
    "RELAXABLE",
    "FallbackStep",
    "FallbackPolicy",
    "POLICY_FIELDS",
    "STEP_FIELDS",
    "strict_pod",
]

API_VERSION = "kschedctl.io/v1alpha1"
KIND = "FallbackPolicy"
POD_POLICY_ANNOTATION = "kschedctl.io/fallback-policy"
STEP_ANNOTATION = "kschedctl.io/fallback-step"  # written on the pod a step placed

TOPOLOGY_SPREAD, POD_AFFINITY, POD_ANTI_AFFINITY = (
    "topologySpread",
    "podAffinity",
    "podAntiAffinity",
)
RELAXABLE = (TOPOLOGY_SPREAD, POD_AFFINITY, POD_ANTI_AFFINITY)

# The fields of a step and of a policy document and their types (kschedctl.render.schemas
# derives the JSON Schema from these).
STEP_FIELDS: dict[str, Any] = {
    "name": str,
    "nodeSelector": dict,
    "nodeSelectorTerms": list,
    "nodePool": dict,
    "tolerate": list,
    "dropPreferred": bool,
    "relax": list,
}
POLICY_FIELDS: dict[str, Any] = {
    "apiVersion": str,
    "kind": str,
    "strictPreferences": bool,
    "fallbacks": list,
}


@dataclass(frozen=True)
class FallbackStep:
    """One fallback: the relaxations it applies to the pod (see the module docstring)."""

    name: str
    node_selector: Mapping[str, str] | None = None
    node_selector_terms: tuple[Mapping[str, Any], ...] | None = None
    node_pool: Mapping[str, str] | None = None
    tolerate: tuple[Toleration, ...] = ()
    drop_preferred: bool = False
    relax: tuple[str, ...] = ()

    def apply(self, pod: Pod) -> Pod:
        """A copy of ``pod`` with this step's relaxations (the pod itself is not changed)."""
        spec: PodSpec = {**(pod.get("spec") or {})}
        spec = copy.deepcopy(spec)
        relaxed: Pod = {**pod, "spec": spec}
        affinity = spec.get("affinity") or {}
        if self.node_selector is not None or self.node_selector_terms is not None:
            spec.pop("nodeSelector", None)
            node_aff = dict(affinity.get("nodeAffinity") or {})
            node_aff.pop("requiredDuringSchedulingIgnoredDuringExecution", None)
            if self.node_selector is not None:
                spec["nodeSelector"] = dict(self.node_selector)
            else:
                node_aff["requiredDuringSchedulingIgnoredDuringExecution"] = {
                    "nodeSelectorTerms": copy.deepcopy(list(self.node_selector_terms or ()))
                }
            affinity = {**affinity, "nodeAffinity": node_aff}
            spec["affinity"] = affinity
        if self.node_pool is not None:
            _allow_pool(spec, self.node_pool)
        if self.tolerate:
            spec["tolerations"] = [
                *(spec.get("tolerations") or []),
                *(t.copy() for t in self.tolerate),
            ]
        if TOPOLOGY_SPREAD in self.relax:
            spec["topologySpreadConstraints"] = [
                {**c, "whenUnsatisfiable": "ScheduleAnyway"}
                for c in spec.get("topologySpreadConstraints") or []
            ]
        for kind in (POD_AFFINITY, POD_ANTI_AFFINITY):
            if kind in self.relax and (spec.get("affinity") or {}).get(kind):
                block = dict(spec["affinity"][kind])
                block.pop("requiredDuringSchedulingIgnoredDuringExecution", None)
                spec["affinity"] = {**spec["affinity"], kind: block}
        return relaxed

    def describe(self) -> str:
        """What the step relaxes, in one line (event messages, ``why``)."""
        parts = []
        if self.node_selector is not None:
            parts.append("nodeSelector " + _labels_text(self.node_selector))
        if self.node_selector_terms is not None:
            parts.append(f"node affinity replaced ({len(self.node_selector_terms)} term(s))")
        if self.node_pool is not None:
            parts.append("node pool " + _labels_text(self.node_pool))
        for t in self.tolerate:
            parts.append("tolerate " + _toleration_text(t))
        if self.drop_preferred:
            parts.append("preferred constraints dropped")
        for r in self.relax:
            parts.append(f"{r} relaxed")
        return "; ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name}
        if self.node_selector is not None:
            out["nodeSelector"] = dict(self.node_selector)
        if self.node_selector_terms is not None:
            out["nodeSelectorTerms"] = copy.deepcopy(list(self.node_selector_terms))
        if self.node_pool is not None:
            out["nodePool"] = dict(self.node_pool)
        if self.tolerate:
            out["tolerate"] = [dict(t) for t in self.tolerate]
        if self.drop_preferred:
            out["dropPreferred"] = True
        if self.relax:
            out["relax"] = list(self.relax)
        return out


@dataclass(frozen=True)
class FallbackPolicy:
    """The ordered steps, and whether preferences are hard until a step drops them."""

    steps: tuple[FallbackStep, ...] = ()
    strict_preferences: bool = False
    source: str = field(default="", compare=False)  # where it came from, for error messages
    from_pod: bool = field(default=False, compare=False)  # the pod's own annotation

    @property
    def origin(self) -> str:
        """Where the steps come from, as events say it (no file paths: they differ by host)."""
        return "the pod's annotation" if self.from_pod else "the scheduler's policy"

    def to_dict(self) -> dict[str, Any]:
        return {
            "apiVersion": API_VERSION,
            "kind": KIND,
            "strictPreferences": self.strict_preferences,
            "fallbacks": [s.to_dict() for s in self.steps],
        }

    def to_json(self) -> str:
        """Compact, stable JSON (published on the scheduler's Lease for ``why``)."""
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))


EMPTY = FallbackPolicy(source="no policy")


def _labels_text(labels: Mapping[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in labels.items())


def _toleration_text(t: Toleration) -> str:
    if (t.get("operator") or "Equal") == "Exists":
        text = str(t.get("key") or "")
        return f"{text}:{t['effect']}" if t.get("effect") else f"{text} (any value, any effect)"
    return taint_text(t) if t.get("effect") else f"{taint_text(t)} (any effect)"


def _as_requirements(labels: Mapping[str, str]) -> list[dict[str, Any]]:
    return [{"key": k, "operator": "In", "values": [v]} for k, v in labels.items()]


def _allow_pool(spec: PodSpec, pool: Mapping[str, str]) -> None:
    """Rewrite the pod's node constraint C as ``C OR pool`` (as required affinity terms).

    ``nodeSelector`` S and terms T1..Tn mean ``S AND (T1 OR … OR Tn)``, which is
    ``(T1+S) OR … OR (Tn+S)``; the pool is one more term. A pod with no node constraint may go
    anywhere already, so there is nothing to add.
    """
    selector = spec.get("nodeSelector") or {}
    affinity = dict(spec.get("affinity") or {})
    node_aff = dict(affinity.get("nodeAffinity") or {})
    required = node_aff.get("requiredDuringSchedulingIgnoredDuringExecution")
    if not selector and required is None:
        return
    extra = _as_requirements(selector)
    terms: list[dict[str, Any]] = []
    if required is None:
        terms.append({"matchExpressions": extra})
    else:
        for term in required.get("nodeSelectorTerms") or []:
            if not term or not (term.get("matchExpressions") or term.get("matchFields")):
                continue  # an empty term matches nothing, before and after
            merged = dict(term)
            merged["matchExpressions"] = [*(term.get("matchExpressions") or []), *extra]
            terms.append(merged)
    terms.append({"matchExpressions": _as_requirements(pool)})
    spec.pop("nodeSelector", None)
    node_aff["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": terms}
    affinity["nodeAffinity"] = node_aff
    spec["affinity"] = affinity


def strict_pod(pod: Pod) -> Pod:
    """``pod`` with every preferred node-affinity term (weight > 0) made required.

    ``(T1 OR … OR Tn) AND P1 AND … AND Pk`` becomes ``(T1+P1+…+Pk) OR …``. PreferNoSchedule
    taints cannot be expressed on the pod; the scheduler excludes such nodes itself.
    """
    spec: PodSpec = {**(pod.get("spec") or {})}
    affinity = dict(spec.get("affinity") or {})
    node_aff = dict(affinity.get("nodeAffinity") or {})
    preferred = [
        p.get("preference") or {}
        for p in node_aff.get("preferredDuringSchedulingIgnoredDuringExecution") or []
        if (p.get("weight") or 0) > 0
    ]
    preferred = [p for p in preferred if p.get("matchExpressions") or p.get("matchFields")]
    if not preferred:
        return pod.copy()
    exprs = [e for p in preferred for e in p.get("matchExpressions") or []]
    fields = [f for p in preferred for f in p.get("matchFields") or []]
    required = node_aff.get("requiredDuringSchedulingIgnoredDuringExecution")
    base = (required or {}).get("nodeSelectorTerms") if required is not None else [{}]
    terms = []
    for term in base or []:
        if required is not None and not (term.get("matchExpressions") or term.get("matchFields")):
            continue
        merged: dict[str, Any] = {}
        all_exprs = [*(term.get("matchExpressions") or []), *exprs]
        all_fields = [*(term.get("matchFields") or []), *fields]
        if all_exprs:
            merged["matchExpressions"] = all_exprs
        if all_fields:
            merged["matchFields"] = all_fields
        terms.append(merged)
    node_aff["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": terms}
    affinity["nodeAffinity"] = node_aff
    spec["affinity"] = affinity
    return {**pod, "spec": spec}
