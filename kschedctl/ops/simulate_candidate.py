"""One candidate of `kschedctl simulate` on the lab: its spec (:class:`Candidate`), started as
its service form runs in the lab, the submitted pods watched until every one is bound or
reported unschedulable and nothing moved for ``settle`` seconds, then stopped by its pid
(:func:`run_candidate`). :mod:`kschedctl.ops.simulate` builds the lab and runs each in turn.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from kschedctl.base import userfile
from kschedctl.base.errors import LabError, NotFoundError, printable
from kschedctl.clustersnapshot.storage import STORAGE_KINDS
from kschedctl.hosts import lab as lab_host
from kschedctl.hosts import systemd
from kschedctl.k8s.apply import delete_object
from kschedctl.kubeclient.client import Cluster
from kschedctl.lab import binaries, processes, seed
from kschedctl.lab.cluster import Lab
from kschedctl.lab.provision import provision
from kschedctl.model.config.versions import server_version_or_default
from kschedctl.model.filters import NodeInfoSnapshot
from kschedctl.model.kubetypes import Node, Pod
from kschedctl.model.scheduling.policy import STEP_ANNOTATION
from kschedctl.model.scheduling.policyload import parse_policy
from kschedctl.observe.diagnosis import diagnose
from kschedctl.observe.pending import pod_reasons
from kschedctl.observe.placement import placement
from kschedctl.observe.simulation import (
    CandidateResult,
    PodOutcome,
    PreemptedPod,
    ReasonCount,
)
from kschedctl.observe.workload import lab_pod
from kschedctl.ops import routing as routing_ops
from kschedctl.ops.why_cluster import DRA_PATHS
from kschedctl.spec import SPEC_FILE, LeaderElection, Spec, ensure_valid, load_spec, thawed

Progress = Callable[[str], None]
SUBMITTED_LABEL = "simulate.kschedctl.io/submitted"
DEFAULT_SETTLE = 5.0  # seconds without a binding before the pods left are called unschedulable
DEFAULT_TIMEOUT = 600.0  # seconds a candidate may take for all pods
POLL = 0.5


@dataclass(frozen=True)
class Candidate:
    source: str  # as given to --scheduler
    spec: Spec

    @property
    def scheduler_names(self) -> tuple[str, ...]:
        if self.spec.program == "builtin":
            return (self.spec.name,)
        return tuple(n for n in self.spec.scheduler_names if n) or (self.spec.name,)


def load_candidate(source: str) -> Candidate:
    """A workspace directory or a scheduler.yaml (a bare name is not enough: a candidate is
    a spec someone wrote)."""
    path = Path(source)
    kind = userfile.path_kind(path)
    if kind is None:
        raise NotFoundError(
            f"--scheduler {printable(source)}: no such file or directory",
            hint="give a workspace directory (`kschedctl create NAME`) or its scheduler.yaml",
        )
    spec = load_spec(path / SPEC_FILE if kind == "directory" else path)
    if spec.program == "builtin" and spec.builtin.policy:  # exit 3 before any lab starts
        parse_policy(spec.builtin.policy, f"{source}: spec.builtin.policy", type_meta=False)
    return Candidate(source, spec)


def target_name(pod: Mapping[str, Any], candidate: Candidate) -> str:
    """The schedulerName a pending pod gets: its own when the candidate serves it (a profile
    of that name), else the candidate's first."""
    own = str((pod.get("spec") or {}).get("schedulerName") or "default-scheduler")
    return own if own in candidate.scheduler_names else candidate.scheduler_names[0]


# -- running a candidate --------------------------------------------------------------------------


def _service_spec(lab: Lab, spec: Spec) -> tuple[Spec, lab_host.LabHost]:
    """The spec as the lab runs its service form: leader election off, lab paths and port."""
    one = thawed(spec)
    one.leader_election = LeaderElection(leader_elect=False)
    one.replicas = 1
    host = lab_host.LabHost(lab)
    prepared = host.prepare(one, "service")
    if spec.program == "custom":
        found = binaries.locate().get("custom-kube-scheduler")
        if found is None:
            raise NotFoundError(
                f"{spec.name}: program custom needs the lab's custom-kube-scheduler binary",
                hint="build it with `kschedctl lab build`",
            )
        custom = thawed(prepared)
        custom.service.binary = str(found)
        prepared = ensure_valid(custom)  # the lab's custom binary: a changed spec, checked
    return prepared, host


def start_candidate(lab: Lab, candidate: Candidate) -> tuple[str, str]:
    """Start the candidate as its service form; (unit, health URL)."""
    spec, host = _service_spec(lab, candidate.spec)
    files = host.files(spec, "service")
    host.write_files(files)
    argv = systemd.exec_start(files[systemd.unit_path(spec, host.root)])
    unit = systemd.unit_name(spec)
    lab_host.start_unit(lab, unit, argv)
    port = spec.service.secure_port
    scheme = "http" if spec.program == "builtin" else "https"
    return unit, f"{scheme}://127.0.0.1:{port}/healthz"


def _alive(lab: Lab, unit: str) -> None:
    if lab_host.running(lab, unit) is None:
        log = lab.dir / "logs" / f"service_{unit}.log"
        raise LabError(
            f"the candidate {unit} exited; the end of its log:\n{processes.log_tail(log, 8)}",
            hint="run the same spec with `kschedctl deploy --as-service` on a lab to debug it",
        )


def wait_healthy(lab: Lab, unit: str, url: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    last = ""
    while time.monotonic() < deadline:
        _alive(lab, unit)
        ok, last = lab.probe(url)
        if ok:
            return
        time.sleep(0.2)
    raise LabError(f"the candidate {unit} did not become healthy within {timeout:.0f}s ({last})")


# -- watching the pods --------------------------------------------------------------------------


def pod_key(pod: Mapping[str, Any]) -> str:
    return f"{pod['metadata']['namespace']}/{pod['metadata']['name']}"


def _unschedulable(pod: Mapping[str, Any]) -> str | None:
    """The PodScheduled=False message when a scheduler reported the pod unschedulable; for a
    pod with scheduling gates, the gates (no scheduler looks at it until they are removed)."""
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == "PodScheduled" and c.get("status") == "False":
            return str(c.get("message") or c.get("reason") or "unschedulable")
    gates = [str(g.get("name")) for g in (pod.get("spec") or {}).get("schedulingGates") or []]
    if gates:
        return f"waiting for scheduling gates: [{', '.join(gates)}]"
    return None


def wait_decided(
    lab: Lab,
    cluster: Cluster,
    unit: str,
    count: int,
    started: float,
    *,
    settle: float,
    timeout: float,
    progress: Progress,
) -> tuple[list[Pod], dict[str, float]]:
    """Poll the submitted pods until each is bound or reported unschedulable and no binding
    happened for ``settle`` seconds; (the pods, pod → seconds to its binding)."""
    bound_at: dict[str, float] = {}
    last_change = time.monotonic()
    reported = 0
    deadline = started + timeout
    while True:
        _alive(lab, unit)
        provision(cluster)  # no CSI driver runs in the lab: kube-scheduler waits for one
        # the API's untyped dicts enter the model here (why_reasons), read as Pods
        pods = cast(list[Pod], cluster.list("/api/v1/pods", labelSelector=SUBMITTED_LABEL))
        now = time.monotonic()
        failed = 0
        for pod in pods:
            if (pod.get("spec") or {}).get("nodeName"):
                if pod_key(pod) not in bound_at:
                    bound_at[pod_key(pod)] = now - started
                    last_change = now
            elif _unschedulable(pod) is not None:
                failed += 1
        if failed != reported:
            reported, last_change = failed, now
        decided = len(bound_at) + failed
        if decided >= count and now - last_change >= settle:
            return pods, bound_at
        if now > deadline:
            progress(f"{count - decided} pod(s) without a decision after {timeout:.0f}s")
            return pods, bound_at
        time.sleep(POLL)


def _preemptions(cluster: Cluster, seen: set[str]) -> list[PreemptedPod]:
    out = []
    for event in cluster.list("/apis/events.k8s.io/v1/events", fieldSelector="reason=Preempted"):
        if event["metadata"]["uid"] in seen:
            continue
        regarding = event.get("regarding") or {}
        out.append(
            PreemptedPod(
                f"{regarding.get('namespace')}/{regarding.get('name')}",
                str(event.get("note") or ""),
            )
        )
    return sorted(out, key=lambda p: p.victim)


def _event_uids(cluster: Cluster) -> set[str]:
    listed = cluster.list("/apis/events.k8s.io/v1/events", fieldSelector="reason=Preempted")
    return {e["metadata"]["uid"] for e in listed}


def why_reasons(cluster: Cluster, pods: Sequence[Pod], candidate: Candidate) -> list[ReasonCount]:
    """`why`'s reasons for the pods left unschedulable (its engine over the lab's state, the
    candidate's fallback policy for kschedctl's own scheduler)."""
    left = [p for p in pods if not (p.get("spec") or {}).get("nodeName")]
    if not left:
        return []
    # the storage objects the snapshot seeded: the volume filters run as in the lab
    storage: dict[str, Any] = {
        field_name: cluster.list(seed.storage_collection(api_version, kind))
        for field_name, kind, _what, api_version in STORAGE_KINDS
    }
    snap = NodeInfoSnapshot(
        # the API's untyped dicts enter the model here, read through its Node / Pod shapes
        cast(list[Node], cluster.list("/api/v1/nodes")),
        cast(list[Pod], cluster.list("/api/v1/pods")),
        {n["metadata"]["name"]: n for n in cluster.list("/api/v1/namespaces")},
        # the lab serves resource.k8s.io/v1: the DynamicResources filter runs as in the lab
        device_classes=cluster.list(DRA_PATHS["device_classes"]),
        resource_slices=cluster.list(DRA_PATHS["resource_slices"]),
        resource_claims=cluster.list(DRA_PATHS["resource_claims"]),
        **storage,
    )
    version = server_version_or_default(str(cluster.server_version().get("gitVersion", "")))
    policy = None
    if candidate.spec.program == "builtin":
        policy = parse_policy(
            candidate.spec.builtin.policy or {"fallbacks": []}, candidate.source, type_meta=False
        )
    shared: dict[str, Any] = {}
    counts: dict[str, tuple[int, int]] = {}
    for pod in left:
        d = diagnose(pod, snap, None, server_version=version, fallback=policy, evaluations=shared)
        for _code, reason, nodes in pod_reasons(d):
            pods_n, nodes_n = counts.get(reason, (0, 0))
            counts[reason] = (pods_n + 1, max(nodes_n, len(nodes)))
    return [
        ReasonCount(reason, n, m)
        for reason, (n, m) in sorted(counts.items(), key=lambda item: (-item[1][0], item[0]))
    ]


def run_candidate(
    lab: Lab,
    cluster: Cluster,
    candidate: Candidate,
    pending: Sequence[Mapping[str, Any]],
    *,
    settle: float,
    timeout: float,
    progress: Progress,
) -> CandidateResult:
    nodes = cluster.list("/api/v1/nodes")
    before = placement(nodes, cluster.list("/api/v1/pods"))
    preempted_before = _event_uids(cluster)
    progress(f"{candidate.spec.name}: starting {candidate.spec.program} ({candidate.source})")
    unit, url = start_candidate(lab, candidate)
    routing: list[dict[str, Any]] = []
    try:
        wait_healthy(lab, unit, url, 120)
        # With spec.routing the real policy decides which pods the candidate receives: only
        # those are submitted (nothing else schedules in the lab), the rest are counted.
        routing = routing_ops.apply_routing(cluster, candidate.spec, time.monotonic() + timeout)
        objects, received = [], Counter[str]()
        for pod in pending:
            obj = lab_pod(pod, None if routing else target_name(pod, candidate))
            if routing:
                to = routing_ops.routed_scheduler(cluster, obj)
                received[to] += 1
                if to not in candidate.scheduler_names:
                    continue
            obj["metadata"].setdefault("labels", {})[SUBMITTED_LABEL] = "true"
            objects.append(obj)
        progress(f"{candidate.spec.name}: submitting {len(objects)} pod(s)")
        started = time.monotonic()
        # One at a time, in the snapshot's order: schedulers take pods of equal priority in the
        # order they arrive, so every candidate (and every run) must see the same order.
        seed.create_many(
            cluster,
            lambda o: f"/api/v1/namespaces/{o['metadata']['namespace']}/pods",
            objects,
            workers=1,
        )
        pods, bound_at = wait_decided(
            lab,
            cluster,
            unit,
            len(objects),
            started,
            settle=settle,
            timeout=timeout,
            progress=progress,
        )
    finally:
        lab_host.stop_unit(lab, unit)
        for obj in routing:  # the next candidate runs with its own routing, or none
            delete_object(cluster, obj)
    outcomes = []
    for pod in pods:
        node = (pod.get("spec") or {}).get("nodeName")
        annotations = pod["metadata"].get("annotations") or {}
        message = "" if node else (_unschedulable(pod) or "no decision before the timeout")
        outcomes.append(
            PodOutcome(
                pod_key(pod),
                node,
                message,
                annotations.get(STEP_ANNOTATION),
                bound_at.get(pod_key(pod)),
            )
        )
    seconds = max(bound_at.values(), default=0.0)
    spec = candidate.spec
    return CandidateResult(
        name=spec.name,
        source=candidate.source,
        program=spec.program,
        scheduler_names=candidate.scheduler_names,
        strategy=spec.builtin.strategy if spec.program == "builtin" else None,
        outcomes=outcomes,
        preemptions=_preemptions(cluster, preempted_before),
        before=before,
        after=placement(nodes, cluster.list("/api/v1/pods"), sort_by="cpu"),
        seconds=seconds,
        why_reasons=why_reasons(cluster, pods, candidate),
        received=dict(received),
    )
