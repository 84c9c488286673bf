"""Spec → template context: every value the templates read, and the labels of every object.

Pure. :func:`form_context` is what the forms are rendered from: the values for kube-scheduler,
with those of kschedctl's own scheduler (:mod:`kschedctl.render.builtin`) laid over them for
``program: builtin``. The config files are pure data, so they are finished here, without a
template: ``config_text`` and ``host_config_text``.
"""

from __future__ import annotations

from typing import Any

from kschedctl.base.errors import SpecError
from kschedctl.base.yamltext import to_yaml
from kschedctl.model.config import rbac, versions
from kschedctl.render.builtin import builtin_context, configmap_problems
from kschedctl.render.escape import comment, exec_start_line
from kschedctl.render.routing import routing_context
from kschedctl.render.templates import content_hash
from kschedctl.spec import CheckedSpec, Spec, ensure_valid

IN_CLUSTER_CONFIG_DIR = "/etc/kubernetes/{name}"
# The metrics Service's port name (kube-prometheus names kube-scheduler's the same).
METRICS_PORT_NAME = "https-metrics"
MANAGED_BY = "kschedctl"
# The annotations `deploy` records and list/status/remove read (kschedctl.observe.schedulers
# FORM_ANNOTATION and LEASE_ANNOTATION; render may not import observe, a test pins them equal).
FORM_ANNOTATION = "kschedctl.io/form"
LEASE_ANNOTATION = "kschedctl.io/lease"
# kschedctl's own mark, which no deployment tool rewrites (observe.schedulers SCHEDULER_LABEL).
SCHEDULER_LABEL = "kschedctl.io/scheduler"


def require_renderable(spec: Spec) -> CheckedSpec:
    """``spec``, once it is valid (every program renders; a :class:`CheckedSpec` is as it was
    checked, so it is not checked again) and its ConfigMap can carry its plugin files
    (:func:`kschedctl.render.builtin.configmap_problems`, which validate runs too)."""
    spec = ensure_valid(spec)
    problems = configmap_problems(spec)
    if problems:
        raise SpecError.from_problems(problems)
    return spec


def config_hash(spec: CheckedSpec) -> str:
    """The ``kschedctl.io/config-hash`` the in-cluster forms' pods carry: the rendered config
    (and, for program builtin, its plugin files)."""
    return str(form_context(require_renderable(spec))["config_hash"])


def config_file(spec: Spec, config: dict[str, Any]) -> str:
    """A KubeSchedulerConfiguration file: pure data, so no template (and no Jinja import)."""
    return (
        f"# KubeSchedulerConfiguration of scheduler {comment(spec.name)}, rendered by kschedctl "
        f"from scheduler.yaml.\n{to_yaml(config)}\n"
    )


def labels(spec: Spec, component: str = "scheduler") -> dict[str, str]:
    return {
        "app.kubernetes.io/name": spec.name,
        "app.kubernetes.io/instance": spec.name,
        "app.kubernetes.io/component": component,
        "app.kubernetes.io/managed-by": MANAGED_BY,
        SCHEDULER_LABEL: spec.name,
    }


def form_annotations(spec: Spec, form: str) -> dict[str, str]:
    """The annotations of every object of ``form``: the form, and the Lease it holds."""
    annotations = {FORM_ANNOTATION: form}
    le = spec.leader_election
    if le.leader_elect:
        annotations[LEASE_ANNOTATION] = f"{le.resource_namespace}/{le.resource_name}"
    return annotations


def form_context(spec: CheckedSpec) -> dict[str, Any]:
    """The template context of ``spec`` (already checked by :func:`require_renderable`)."""
    context = kube_scheduler_context(spec)
    if spec.program == "builtin":
        context.update(builtin_context(spec, context))
    return context


def kube_scheduler_context(spec: Spec) -> dict[str, Any]:
    """The template context for program kube-scheduler (the base of every program's)."""
    version = spec.version
    config_dir = IN_CLUSTER_CONFIG_DIR.format(name=spec.name)
    config_text = config_file(spec, spec.scheduler_config())
    host_config = spec.scheduler_config(kubeconfig=spec.service.kubeconfig)
    host_config_text = config_file(spec, host_config)
    svc = spec.service
    plugin_rules = spec.plugin_rules()
    host_flags = [
        f"--config={spec.host_config_path}",
        f"--authentication-kubeconfig={svc.kubeconfig}",
        f"--authorization-kubeconfig={svc.kubeconfig}",
        f"--bind-address={svc.bind_address}",
        f"--secure-port={svc.secure_port}",
        f"--v={svc.verbosity}",
        *spec.extra_args,
    ]
    # kubeadm probes the bind address, except a wildcard one (then the pod IP is right).
    probe_host = "" if svc.bind_address in ("0.0.0.0", "::") else svc.bind_address
    return {
        "spec": spec,
        "name": spec.name,
        "namespace": spec.namespace,
        "version": version,
        "labels": labels(spec),
        "form_annotations": lambda form: form_annotations(spec, form),
        "selector": {k: v for k, v in labels(spec).items() if k.endswith(("/name", "/instance"))},
        "le": spec.leader_election,
        "lease_verbs": list(versions.lease_verbs(version)),
        "probes": versions.probes(version),
        "probe_port_name": versions.PROBE_PORT_NAME,
        "secure_port": versions.DEFAULT_SECURE_PORT,
        "config_dir": config_dir,
        "config_text": config_text,
        "config_hash": content_hash(config_text),
        "command": [
            spec.container_binary,
            f"--config={config_dir}/config.yaml",
            f"--v={spec.pod.verbosity}",
            *spec.extra_args,
        ],
        "host_config_text": host_config_text,
        "host_config_hash": content_hash(host_config_text),
        "host_command": [spec.container_binary, *host_flags],
        "exec_start": exec_start_line([svc.binary, *host_flags]),
        "probe_host": probe_host,
        "example_pod": {
            "name": f"{spec.name}-example",
            "labels": labels(spec, component="example"),
            "image": versions.PAUSE_IMAGE,
        },
        # What differs for program builtin (kschedctl.render.builtin.builtin_context).
        "builtin": False,
        "container_name": "kube-scheduler",
        "probe_scheme": "HTTPS",
        "config_key": "config.yaml",
        "config_what": "KubeSchedulerConfiguration",
        "runs": "kube-scheduler --config",
        "rbac_template": "_rbac.yaml.j2",
        # spec.rbac: the explicit ClusterRole NAME-scheduler (least privilege) or the built-in
        # roles; program builtin always has its own rules (kschedctl.render.builtin).
        "rbac": spec.rbac,
        "rbac_rules": rbac.scheduler_rules(version) + plugin_rules,
        # program custom: what the out-of-tree plugins its profiles enable need beyond
        # kube-scheduler's own rules (with builtinRoles, a ClusterRole of these alone).
        "plugin_rules": plugin_rules,
        # spec.builtin.plugins (program builtin only: kschedctl.render.builtin).
        "plugin_data": {},
        "plugin_items": [],
        "plugin_annotations": {},
        "plugin_installs": [],
        "plugin_dir": "",
        "host_plugin_dir": "",
        "program_what": "kube-scheduler" if spec.program != "custom" else custom_what(spec),
        # spec.metrics (templates/_metrics.yaml.j2): the Service, ServiceMonitor and scraper
        # RBAC of the in-cluster forms. The Service selects the scheduler's pods only (the
        # example pod shares their name and instance labels).
        "metrics": spec.metrics,
        "metrics_labels": labels(spec, component="metrics"),
        "metrics_selector": _component_selector(spec, "scheduler"),
        "metrics_match": _component_selector(spec, "metrics"),
        "metrics_port_name": "http-metrics" if spec.program == "builtin" else METRICS_PORT_NAME,
        # program builtin serves plain HTTP without authorization: no RBAC to grant.
        "metrics_rbac": spec.metrics.scraper_rbac and spec.program != "builtin",
        # The ServiceAccount `status --metrics` mints its tokens for (a kube-scheduler's pod and
        # deployment forms; host-rbac.yaml sets it off): render.objects.status_reader.
        "metrics_status_reader": spec.program != "builtin",
        # spec.routing (templates/_routing.yaml.j2): the MutatingAdmissionPolicy, or None.
        "routing": routing_context(spec, SCHEDULER_LABEL),
        "routing_labels": labels(spec, component="routing"),
    }


def _component_selector(spec: Spec, component: str) -> dict[str, str]:
    """The labels that pick the scheduler's objects of ``component`` (the ones no deployment
    tool rewrites: not managed-by)."""
    return {
        k: v
        for k, v in labels(spec, component=component).items()
        if k.endswith(("/name", "/instance", "/component"))
    }


def custom_what(spec: Spec) -> str:
    """A custom kube-scheduler, in one line: its release when it is a known one."""
    release = spec.release
    if release is None:
        return "a custom kube-scheduler"
    return f"kube-scheduler of {release.distribution} {release.tag}"
