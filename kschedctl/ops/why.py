"""`kschedctl why`: gather what it needs from the cluster, then run the pure decision tree
(:mod:`kschedctl.observe.diagnosis`). :func:`explain_pods` is the use case.

Nodes and every pod are required (the filters cannot be evaluated without them): without
permission to list them, `why` fails naming the permission. Everything else degrades: no
access to Deployments/Leases means "scheduler unknown", no access to events means no
comparison with what the scheduler reported, unreadable logs mean no ``forbidden`` check.

Python plugins run in this process only when the caller gives them: ``--plugin FILE``, or
``--run-cluster-plugins NS/NAME-config@sha256:HEX`` (that ConfigMap's files, run only if they
hash to HEX). Whoever may edit a scheduler's ConfigMap, pods or Lease must not get to run code
with the caller's credentials, so the plugins a scheduler runs are otherwise only listed
(:class:`UnrunPlugins`) and the verdict they could change is withheld.

The reads live in :mod:`kschedctl.ops.why_cluster`, the plugins in
:mod:`kschedctl.ops.why_plugins`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from kschedctl.base.errors import (
    NotFoundError,
    UsageError,
)
from kschedctl.hosts.journal import recent_host_lines
from kschedctl.k8s.events import failed_scheduling
from kschedctl.k8s.logs import recent_lines
from kschedctl.kubeclient.client import Cluster
from kschedctl.model.filters import NodeInfoSnapshot
from kschedctl.model.kubetypes import Node, Pod
from kschedctl.model.scheduling.plugins import (
    Plugin,
    PluginSet,
)
from kschedctl.model.scheduling.policy import (
    EMPTY,
)
from kschedctl.observe.crash import CrashReport
from kschedctl.observe.diagnosis import Diagnosis, diagnose
from kschedctl.observe.discovery import is_pending
from kschedctl.observe.doublebooking import is_rejected
from kschedctl.observe.events import Event
from kschedctl.observe.failedscheduling import Reported
from kschedctl.observe.pending import PendingReason, pending_reasons
from kschedctl.observe.plugin_files import (
    ClusterPluginsRef,
)
from kschedctl.observe.routing import routed_finding, routed_to
from kschedctl.observe.schedulers import Scheduler
from kschedctl.ops.crash import crash_reports, pods_of_scheduler
from kschedctl.ops.doublebooking import explain_rejection
from kschedctl.ops.reporter import QUIET, Reporter
from kschedctl.ops.routing import live_routes
from kschedctl.ops.why_cluster import ClusterState, cluster_state, optional_read, required_read
from kschedctl.ops.why_plugins import (
    fallback_policy,
    lease_annotations,
    load_cluster_plugins,
    plugins_differ,
    published_plugin_files,
    runs_plugins,
    unrun_plugins,
)
from kschedctl.printers.formats import as_list


def _scheduler_log(cluster: Cluster, entry: Scheduler | None, kubeconfig: str | None) -> list[str]:
    """Recent lines of the pod's scheduler, for the ``forbidden`` check."""
    if entry is None or not entry.served:
        return []
    if entry.form in ("service", "process"):
        return recent_host_lines(entry.name, entry.form, kubeconfig)
    if not entry.pods and entry.form != "deployment":
        return []
    return optional_read(lambda: recent_lines(cluster, entry), []) or []


def _reported(pod: Mapping[str, Any], failures: dict[str, tuple[Event, int]]) -> Reported:
    meta = pod.get("metadata") or {}
    found = failures.get(meta.get("uid") or "") or failures.get(
        f"{meta.get('namespace')}/{meta.get('name')}"
    )
    event, count = found if found else (None, 0)
    condition = next(
        (
            c.get("message")
            for c in (pod.get("status") or {}).get("conditions") or []
            if c.get("type") == "PodScheduled" and c.get("status") == "False"
        ),
        None,
    )
    return Reported(
        event=event.message if event else None,
        event_time=event.time.isoformat().replace("+00:00", "Z") if event and event.time else None,
        count=count,
        condition=condition,
    )


def why_pod(
    cluster: Cluster,
    namespace: str,
    name: str,
    *,
    all_reasons: bool = False,
    kubeconfig: str | None = None,
    plugins: PluginSet | None = None,
    cluster_plugins: dict[str, PluginSet] | None = None,
) -> Diagnosis:
    try:
        # the API's untyped dict enters the model here, read through its Pod shape
        pod = cast(
            Pod,
            required_read(
                f"get pods in namespace {namespace}",
                lambda: cluster.get(f"/api/v1/namespaces/{namespace}/pods/{name}"),
            ),
        )
    except NotFoundError as err:
        raise NotFoundError(
            f"pod {namespace}/{name} not found",
            hint=f"kubectl get pods -n {namespace} lists the pods there",
        ) from err
    if not is_pending(pod):
        # Nothing to evaluate: only whether the node it is bound to exists matters.
        node = (pod.get("spec") or {}).get("nodeName")
        nodes = []
        if node:
            found = optional_read(lambda: cluster.get(f"/api/v1/nodes/{node}"))
            nodes = [cast(Node, found)] if found else []  # the API's node, as a Node
        diagnosis = diagnose(pod, NodeInfoSnapshot(nodes), None)
        if is_rejected(pod):
            explain_rejection(cluster, pod, diagnosis)
        return _with_routing(cluster, pod, diagnosis, None)
    state = cluster_state(cluster, [pod])
    state.plugins = plugins or state.plugins
    state.cluster_plugins = dict(cluster_plugins or {})
    failures = optional_read(lambda: failed_scheduling(cluster, namespace, name), {})
    diagnosis = _diagnose(cluster, pod, state, all_reasons, kubeconfig, {}, failures)
    wanted = (pod.get("spec") or {}).get("schedulerName")
    entry = next((s for s in state.schedulers or () if s.name == wanted), None)
    return _with_routing(cluster, pod, diagnosis, entry is not None and entry.healthy)


def _with_routing(
    cluster: Cluster, pod: Pod, diagnosis: Diagnosis, serving: bool | None
) -> Diagnosis:
    """The routing that sent the pod to its scheduler: the first finding when that scheduler
    does not serve (the first thing to check), the last otherwise."""
    if routed_to(pod) is None:
        return diagnosis
    namespace = (pod.get("metadata") or {}).get("namespace")
    found = routed_finding(
        pod,
        optional_read(lambda: cluster.get(f"/api/v1/namespaces/{namespace}")),
        optional_read(lambda: live_routes(cluster), []),
        serving,
    )
    if found is not None:
        at = 0 if found.severity == "error" else len(diagnosis.findings)
        diagnosis.findings.insert(at, found)
    return diagnosis


def _diagnose(
    cluster: Cluster,
    pod: Pod,
    state: ClusterState,
    all_reasons: bool,
    kubeconfig: str | None,
    log_cache: dict[str, list[str]],
    failures: dict[str, tuple[Event, int]],
    evaluations: dict[str, Any] | None = None,
) -> Diagnosis:
    wanted = (pod.get("spec") or {}).get("schedulerName") or "default-scheduler"
    entry = next((s for s in state.schedulers or () if s.name == wanted), None)
    if wanted not in log_cache:
        log_cache[wanted] = _scheduler_log(cluster, entry, kubeconfig)
    if wanted not in state.policies:
        lease = lease_annotations(cluster, entry)
        state.policies[wanted], state.plugin_names[wanted] = fallback_policy(entry, lease)
        state.plugin_hashes[wanted] = published_plugin_files(lease)
    policy = state.policies[wanted]
    given = state.plugins or state.cluster_plugins.get(wanted) or PluginSet()
    plugins = given if runs_plugins(wanted, entry, policy) else PluginSet()
    # Plugins the caller did not give are listed, never run: no verdict they could change.
    unrun = None if given else unrun_plugins(cluster, state, wanted, entry)
    if plugins and policy is None:
        policy = EMPTY  # a scheduler run by hand without a Lease: no fallback steps known
    if wanted not in state.crashes:
        state.crashes[wanted] = _crashes(cluster, state, wanted, entry)
    diagnosis = diagnose(
        pod,
        state.snapshot,
        state.schedulers,
        server_version=state.version,
        scheduler_log=log_cache[wanted],
        reported=_reported(pod, failures),
        all_reasons=all_reasons,
        fallback=policy,
        crashes=state.crashes[wanted],
        evaluations=None if plugins else evaluations,
        plugins=plugins,
        unrun=unrun,
    )
    published = state.plugin_names.get(wanted)
    if (
        unrun is None
        and published is not None
        and tuple(published) != plugins.names()
        and not is_rejected(pod)
    ):
        diagnosis.findings.append(plugins_differ(wanted, published, plugins.names()))
    return diagnosis


def _crashes(
    cluster: Cluster, state: ClusterState, name: str, entry: Scheduler | None
) -> list[CrashReport]:
    """Why the scheduler's pods do not run, when discovery saw a problem (no request else)."""
    if entry is None or entry.problem is None:
        return []
    pods = pods_of_scheduler(state.pods, name, entry)
    return optional_read(lambda: crash_reports(cluster, pods, name), []) or []


def why_pending(
    cluster: Cluster,
    namespace: str | None,
    *,
    all_reasons: bool = False,
    kubeconfig: str | None = None,
    label_selector: str | None = None,
    field_selector: str | None = None,
    plugins: PluginSet | None = None,
    cluster_plugins: dict[str, PluginSet] | None = None,
) -> list[Diagnosis]:
    """Every pod waiting for a scheduler in ``namespace`` (None: all namespaces), narrowed by
    kubectl-style selectors the API server judges."""
    path = f"/api/v1/namespaces/{namespace}/pods" if namespace else "/api/v1/pods"
    where = f"in namespace {namespace}" if namespace else "in all namespaces"
    fields = "status.phase=Pending,spec.nodeName="
    if field_selector:
        fields += f",{field_selector}"
    query: dict[str, str] = {"fieldSelector": fields}
    if label_selector:
        query["labelSelector"] = label_selector
    # the API's untyped dicts enter the model here, read through its Pod shape
    listed = cast(
        list[Pod], required_read(f"list pods {where}", lambda: cluster.list(path, **query))
    )
    pending = [p for p in listed if is_pending(p)]
    if not pending:
        return []
    state = cluster_state(cluster, pending)
    state.plugins = plugins or state.plugins
    state.cluster_plugins = dict(cluster_plugins or {})
    failures = optional_read(lambda: failed_scheduling(cluster, namespace), {})
    cache: dict[str, list[str]] = {}
    # One snapshot for every pod, and one evaluation per shape of pod (replicas share it).
    shapes: dict[str, Any] = {}
    return [
        _diagnose(cluster, p, state, all_reasons, kubeconfig, cache, failures, shapes)
        for p in pending
    ]


@dataclass
class Explanation:
    """What `why` found: one diagnosis for a named pod, or one per Pending pod."""

    diagnoses: list[Diagnosis]
    one_pod: bool  # a pod was named (else: every Pending pod of ``namespace``)
    namespace: str | None  # where it looked; None: every namespace

    @property
    def schedulable(self) -> bool:
        """Every pod can run (exit 0); otherwise `why` exits 6, also when the verdict on a
        pod is withheld (its scheduler's plugins were not run)."""
        return all(d.schedulable is True for d in self.diagnoses)

    def summary(self) -> tuple[PendingReason, ...]:
        """``--all``: the pods by scheduler and reason."""
        return pending_reasons(self.diagnoses)

    def to_dict(self) -> dict[str, Any]:
        """``why -o json|yaml``: the diagnosis of the named pod, or (``--all``) a kubectl
        ``List`` of diagnoses with ``summary`` beside ``items`` (by scheduler and reason)."""
        if self.one_pod:
            return self.diagnoses[0].to_dict()
        listed = as_list([d.to_dict() for d in self.diagnoses])
        listed["summary"] = [r.to_dict() for r in self.summary()]
        return listed

    def names(self) -> list[str]:
        """``why -o name``: the pods explained, as kubectl names them (``pod/NAME``)."""
        return [f"pod/{d.pod['name']}" for d in self.diagnoses]


def pod_name(argument: str) -> str:
    """``NAME`` or ``pod/NAME`` (kubectl's aliases po and pods too) as the pod's name."""
    kind, sep, name = argument.partition("/")
    if not sep:
        return argument
    if kind.lower() not in ("pod", "pods", "po"):
        raise UsageError(f"{argument!r} is not a pod", hint="kschedctl why POD or pod/POD")
    return name


def explain_pods(
    cluster: Cluster,
    pod: str | None = None,
    *,
    namespace: str | None = None,
    all_namespaces: bool = False,
    all_reasons: bool = False,
    kubeconfig: str | None = None,
    label_selector: str | None = None,
    field_selector: str | None = None,
    plugins: Sequence[Plugin] = (),
    run_cluster_plugins: Sequence[ClusterPluginsRef] = (),
    reporter: Reporter = QUIET,
) -> Explanation:
    """Diagnose ``pod`` (NAME or pod/NAME), or with ``pod=None`` every Pending pod of
    ``namespace`` (default: the context's; ``all_namespaces``: the cluster's).

    ``kubeconfig`` is passed on to read a host scheduler's journal (service/process forms).
    ``plugins`` (loaded: :func:`kschedctl.model.scheduling.pluginload.load_plugins`) run, in order,
    for the pods of kschedctl's own scheduler, as that scheduler runs them.
    ``run_cluster_plugins``: instead, the plugins of these ConfigMaps run for the pods of
    their schedulers, if each hashes to what it names (:func:`load_cluster_plugins`; the
    ``reporter`` warns that cluster code runs). Without either, plugins are never run: a
    scheduler's are listed (``plugins-not-run``) and the verdict they could change withheld.
    """
    if plugins and run_cluster_plugins:
        raise UsageError(
            "--plugin and --run-cluster-plugins both name the plugins to run: give one",
            hint="kschedctl why POD --plugin FILE … | kschedctl why POD --run-cluster-plugins "
            "NS/NAME-config@sha256:HEX",
        )
    named = [r.scheduler for r in run_cluster_plugins]
    twice = sorted({n for n in named if named.count(n) > 1})
    if twice:
        raise UsageError(
            f"--run-cluster-plugins names the plugins of scheduler {', '.join(twice)} twice",
            hint="one ConfigMap per scheduler",
        )
    loaded = PluginSet(tuple(plugins), reslim=True) if plugins else None
    chosen = load_cluster_plugins(cluster, run_cluster_plugins, reporter)
    ns = None if all_namespaces else (namespace or cluster.namespace)
    if pod is not None:
        name = pod_name(pod)
        diagnosis = why_pod(
            cluster,
            ns or "default",
            name,
            all_reasons=all_reasons,
            kubeconfig=kubeconfig,
            plugins=loaded,
            cluster_plugins=chosen,
        )
        return Explanation([diagnosis], one_pod=True, namespace=ns)
    diagnoses = why_pending(
        cluster, ns, all_reasons=all_reasons, kubeconfig=kubeconfig,
        label_selector=label_selector, field_selector=field_selector, plugins=loaded,
        cluster_plugins=chosen,
    )  # fmt: skip
    return Explanation(diagnoses, one_pod=False, namespace=ns)
