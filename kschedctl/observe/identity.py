"""Which of the things claiming a scheduler name ARE that scheduler (pure).

A name is a claim any namespace editor can make: a pod whose config (or lack of one) names
``default-scheduler``, or that carries kschedctl's label. Identity comes only from what such an
editor cannot write:

- kube-system (only cluster admins write there): kube-scheduler's static pods — mirror pods
  owned by their control-plane Node — the Lease ``kube-system/kube-scheduler``, and whatever
  else runs a scheduler there;
- for a scheduler kschedctl deployed, the namespace its cluster-scoped ClusterRoleBindings bind
  the scheduler's ServiceAccount in (every form with a ServiceAccount renders one): there, the
  objects labelled as its, and the pods their ReplicaSets own (ownerReferences, uids matching).

Other claims are *impostors* (they claim a name that is anchored elsewhere, or kschedctl's
label without kschedctl's record) and never stand for the scheduler; a scheduler nobody
anchors (a third party's, by hand) is *unverified*, and stands for its name only while it is
the only one claiming it. Two claims that could stand for one name are a *conflict*.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kschedctl.base.errors import KschedError, NotFoundError
from kschedctl.model.config.versions import DEFAULT_SCHEDULER_NAME
from kschedctl.observe.schedulers import (
    FORM_ANNOTATION,
    LEASE_ANNOTATION,
    MIRROR_ANNOTATION,
    Scheduler,
)

KUBE_SYSTEM = "kube-system"
CONTROL_PLANE_ROLES = ("node-role.kubernetes.io/control-plane", "node-role.kubernetes.io/master")
HOST_FORMS = ("service", "static-pod")

# How a claim is known to be its scheduler (Scheduler.identity), or why it is not.
CONTROL_PLANE = "control-plane"  # a static pod of a control-plane node (its mirror pod)
SYSTEM = "kube-system"  # runs in kube-system
LEASE = "lease"  # the Lease kube-system/kube-scheduler: the default scheduler as a host process
KSCHEDCTL = "kschedctl"  # in the namespace kschedctl's ClusterRoleBindings record for it
UNVERIFIED = "unverified"  # nothing anchors it: the scheduler while no other claim exists
IMPOSTOR = "impostor"  # claims a name that is not its own: never the scheduler
VERIFIED = (CONTROL_PLANE, SYSTEM, LEASE, KSCHEDCTL)


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    return obj.get("metadata") or {}


def recorded_namespaces(bindings: Iterable[tuple[str, dict[str, Any]]]) -> dict[str, set[str]]:
    """Scheduler name -> the namespaces kschedctl deployed it in, from ``(owner, binding)``
    pairs of kschedctl's ClusterRoleBindings: the namespace of the ServiceAccount named like
    the scheduler that each binds (other subjects, such as a metrics scraper, say nothing)."""
    found: dict[str, set[str]] = {}
    for name, binding in bindings:
        if binding.get("kind", "ClusterRoleBinding") != "ClusterRoleBinding":
            continue
        for subject in binding.get("subjects") or []:
            if subject.get("kind") == "ServiceAccount" and subject.get("name") == name:
                found.setdefault(name, set()).add(str(subject.get("namespace") or ""))
    return found


def host_rbac_namespace(obj: dict[str, Any], kind: str = "Role") -> str | None:
    """The namespace a host-form scheduler's deploy recorded, when ``obj`` (of ``kind``: list
    items carry none) is its Lease Role or RoleBinding: a service or static pod has no
    ClusterRoleBinding, and RBAC objects are beyond the namespace editors the identity rules
    guard against (the built-in ``edit`` role writes no roles or bindings)."""
    meta = _meta(obj)
    form = (meta.get("annotations") or {}).get(FORM_ANNOTATION)
    if obj.get("kind", kind) not in ("Role", "RoleBinding") or form not in HOST_FORMS:
        return None
    return str(meta.get("namespace") or "") or None


def _controller(obj: dict[str, Any], kind: str) -> dict[str, Any] | None:
    refs = [r for r in _meta(obj).get("ownerReferences") or [] if r.get("kind") == kind]
    return next((r for r in refs if r.get("controller")), refs[0] if refs else None)


def deployment_uids(replicasets: Iterable[dict[str, Any]]) -> dict[str, tuple[str, str]]:
    """ReplicaSet uid -> (its namespace, the uid of the Deployment controlling it)."""
    found = {}
    for rs in replicasets:
        ref = _controller(rs, "Deployment")
        uid = _meta(rs).get("uid")
        if ref and ref.get("uid") and uid:
            found[str(uid)] = (str(_meta(rs).get("namespace", "")), str(ref["uid"]))
    return found


def owning_deployment(pod: dict[str, Any], owners: dict[str, tuple[str, str]]) -> str | None:
    """The uid of the Deployment whose ReplicaSet controls ``pod`` (``owners``: from
    :func:`deployment_uids`), the chain's uids and namespace matching; None for another pod."""
    ref = _controller(pod, "ReplicaSet")
    found = owners.get(str((ref or {}).get("uid") or ""))
    if found is None or found[0] != _meta(pod).get("namespace"):
        return None
    return found[1]


def is_mirror(pod: dict[str, Any]) -> bool:
    return MIRROR_ANNOTATION in (_meta(pod).get("annotations") or {})


def is_control_plane_mirror(pod: dict[str, Any], nodes: dict[str, dict[str, Any]]) -> bool:
    """``pod`` is the mirror pod of a static pod on a control-plane node: in kube-system, owned
    by the Node it runs on (name and uid), that Node labelled with a control-plane role."""
    if _meta(pod).get("namespace") != KUBE_SYSTEM or not is_mirror(pod):
        return False
    node_name = (pod.get("spec") or {}).get("nodeName")
    node = nodes.get(str(node_name or ""))
    ref = _controller(pod, "Node")
    if node is None or ref is None or ref.get("name") != node_name:
        return False
    labels = _meta(node).get("labels") or {}
    return ref.get("uid") == _meta(node).get("uid") and any(
        r in labels for r in CONTROL_PLANE_ROLES
    )


def mirror_nodes(pods: Iterable[dict[str, Any]]) -> list[str]:
    """The nodes of kube-system's mirror pods: read to tell control-plane static pods."""
    return sorted(
        {
            str((p.get("spec") or {}).get("nodeName"))
            for p in pods
            if _meta(p).get("namespace") == KUBE_SYSTEM
            and is_mirror(p)
            and (p.get("spec") or {}).get("nodeName")
        }
    )


def verdict(
    name: str,
    marked: str | None,
    namespace: str,
    recorded: dict[str, set[str]],
    *,
    control_plane: bool = False,
) -> tuple[str, str | None]:
    """How a claim to serve ``name`` from ``namespace`` is known to be true (or why not):
    ``marked`` is the scheduler kschedctl's label names on the object (None: unlabelled),
    ``recorded`` :func:`recorded_namespaces`, ``control_plane`` whether it is a control-plane
    static pod."""
    if control_plane:
        return CONTROL_PLANE, None
    if namespace == KUBE_SYSTEM:
        return SYSTEM, None
    if marked is not None:
        where = recorded.get(marked, set())
        if namespace in where:
            return KSCHEDCTL, None
        return IMPOSTOR, (
            f"labelled as kschedctl's scheduler {marked}, but kschedctl deployed {marked} "
            + (f"in {_names(where)}" if where else "nowhere (no ClusterRoleBinding of it)")
        )
    if namespace in recorded.get(name, set()):
        return KSCHEDCTL, None
    if name == DEFAULT_SCHEDULER_NAME:
        return IMPOSTOR, (
            "claims default-scheduler outside kube-system: not a control-plane static pod, "
            "not the holder of the Lease kube-system/kube-scheduler"
        )
    if recorded.get(name):
        return IMPOSTOR, f"kschedctl deployed {name} in {_names(recorded[name])}, not here"
    return UNVERIFIED, f"nothing but its own config says it serves {name}"


def _names(namespaces: Iterable[str]) -> str:
    listed = sorted(namespaces)
    return ("namespace " if len(listed) == 1 else "namespaces ") + ", ".join(listed)


def trusted_objects(
    name: str, objects: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """kschedctl's objects of scheduler ``name`` (found by label) split into those kschedctl
    created — cluster-scoped ones, and those in kube-system, in the namespaces its
    ClusterRoleBindings (host forms: its Lease Role and RoleBinding) among ``objects`` record,
    or in the namespace of the Lease those record — and those only labelled like them
    elsewhere (anyone may label an object)."""
    recorded = recorded_namespaces(
        (name, o) for o in objects if o.get("kind") == "ClusterRoleBinding"
    )
    anchored = {KUBE_SYSTEM, *recorded.get(name, set())}
    anchored.update(ns for o in objects if (ns := host_rbac_namespace(o, "")) is not None)
    for obj in objects:
        meta = _meta(obj)
        lease = (meta.get("annotations") or {}).get(LEASE_ANNOTATION)
        if lease and (not meta.get("namespace") or meta.get("namespace") in anchored):
            anchored.add(str(lease).partition("/")[0])
    kept = [
        o for o in objects if not _meta(o).get("namespace") or _meta(o)["namespace"] in anchored
    ]
    return kept, [o for o in objects if o not in kept]


def resolve_claims(claims: Iterable[Scheduler]) -> dict[str, Scheduler]:
    """One entry per name from discovery's claims: its verified claim, else its only
    unverified one; several of those are a conflict (an entry of form ``conflict`` naming
    them); the rest impostors."""
    by_name: dict[str, list[Scheduler]] = {}
    for claim in claims:
        by_name.setdefault(claim.name, []).append(claim)
    found: dict[str, Scheduler] = {}
    for name, group in by_name.items():
        verified = [c for c in group if c.identity in VERIFIED]
        unverified = [c for c in group if c.identity == UNVERIFIED]
        impostors = [c for c in group if c.identity == IMPOSTOR]
        if verified:
            for claim in unverified:  # a name served from where it is known to be
                claim.identity = IMPOSTOR
                claim.reason = f"{name} is served from namespace {verified[0].namespace}"
            impostors, pickable = unverified + impostors, verified
        else:
            pickable = unverified
        if len(pickable) == 1:
            entry = pickable[0]
        elif pickable:
            entry = Scheduler(
                name, "conflict", sources=sorted({s for c in pickable for s in c.sources}),
                managed=any(c.managed for c in pickable), candidates=pickable,
            )  # fmt: skip
        else:  # only impostors: nothing known to serve the name
            entry = Scheduler(name, "none", served=False, sources=["impostor"])
        entry.impostors = sorted(impostors, key=lambda c: (c.namespace or "", c.instance or ""))
        found[name] = entry
    return found


def pick(schedulers: list[Scheduler], name: str, namespace: str | None = None) -> Scheduler | None:
    """The scheduler ``name`` stands for (in ``namespace`` when given), None when nothing
    claims it. A conflict, or a namespace where only an impostor claims it, is an error naming
    each claim and how to choose."""
    entry = next((s for s in schedulers if s.name == name), None)
    if entry is None:
        return None
    if namespace is None and not entry.candidates:
        return entry
    if namespace is None:
        raise KschedError(
            f"{len(entry.candidates)} schedulers claim the name {name!r}: {claims(entry)}; "
            "none is known to be it (no kube-system, no kschedctl record), so none is picked",
            hint=f"choose one with -n NAMESPACE ({', '.join(_namespaces(entry.candidates))}), "
            "or remove the ones that should not serve it",
        )
    for candidate in [entry, *entry.candidates]:
        if candidate.form != "conflict" and candidate.namespace == namespace:
            return candidate
    impostor = next((s for s in entry.impostors if s.namespace == namespace), None)
    if impostor is not None:
        raise KschedError(
            f"{impostor.instance} in namespace {namespace} claims the scheduler name {name!r} "
            f"but is not it: {impostor.reason}",
            hint=f"`kschedctl status {name}` without -n shows the scheduler that is",
        )
    raise NotFoundError(
        f"no scheduler named {name!r} in namespace {namespace}"
        + (f" (it runs in {entry.namespace})" if entry.namespace else ""),
        hint="`kschedctl list` shows the schedulers in this cluster and their namespaces",
    )


def _namespaces(entries: Iterable[Scheduler]) -> list[str]:
    return sorted({e.namespace or "-" for e in entries})


def claims(entry: Scheduler) -> str:
    """Each claim of a conflict, as ``form instance (namespace NS)``."""
    return ", ".join(
        f"{c.instance or c.form} (namespace {c.namespace or '-'})" for c in entry.candidates
    )


def impostor_note(entry: Scheduler | None) -> str:
    """``; only impostors claim it: …`` for a name nothing known to be it serves ("" else)."""
    if entry is None or not entry.impostors:
        return ""
    listed = ", ".join(
        f"{i.instance or i.form} (namespace {i.namespace or '-'})" for i in entry.impostors
    )
    one = len(entry.impostors) == 1
    return f"; only impostors claim it: {listed} ({'it is' if one else 'they are'} not it)"
