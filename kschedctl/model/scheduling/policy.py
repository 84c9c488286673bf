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
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kschedctl.base.errors import NotFoundError, PolicyError, Problem, SpecError, quote
from kschedctl.base.userfile import read_user_file
from kschedctl.model.config.schema import YamlError, check_fields, check_list, join, parse_yaml
from kschedctl.model.filters.selectors import node_selector_term
from kschedctl.model.filters.taints import taint_text

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
    "parse_policy",
    "load_policy",
    "policy_from_text",
    "pod_policy",
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

# Taints a step may not tolerate: the node is cordoned or cannot run pods, and the kubelet
# does not check NoSchedule taints, so the pod would land there for real.
NEVER_TOLERATED = (
    "node.kubernetes.io/unschedulable",
    "node.kubernetes.io/not-ready",
    "node.kubernetes.io/unreachable",
)
# Field names people try for rules no step can relax, and why.
_NEVER_RELAXED = {
    "resources": "resource requests are never relaxed: the kubelet would reject the pod",
    "requests": "resource requests are never relaxed: the kubelet would reject the pod",
    "hostPorts": "host ports are never relaxed: the kubelet would reject the pod",
    "ports": "host ports are never relaxed: the kubelet would reject the pod",
    "unschedulable": "cordoned nodes are never a fallback target",
    "cordoned": "cordoned nodes are never a fallback target",
}
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
_STEP_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
_LABEL_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9]$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$")
_EFFECTS = ("", "NoSchedule", "PreferNoSchedule", "NoExecute")


@dataclass(frozen=True)
class FallbackStep:
    """One fallback: the relaxations it applies to the pod (see the module docstring)."""

    name: str
    node_selector: Mapping[str, str] | None = None
    node_selector_terms: tuple[Mapping[str, Any], ...] | None = None
    node_pool: Mapping[str, str] | None = None
    tolerate: tuple[Mapping[str, Any], ...] = ()
    drop_preferred: bool = False
    relax: tuple[str, ...] = ()

    def apply(self, pod: Mapping[str, Any]) -> dict[str, Any]:
        """A copy of ``pod`` with this step's relaxations (the pod itself is not changed)."""
        relaxed = dict(pod)
        spec = copy.deepcopy(dict(pod.get("spec") or {}))
        relaxed["spec"] = spec
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
            spec["tolerations"] = [*(spec.get("tolerations") or []), *map(dict, self.tolerate)]
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


def _toleration_text(t: Mapping[str, Any]) -> str:
    if (t.get("operator") or "Equal") == "Exists":
        text = str(t.get("key") or "")
        return f"{text}:{t['effect']}" if t.get("effect") else f"{text} (any value, any effect)"
    return taint_text(t) if t.get("effect") else f"{taint_text(t)} (any effect)"


def _as_requirements(labels: Mapping[str, str]) -> list[dict[str, Any]]:
    return [{"key": k, "operator": "In", "values": [v]} for k, v in labels.items()]


def _allow_pool(spec: dict[str, Any], pool: Mapping[str, str]) -> None:
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


def strict_pod(pod: Mapping[str, Any]) -> dict[str, Any]:
    """``pod`` with every preferred node-affinity term (weight > 0) made required.

    ``(T1 OR … OR Tn) AND P1 AND … AND Pk`` becomes ``(T1+P1+…+Pk) OR …``. PreferNoSchedule
    taints cannot be expressed on the pod; the scheduler excludes such nodes itself.
    """
    spec = dict(pod.get("spec") or {})
    affinity = dict(spec.get("affinity") or {})
    node_aff = dict(affinity.get("nodeAffinity") or {})
    preferred = [
        p.get("preference") or {}
        for p in node_aff.get("preferredDuringSchedulingIgnoredDuringExecution") or []
        if (p.get("weight") or 0) > 0
    ]
    preferred = [p for p in preferred if p.get("matchExpressions") or p.get("matchFields")]
    if not preferred:
        return dict(pod)
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


# -- parsing --------------------------------------------------------------------------------


def _check_labels(raw: Mapping[str, Any], path: str, out: list[Problem]) -> dict[str, str]:
    labels: dict[str, str] = {}
    if not raw:
        out.append(Problem(path, "must not be empty"))
    for key, value in raw.items():
        where = join(path, str(key))
        if not isinstance(value, str):
            out.append(Problem(where, f"must be a string, not {quote(value)} (quote it in YAML)"))
            continue
        problem = _label_key_problem(str(key))
        if problem:
            out.append(Problem(where, f"label key {problem}"))
        elif not _LABEL_VALUE.match(value) or len(value) > 63:
            out.append(Problem(where, f"{quote(value)} is not a valid label value"))
        labels[str(key)] = value
    return labels


def _label_key_problem(key: str) -> str | None:
    prefix, _, name = key.rpartition("/")
    if prefix and (len(prefix) > 253 or not _DNS_SUBDOMAIN.match(prefix)):
        return f"{quote(key)}: the prefix must be a DNS subdomain"
    if len(name) > 63 or not _LABEL_NAME.match(name):
        return f"{quote(key)} is not a valid label name"
    return None


def _check_toleration(raw: Any, path: str, out: list[Problem]) -> dict[str, Any] | None:
    before = len(out)
    t = check_fields(raw, {"key": str, "operator": str, "value": str, "effect": str}, path, out)
    if not isinstance(raw, dict):
        return None
    key, op = t.get("key") or "", t.get("operator") or "Equal"
    if not key:
        out.append(
            Problem(
                join(path, "key"),
                "is required: a toleration without a key tolerates every taint; name the "
                "taints this step may ignore",
            )
        )
    elif key in NEVER_TOLERATED:
        out.append(
            Problem(
                join(path, "key"),
                f"{key} is never tolerated by a fallback: cordoned or not-ready nodes cannot "
                "take the pod",
            )
        )
    if op not in ("Equal", "Exists"):
        out.append(Problem(join(path, "operator"), f"{quote(op)}: must be Equal or Exists"))
    elif op == "Exists" and t.get("value"):
        out.append(Problem(join(path, "value"), "must be empty with operator Exists"))
    if (t.get("effect") or "") not in _EFFECTS:
        out.append(
            Problem(
                join(path, "effect"),
                f"{quote(t.get('effect'))}: must be NoSchedule, PreferNoSchedule or NoExecute",
            )
        )
    return dict(t) if len(out) == before else None


def _check_step(raw: Any, path: str, strict: bool, out: list[Problem]) -> FallbackStep | None:
    if not isinstance(raw, dict):
        out.append(Problem(path, f"must be a mapping, not {type(raw).__name__}"))
        return None
    before = len(out)
    for key in raw:
        if key in _NEVER_RELAXED:
            out.append(Problem(join(path, str(key)), _NEVER_RELAXED[key]))
    check_fields({k: v for k, v in raw.items() if k not in _NEVER_RELAXED}, STEP_FIELDS, path, out)
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        out.append(Problem(join(path, "name"), "is required (it is recorded on the pod)"))
    elif not _STEP_NAME.match(name):
        out.append(
            Problem(
                join(path, "name"),
                f"{quote(name)} must be a DNS-1123 label (lower-case letters, digits and '-')",
            )
        )
    selector = terms = pool = None
    if isinstance(raw.get("nodeSelector"), dict):
        selector = _check_labels(raw["nodeSelector"], join(path, "nodeSelector"), out)
    if isinstance(raw.get("nodeSelectorTerms"), list):
        terms = _check_terms(raw["nodeSelectorTerms"], join(path, "nodeSelectorTerms"), out)
    if selector is not None and terms is not None:
        out.append(
            Problem(
                join(path, "nodeSelectorTerms"),
                "give nodeSelector or nodeSelectorTerms, not both (each replaces the pod's "
                "node constraint)",
            )
        )
    if isinstance(raw.get("nodePool"), dict):
        pool = _check_labels(raw["nodePool"], join(path, "nodePool"), out)
    tolerations = []
    for i, t in enumerate(check_list(raw.get("tolerate"), join(path, "tolerate"), out)):
        parsed = _check_toleration(t, join(path, f"tolerate[{i}]"), out)
        if parsed is not None:
            tolerations.append(parsed)
    drop = raw.get("dropPreferred") is True
    if drop and not strict:
        out.append(
            Problem(
                join(path, "dropPreferred"),
                "has no effect unless strictPreferences is true: preferred constraints only "
                "rank nodes, they never keep a pod off one",
            )
        )
    relax = []
    for i, r in enumerate(check_list(raw.get("relax"), join(path, "relax"), out)):
        if r not in RELAXABLE:
            out.append(
                Problem(
                    join(path, f"relax[{i}]"), f"{quote(r)}: must be one of {', '.join(RELAXABLE)}"
                )
            )
        elif r not in relax:
            relax.append(r)
    if len(out) == before and not (
        selector is not None or terms is not None or pool is not None or tolerations
    ) and not (drop or relax):  # fmt: skip
        out.append(
            Problem(
                path,
                "relaxes nothing: give nodeSelector, nodeSelectorTerms, nodePool, tolerate, "
                "dropPreferred or relax",
            )
        )
    if len(out) != before:
        return None
    return FallbackStep(
        name=str(name),
        node_selector=selector,
        node_selector_terms=tuple(terms) if terms is not None else None,
        node_pool=pool,
        tolerate=tuple(tolerations),
        drop_preferred=drop,
        relax=tuple(relax),
    )


def _check_terms(raw: list[Any], path: str, out: list[Problem]) -> list[dict[str, Any]]:
    if not raw:
        out.append(Problem(path, "must not be empty"))
    terms = []
    for i, term in enumerate(raw):
        where = join(path, f"[{i}]")
        check_fields(term, {"matchExpressions": list, "matchFields": list}, where, out)
        if not isinstance(term, dict):
            continue
        parsed = node_selector_term(i, term)
        if parsed is None:
            out.append(Problem(where, "an empty term matches no node"))
        elif parsed.error:
            out.append(Problem(where, parsed.error))
        else:
            terms.append(dict(term))
    return terms


def parse_policy(doc: Any, source: str, *, type_meta: bool = True) -> FallbackPolicy:
    """A policy from parsed YAML; PolicyError lists every problem, each naming its field.

    ``type_meta``: apiVersion and kind are required (policy files); a pod annotation may
    leave them out.
    """
    out: list[Problem] = []
    if not isinstance(doc, dict):
        raise PolicyError.from_problems(
            [Problem("", "a fallback policy must be a mapping with a fallbacks list", source)]
        )
    check_fields(doc, POLICY_FIELDS, "", out)
    if type_meta or "apiVersion" in doc or "kind" in doc:
        if doc.get("apiVersion") != API_VERSION:
            out.append(
                Problem("apiVersion", f"must be {API_VERSION}, not {quote(doc.get('apiVersion'))}")
            )
        if doc.get("kind") != KIND:
            out.append(Problem("kind", f"must be {KIND}, not {quote(doc.get('kind'))}"))
    strict = doc.get("strictPreferences") is True
    steps: list[FallbackStep] = []
    seen: set[str] = set()
    for i, raw in enumerate(check_list(doc.get("fallbacks"), "fallbacks", out)):
        step = _check_step(raw, f"fallbacks[{i}]", strict, out)
        name = raw.get("name") if isinstance(raw, dict) else None
        if isinstance(name, str) and name:
            if name in seen:
                out.append(
                    Problem(f"fallbacks[{i}].name", f"{quote(name)} is used by an earlier step")
                )
            seen.add(name)
        if step is not None:
            steps.append(step)
    if out:
        raise PolicyError.from_problems(
            [Problem(p.path, p.message, source) for p in out],
            hint='see README, "kschedctl\'s own scheduler", for the policy format',
        )
    return FallbackPolicy(tuple(steps), strict, source)


def policy_from_text(text: str, source: str, *, type_meta: bool = True) -> FallbackPolicy:
    try:
        docs = parse_yaml(text)
    except YamlError as err:
        raise PolicyError("", str(err), source=source) from err
    if len(docs) != 1:
        raise PolicyError("", f"expected one YAML document, found {len(docs)}", source=source)
    return parse_policy(docs[0], source, type_meta=type_meta)


def load_policy(path: str | Path) -> FallbackPolicy:
    """A policy file; missing or invalid files raise (the scheduler refuses to start)."""
    try:
        text = read_user_file(path)
    except SpecError as err:
        raise PolicyError("", f"cannot read the policy: {err.detail}", source=str(path)) from err
    except NotFoundError as err:
        raise PolicyError("", "cannot read the policy: no such file", source=str(path)) from err
    return policy_from_text(text, str(path))


def pod_policy(
    pod: Mapping[str, Any], default: FallbackPolicy
) -> tuple[FallbackPolicy, PolicyError | None]:
    """The policy for this pod: its annotation if it has one, else ``default``.

    An invalid annotation gives no fallbacks at all (never the scheduler's: the author meant
    something else) and the error, which the scheduler reports on the pod.
    """
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    text = annotations.get(POD_POLICY_ANNOTATION)
    if text is None:
        return default, None
    source = f"annotation {POD_POLICY_ANNOTATION}"
    try:
        parsed = policy_from_text(str(text), source, type_meta=False)
    except PolicyError as err:
        return FallbackPolicy(source=source, from_pod=True), err
    return FallbackPolicy(parsed.steps, parsed.strict_preferences, source, True), None
