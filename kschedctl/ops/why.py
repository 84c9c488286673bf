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
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kschedctl import hosts
from kschedctl.base.errors import (
    ClusterError,
    ForbiddenError,
    KschedError,
    NotFoundError,
    PluginError,
    PolicyError,
    UsageError,
)
from kschedctl.hosts.journal import recent_host_lines
from kschedctl.hosts.systemd import plugin_dir_name
from kschedctl.k8s.apply import managed_objects
from kschedctl.k8s.client import Cluster
from kschedctl.k8s.events import failed_scheduling
from kschedctl.k8s.inventory import snapshot as inventory_snapshot
from kschedctl.k8s.logs import recent_lines
from kschedctl.model.config.versions import server_version_or_default
from kschedctl.model.filters import NodeInfoSnapshot
from kschedctl.model.scheduling.pluginload import check_unique, plugin_from_source
from kschedctl.model.scheduling.plugins import (
    PLUGIN_FILES_LEASE_ANNOTATION,
    PLUGINS_HASH_LEASE_ANNOTATION,
    PLUGINS_LEASE_ANNOTATION,
    Plugin,
    PluginSet,
)
from kschedctl.model.scheduling.policy import EMPTY, POD_POLICY_ANNOTATION, FallbackPolicy
from kschedctl.model.scheduling.policyload import parse_policy
from kschedctl.observe.crash import CrashReport
from kschedctl.observe.diagnosis import Diagnosis, diagnose
from kschedctl.observe.discovery import discover, is_pending
from kschedctl.observe.doublebooking import is_rejected
from kschedctl.observe.events import Event
from kschedctl.observe.failedscheduling import Reported
from kschedctl.observe.findings import WARNING, Finding
from kschedctl.observe.pending import PendingReason, pending_reasons
from kschedctl.observe.plugin_files import (
    ClusterPluginsRef,
    UnrunPlugins,
    configmap_name,
    plugin_files,
)
from kschedctl.observe.schedulers import SCHEDULER_LABEL, Scheduler, recorded_host_files
from kschedctl.ops.crash import crash_reports, pods_of_scheduler
from kschedctl.ops.doublebooking import explain_rejection
from kschedctl.ops.reporter import QUIET, Reporter
from kschedctl.printers.formats import as_list
from kschedctl.render.builtin import bundle_hash
from kschedctl.render.forms import HOST_FORMS

PERMISSION_HINT = (
    "`kschedctl why` needs get/list on pods and list on nodes, cluster-wide (e.g. a ClusterRole "
    "with verbs get,list on pods and nodes, bound to you); events, leases, deployments and "
    "pods/log are optional"
)


def _required(what: str, call: Any) -> Any:
    """Run a request `why` cannot do without; a 403 names the permission it lacks."""
    try:
        return call()
    except ClusterError as err:
        if isinstance(err, ForbiddenError):
            raise ClusterError(f"cannot {what}: {err.message}", hint=PERMISSION_HINT) from err
        raise


def _optional(call: Any, default: Any = None) -> Any:
    """Run a request `why` can do without: forbidden or missing gives ``default``."""
    try:
        return call()
    except NotFoundError:
        return default
    except ClusterError as err:
        if isinstance(err, ForbiddenError):
            return default
        raise


@dataclass
class ClusterState:
    snapshot: NodeInfoSnapshot
    schedulers: list[Scheduler] | None
    version: tuple[int, ...]
    # Scheduler name -> the fallback policy of kschedctl's own scheduler (None: another one).
    policies: dict[str, FallbackPolicy | None] = field(default_factory=dict)
    # Scheduler name -> the plugins of its ConfigMap the caller named with
    # --run-cluster-plugins (hash checked), loaded.
    cluster_plugins: dict[str, PluginSet] = field(default_factory=dict)
    # Scheduler name -> the plugins it runs that `why` does not run (None: none known).
    unrun: dict[str, UnrunPlugins | None] = field(default_factory=dict)
    # Scheduler name -> why its pods do not run (read once per scheduler).
    crashes: dict[str, list[CrashReport]] = field(default_factory=dict)
    pods: list[dict[str, Any]] = field(default_factory=list)  # every pod, as listed
    # The Python plugins `why` runs for pods of kschedctl's own scheduler (``--plugin``),
    # as that scheduler runs them.
    plugins: PluginSet = field(default_factory=PluginSet)
    # Scheduler name -> the plugin NAMEs its Lease says it runs (None: not published).
    plugin_names: dict[str, tuple[str, ...] | None] = field(default_factory=dict)
    # Scheduler name -> the plugin files (names in order) and their hash its Lease publishes.
    plugin_hashes: dict[str, tuple[tuple[str, ...], str] | None] = field(default_factory=dict)


# The kinds DefaultSelector reads and where to list them.
WORKLOAD_PATHS = {
    "Service": "/api/v1/services",
    "ReplicationController": "/api/v1/replicationcontrollers",
    "ReplicaSet": "/apis/apps/v1/replicasets",
    "StatefulSet": "/apis/apps/v1/statefulsets",
}


def _uses(pods: Iterable[dict[str, Any]], marker: str) -> bool:
    return any(marker in str((p.get("spec") or {}).get("affinity") or "") for p in pods)


def _has_claims(pod: dict[str, Any]) -> bool:
    return any(
        "persistentVolumeClaim" in v or "ephemeral" in v
        for v in (pod.get("spec") or {}).get("volumes") or []
    )


def _may_preempt(pending: list[dict[str, Any]], pods: list[dict[str, Any]]) -> bool:
    """Some pending pod outranks some bound pod: preemption may run, and PodDisruptionBudgets
    steer it."""
    priorities = [(p.get("spec") or {}).get("priority") or 0 for p in pending]
    bound = [
        (p.get("spec") or {}).get("priority") or 0
        for p in pods
        if (p.get("spec") or {}).get("nodeName")
    ]
    return bool(priorities and bound and max(priorities) > min(bound))


def cluster_state(cluster: Cluster, pending: list[dict[str, Any]]) -> ClusterState:
    """Nodes, every pod, discovered schedulers and the server version, fetched concurrently;
    namespaces, claims and disruption budgets only when a pod's rules or priority need them."""
    with ThreadPoolExecutor(max_workers=4) as pool:
        nodes = pool.submit(
            _required, "list nodes (cluster-wide)", lambda: cluster.list("/api/v1/nodes")
        )
        pods = pool.submit(
            _required, "list pods in all namespaces", lambda: cluster.list("/api/v1/pods")
        )
        version = pool.submit(_optional, cluster.server_version, {})
        all_pods = pods.result()
        found = pool.submit(_optional, lambda: discover(inventory_snapshot(cluster, all_pods)))
        namespaces = None
        if _uses(all_pods, "namespaceSelector"):
            listed = _optional(lambda: cluster.list("/api/v1/namespaces"))
            if listed is not None:
                namespaces = {n["metadata"]["name"]: n for n in listed}
        workloads = None
        if any(not (p.get("spec") or {}).get("topologySpreadConstraints") for p in pending):
            # the selectors of the system-default topology spreading, for the node
            # kschedctl's scheduler would choose (scoring)
            listed_workloads = {
                kind: pool.submit(_optional, lambda path=path: cluster.list(path), [])
                for kind, path in WORKLOAD_PATHS.items()
            }
            workloads = {kind: f.result() for kind, f in listed_workloads.items()}
        pvcs = classes = pvs = None
        if any(_has_claims(p) for p in pending):
            pvcs = _optional(lambda: cluster.list("/api/v1/persistentvolumeclaims"))
            classes = _optional(lambda: cluster.list("/apis/storage.k8s.io/v1/storageclasses"))
            pvs = _optional(lambda: cluster.list("/api/v1/persistentvolumes"))
        pdbs = None
        if _may_preempt(pending, all_pods):
            pdbs = _optional(lambda: cluster.list("/apis/policy/v1/poddisruptionbudgets"))
        snap = NodeInfoSnapshot(
            nodes.result(),
            all_pods,
            namespaces,
            persistent_volume_claims=pvcs,
            storage_classes=classes if pvcs is not None else None,
            # Without the classes an unbound claim's binding mode is unknown: no per-node check.
            persistent_volumes=pvs if pvcs is not None and classes is not None else None,
            workloads=workloads,
            pod_disruption_budgets=pdbs or (),
        )
        return ClusterState(
            snap,
            found.result(),
            server_version_or_default(version.result().get("gitVersion", "")),
            pods=all_pods,
        )


def _scheduler_log(cluster: Cluster, entry: Scheduler | None, kubeconfig: str | None) -> list[str]:
    """Recent lines of the pod's scheduler, for the ``forbidden`` check."""
    if entry is None or not entry.served:
        return []
    if entry.form in ("service", "process"):
        return recent_host_lines(entry.name, entry.form, kubeconfig)
    if not entry.pods and entry.form != "deployment":
        return []
    return _optional(lambda: recent_lines(cluster, entry), []) or []


def _reported(pod: dict[str, Any], failures: dict[str, tuple[Event, int]]) -> Reported:
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
        pod = _required(
            f"get pods in namespace {namespace}",
            lambda: cluster.get(f"/api/v1/namespaces/{namespace}/pods/{name}"),
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
            found = _optional(lambda: cluster.get(f"/api/v1/nodes/{node}"))
            nodes = [found] if found else []
        diagnosis = diagnose(pod, NodeInfoSnapshot(nodes), None)
        if is_rejected(pod):
            explain_rejection(cluster, pod, diagnosis)
        return diagnosis
    state = cluster_state(cluster, [pod])
    state.plugins = plugins or state.plugins
    state.cluster_plugins = dict(cluster_plugins or {})
    failures = _optional(lambda: failed_scheduling(cluster, namespace, name), {})
    return _diagnose(cluster, pod, state, all_reasons, kubeconfig, {}, failures)


def _diagnose(
    cluster: Cluster,
    pod: dict[str, Any],
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
        lease = _lease_annotations(cluster, entry)
        state.policies[wanted], state.plugin_names[wanted] = _fallback_policy(entry, lease)
        state.plugin_hashes[wanted] = _published_plugin_files(lease)
    policy = state.policies[wanted]
    given = state.plugins or state.cluster_plugins.get(wanted) or PluginSet()
    plugins = given if _runs_plugins(wanted, entry, policy) else PluginSet()
    # Plugins the caller did not give are listed, never run: no verdict they could change.
    unrun = None if given else _unrun_plugins(cluster, state, wanted, entry)
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
        diagnosis.findings.append(_plugins_differ(wanted, published, plugins.names()))
    return diagnosis


def _plugins_differ(name: str, runs: tuple[str, ...], given: tuple[str, ...]) -> Finding:
    return Finding(
        "plugins-differ",
        WARNING,
        f"scheduler {name} runs the plugins [{', '.join(runs)}] but this evaluation "
        f"ran [{', '.join(given)}]: its verdict and summary may differ from the scheduler's",
        "pass each of its plugin files with --plugin FILE, in the scheduler's order",
    )


def _runs_plugins(name: str, entry: Scheduler | None, policy: FallbackPolicy | None) -> bool:
    """Whether the plugins given to `why` apply to pods of scheduler ``name``: kschedctl's own
    scheduler (it publishes its policy on its Lease), or one run by hand without a Lease;
    never the default scheduler or a kube-scheduler found holding a Lease."""
    if policy is not None:
        return True
    return name != "default-scheduler" and (entry is None or entry.lease is None)


def _crashes(
    cluster: Cluster, state: ClusterState, name: str, entry: Scheduler | None
) -> list[CrashReport]:
    """Why the scheduler's pods do not run, when discovery saw a problem (no request else)."""
    if entry is None or entry.problem is None:
        return []
    pods = pods_of_scheduler(state.pods, name, entry)
    return _optional(lambda: crash_reports(cluster, pods, name), []) or []


def _lease_annotations(cluster: Cluster, entry: Scheduler | None) -> dict[str, str]:
    """The annotations of the scheduler's Lease ({} without one, or when it cannot be read)."""
    lease = entry.lease if entry is not None else None
    if lease is None:
        return {}
    path = f"/apis/coordination.k8s.io/v1/namespaces/{lease.namespace}/leases/{lease.name}"
    obj = _optional(lambda: cluster.get(path))
    annotations = ((obj or {}).get("metadata") or {}).get("annotations") or {}
    return {str(k): str(v) for k, v in annotations.items()}


def _published_plugin_files(annotations: dict[str, str]) -> tuple[tuple[str, ...], str] | None:
    """The plugin file names (in order) and their hash kschedctl's scheduler publishes."""
    files = tuple(n for n in annotations.get(PLUGIN_FILES_LEASE_ANNOTATION, "").split(",") if n)
    digest = annotations.get(PLUGINS_HASH_LEASE_ANNOTATION)
    return (files, digest) if files and digest else None


def _fallback_policy(
    entry: Scheduler | None, annotations: dict[str, str]
) -> tuple[FallbackPolicy | None, tuple[str, ...] | None]:
    """The fallback policy kschedctl's own scheduler publishes on its Lease (None for any
    other scheduler, or when the Lease cannot be read), and the NAMEs of its plugins."""
    text = annotations.get(POD_POLICY_ANNOTATION)
    if not text:
        return None, None
    names = annotations.get(PLUGINS_LEASE_ANNOTATION)
    plugin_names = tuple(n for n in str(names).split(",") if n) if names is not None else None
    try:
        policy = parse_policy(json.loads(text), f"scheduler {entry.name if entry else ''}'s policy")
    except (ValueError, PolicyError):
        return None, plugin_names
    return policy, plugin_names


def _unrun_plugins(
    cluster: Cluster, state: ClusterState, name: str, entry: Scheduler | None
) -> UnrunPlugins | None:
    """The plugins scheduler ``name`` runs, as `why` lists them without running them (once
    per scheduler): its ConfigMap's files (pod and deployment forms), the files installed on
    this machine (service and static-pod forms), else the NAMEs its Lease publishes."""
    if name not in state.unrun:
        found = None
        if entry is not None and entry.form in HOST_FORMS:
            found = _host_unrun(cluster, entry, state.plugin_hashes.get(name))
        elif entry is not None:
            found = configmap_plugins(cluster, entry)
        published = state.plugin_hashes.get(name)
        names = published[0] if published else state.plugin_names.get(name)
        if found is None and names:
            found = UnrunPlugins(
                name,
                "its Lease",
                names,
                published[1] if published else None,
                note="`why` has no copy of their files to offer",
            )
        state.unrun[name] = found
    return state.unrun[name]


def _host_unrun(
    cluster: Cluster, entry: Scheduler, published: tuple[tuple[str, ...], str] | None
) -> UnrunPlugins | None:
    """A host-form scheduler's plugins: with ``--plugin`` flags for its installed files when
    they are what it loaded (``published``: the files and hash its Lease publishes)."""
    if published is None:
        return None
    names, digest = published
    files, unread = verified_host_plugin_files(cluster, entry, published)
    if not files:
        return UnrunPlugins(entry.name, "its Lease", names, digest, note=unread)
    where = str(Path(files[0][2]).parent)
    flags = " ".join(f"--plugin {shlex.quote(path)}" for _f, _text, path in files)
    return UnrunPlugins(entry.name, where, names, digest, run_with=flags)


def verified_host_plugin_files(
    cluster: Cluster, entry: Scheduler, published: tuple[tuple[str, ...], str] | None
) -> tuple[list[tuple[str, str, str]], str | None]:
    """The plugin files (file name, source, path) of a kschedctl scheduler deployed as a
    service or static pod, in its order, read on this machine from where ``deploy``
    installed them (the paths it recorded on the scheduler's objects, in the lab it
    recorded, if any) — only when they hash to what the scheduler's Lease says it loaded
    (``published``: its files in order and their hash). Else [] and why, in words."""
    if published is None:
        return [], (
            "its Lease publishes no hash of its plugin files (a plugin imported as a module, "
            "or an older kschedctl), so no copy can be shown to be what it runs"
        )
    files, digest = published
    objects = _optional(lambda: managed_objects(cluster, entry.name), []) or []
    recorded, lab = recorded_host_files(objects)
    directory = plugin_dir_name(entry.name)
    if not any(Path(p).parent.name == directory for p in recorded):
        return [], f"no plugin directory {directory}/ is recorded on its deployed objects"
    host = hosts.for_record(lab)
    found, problems = host.installed_plugin_files(entry.name, recorded)
    where = next((str(Path(p).parent) for p in sorted(recorded)
                  if Path(p).parent.name == directory), directory)  # fmt: skip
    if problems:
        return [], "; ".join(problems)
    missing = [f for f in files if f not in found]
    if missing:
        return [], (
            f"{', '.join(missing)} not found in {where} on this machine (it runs on another "
            "host, or the files were removed)"
        )
    pairs = [(f, found[f][1]) for f in files]
    if bundle_hash("", pairs) != digest:
        return [], (
            f"the files in {where} differ from the ones it loaded (changed since it started: "
            "re-deploy, or restart it)"
        )
    return [(f, text, str(found[f][0])) for f, text in pairs], None


def configmap_plugins(cluster: Cluster, entry: Scheduler) -> UnrunPlugins | None:
    """The plugins of a kschedctl scheduler deployed as a pod or Deployment, as its ConfigMap
    NAME-config (in its namespace, labelled for it) carries them, with the flag that runs
    exactly them; None for another scheduler, one without plugins, or when the ConfigMap
    cannot be read. Nothing here runs them."""
    if not entry.managed or entry.form not in ("pod", "deployment") or not entry.namespace:
        return None
    namespace, name = entry.namespace, configmap_name(entry.name)
    obj = _optional(lambda: cluster.get(f"/api/v1/namespaces/{namespace}/configmaps/{name}"))
    labels = ((obj or {}).get("metadata") or {}).get("labels") or {}
    if not obj or labels.get(SCHEDULER_LABEL) != entry.name:
        return None
    where = f"ConfigMap {namespace}/{name}"
    try:
        files = plugin_files(obj)
    except KschedError as err:  # listed but missing: the scheduler's pods cannot mount it
        return UnrunPlugins(entry.name, where, (), note=err.message)
    if not files:
        return None
    digest = bundle_hash("", files)
    flag = ClusterPluginsRef(namespace, name, digest).flag()
    return UnrunPlugins(entry.name, where, tuple(f for f, _ in files), digest, run_with=flag)


def load_cluster_plugins(
    cluster: Cluster, refs: Sequence[ClusterPluginsRef], reporter: Reporter = QUIET
) -> dict[str, PluginSet]:
    """Scheduler name -> the plugins of each ConfigMap the caller named, loaded (their code
    runs here, in this process). Every ConfigMap is read and its files hashed first: one
    that is missing, holds no plugin files, or hashes to anything but what was named stops
    everything before any code runs (NotFoundError exit 5, PluginError exit 3 showing the
    actual hash). Only the text that was hashed is run."""
    checked = []
    for ref in refs:
        path = f"/api/v1/namespaces/{ref.namespace}/configmaps/{ref.configmap}"
        try:
            obj = cluster.get(path)
        except NotFoundError as err:
            raise NotFoundError(
                f"{ref.where} not found: nothing was run",
                hint=f"kubectl get configmaps -n {ref.namespace} lists the ConfigMaps there",
            ) from err
        files = plugin_files(obj)
        digest = bundle_hash("", files)
        if not files:
            raise PluginError("", "holds no plugin files: nothing was run", source=ref.where)
        if digest != ref.digest:
            raise PluginError(
                "",
                f"its plugin files hash to sha256:{digest}, not to the sha256:{ref.digest} "
                "you named: they are not the code you approved, and nothing was run",
                hint=f"read them (kubectl get configmap {ref.configmap} -n {ref.namespace} -o "
                f"yaml); only if you trust them: "
                f"{ClusterPluginsRef(ref.namespace, ref.configmap, digest).flag()}",
                source=ref.where,
            )
        checked.append((ref, files))
    out = {}
    for ref, files in checked:
        reporter.warn(
            f"running the Python plugins [{', '.join(f for f, _ in files)}] of {ref.where} "
            f"(sha256:{ref.digest}) in this process, as {ref.flag()} asks"
        )
        loaded = tuple(
            plugin_from_source(file, text, source=f"{ref.where}: {file}") for file, text in files
        )
        out[ref.scheduler] = PluginSet(check_unique(loaded), reslim=True)
    return out


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
    listed = _required(f"list pods {where}", lambda: cluster.list(path, **query))
    pending = [p for p in listed if is_pending(p)]
    if not pending:
        return []
    state = cluster_state(cluster, pending)
    state.plugins = plugins or state.plugins
    state.cluster_plugins = dict(cluster_plugins or {})
    failures = _optional(lambda: failed_scheduling(cluster, namespace), {})
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
