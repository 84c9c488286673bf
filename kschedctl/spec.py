"""The scheduler spec (``scheduler.yaml``): model, strict loading, defaulting, validation.

Pure (reads files, nothing else). One spec is the single source of truth from which every
artefact is rendered. Loading is strict like kube-scheduler's own decoder: unknown
fields, wrong types and malformed YAML are errors naming the field, and validation collects
every problem instead of stopping at the first.
"""

from __future__ import annotations

import copy
import dataclasses
import os
import re
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kschedctl import __version__
from kschedctl.base import userfile
from kschedctl.base.errors import NotFoundError, Problem, SpecError, errors_in, printable, quote
from kschedctl.model.config import distributions, shapes, versions
from kschedctl.model.config import validation as validate
from kschedctl.model.config.defaults import LEASE_NAMESPACE
from kschedctl.model.config.rbac import BUILTIN_ROLES, DEFAULT_RBAC, RBAC_MODES
from kschedctl.model.config.schema import (
    YamlError,
    check_fields,
    join,
    parse_yaml,
    type_name,
    type_ok,
    unknown_field_message,
)

API_VERSION = "kschedctl.io/v1alpha1"
KIND = "Scheduler"
SPEC_FILE = "scheduler.yaml"
PROGRAMS = ("kube-scheduler", "builtin", "custom")


@dataclass
class LeaderElection:
    leader_elect: bool = True
    resource_name: str = ""  # "" → the scheduler name (never the default "kube-scheduler")
    resource_namespace: str = ""  # "" → spec.namespace
    lease_duration: str = "15s"
    renew_deadline: str = "10s"
    retry_period: str = "2s"


@dataclass
class ServiceSettings:
    """Host forms (systemd service, static pod): paths on the host and how to serve."""

    binary: str = "/usr/local/bin/kube-scheduler"
    config_dir: str = "/etc/kubernetes/config"
    kubeconfig: str = "/etc/kubernetes/scheduler.conf"
    bind_address: str = "127.0.0.1"
    # 10259 is the default scheduler's port on the same host; the next one is free.
    secure_port: int = 10260
    verbosity: int = 2
    # Whom service.kubeconfig authenticates as: the lease RBAC (host-rbac) binds this user.
    user: str = "system:kube-scheduler"


@dataclass
class PodSettings:
    """In-cluster forms (pod, deployment; static-pod takes resources from here)."""

    resources: dict[str, Any] = field(default_factory=lambda: {"requests": {"cpu": "100m"}})
    node_selector: dict[str, Any] = field(default_factory=dict)
    tolerations: list[Any] = field(default_factory=list)
    priority_class_name: str = "system-cluster-critical"
    verbosity: int = 2


BUILTIN_BINARY = "/usr/local/bin/kschedctl"


@dataclass
class CustomSettings:
    """``program: custom``: a kube-scheduler image with plugins of its own
    (kschedctl.model.config.distributions)."""

    # A known distribution (scheduler-plugins), its release read from the image tag; "" → read
    # from the image when it is a known one.
    distribution: str = ""
    # The scheduler's path inside the image; "" → the release's (scheduler-plugins:
    # /bin/kube-scheduler), else kube-scheduler on the image's PATH.
    binary: str = ""
    # The plugins the image adds (an image that is not a known distribution): name,
    # extensionPoints, and the extra PolicyRules (rbac) they need.
    plugins: list[Any] = field(default_factory=list)


@dataclass
class BuiltinSettings:
    """``program: builtin`` (kschedctl's own scheduler): ranking and fallback policy."""

    strategy: str = "spread"  # kschedctl.model.scheduling.strategies.DEFAULT_STRATEGY
    # The fallback policy (``fallbacks``, ``strictPreferences``), as in a --policy file.
    policy: dict[str, Any] = field(default_factory=dict)
    metrics_port: int = 10259  # in-cluster forms; host forms serve on service.securePort
    # Plugin files (``--plugin``), relative to the workspace (the directory of scheduler.yaml),
    # in the order the scheduler runs them.
    plugins: list[Any] = field(default_factory=list)
    # Their text, path → source, read when the spec is loaded from its file (not a YAML field):
    # rendering stays pure, and a missing or unreadable file is a problem of loading.
    plugin_sources: dict[str, str] = field(default_factory=dict, metadata={"yaml": False})


@dataclass
class MetricsScraper:
    """Who scrapes the scheduler's /metrics: the ServiceAccount a ClusterRole granting ``get`` on
    the non-resource URL /metrics is bound to (kube-prometheus' Prometheus by default)."""

    namespace: str = "monitoring"
    service_account: str = "prometheus-k8s"  # "" → no RBAC (the scraper has it already)


@dataclass
class MetricsSettings:
    """Scraping the scheduler (in-cluster forms: pod, deployment)."""

    service: bool = False  # a headless Service NAME-metrics on the metrics port
    service_monitor: bool = False  # a Prometheus Operator ServiceMonitor selecting it
    scraper: MetricsScraper = field(default_factory=MetricsScraper)

    @property
    def scraper_rbac(self) -> bool:
        """Render the scraper's ClusterRole and binding (the Service asked, a scraper named)."""
        return self.service and bool(self.scraper.service_account)


@dataclass
class Spec:
    """A scheduler: ``metadata.name`` plus the fields of ``spec`` (camelCase in YAML)."""

    name: str = field(metadata={"yaml": False})
    kubernetes_version: str = versions.DEFAULT_VERSION
    namespace: str = "kube-system"
    image: str = ""  # "" → registry.k8s.io/kube-scheduler:<patch of kubernetesVersion>
    program: str = "kube-scheduler"
    # What the ServiceAccount is bound to (kschedctl.model.config.rbac): least privilege, or the
    # built-in system:kube-scheduler and system:volume-scheduler roles.
    rbac: str = DEFAULT_RBAC
    replicas: int = 1
    replaces_default: bool = False
    leader_election: LeaderElection = field(default_factory=LeaderElection)
    profiles: list[Any] = field(default_factory=list)  # KubeSchedulerProfile v1, passed through
    client_connection: dict[str, Any] = field(default_factory=lambda: {"qps": 50, "burst": 100})
    parallelism: int | None = None
    percentage_of_nodes_to_score: int | None = None
    pod_initial_backoff_seconds: int | None = None
    pod_max_backoff_seconds: int | None = None
    extenders: list[Any] = field(default_factory=list)
    extra_args: list[Any] = field(default_factory=list)
    service: ServiceSettings = field(default_factory=ServiceSettings)
    pod: PodSettings = field(default_factory=PodSettings)
    builtin: BuiltinSettings = field(default_factory=BuiltinSettings)
    custom: CustomSettings = field(default_factory=CustomSettings)
    metrics: MetricsSettings = field(default_factory=MetricsSettings)

    @property
    def version(self) -> versions.KubeVersion:
        return versions.parse_version(self.kubernetes_version)

    @property
    def scheduler_names(self) -> list[str]:
        return [p.get("schedulerName") or "" for p in self.profiles if isinstance(p, dict)]

    @property
    def release(self) -> distributions.Release | None:
        """The known distribution release a ``program: custom`` image runs, else None."""
        if self.program != "custom":
            return None
        return distributions.release_of(self.image, self.custom.distribution)

    def extra_plugins(self) -> Mapping[str, frozenset[str]]:
        """Out-of-tree plugin → extension points its image adds ({} but for program custom)."""
        if self.program != "custom":
            return {}
        return distributions.plugins_for(self.image, self.custom.distribution, self.custom.plugins)

    def plugin_rules(self) -> list[dict[str, Any]]:
        """The extra PolicyRules of the out-of-tree plugins its profiles enable."""
        if self.program != "custom":
            return []
        enabled = distributions.enabled_plugins(self.profiles)
        return distributions.plugin_rules(enabled, self.release, self.custom.plugins)

    @property
    def container_binary(self) -> str:
        """The scheduler's command inside its image (in-cluster forms and the static pod)."""
        if self.program == "custom":
            release = self.release
            return self.custom.binary or (release.binary if release else "kube-scheduler")
        return "kube-scheduler"

    @property
    def host_config_path(self) -> str:
        """Where the service and static-pod forms read their config on the host."""
        return f"{self.service.config_dir.rstrip('/')}/{self.name}.yaml"

    @property
    def host_plugin_dir(self) -> str:
        """Where the host forms install ``builtin.plugins``: beside the config on the host."""
        return f"{self.service.config_dir.rstrip('/')}/{self.name}-plugins"

    def scheduler_config(self, kubeconfig: str = "") -> dict[str, Any]:
        """The KubeSchedulerConfiguration this spec stands for (kubeconfig "" = in-cluster)."""
        le = self.leader_election
        config: dict[str, Any] = {
            "apiVersion": versions.CONFIG_API_VERSION,
            "kind": "KubeSchedulerConfiguration",
        }
        if self.parallelism is not None:
            config["parallelism"] = self.parallelism
        if le.leader_elect:
            config["leaderElection"] = {
                "leaderElect": True,
                "resourceNamespace": le.resource_namespace,
                "resourceName": le.resource_name,
                "leaseDuration": le.lease_duration,
                "renewDeadline": le.renew_deadline,
                "retryPeriod": le.retry_period,
            }
        else:
            config["leaderElection"] = {"leaderElect": False}
        connection = dict(self.client_connection)
        if kubeconfig:
            connection = {"kubeconfig": kubeconfig, **connection}
        if connection:
            config["clientConnection"] = connection
        for key in ("percentage_of_nodes_to_score", "pod_initial_backoff_seconds"):
            if getattr(self, key) is not None:
                config[_camel(key)] = getattr(self, key)
        if self.pod_max_backoff_seconds is not None:
            config["podMaxBackoffSeconds"] = self.pod_max_backoff_seconds
        config["profiles"] = copy.deepcopy(self.profiles)
        if self.extenders:
            config["extenders"] = copy.deepcopy(self.extenders)
        return config

    def to_dict(self) -> dict[str, Any]:
        """``scheduler.yaml`` as written by ``create``: stable key order, unset fields left out."""
        return {
            "apiVersion": API_VERSION,
            "kind": KIND,
            "metadata": {"name": self.name},
            "spec": _section_to_dict(self),
        }


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _yaml_fields(cls: type) -> dict[str, dataclasses.Field[Any]]:
    return {_camel(f.name): f for f in dataclasses.fields(cls) if f.metadata.get("yaml", True)}


def _section_to_dict(obj: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, f in _yaml_fields(type(obj)).items():
        value = getattr(obj, f.name)
        if key == "builtin" and getattr(obj, "program", "builtin") != "builtin":
            continue  # only kschedctl's own scheduler reads it
        if key == "custom" and getattr(obj, "program", "custom") != "custom":
            continue  # only program custom reads it
        if isinstance(obj, CustomSettings) and not value:
            continue  # unset: read from the image
        if isinstance(obj, BuiltinSettings) and key == "plugins" and not value:
            continue  # no plugins: keep them out of ordinary specs
        if key == "metrics" and value == MetricsSettings():
            continue  # nothing asked: no metrics objects
        if dataclasses.is_dataclass(value):
            out[key] = _section_to_dict(value)
        elif value is None or (key in ("extenders", "extraArgs") and not value):
            continue  # optional: the config default applies
        elif key == "replacesDefault" and not value:
            continue  # the rare case; keep it out of ordinary specs
        elif key == "rbac" and value == DEFAULT_RBAC:
            continue  # the default; a spec that chooses the built-in roles says so
        else:
            out[key] = copy.deepcopy(value)
    return out


_SCALARS = {bool: bool, int: int, str: str}


def _expected_type(hint: Any) -> Any:
    if hint in _SCALARS:
        return hint
    origin = typing.get_origin(hint)
    if origin in (list, dict):
        return origin
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    return _expected_type(args[0]) if args else None


def _load_section(cls: type, data: Any, path: str, out: list[Problem]) -> Any:
    """Build dataclass ``cls`` from a mapping, reporting unknown fields and wrong types."""
    obj = cls() if cls is not Spec else None
    if data is None:
        return obj if cls is not Spec else {}
    if not isinstance(data, dict):
        out.append(Problem(path, f"must be a mapping, not {type(data).__name__}"))
        return obj if cls is not Spec else {}
    fields = _yaml_fields(cls)
    hints = typing.get_type_hints(cls)
    values: dict[str, Any] = {}
    for key, value in data.items():
        fpath = join(path, str(key))
        if key not in fields:
            out.append(Problem(fpath, unknown_field_message(key, list(fields))))
            continue
        f = fields[key]
        hint = hints[f.name]
        if isinstance(hint, type) and dataclasses.is_dataclass(hint):
            values[f.name] = _load_section(hint, value, fpath, out)
            continue
        expected = _expected_type(hint)
        if key == "kubernetesVersion" and isinstance(value, (int, float)):
            out.append(
                Problem(fpath, f'must be a string: quote it ("{value}"); YAML reads 1.30 as 1.3')
            )
            continue
        if value is None and type(None) in typing.get_args(hint):
            values[f.name] = None
            continue
        problems: list[Problem] = []
        check_fields({key: value}, {key: expected}, path, problems)
        if value is None or problems:
            out.extend(problems or [Problem(fpath, "must not be null")])
            continue
        values[f.name] = value
    if cls is Spec:
        return values
    return dataclasses.replace(obj, **values)  # type: ignore[type-var]


def spec_from_dict(
    doc: Any, source: str = "", base: str | Path | None = None
) -> tuple[Spec | None, list[Problem]]:
    """Strictly build a Spec from a parsed ``scheduler.yaml``; problems instead of exceptions.

    ``base``: the workspace directory (where scheduler.yaml is), which ``builtin.plugins``
    paths are relative to; their files are read here (None: a spec that lists plugins is
    refused, it has no workspace to read them from)."""
    out: list[Problem] = []
    if not isinstance(doc, dict):
        return None, [Problem("", "a scheduler spec must be a mapping", source)]
    # First what no field may hold (control characters, non-JSON types, huge numbers): no
    # later check, message or renderer ever sees such a value.
    hostile = shapes.hostile_problems(doc)
    if hostile:
        return None, [p.moved(source=source) for p in hostile]
    check_fields(doc, {"apiVersion": str, "kind": str, "metadata": dict, "spec": dict}, "", out)
    if doc.get("apiVersion") != API_VERSION:
        out.append(
            Problem(
                "apiVersion", f"must be {API_VERSION}, not {shapes.shown(doc.get('apiVersion'))}"
            )
        )
    if doc.get("kind") != KIND:
        out.append(Problem("kind", f"must be {KIND}, not {shapes.shown(doc.get('kind'))}"))
    raw_metadata = doc.get("metadata")
    metadata: dict[str, Any] = raw_metadata if isinstance(raw_metadata, dict) else {}
    check_fields(metadata, {"name": str}, "metadata", out)
    name = metadata.get("name")
    if not isinstance(name, str) or not name:
        out.append(Problem("metadata.name", "is required: the scheduler name"))
        name = ""
    values = _load_section(Spec, doc.get("spec"), "spec", out)  # absent: all defaults
    spec = Spec(name=name, **values)
    apply_defaults(
        spec,
        explicit_profiles="profiles" in values,
        explicit_version="kubernetes_version" in values,
    )
    out.extend(check_spec(spec))
    out.extend(read_plugins(spec, base))
    return spec, [p.moved(source=source) for p in out]


def apply_defaults(
    spec: Spec, *, explicit_profiles: bool = False, explicit_version: bool = True
) -> Spec:
    """Fill what the spec leaves to defaults. ``explicit_version``: kubernetesVersion was
    chosen; otherwise a ``program: custom`` spec of a known release follows that release."""
    le = spec.leader_election
    # A replacement of the default scheduler takes over kube-scheduler's own Lease (kubeadm's
    # default, kube-system/kube-scheduler): holding it is what keeps the two from both binding.
    le.resource_name = le.resource_name or (
        versions.DEFAULT_LEASE_NAME if spec.replaces_default else spec.name
    )
    le.resource_namespace = le.resource_namespace or spec.namespace
    if not spec.profiles and not explicit_profiles:
        spec.profiles = [{"schedulerName": spec.name}]
    if not spec.image and spec.program == "kube-scheduler":
        try:
            spec.image = versions.default_image(spec.version)
        except ValueError:
            pass  # reported by check_spec on spec.kubernetesVersion
    if spec.program == "custom":
        if not spec.custom.distribution:
            spec.custom.distribution = distributions.distribution_of_image(spec.image)
        release = spec.release
        if release is not None and not explicit_version:
            spec.kubernetes_version = f"1.{release.minor}"
    if spec.program == "builtin":
        if not spec.image:
            spec.image = builtin_image()
        if spec.service.binary == ServiceSettings.binary:
            spec.service.binary = BUILTIN_BINARY
    return spec


def builtin_image() -> str:
    """The image the repository's Dockerfile builds: ``docker build -t kschedctl:VERSION .``"""
    return f"kschedctl:{__version__}"


def with_program(spec: Spec, program: str) -> Spec:
    """``spec`` switched to another program; defaults that belonged to the old one follow."""
    spec = copy.deepcopy(spec)
    if program == spec.program:
        return spec
    try:
        if spec.image in (versions.default_image(spec.version), builtin_image()):
            spec.image = ""
    except ValueError:
        pass
    if spec.service.binary in (ServiceSettings.binary, BUILTIN_BINARY):
        spec.service.binary = ServiceSettings.binary
    spec.program = program
    return apply_defaults(spec, explicit_version=False)


def default_spec(name: str, **overrides: Any) -> Spec:
    """All defaults for ``name``; ``overrides`` are Spec attributes (plus ``leader_elect``).

    None values are ignored, so CLI options can be passed through as they come.
    """
    spec = Spec(name=name)
    leader_elect = overrides.pop("leader_elect", None)
    for key, value in overrides.items():
        if key == "name" or not hasattr(spec, key):
            raise TypeError(f"default_spec() got an unexpected override {key!r}")
        if value is not None:
            setattr(spec, key, value)
    if leader_elect is not None:
        spec.leader_election.leader_elect = leader_elect
    return apply_defaults(spec, explicit_version=overrides.get("kubernetes_version") is not None)


def with_version(spec: Spec, kubernetes_version: str) -> Spec:
    """Retarget ``spec``; a default image follows the version, a custom one stays."""
    try:
        followed = spec.image == versions.default_image(spec.version)
    except ValueError:
        followed = True
    spec = copy.deepcopy(spec)
    spec.kubernetes_version = kubernetes_version
    if followed:
        spec.image = ""
    return apply_defaults(spec)


# ---------------------------------------------------------------------------------------------
# Validation: the spec's own rules, then the config rules on the config it renders to.


def check_spec(spec: Spec) -> list[Problem]:
    """Every problem of ``spec``: the one check behind loading, ``validate``, ``render``,
    ``create`` and ``deploy`` (:func:`spec_from_dict` and :func:`ensure_valid` both end here)."""
    structural = _structure_problems(spec)
    if structural:
        return structural  # the rules below read typed, printable values only
    out: list[Problem] = []
    name_problem = shapes.dns_label_problem(spec.name)
    if name_problem:
        out.append(Problem("metadata.name", f"scheduler name {name_problem}"))
    elif spec.name == versions.DEFAULT_SCHEDULER_NAME and not spec.replaces_default:
        out.append(
            Problem(
                "metadata.name",
                "'default-scheduler' is the cluster's own scheduler: pick another name for an "
                "additional scheduler (or set spec.replacesDefault to replace it)",
            )
        )
    out.extend(_check_replacement(spec))
    version: versions.KubeVersion | None = None
    version_problem = shapes.kubernetes_version_problem(spec.kubernetes_version)
    if version_problem:
        out.append(Problem("spec.kubernetesVersion", version_problem))
    else:
        try:
            version = spec.version
        except ValueError as err:
            out.append(Problem("spec.kubernetesVersion", str(err)))
    ns_problem = shapes.dns_label_problem(spec.namespace)
    if ns_problem:
        out.append(Problem("spec.namespace", f"namespace {ns_problem}"))
    if spec.program not in PROGRAMS:
        out.append(
            Problem(
                "spec.program",
                f"{shapes.shown(spec.program)}: must be one of {', '.join(PROGRAMS)}",
            )
        )
    out.extend(_check_rbac(spec))
    if spec.image:
        image_problem = shapes.image_problem(spec.image)
        if image_problem:
            out.append(Problem("spec.image", image_problem))
        elif version is not None:
            out.extend(_check_image(spec, version))
    elif version is not None:
        out.extend(_check_image(spec, version))
    if spec.replicas < 1:
        out.append(Problem("spec.replicas", f"{spec.replicas}: must be at least 1"))
    elif spec.replicas > shapes.INT32_MAX:
        out.append(Problem("spec.replicas", str(shapes.int_range_problem(spec.replicas, 1))))
    elif spec.replicas > 1 and not spec.leader_election.leader_elect:
        out.append(
            Problem(
                "spec.replicas",
                f"{spec.replicas} replicas need leader election: without it every replica "
                "schedules and they double-book nodes (set spec.leaderElection.leaderElect: true)",
            )
        )
    le = spec.leader_election
    if le.leader_elect and not (name_problem and le.resource_name == spec.name):
        problem = shapes.dns_subdomain_problem(le.resource_name)
        if problem:
            out.append(Problem("spec.leaderElection.resourceName", f"Lease name {problem}"))
        problem = shapes.dns_label_problem(le.resource_namespace)
        if problem:
            out.append(Problem("spec.leaderElection.resourceNamespace", f"namespace {problem}"))
    names = spec.scheduler_names
    if names and spec.name and spec.name not in names:
        out.append(
            Problem(
                "spec.profiles",
                f"no profile is named {spec.name!r} (metadata.name): kschedctl finds a scheduler "
                "by its name, so one profile must serve it",
            )
        )
    if "kubeconfig" in spec.client_connection:
        out.append(
            Problem(
                "spec.clientConnection.kubeconfig",
                "set spec.service.kubeconfig instead: host forms use it, in-cluster forms use "
                "the ServiceAccount",
            )
        )
    if spec.program == "builtin":
        # kschedctl's own flags: the same shape (--name[=value]), none of kube-scheduler's rules.
        out.extend(
            Problem(f"spec.extraArgs[{i}]", problem)
            for i, arg in enumerate(spec.extra_args)
            if (problem := shapes.flag_problem(arg))
        )
        out.extend(_check_builtin(spec))
    else:
        out.extend(validate.check_extra_args(spec.extra_args, "spec.extraArgs"))
        if spec.builtin != BuiltinSettings():
            out.append(Problem("spec.builtin", "applies to program builtin only"))
    if spec.program == "custom":
        out.extend(check_custom(spec, version))
    elif spec.custom != CustomSettings():
        out.append(Problem("spec.custom", "applies to program custom only"))
    out.extend(_check_service(spec))
    out.extend(_check_pod(spec.pod))
    out.extend(_check_metrics(spec.metrics))
    if version is not None:
        out.extend(
            validate.check_config(
                spec.scheduler_config(),
                version,
                replaces_default=spec.replaces_default,
                prefix="spec.",
                type_meta=False,
                extra_plugins=spec.extra_plugins(),
            )
        )
    return out


def _check_replacement(spec: Spec) -> list[Problem]:
    """``replacesDefault``: serve what the default scheduler serves, where it lives.

    Pods that name no scheduler get ``default-scheduler`` (the API server's defaulting), and
    kube-scheduler's Lease is kube-system/kube-scheduler (kubeadm's defaults): a replacement
    holding another Lease would bind alongside kube-scheduler instead of taking over.
    """
    if not spec.replaces_default:
        return []
    out: list[Problem] = []
    if versions.DEFAULT_SCHEDULER_NAME not in spec.scheduler_names:
        out.append(
            Problem(
                "spec.replacesDefault",
                f"no profile serves {versions.DEFAULT_SCHEDULER_NAME!r}: a replacement of the "
                "default scheduler must serve the pods that name no scheduler (name it "
                f"{versions.DEFAULT_SCHEDULER_NAME}: kschedctl create "
                f"{versions.DEFAULT_SCHEDULER_NAME} --replaces-default)",
            )
        )
    if spec.namespace != LEASE_NAMESPACE:
        out.append(
            Problem(
                "spec.namespace",
                f"a replacement of the default scheduler runs in {LEASE_NAMESPACE}, beside the "
                "default scheduler's Lease",
            )
        )
    le = spec.leader_election
    lease = (le.resource_namespace, le.resource_name)
    if le.leader_elect and lease != (LEASE_NAMESPACE, versions.DEFAULT_LEASE_NAME):
        out.append(
            Problem(
                "spec.leaderElection",
                f"a replacement of the default scheduler holds the Lease {LEASE_NAMESPACE}/"
                f"{versions.DEFAULT_LEASE_NAME}, not {'/'.join(lease)}: with a Lease of its "
                "own it binds alongside kube-scheduler instead of taking over from it",
            )
        )
    return out


def _check_rbac(spec: Spec) -> list[Problem]:
    if spec.rbac not in RBAC_MODES:  # the value itself is not echoed: it may be anything
        return [
            Problem(
                "spec.rbac",
                f"must be one of {', '.join(RBAC_MODES)}: least privilege (the default), or "
                "the cluster's system:kube-scheduler and system:volume-scheduler roles",
            )
        ]
    if spec.rbac == BUILTIN_ROLES and spec.program == "builtin":
        return [
            Problem(
                "spec.rbac",
                f"{BUILTIN_ROLES} applies to program kube-scheduler only: program builtin "
                "always gets its own ClusterRole of exactly what it uses",
            )
        ]
    return []


def _structure_problems(spec: Spec) -> list[Problem]:
    """Wrong types and unrenderable values anywhere in ``spec`` (also one built in code)."""
    out: list[Problem] = []
    if not isinstance(spec.name, str):
        out.append(Problem("metadata.name", f"must be a string, not {shapes.shown(spec.name)}"))
    else:
        out.extend(shapes.hostile_problems(spec.name, "metadata.name"))
    _typed_fields(spec, "spec", out)
    return out


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


def _typed_fields(obj: Any, path: str, out: list[Problem]) -> None:
    hints = _hints(type(obj))
    for key, f in _yaml_fields(type(obj)).items():
        value, hint, fpath = getattr(obj, f.name), hints[f.name], join(path, key)
        if isinstance(hint, type) and dataclasses.is_dataclass(hint):
            if type(value) is not hint:
                out.append(Problem(fpath, f"must be a mapping, not {shapes.shown(value)}"))
            else:
                _typed_fields(value, fpath, out)
            continue
        if value is None and type(None) in typing.get_args(hint):
            continue
        expected = _expected_type(hint)
        if value is None or not type_ok(value, expected):
            out.append(Problem(fpath, f"must be {type_name(expected)}, not {shapes.shown(value)}"))
            continue
        out.extend(shapes.hostile_problems(value, fpath))


def _check_image(spec: Spec, version: versions.KubeVersion) -> list[Problem]:
    image = spec.image
    if not image:
        if spec.program not in PROGRAMS:
            return []  # reported on spec.program
        return [Problem("spec.image", "is required when spec.program is not kube-scheduler")]
    if image.startswith("k8s.gcr.io/"):
        return [Problem("spec.image", "k8s.gcr.io is frozen since April 2023: use registry.k8s.io")]
    repo, _, tag = image.rpartition(":")
    if repo != versions.IMAGE_REPOSITORY:
        return []
    release = versions.RELEASE_TAG.fullmatch(tag)
    if release is None:
        return [
            Problem(
                "spec.image",
                f"tag {tag!r} is not a kube-scheduler release: registry.k8s.io tags them "
                f"vX.Y.Z, with the v and the patch (e.g. {version.tag}); remove spec.image "
                "to follow kubernetesVersion",
            )
        ]
    try:
        image_version = versions.parse_version(".".join(release.group(1, 2, 3)))
    except ValueError as err:
        return [Problem("spec.image", f"tag {tag!r}: {err}")]
    if image_version.minor > version.minor or image_version.minor < version.minor - 1:
        return [
            Problem(
                "spec.image",
                f"kube-scheduler {tag} does not fit kubernetesVersion {spec.kubernetes_version}: "
                "the scheduler may be at most one minor older than the API server, never newer "
                "(remove spec.image to follow kubernetesVersion)",
            )
        ]
    return []


_PLUGIN_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.-]{0,62}")
_RULE_FIELDS = {"apiGroups": list, "resources": list, "verbs": list, "resourceNames": list}
_VERBS = ("get", "list", "watch", "create", "update", "patch", "delete", "deletecollection")
_RESOURCE = re.compile(r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?(/[a-z0-9]([-a-z0-9]*[a-z0-9])?)?")


def check_custom(spec: Spec, version: versions.KubeVersion | None) -> list[Problem]:
    """``program: custom``: a known distribution release, or the plugins the image adds, and
    the args of the release's plugins (kschedctl.model.config.distributions)."""
    out: list[Problem] = []
    custom, path = spec.custom, "spec.custom"
    if custom.binary:
        problem = shapes.absolute_path_problem(custom.binary)
        if problem:
            out.append(Problem(f"{path}.binary", problem))
    release = spec.release
    if custom.distribution and custom.distribution not in distributions.DISTRIBUTIONS:
        out.append(
            Problem(
                f"{path}.distribution",
                f"{shapes.shown(custom.distribution)} is not a distribution kschedctl knows "
                f"({', '.join(distributions.DISTRIBUTIONS)}): leave it out and list the "
                "plugins the image adds in spec.custom.plugins",
            )
        )
    elif custom.distribution and release is None and spec.image:
        tag = shapes.image_tag(spec.image)
        known = list(distributions.RELEASES)
        out.append(
            Problem(
                "spec.image",
                f"{shapes.shown(tag or '(no tag)')} is not a {custom.distribution} release "
                f"kschedctl knows ({known[0]} … {known[-1]}): tag the image with its release, "
                "or leave spec.custom.distribution out and list its plugins in "
                "spec.custom.plugins",
            )
        )
    if release is not None and version is not None:
        if release.minor > version.minor or release.minor < version.minor - 1:
            out.append(
                Problem(
                    "spec.image",
                    f"{release.distribution} {release.tag} is built on Kubernetes "
                    f"{release.kubernetes}, which does not fit kubernetesVersion "
                    f"{spec.kubernetes_version}: the scheduler may be at most one minor older "
                    "than the API server, never newer (remove spec.kubernetesVersion to follow "
                    "the image)",
                )
            )
    out.extend(_check_custom_plugins(custom.plugins, f"{path}.plugins"))
    if release is not None:
        for i, profile in enumerate(spec.profiles):
            configs = profile.get("pluginConfig") if isinstance(profile, dict) else None
            for j, entry in enumerate(configs if isinstance(configs, list) else []):
                name = entry.get("name") if isinstance(entry, dict) else None
                plugin = release.plugins.get(name) if isinstance(name, str) else None
                if plugin is not None:
                    out.extend(
                        distributions.check_plugin_args(
                            plugin, entry.get("args"), f"spec.profiles[{i}].pluginConfig[{j}].args"
                        )
                    )
    return out


def _check_custom_plugins(plugins: list[Any], path: str) -> list[Problem]:
    out: list[Problem] = []
    seen: set[str] = set()
    for i, entry in enumerate(plugins):
        epath = f"{path}[{i}]"
        fields = check_fields(
            entry, {"name": str, "extensionPoints": list, "rbac": list}, epath, out
        )
        if not isinstance(entry, dict):
            continue
        name = fields.get("name")
        if not isinstance(name, str) or not _PLUGIN_NAME.fullmatch(name):
            said = "is required" if name in (None, "") else f"{quote(name)} is not a plugin name"
            out.append(
                Problem(
                    f"{epath}.name",
                    f"{said}: the plugin's registered name (a letter, then letters, digits, "
                    "'.', '_' or '-', at most 63)",
                )
            )
        elif name in seen:
            out.append(Problem(f"{epath}.name", f"{name} is listed twice"))
        else:
            seen.add(name)
        points = fields.get("extensionPoints")
        if not points:
            out.append(
                Problem(
                    f"{epath}.extensionPoints",
                    "is required: the extension points the plugin implements "
                    f"({', '.join(distributions.EXTENSION_POINTS)})",
                )
            )
        for j, point in enumerate(points or []):
            if point not in distributions.EXTENSION_POINTS:
                out.append(
                    Problem(
                        f"{epath}.extensionPoints[{j}]",
                        f"{shapes.shown(point)}: must be one of "
                        f"{', '.join(distributions.EXTENSION_POINTS)}",
                    )
                )
        for j, rule in enumerate(fields.get("rbac") or []):
            out.extend(_check_rule(rule, f"{epath}.rbac[{j}]"))
    return out


def _check_rule(rule: Any, path: str) -> list[Problem]:
    """A PolicyRule a custom plugin needs: named groups, resources and verbs, no wildcard."""
    out: list[Problem] = []
    fields = check_fields(rule, _RULE_FIELDS, path, out)
    for key in ("apiGroups", "resources", "verbs"):
        if not fields.get(key) and isinstance(rule, dict):
            out.append(Problem(f"{path}.{key}", "is required (wildcards are not granted)"))
    for key, values in fields.items():
        for k, value in enumerate(values if isinstance(values, list) else []):
            vpath = f"{path}.{key}[{k}]"
            if not isinstance(value, str):
                out.append(Problem(vpath, f"must be a string, not {shapes.shown(value)}"))
            elif key == "verbs" and value not in _VERBS:
                out.append(
                    Problem(vpath, f"{shapes.shown(value)}: must be one of {', '.join(_VERBS)}")
                )
            elif key == "resources" and not _RESOURCE.fullmatch(value):
                out.append(
                    Problem(
                        vpath,
                        f"{shapes.shown(value)} is not a resource (e.g. podgroups/status)",
                    )
                )
            elif key == "apiGroups" and value and (problem := shapes.dns_subdomain_problem(value)):
                out.append(Problem(vpath, f"API group {problem}"))
            elif key == "resourceNames" and (problem := shapes.dns_subdomain_problem(value)):
                out.append(Problem(vpath, f"resource name {problem}"))
    return out


def _check_builtin(spec: Spec) -> list[Problem]:
    """kschedctl's own scheduler: one name, its own algorithm, a valid fallback policy."""
    # scheduling loads the filters: only for program: builtin specs
    from kschedctl.base.errors import PolicyError
    from kschedctl.model.scheduling.policyload import parse_policy
    from kschedctl.model.scheduling.strategies import STRATEGIES

    out: list[Problem] = []
    b, path = spec.builtin, "spec.builtin"
    if b.strategy not in STRATEGIES:
        out.append(
            Problem(f"{path}.strategy", f"{b.strategy!r}: must be {' or '.join(STRATEGIES)}")
        )
    if spec.image.split("@", 1)[0].rsplit("/", 1)[-1].split(":", 1)[0] == "kube-scheduler":
        out.append(
            Problem(
                "spec.image",
                f"{spec.image} is kube-scheduler; program builtin runs kschedctl's image "
                "(built from the repository's Dockerfile)",
            )
        )
    if not 1 <= b.metrics_port <= 65535:
        out.append(Problem(f"{path}.metricsPort", f"{b.metrics_port} is not a port number"))
    try:
        parse_policy(b.policy, "", type_meta=False)
    except PolicyError as err:
        out.extend(p.moved(f"{path}.policy.{p.path}".rstrip("."), "") for p in err.problems)
    out.extend(_check_plugins(b.plugins, f"{path}.plugins"))
    profiles = [p for p in spec.profiles if isinstance(p, dict)]
    if len(profiles) != 1:
        out.append(
            Problem(
                "spec.profiles",
                "program builtin serves exactly one scheduler name (metadata.name); "
                "use one profile, or kube-scheduler for several",
            )
        )
    for i, profile in enumerate(profiles):
        for key in ("plugins", "pluginConfig"):
            if profile.get(key):
                out.append(
                    Problem(
                        f"spec.profiles[{i}].{key}",
                        "kube-scheduler plugins do not apply to program builtin: it filters "
                        "like kube-scheduler's defaults and scores with spec.builtin.strategy",
                    )
                )
    for key, value in (("parallelism", spec.parallelism), ("extenders", spec.extenders)):
        if value:
            out.append(Problem(f"spec.{key}", "does not apply to program builtin"))
    return out


def plugin_file(path: str) -> str:
    """The file name plugin ``path`` is installed under: the pod's plugin directory and the
    host's hold every plugin side by side, so the file names of a spec's plugins differ."""
    return path.rsplit("/", 1)[-1]


def _check_plugins(plugins: list[Any], path: str) -> list[Problem]:
    out: list[Problem] = []
    seen: dict[str, int] = {}
    for i, entry in enumerate(plugins):
        problem = shapes.plugin_path_problem(entry)
        if problem:
            out.append(Problem(f"{path}[{i}]", problem))
            continue
        file = plugin_file(entry)
        if file in seen:
            out.append(
                Problem(
                    f"{path}[{i}]",
                    f"{shapes.shown(entry)}: the file name {file} is taken by {path}"
                    f"[{seen[file]}]; plugins are installed side by side under their file "
                    "names (and imported as modules of that name): rename one",
                )
            )
        else:
            seen[file] = i
    return out


def read_plugins(spec: Spec, base: str | Path | None) -> list[Problem]:
    """Read ``spec.builtin.plugins`` from the workspace ``base`` into ``plugin_sources``;
    a problem for each file that is missing, not a regular UTF-8 file of at most 1 MiB, or
    that resolves outside the workspace (a symlink must not carry a file from elsewhere on
    this machine into the cluster)."""
    b, path = spec.builtin, "spec.builtin.plugins"
    b.plugin_sources = {}
    if spec.program != "builtin" or not b.plugins or not isinstance(b.plugins, list):
        return []  # a wrong type is check_spec's to report
    if base is None:
        return [
            Problem(
                path,
                "plugin files are read relative to the workspace: give the workspace "
                "directory or its scheduler.yaml",
            )
        ]
    root = Path(os.path.realpath(base))
    out: list[Problem] = []
    for i, rel in enumerate(b.plugins):
        where = f"{path}[{i}]"
        if not isinstance(rel, str) or shapes.plugin_path_problem(rel):
            continue  # reported by check_spec
        file = Path(base) / rel
        if not Path(os.path.realpath(file)).is_relative_to(root):
            out.append(
                Problem(where, f"{rel} resolves outside the workspace {printable(str(root))}")
            )
            continue
        try:
            b.plugin_sources[rel] = userfile.read_user_file(file)
        except NotFoundError:
            out.append(Problem(where, f"{rel}: no such file in {printable(str(base))}"))
        except SpecError as err:
            out.append(Problem(where, f"{rel}: {err.detail}"))
    return out


PLUGINS_DIR = "plugins"


def add_plugin_files(spec: Spec, files: list[str]) -> Spec:
    """``spec`` with plugin ``files`` (paths on this machine) as ``plugins/<file name>`` of
    its workspace, read now (``create --plugin``); SpecError naming each unreadable file."""
    problems: list[Problem] = []
    for given in files:
        rel = f"{PLUGINS_DIR}/{plugin_file(given)}"
        try:
            spec.builtin.plugin_sources[rel] = userfile.read_user_file(given)
        except SpecError as err:
            problems.append(Problem("", err.detail, given))
            continue
        spec.builtin.plugins.append(rel)
    if problems:
        raise SpecError.from_problems(problems)
    return spec


def _check_service(spec: Spec) -> list[Problem]:
    out: list[Problem] = []
    svc, path = spec.service, "spec.service"
    for key in ("binary", "config_dir", "kubeconfig"):
        problem = shapes.absolute_path_problem(getattr(svc, key))
        if problem:
            out.append(Problem(f"{path}.{_camel(key)}", problem))
    problem = shapes.ip_address_problem(svc.bind_address)
    if problem:
        out.append(Problem(f"{path}.bindAddress", problem))
    port = svc.secure_port
    if not 1 <= port <= 65535:
        out.append(Problem(f"{path}.securePort", f"{port} is not a port number"))
    elif port == versions.INSECURE_PORT:
        out.append(Problem(f"{path}.securePort", "10251 was the insecure port, gone since 1.23"))
    elif port == versions.DEFAULT_SECURE_PORT and not spec.replaces_default:
        out.append(
            Problem(
                f"{path}.securePort",
                "10259 is the default scheduler's port on a control-plane host: two schedulers "
                "cannot both bind it (use another, e.g. 10260)",
            )
        )
    if not 0 <= svc.verbosity <= 10:
        out.append(Problem(f"{path}.verbosity", f"{svc.verbosity}: must be 0–10"))
    problem = shapes.user_name_problem(svc.user)
    if problem:
        out.append(Problem(f"{path}.user", problem))
    return out


def _check_pod(pod: PodSettings) -> list[Problem]:
    out: list[Problem] = []
    path = "spec.pod"
    for key, value in pod.node_selector.items():
        if not isinstance(value, str):
            out.append(
                Problem(
                    f"{path}.nodeSelector.{key}", f"must be a string, not {shapes.shown(value)}"
                )
            )
    for i, toleration in enumerate(pod.tolerations):
        if not isinstance(toleration, dict):
            out.append(Problem(f"{path}.tolerations[{i}]", "must be a mapping"))
    if not 0 <= pod.verbosity <= 10:
        out.append(Problem(f"{path}.verbosity", f"{pod.verbosity}: must be 0–10"))
    if pod.priority_class_name:
        problem = shapes.dns_subdomain_problem(pod.priority_class_name)
        if problem:
            out.append(Problem(f"{path}.priorityClassName", f"PriorityClass name {problem}"))
    return out


def _check_metrics(metrics: MetricsSettings) -> list[Problem]:
    out: list[Problem] = []
    path = "spec.metrics"
    if metrics.service_monitor and not metrics.service:
        out.append(
            Problem(
                f"{path}.serviceMonitor",
                "a ServiceMonitor scrapes through the metrics Service: set "
                "spec.metrics.service: true too",
            )
        )
    scraper = metrics.scraper
    problem = shapes.dns_label_problem(scraper.namespace)
    if problem:
        out.append(Problem(f"{path}.scraper.namespace", f"namespace {problem}"))
    if scraper.service_account:
        problem = shapes.dns_subdomain_problem(scraper.service_account)
        if problem:
            out.append(Problem(f"{path}.scraper.serviceAccount", f"ServiceAccount name {problem}"))
    return out


def ensure_valid(spec: Spec, source: str = "") -> Spec:
    # Warnings (kube-scheduler runs it, probably not as meant) never refuse a spec.
    problems = errors_in([p.moved(source=source) for p in check_spec(spec)])
    if problems:
        raise SpecError.from_problems(problems)
    return spec


# ---------------------------------------------------------------------------------------------
# Loading from files.


def spec_problems(
    text: str, source: str = "", base: str | Path | None = None
) -> tuple[Spec | None, list[Problem]]:
    try:
        docs = parse_yaml(text)
    except YamlError as err:
        return None, [Problem("", str(err), source)]
    if len(docs) != 1:
        return None, [Problem("", f"expected one YAML document, found {len(docs)}", source)]
    return spec_from_dict(docs[0], source, base)


def read_text(path: str | Path) -> str:
    """A user's file: regular, at most 1 MiB, UTF-8 (see config.userfile)."""
    return userfile.read_user_file(path)


def load_spec(path: str | Path) -> Spec:
    """Load and validate a ``scheduler.yaml``; SpecError lists every problem."""
    path = Path(path)
    spec, problems = spec_problems(read_text(path), str(path), path.parent)
    problems = errors_in(problems)
    if problems or spec is None:
        raise SpecError.from_problems(problems)
    return spec


def spec_from_source(src: str) -> Spec:
    """A workspace directory, a spec file, or a bare scheduler name (all defaults)."""
    path = Path(src)
    kind = userfile.path_kind(path)
    if kind == "directory":
        if userfile.path_kind(path / SPEC_FILE) is None:
            raise NotFoundError(
                f"{printable(str(path))}: no {SPEC_FILE} in this directory",
                hint=f"create a workspace with: kschedctl create {quote(path.name)}",
            )
        return load_spec(path / SPEC_FILE)
    if kind is not None:  # a file, or something the reader refuses with its kind
        return load_spec(path)
    if "/" in src or src.endswith((".yaml", ".yml")) or src.startswith("."):
        raise NotFoundError(f"{printable(src)}: no such file or directory")
    return ensure_valid(default_spec(src), source=src)
