"""What changes when a spec's program is ``builtin`` (kschedctl's own scheduler).

The forms are the same templates as kube-scheduler's; this module gives them the values that
differ: the command line of ``kschedctl scheduler run`` (every spec field that applies
becomes a flag), the fallback policy as the "config" file, plain-HTTP probes on the metrics
port, and RBAC of its own that grants exactly what the scheduler uses — no
``system:kube-scheduler``, no volume scheduling, no delegated authentication.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kschedctl.config import versions
from kschedctl.config.durations import parse_go_duration
from kschedctl.render.escape import comment, exec_start_line
from kschedctl.render.templates import content_hash
from kschedctl.yamltext import to_yaml

if TYPE_CHECKING:
    from kschedctl.spec import Spec

__all__ = ["builtin_context", "policy_file", "RBAC_RULES"]

CONTAINER = "kschedctl"
PORT_NAME = "metrics"
PROBES = versions.Probes("/healthz", "/readyz", "/healthz", named_port=True)
POLICY_FILE = "policy.yaml"
# Everything the scheduler's loop asks of the API server (kschedctl.k8s.scheduler_api).
RBAC_RULES: list[dict[str, Any]] = [
    {"apiGroups": [""], "resources": ["nodes"], "verbs": ["list", "watch"]},
    {"apiGroups": [""], "resources": ["pods"], "verbs": ["list", "watch"]},
    {"apiGroups": [""], "resources": ["pods/binding"], "verbs": ["create"]},
    {"apiGroups": [""], "resources": ["pods/status"], "verbs": ["patch"]},
    {"apiGroups": ["events.k8s.io"], "resources": ["events"], "verbs": ["create"]},
]
LEASE_VERBS = ["get", "update"]


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


def _flags(spec: Spec, policy_path: str) -> list[str]:
    """``kschedctl scheduler run`` flags for everything the spec says (no defaults assumed)."""
    le = spec.leader_election
    flags = [
        f"--name={spec.name}",
        f"--policy={policy_path}",
        f"--strategy={spec.builtin.strategy}",
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
        *_flags(spec, f"{config_dir}/{POLICY_FILE}"),
        f"--metrics-port={spec.builtin.metrics_port}",
        f"--v={spec.pod.verbosity}",
        *spec.extra_args,
    ]  # fmt: skip
    host_flags = [
        *_flags(spec, spec.host_config_path),
        f"--kubeconfig={svc.kubeconfig}",
        f"--metrics-address={svc.bind_address}",
        f"--metrics-port={svc.secure_port}",
        f"--v={svc.verbosity}",
        *spec.extra_args,
    ]
    digest = content_hash(text)
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
        "config_hash": digest,
        "host_config_text": text,
        "host_config_hash": digest,
        "command": pod_command,
        "host_command": ["kschedctl", "scheduler", "run", *host_flags],
        "exec_start": exec_start_line([svc.binary, "scheduler", "run", *host_flags]),
    }
