"""The GitOps export forms: a Helm chart and a kustomize base, written as directories (pure).

Both hold the objects of the deployment form (``render --as deployment``), so a scheduler that
Argo CD or Flux applies from a repository is the scheduler ``kschedctl deploy
--as-deployment`` would have made, with the labels and annotations that ``list``, ``status``
and ``remove`` recognise it by.

- helm-chart: ``values.yaml`` holds the spec's fields (``scheduler.yaml``'s ``spec`` plus
  ``name``), the Go templates (``templates/helm-chart/`` of kschedctl, copied verbatim) build
  every object from them; what kschedctl derives from the Kubernetes version (the RBAC rules,
  the probes) is in ``files/kschedctl.yaml``. With its default values ``helm template`` gives
  the deployment form's objects (the config text is Helm's YAML of the same document, so its
  hash differs). kube-scheduler images only (programs kube-scheduler and custom): kschedctl's
  own scheduler has no chart yet.
- kustomize: the deployment form's objects, one file each, in a base ``scheduler/``; the
  RoleBinding that must stay in kube-system is a Component ``kube-system/`` whose replacement
  makes its subject follow the ServiceAccount wherever an overlay moves it (kustomize's
  namespace transformer moves every namespaced object it sees and has no per-object opt-out,
  so an overlay that moves the scheduler lists ``scheduler/`` under its own ``namespace:`` and
  adds the Component one level up: the README written beside them shows how).
"""

from __future__ import annotations

import json
from typing import Any

import yaml

from kschedctl.base.errors import SpecError
from kschedctl.base.yamltext import to_yaml
from kschedctl.model.config import versions
from kschedctl.render import schemas
from kschedctl.render.context import form_context
from kschedctl.render.escape import comment
from kschedctl.render.objects import (
    CLUSTER,
    DEPLOYMENT_OBJECTS,
    LEASE_NAMESPACE,
    NAMESPACE,
    Expected,
    expected_objects,
    object_key,
)
from kschedctl.render.routing import namespace_selector
from kschedctl.render.templates import render_template, templates_dir
from kschedctl.spec import CheckedSpec, Spec

__all__ = ["helm_chart", "kustomize_base", "KUBE_SYSTEM_COMPONENT", "SCHEDULER_BASE"]

CHART_TEMPLATES = "helm-chart"
# The kschedctl version names the chart version: a chart's version must be SemVer 2.
CHART_VERSION = "0.1.0"
# The spec's fields the chart's values hold (beside name, metrics and pod's POD_VALUE_FIELDS).
VALUE_FIELDS = (
    "namespace", "image", "rbac", "replicas", "leaderElection", "profiles",
    "clientConnection", "parallelism", "percentageOfNodesToScore",
    "podInitialBackoffSeconds", "podMaxBackoffSeconds", "extenders", "extraArgs",
)  # fmt: skip
POD_VALUE_FIELDS = ("resources", "nodeSelector", "tolerations", "priorityClassName", "verbosity")
SCHEDULER_BASE = "scheduler"
KUBE_SYSTEM_COMPONENT = "kube-system"
KUSTOMIZE_API = "kustomize.config.k8s.io/v1beta1"
COMPONENT_API = "kustomize.config.k8s.io/v1alpha1"


def _deployment_objects(spec: CheckedSpec) -> list[dict[str, Any]]:
    docs = yaml.safe_load_all(render_template("deployment.yaml.j2", **form_context(spec)))
    return [doc for doc in docs if doc is not None]


def chart_values(spec: CheckedSpec) -> dict[str, Any]:
    """values.yaml: the spec's fields that the chart reads (``name`` first, then ``spec``'s).

    The Lease's name and namespace are left empty when they are the defaults (the scheduler's
    name and namespace), so they follow ``name`` and ``namespace`` overrides as in a spec."""
    fields = spec.to_dict()["spec"]
    values: dict[str, Any] = {"name": spec.name}
    for key in VALUE_FIELDS:
        values[key] = fields.get(key)
    # Empty: the release namespace (`helm install -n NS`), as charts do; set it to pin one.
    values["namespace"] = ""
    values["rbac"] = spec.rbac
    values["extenders"] = list(spec.extenders)
    values["extraArgs"] = list(spec.extra_args)
    # Every spec.metrics field, defaults too: `--set metrics.service=true` turns it on.
    metrics = spec.metrics
    values["metrics"] = {
        "service": metrics.service,
        "serviceMonitor": metrics.service_monitor,
        "scraper": {
            "namespace": metrics.scraper.namespace,
            "serviceAccount": metrics.scraper.service_account,
        },
    }
    le = dict(values["leaderElection"])
    if le.get("resourceName") == spec.name:
        le["resourceName"] = ""
    if le.get("resourceNamespace") == spec.namespace:
        le["resourceNamespace"] = ""
    values["leaderElection"] = le
    pod = fields["pod"]
    values["pod"] = {k: pod[k] for k in POD_VALUE_FIELDS}
    return values


def chart_values_schema() -> dict[str, Any]:
    """values.schema.json: the spec's JSON Schema (``kschedctl schema spec``) of each value, so
    ``helm lint``, ``install`` and ``template`` refuse a value of the wrong type or an unknown
    key before rendering. Shapes only: kschedctl's own checks (``kschedctl validate``) go
    further."""
    fields = schemas.schema("spec")["properties"]["spec"]["properties"]
    pod = fields["pod"]
    properties: dict[str, Any] = {
        "name": {
            "type": "string",
            "minLength": 1,
            "description": "The scheduler's name (metadata.name of the spec).",
        },
        **{key: fields[key] for key in VALUE_FIELDS},
        "namespace": {
            "type": "string",
            "description": "The scheduler's namespace; empty: the release namespace.",
        },
        "metrics": fields["metrics"],
        "pod": {
            **pod,
            "properties": {key: pod["properties"][key] for key in POD_VALUE_FIELDS},
        },
    }
    return {
        # draft-07: the newest draft Helm 3 validates with (Helm 4 reads it too)
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "Values of a scheduler chart rendered by kschedctl",
        "type": "object",
        "properties": properties,
        "required": ["name", "image", "profiles"],
        "additionalProperties": False,
    }


def helm_chart(spec: CheckedSpec) -> dict[str, str]:
    """The chart's files: relative path → content."""
    if spec.program == "builtin":
        raise SpecError(
            "spec.program",
            "the helm-chart form renders kube-scheduler images only (program kube-scheduler or "
            "custom), not kschedctl's own scheduler",
            hint="export kschedctl's own scheduler with --as kustomize, or print its objects "
            "with --as deployment",
        )
    ctx = form_context(spec)
    probes = ctx["probes"]
    chart = {
        "apiVersion": "v2",
        "name": spec.name,
        "description": f"Scheduler {spec.name} (kube-scheduler {spec.version.tag}), "
        "rendered by kschedctl",
        "type": "application",
        "version": CHART_VERSION,
        "appVersion": spec.version.tag,
    }
    derived = {
        # The image's binary (program custom: the release's, or spec.custom.binary) and, for
        # spec.rbac builtinRoles, the rules its out-of-tree plugins need beyond the built-ins.
        "binary": spec.container_binary,
        "pluginRules": ctx["plugin_rules"],
        "rbacRules": ctx["rbac_rules"],
        "leaseVerbs": ctx["lease_verbs"],
        "securePort": ctx["secure_port"],
        "probePortName": ctx["probe_port_name"],
        "metricsPortName": ctx["metrics_port_name"],
        "probes": {
            "liveness": probes.liveness,
            "readiness": probes.readiness,
            "startup": probes.startup,
            "namedPort": probes.named_port,
        },
    }
    routing = ctx["routing"]
    if routing is not None:
        # What the policy matches (spec.routing); the chart adds the kube-system exclusion and
        # the patch, which follow the release's namespace and the name value.
        assert spec.routing is not None
        derived["routing"] = {
            "apiVersion": routing["api_version"],
            "namespaceSelector": namespace_selector(spec),
            "allowKubeSystem": spec.routing.allow_kube_system,
            "objectSelector": routing["object_selector"],
            "matchConditions": routing["match_conditions"],
        }
    head = f"# Scheduler {comment(spec.name)}, rendered by kschedctl from scheduler.yaml."
    files = {
        "Chart.yaml": f"{head}\n{to_yaml(chart)}\n",
        "values.yaml": (
            f"{head}\n# The spec's fields (kschedctl schema spec; values.schema.json checks them): "
            "override any of\n# them, e.g.\n"
            f"#   helm install {spec.name} . -n {spec.namespace} --set replicas=2\n"
            "# namespace is empty: the scheduler goes to the release namespace (-n); the spec "
            f"said {comment(spec.namespace)}.\n"
            f"{to_yaml(chart_values(spec))}\n"
        ),
        "values.schema.json": json.dumps(chart_values_schema(), indent=2, sort_keys=True) + "\n",
        "files/config.yaml": ctx["config_text"],
        "files/kschedctl.yaml": (
            f"# What kschedctl derives for Kubernetes {versions.CONFIG_API_VERSION} "
            f"{spec.version.minor_version}: RBAC rules, Lease verbs, probes. Not values: "
            "render the chart again for another version.\n"
            f"{to_yaml(derived)}\n"
        ),
    }
    source = templates_dir() / CHART_TEMPLATES
    for path in sorted(source.iterdir()):
        files[f"templates/{path.name}"] = path.read_text(encoding="utf-8")
    return files


def kustomize_base(spec: CheckedSpec) -> dict[str, str]:
    """The kustomize base's files: relative path → content."""
    objects = _deployment_objects(spec)
    lease_follows = _lease_follows(spec)
    if lease_follows:
        for obj in objects:
            if obj["kind"] == "Deployment":
                _lease_in_pod_namespace(obj)
    base: dict[str, str] = {}
    fixed: list[dict[str, Any]] = []
    rows = expected_objects(spec, DEPLOYMENT_OBJECTS)
    for obj in objects:
        key = object_key(obj)
        if _pinned(spec, rows[key]):
            fixed.append(obj)
            continue
        base[f"{key[1].lower()}-{key[3]}.yaml"] = to_yaml(obj, document=True)
    head = f"# Scheduler {comment(spec.name)}, rendered by kschedctl from scheduler.yaml."
    files = {
        "kustomization.yaml": (
            f"{head}\n# As is, it gives what `kschedctl render --as deployment` prints; to move "
            "the scheduler to\n# another namespace, see README.md.\n"
            + to_yaml(
                {
                    "apiVersion": KUSTOMIZE_API,
                    "kind": "Kustomization",
                    "resources": [SCHEDULER_BASE],
                    "components": [KUBE_SYSTEM_COMPONENT],
                },
                document=True,
            )
        ),
        f"{SCHEDULER_BASE}/kustomization.yaml": (
            f"{head}\n# Every object of the scheduler but those that stay in their own namespace.\n"
            + to_yaml(
                {"apiVersion": KUSTOMIZE_API, "kind": "Kustomization", "resources": list(base)},
                document=True,
            )
        ),
        **{f"{SCHEDULER_BASE}/{name}": text for name, text in base.items()},
    }
    component: list[str] = []
    replacements: list[dict[str, Any]] = []
    for obj in fixed:
        _, kind, _, name = object_key(obj)
        file = f"{kind.lower()}-{name}.yaml"
        component.append(file)
        files[f"{KUBE_SYSTEM_COMPONENT}/{file}"] = to_yaml(obj, document=True)
        # Its subject is the scheduler's ServiceAccount: follow it where an overlay moved it.
        replacements.append(
            {
                "source": {
                    "kind": "ServiceAccount",
                    "name": spec.name,
                    "fieldPath": "metadata.namespace",
                },  # fmt: skip
                "targets": [
                    {
                        "select": {"kind": kind, "name": name},
                        "fieldPaths": ["subjects.0.namespace"],
                    }
                ],
            }
        )
    files[f"{KUBE_SYSTEM_COMPONENT}/kustomization.yaml"] = (
        f"{head}\n# Objects that stay in kube-system wherever the scheduler goes (a Component: "
        "its replacement\n# runs where it is included, after the scheduler's namespace moved).\n"
        + to_yaml(
            {
                "apiVersion": COMPONENT_API,
                "kind": "Component",
                "resources": component,
                "replacements": replacements,
            },
            document=True,
        )
    )
    files["README.md"] = render_template(
        "kustomize-README.md.j2",
        name=spec.name,
        namespace=spec.namespace,
        base=SCHEDULER_BASE,
        component=KUBE_SYSTEM_COMPONENT,
        lease_follows=lease_follows,
    )
    return files


def _pinned(spec: Spec, row: Expected) -> bool:
    """An object whose namespace is not the scheduler's to move: kube-system's, or the Lease
    RBAC when the spec puts the Lease in a namespace of its own."""
    if row.namespace == LEASE_NAMESPACE:
        return not _lease_follows(spec)
    return row.namespace not in (NAMESPACE, CLUSTER)


def _lease_follows(spec: Spec) -> bool:
    """The Lease lives in the scheduler's namespace, so it must move with it."""
    le = spec.leader_election
    return le.leader_elect and le.resource_namespace == spec.namespace


# The config inside the ConfigMap is text kustomize cannot edit; kube-scheduler lets the
# --leader-elect-resource-namespace flag override it even with --config
# (cmd/kube-scheduler/app/options/options.go, ApplyTo: "honor the leader election CLI args").
POD_NAMESPACE_ENV = "POD_NAMESPACE"
LEASE_NAMESPACE_FLAG = f"--leader-elect-resource-namespace=$({POD_NAMESPACE_ENV})"


def _lease_in_pod_namespace(deployment: dict[str, Any]) -> None:
    """Make the scheduler hold its Lease in whatever namespace its pod runs in."""
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    container["command"].insert(2, LEASE_NAMESPACE_FLAG)
    container["env"] = [
        {
            "name": POD_NAMESPACE_ENV,
            "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}},
        }
    ]
