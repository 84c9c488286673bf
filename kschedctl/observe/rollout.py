"""How far a scheduler's rollout is (pure): ``kubectl rollout status``' rules over plain dicts.

A Deployment is rolled out when the controller has seen its newest spec
(``status.observedGeneration >= metadata.generation``), every desired replica is updated, no
replica of an older template is left, and the updated ones are Ready and available
(k8s.io/kubectl pkg/polymorphichelpers/rollout_status.go ``DeploymentStatusViewer``). A bare pod
or a static pod's mirror pod is rolled out when the pod of the current template is Ready. The
pods of the current generation are the ones whose problems end a deploy's wait (an old pod that
still terminates does not count), and the Lease must be held by one of them, acquired since it
started: a stale Lease of the pod it replaced (the same name, for a bare pod or a static pod)
does not count.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kschedctl.observe.crash import FAILED_MOUNT, CrashReport
from kschedctl.observe.schedulers import CONFIG_HASH, parse_time

REVISION = "deployment.kubernetes.io/revision"  # on a Deployment and each of its ReplicaSets
TEMPLATE_HASH = "pod-template-hash"  # the label a ReplicaSet gives its pods
MIRROR = "kubernetes.io/config.mirror"  # a static pod's mirror pod


@dataclass(frozen=True)
class RolloutState:
    """Where the rollout stands: ``text`` for the progress line, ``current`` the live pods of
    the current generation, ``done`` once they are all that runs and are Ready."""

    text: str
    done: bool
    current: tuple[dict[str, Any], ...] = field(default=())
    failed: str = ""  # the Deployment gave up (ProgressDeadlineExceeded)


def ready(pod: Mapping[str, Any]) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def live(pods: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The pods not being deleted."""
    return [p for p in pods if not (p.get("metadata") or {}).get("deletionTimestamp")]


def _annotation(obj: Mapping[str, Any], key: str) -> str | None:
    return ((obj.get("metadata") or {}).get("annotations") or {}).get(key)


def new_template_hash(
    deployment: Mapping[str, Any], replicasets: Iterable[Mapping[str, Any]]
) -> str | None:
    """The ``pod-template-hash`` of the Deployment's newest ReplicaSet: the one it owns whose
    revision is the Deployment's (None until the controller has made it)."""
    revision = _annotation(deployment, REVISION)
    uid = (deployment.get("metadata") or {}).get("uid")
    for rs in replicasets:
        owners = (rs.get("metadata") or {}).get("ownerReferences") or []
        if (
            revision
            and _annotation(rs, REVISION) == revision
            and any(o.get("uid") == uid for o in owners)
        ):
            return ((rs.get("metadata") or {}).get("labels") or {}).get(TEMPLATE_HASH)
    return None


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def deployment_state(
    deployment: Mapping[str, Any],
    replicasets: Iterable[Mapping[str, Any]],
    pods: Sequence[dict[str, Any]],
    config_hash: str,
) -> RolloutState:
    """kubectl's rules for a Deployment, plus: each live pod is of the newest ReplicaSet and
    runs ``config_hash``."""
    meta, spec = deployment.get("metadata") or {}, deployment.get("spec") or {}
    status = deployment.get("status") or {}
    if int(status.get("observedGeneration") or 0) < int(meta.get("generation") or 0):
        return RolloutState("its new spec is not yet seen by the controller", False)
    for condition in status.get("conditions") or []:
        if condition.get("type") == "Progressing" and (
            condition.get("reason") == "ProgressDeadlineExceeded"
        ):
            return RolloutState(
                "progress deadline exceeded", False,
                failed=str(condition.get("message") or "ProgressDeadlineExceeded"),
            )  # fmt: skip
    template = new_template_hash(deployment, replicasets)
    running = live(pods)
    current = tuple(
        p for p in running
        if template is not None
        and ((p.get("metadata") or {}).get("labels") or {}).get(TEMPLATE_HASH) == template
        and _annotation(p, CONFIG_HASH) == config_hash
    )  # fmt: skip
    desired = int(spec.get("replicas", 1))
    updated = int(status.get("updatedReplicas") or 0)
    available = int(status.get("availableReplicas") or 0)
    ready_current = sum(1 for p in current if ready(p))
    old = max(int(status.get("replicas") or 0) - updated, len(running) - len(current))
    done = (
        template is not None
        and updated >= desired
        and old == 0
        and available >= updated
        and ready_current >= desired
    )
    text = f"{updated} of {desired} updated, {ready_current} ready"
    if old:
        text += f", {_plural(old, 'old pod')} left"
    return RolloutState(text, done, current)


def same_containers(pod: Mapping[str, Any], template: Mapping[str, Any]) -> bool:
    """Whether ``pod`` runs ``template``'s containers (images, commands, args) and config hash:
    what a deploy of a bare or static pod changes (a flag changes no config hash)."""

    def shape(obj: Mapping[str, Any]) -> list[tuple[Any, ...]]:
        containers = (obj.get("spec") or {}).get("containers") or []
        return [
            (c.get("name"), c.get("image"), c.get("command"), c.get("args")) for c in containers
        ]

    return shape(pod) == shape(template) and _annotation(pod, CONFIG_HASH) == _annotation(
        template, CONFIG_HASH
    )


def pod_state(pods: Sequence[dict[str, Any]], template: Mapping[str, Any]) -> RolloutState:
    """A bare pod's or a static pod's rollout: a live pod of ``template`` Ready."""
    current = tuple(p for p in live(pods) if same_containers(p, template))
    # The pod it replaces has its name (a static pod's other nodes run their own manifests).
    names = {p["metadata"]["name"] for p in current}
    old = sum(1 for p in pods if p["metadata"]["name"] in names and p not in current)
    if not current:
        text = "the new pod is not created yet"
    else:
        text = "the new pod is Ready" if any(map(ready, current)) else "the new pod is not Ready"
    if old:
        text += f", {_plural(old, 'old pod')} left"
    return RolloutState(text, bool(current) and any(map(ready, current)) and not old, current)


def hostname(pod: Mapping[str, Any]) -> str:
    """The hostname a pod's processes see, the first part of kube-scheduler's Lease identity
    (``<hostname>_<uuid>``): the node's name on the host network, else the pod's name."""
    spec = pod.get("spec") or {}
    if spec.get("hostNetwork"):
        return str(spec.get("nodeName") or "")
    return str(spec.get("hostname") or (pod.get("metadata") or {}).get("name") or "")


def _same_host(seen: str, name: str) -> bool:
    """A host's name as its processes see it against its node's name: a node may be named by
    its FQDN while the host calls itself by its first label, or the other way round."""
    seen, name = seen.lower(), name.lower()
    return seen == name or (bool(seen) and seen.split(".")[0] == name.split(".")[0])


def lease_holder(lease: Mapping[str, Any], pods: Iterable[Mapping[str, Any]]) -> str | None:
    """The Lease's holder if it is one of ``pods``, acquired since that pod started (a holder
    of the same name from before, such as the bare pod a deploy replaced, does not count)."""
    spec = lease.get("spec") or {}
    holder = str(spec.get("holderIdentity") or "")
    if not holder:
        return None
    acquired = spec.get("acquireTime")
    for pod in pods:
        seen, name = holder.split("_", 1)[0], hostname(pod)
        on_host = bool((pod.get("spec") or {}).get("hostNetwork"))
        if not (_same_host(seen, name) if on_host else seen == name):
            continue
        started = (pod.get("status") or {}).get("startTime")
        if acquired and started and parse_time(acquired) < parse_time(started):
            continue
        return holder
    return None


def fatal(reports: Iterable[CrashReport]) -> list[CrashReport]:
    """The problems that end a deploy's wait: all that ``status`` names, but a FailedMount
    event that names nothing missing (a kubelet retries those: a cache not yet synced)."""
    return [r for r in reports if r.problem.reason != FAILED_MOUNT or r.problem.missing]
