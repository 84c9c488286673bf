"""The Python plugins of `why`: which scheduler's plugins apply to a pod, what the scheduler's
Lease publishes (its fallback policy, its plugin names, files and their hash), the plugins it
runs that `why` only lists (:class:`UnrunPlugins`: from its ConfigMap or the files installed
on this machine), and :func:`load_cluster_plugins` (``--run-cluster-plugins``, hash checked
before any code runs)."""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from pathlib import Path

from kschedctl import hosts
from kschedctl.base.errors import (
    KschedError,
    NotFoundError,
    PluginError,
    PolicyError,
)
from kschedctl.hosts.systemd import plugin_dir_name
from kschedctl.k8s.apply import managed_objects
from kschedctl.kubeclient.client import Cluster
from kschedctl.model.scheduling.pluginload import check_unique, plugin_from_source
from kschedctl.model.scheduling.plugins import (
    PLUGIN_FILES_LEASE_ANNOTATION,
    PLUGINS_HASH_LEASE_ANNOTATION,
    PLUGINS_LEASE_ANNOTATION,
    PluginSet,
)
from kschedctl.model.scheduling.policy import POD_POLICY_ANNOTATION, FallbackPolicy
from kschedctl.model.scheduling.policyload import parse_policy
from kschedctl.observe.findings import WARNING, Finding
from kschedctl.observe.plugin_files import (
    ClusterPluginsRef,
    UnrunPlugins,
    configmap_name,
    plugin_files,
)
from kschedctl.observe.schedulers import SCHEDULER_LABEL, Scheduler, recorded_host_files
from kschedctl.ops.reporter import QUIET, Reporter
from kschedctl.ops.why_cluster import ClusterState, optional_read
from kschedctl.render.builtin import bundle_hash
from kschedctl.render.forms import HOST_FORMS


def plugins_differ(name: str, runs: tuple[str, ...], given: tuple[str, ...]) -> Finding:
    return Finding(
        "plugins-differ",
        WARNING,
        f"scheduler {name} runs the plugins [{', '.join(runs)}] but this evaluation "
        f"ran [{', '.join(given)}]: its verdict and summary may differ from the scheduler's",
        "pass each of its plugin files with --plugin FILE, in the scheduler's order",
    )


def runs_plugins(name: str, entry: Scheduler | None, policy: FallbackPolicy | None) -> bool:
    """Whether the plugins given to `why` apply to pods of scheduler ``name``: kschedctl's own
    scheduler (it publishes its policy on its Lease), or one run by hand without a Lease;
    never the default scheduler or a kube-scheduler found holding a Lease."""
    if policy is not None:
        return True
    return name != "default-scheduler" and (entry is None or entry.lease is None)


def lease_annotations(cluster: Cluster, entry: Scheduler | None) -> dict[str, str]:
    """The annotations of the scheduler's Lease ({} without one, or when it cannot be read)."""
    lease = entry.lease if entry is not None else None
    if lease is None:
        return {}
    path = f"/apis/coordination.k8s.io/v1/namespaces/{lease.namespace}/leases/{lease.name}"
    obj = optional_read(lambda: cluster.get(path))
    annotations = ((obj or {}).get("metadata") or {}).get("annotations") or {}
    return {str(k): str(v) for k, v in annotations.items()}


def published_plugin_files(annotations: dict[str, str]) -> tuple[tuple[str, ...], str] | None:
    """The plugin file names (in order) and their hash kschedctl's scheduler publishes."""
    files = tuple(n for n in annotations.get(PLUGIN_FILES_LEASE_ANNOTATION, "").split(",") if n)
    digest = annotations.get(PLUGINS_HASH_LEASE_ANNOTATION)
    return (files, digest) if files and digest else None


def fallback_policy(
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


def unrun_plugins(
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
    objects = optional_read(lambda: managed_objects(cluster, entry.name), []) or []
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
    obj = optional_read(lambda: cluster.get(f"/api/v1/namespaces/{namespace}/configmaps/{name}"))
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
