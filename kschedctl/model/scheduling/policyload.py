"""Reading fallback policies (:mod:`.policy` says what one is): a policy file, a pod's
``kschedctl.io/fallback-policy`` annotation, or parsed YAML, checked into a
:class:`~.policy.FallbackPolicy`; a :class:`~kschedctl.base.errors.PolicyError` lists every
problem at once, each naming its field.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

from kschedctl.base.errors import (
    NotFoundError,
    PolicyError,
    Problem,
    SpecError,
    missing_file,
    printable,
    quote,
)
from kschedctl.base.userfile import read_user_file
from kschedctl.model.config.schema import YamlError, check_fields, check_list, join, parse_yaml
from kschedctl.model.filters.selectors import node_selector_term
from kschedctl.model.kubetypes import Toleration

from .policy import (
    API_VERSION,
    KIND,
    POD_POLICY_ANNOTATION,
    POLICY_FIELDS,
    RELAXABLE,
    STEP_FIELDS,
    FallbackPolicy,
    FallbackStep,
)

__all__ = ["load_policy", "parse_policy", "pod_policy", "policy_from_text"]

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
_STEP_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
_LABEL_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9]$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$")
_EFFECTS = ("", "NoSchedule", "PreferNoSchedule", "NoExecute")


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


def _check_toleration(raw: Any, path: str, out: list[Problem]) -> Toleration | None:
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
    # Checked above: only the four string fields of a Toleration.
    return cast(Toleration, dict(t)) if len(out) == before else None


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
            hint='see docs/commands/own-scheduler.md, "Fallback policy", for the policy format',
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
        raise missing_file(f"{printable(str(path))}: cannot read the policy: no such file") from err
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
