"""What changes when a spec's program is ``builtin`` (kschedctl's own scheduler).

The forms are the same templates as kube-scheduler's; this module gives them the values that
differ: the command line of ``kschedctl scheduler run`` (every spec field that applies
becomes a flag), the fallback policy as the "config" file, plain-HTTP probes on the metrics
port, and RBAC of its own that grants exactly what the scheduler uses — no
``system:kube-scheduler``, no delegated authentication; for volume binding, the reads of
claims, volumes and classes and the PersistentVolume update of ``system:volume-scheduler``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kschedctl.base.errors import Problem
from kschedctl.base.yamltext import to_yaml
from kschedctl.model.config import versions
from kschedctl.model.config.durations import parse_go_duration
from kschedctl.render.escape import comment, exec_start_line
from kschedctl.render.templates import content_hash
from kschedctl.spec import plugin_file

if TYPE_CHECKING:
    from kschedctl.spec import Spec

__all__ = [
    "CONFIGMAP_MAX_BYTES",
    "PLUGIN_DIR",
    "PLUGIN_KEY_PREFIX",
    "PLUGIN_FILES_ANNOTATION",
    "RBAC_RULES",
    "builtin_context",
    "bundle_hash",
    "configmap_problems",
    "host_plugin_files_to_install",
    "plugin_key",
    "policy_file",
]

CONTAINER = "kschedctl"
PORT_NAME = "metrics"
PROBES = versions.Probes("/healthz", "/readyz", "/healthz", named_port=True)
POLICY_FILE = "policy.yaml"
# Everything the scheduler's loop asks of the API server (kschedctl.k8s.scheduler_api).
RBAC_RULES: list[dict[str, Any]] = [
    {"apiGroups": [""], "resources": ["nodes"], "verbs": ["list", "watch"]},
    # delete: preemption evicts its victims.
    {"apiGroups": [""], "resources": ["pods"], "verbs": ["delete", "list", "watch"]},
    # the selectors of the system-default topology spreading (scoring)
    {
        "apiGroups": [""],
        "resources": ["services", "replicationcontrollers"],
        "verbs": ["list", "watch"],
    },
    {
        "apiGroups": ["apps"],
        "resources": ["replicasets", "statefulsets"],
        "verbs": ["list", "watch"],
    },
    {"apiGroups": [""], "resources": ["pods/binding"], "verbs": ["create"]},
    {"apiGroups": [""], "resources": ["pods/status"], "verbs": ["patch"]},
    {"apiGroups": ["events.k8s.io"], "resources": ["events"], "verbs": ["create"]},
    # Volume binding (VolumeBinding's PreBind writes a PV's claimRef; the PV controller does
    # the rest): the subset of system:volume-scheduler the scheduler uses.
    {"apiGroups": [""], "resources": ["persistentvolumeclaims"], "verbs": ["list", "watch"]},
    {
        "apiGroups": [""],
        "resources": ["persistentvolumes"],
        "verbs": ["get", "list", "watch", "update"],
    },
    {"apiGroups": ["storage.k8s.io"], "resources": ["storageclasses"], "verbs": ["list", "watch"]},
    # VolumeBinding's storage capacity check (CSIDriver.spec.storageCapacity); CSINodes: does
    # any node declare an attach limit
    {
        "apiGroups": ["storage.k8s.io"],
        "resources": ["csidrivers", "csistoragecapacities", "csinodes"],
        "verbs": ["list", "watch"],
    },
    # Dynamic Resource Allocation: what DynamicResources reads; its PreBind adds the claim's
    # finalizer (update) and writes allocation + reservedFor (status), Unreserve patches them;
    # a pod's claim for DRA-backed extended resources is created in PreBind and deleted by
    # Unreserve or the PostFilter (system:kube-scheduler has the same from 1.36).
    {
        "apiGroups": ["resource.k8s.io"],
        "resources": ["deviceclasses", "resourceslices"],
        "verbs": ["list", "watch"],
    },
    {
        "apiGroups": ["resource.k8s.io"],
        "resources": ["resourceclaims"],
        "verbs": ["create", "delete", "get", "list", "watch", "update"],
    },
    {
        "apiGroups": ["resource.k8s.io"],
        "resources": ["resourceclaims/status"],
        "verbs": ["update", "patch"],
    },
    # Preemption violates PodDisruptionBudgets as little as it can.
    {"apiGroups": ["policy"], "resources": ["poddisruptionbudgets"], "verbs": ["list", "watch"]},
    # the labels a namespaceSelector of pod (anti-)affinity terms selects by
    {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["list", "watch"]},
]
LEASE_VERBS = ["get", "update"]
# spec.builtin.plugins in the in-cluster forms: ConfigMap keys plugin-<file>, mounted under
# their file names here; the ConfigMap's annotation lists the files in the order they run
# (a ConfigMap's data is a map: `why` reads the order from it).
PLUGIN_DIR = "/etc/kschedctl/plugins"
PLUGIN_KEY_PREFIX = "plugin-"
PLUGIN_FILES_ANNOTATION = "kschedctl.io/plugin-files"
# What the API server accepts in one ConfigMap: its data values add up to at most
# core.MaxSecretSize, 1 MiB (pkg/apis/core/types.go; ValidateConfigMap in
# pkg/apis/core/validation/validation.go counts the values' bytes, not the keys).
CONFIGMAP_MAX_BYTES = 1024 * 1024


def plugin_key(path: str) -> str:
    """The ConfigMap key of plugin ``path``: ``plugin-<file name>``."""
    return PLUGIN_KEY_PREFIX + plugin_file(path)


def _plugins(spec: Spec) -> list[tuple[str, str, str]]:
    """(path, file name, source) of each plugin, in order (sources read by the loader)."""
    sources = spec.builtin.plugin_sources
    return [(p, plugin_file(p), sources[p]) for p in spec.builtin.plugins if p in sources]


def configmap_problems(spec: Spec) -> list[Problem]:
    """Why the in-cluster forms' ConfigMap cannot carry ``spec``'s plugins: a file that was
    not read, or data past the API server's 1 MiB (each file named with its size). The one
    check behind render, create, deploy and validate."""
    b, path = spec.builtin, "spec.builtin.plugins"
    if spec.program != "builtin" or not b.plugins:
        return []
    missing = [
        Problem(f"{path}[{i}]", f"{rel}: not read (load the spec from its workspace)")
        for i, rel in enumerate(b.plugins)
        if rel not in b.plugin_sources
    ]
    if missing:
        return missing
    sizes = [(POLICY_FILE, len(policy_file(spec).encode()))]
    sizes += [(rel, len(text.encode())) for rel, _, text in _plugins(spec)]
    total = sum(size for _, size in sizes)
    if total <= CONFIGMAP_MAX_BYTES:
        return []
    listing = ", ".join(f"{name} {size:,} bytes" for name, size in sizes)
    return [
        Problem(
            path,
            f"the ConfigMap {spec.name}-config would hold {total:,} bytes ({listing}): "
            f"Kubernetes refuses a ConfigMap over {CONFIGMAP_MAX_BYTES:,} bytes (1 MiB); "
            "make the plugins smaller or fewer",
        )
    ]


def host_plugin_files_to_install(spec: Spec) -> dict[str, str]:
    """The plugin files the host forms install (host path → text): each file's source with
    one closing comment saying whose it is, which is how ``remove`` recognises it."""
    out: dict[str, str] = {}
    for _, file, text in _plugins(spec):
        end = "" if not text or text.endswith("\n") else "\n"
        out[f"{spec.host_plugin_dir}/{file}"] = (
            f"{text}{end}{host_plugin_trailer(spec.name, file)}\n"
        )
    return out


def host_plugin_trailer(name: str, file: str) -> str:
    """The last line of an installed plugin file (kschedctl.hosts.systemd reads it back)."""
    return (
        f"# plugin {comment(file)} of scheduler {comment(name)}, installed by kschedctl from "
        "scheduler.yaml"
    )


def bundle_hash(config_text: str, files: list[tuple[str, str]]) -> str:
    """The config hash of a config and its plugin files: a change to any of them rolls the
    pods (the config alone when there are no plugins: the hash kube-scheduler forms carry)."""
    if not files:
        return content_hash(config_text)
    return content_hash(config_text + "".join(f"\0{name}\0{text}" for name, text in files))


def policy_file(spec: Spec) -> str:
    """The FallbackPolicy file the scheduler reads with --policy."""
    document = {
        "apiVersion": "kschedctl.io/v1alpha1",
        "kind": "FallbackPolicy",
        **{k: v for k, v in spec.builtin.policy.items() if k not in ("apiVersion", "kind")},
    }
    document.setdefault("fallbacks", [])
    return (
        f"# Fallback policy of scheduler {comment(spec.name)} (kschedctl's own scheduler), "
        f"rendered by kschedctl from scheduler.yaml.\n{to_yaml(document)}\n"
    )


def _seconds(value: str) -> str:
    seconds = parse_go_duration(value)
    return str(int(seconds)) if seconds.is_integer() else str(seconds)


def _flags(spec: Spec, policy_path: str, plugin_dir: str) -> list[str]:
    """``kschedctl scheduler run`` flags for everything the spec says (no defaults assumed)."""
    le = spec.leader_election
    flags = [
        f"--name={spec.name}",
        f"--policy={policy_path}",
        f"--strategy={spec.builtin.strategy}",
        *(f"--plugin={plugin_dir}/{plugin_file(p)}" for p in spec.builtin.plugins),
    ]
    if spec.replaces_default:
        flags.append("--replaces-default")
    if le.leader_elect:
        flags += [
            "--leader-elect",
            f"--lease-namespace={le.resource_namespace}",
            f"--lease-name={le.resource_name}",
            f"--lease-duration={_seconds(le.lease_duration)}",
            f"--renew-deadline={_seconds(le.renew_deadline)}",
            f"--retry-period={_seconds(le.retry_period)}",
        ]
    else:
        flags.append("--no-leader-elect")
    connection = spec.client_connection
    if "qps" in connection:
        flags.append(f"--qps={connection['qps']}")
    if "burst" in connection:
        flags.append(f"--burst={connection['burst']}")
    if spec.percentage_of_nodes_to_score is not None:
        flags.append(f"--percentage-of-nodes-to-score={spec.percentage_of_nodes_to_score}")
    if spec.pod_initial_backoff_seconds is not None:
        flags.append(f"--pod-initial-backoff={spec.pod_initial_backoff_seconds}")
    if spec.pod_max_backoff_seconds is not None:
        flags.append(f"--pod-max-backoff={spec.pod_max_backoff_seconds}")
    return flags


def builtin_context(spec: Spec, context: dict[str, Any]) -> dict[str, Any]:
    """The values of ``context`` (kschedctl.render.context) that differ for program builtin."""
    config_dir = context["config_dir"]
    svc = spec.service
    text = policy_file(spec)
    pod_command = [
        "kschedctl", "scheduler", "run",
        *_flags(spec, f"{config_dir}/{POLICY_FILE}", PLUGIN_DIR),
        f"--metrics-port={spec.builtin.metrics_port}",
        f"--v={spec.pod.verbosity}",
        *spec.extra_args,
    ]  # fmt: skip
    host_flags = [
        *_flags(spec, spec.host_config_path, spec.host_plugin_dir),
        f"--kubeconfig={svc.kubeconfig}",
        f"--metrics-address={svc.bind_address}",
        f"--metrics-port={svc.secure_port}",
        f"--v={svc.verbosity}",
        *spec.extra_args,
    ]
    plugins = _plugins(spec)
    host_files = host_plugin_files_to_install(spec)
    return {
        "builtin": True,
        "container_name": CONTAINER,
        "probe_scheme": "HTTP",
        "probes": PROBES,
        "probe_port_name": PORT_NAME,
        "secure_port": spec.builtin.metrics_port,
        "config_key": POLICY_FILE,
        "config_what": "fallback policy",
        "program_what": "kschedctl's own scheduler",
        "runs": "kschedctl scheduler run",
        "rbac_template": "_builtin-rbac.yaml.j2",
        "rbac_rules": RBAC_RULES,
        "lease_verbs": LEASE_VERBS,
        "config_text": text,
        "config_hash": bundle_hash(text, [(file, source) for _, file, source in plugins]),
        "host_config_text": text,
        "host_config_hash": bundle_hash(text, list(host_files.items())),
        # spec.builtin.plugins: ConfigMap keys (in order), the pod's items mapping each key to
        # its file name under plugin_dir; the host forms' directory beside the config.
        "plugin_data": {plugin_key(rel): source for rel, _, source in plugins},
        "plugin_items": [{"key": plugin_key(rel), "path": file} for rel, file, _ in plugins],
        "plugin_annotations": (
            {PLUGIN_FILES_ANNOTATION: ",".join(file for _, file, _ in plugins)} if plugins else {}
        ),
        "plugin_installs": [(rel, file) for rel, file, _ in plugins],
        "plugin_dir": PLUGIN_DIR,
        "host_plugin_dir": spec.host_plugin_dir,
        "command": pod_command,
        "host_command": ["kschedctl", "scheduler", "run", *host_flags],
        "exec_start": exec_start_line([svc.binary, "scheduler", "run", *host_flags]),
    }
