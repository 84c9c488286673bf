"""The scheduler spec's types (``scheduler.yaml``): the dataclasses, what they stand for (the
KubeSchedulerConfiguration, host paths, plugins) and how ``create`` writes them back; the
read-only :class:`CheckedSpec` the checker makes of one, and :func:`thawed`, a plain copy.

Pure. Loading (:mod:`.load`), defaults and retargeting (:mod:`.defaults`) and the checks
(:mod:`.checks`, :mod:`.programs`) build on these.
"""

from __future__ import annotations

import copy
import dataclasses
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kschedctl.model.config import distributions, versions
from kschedctl.model.config.rbac import DEFAULT_RBAC

API_VERSION = "kschedctl.io/v1alpha1"
KIND = "Scheduler"
SPEC_FILE = "scheduler.yaml"
PROGRAMS = ("kube-scheduler", "builtin", "custom")

# The mark a part of a checked spec carries: its fields are read-only (:class:`CheckedSpec`).
_FROZEN = "_checked"


class _Part:
    """Base of the spec's dataclasses: a part of a :class:`CheckedSpec` is read-only."""

    def __setattr__(self, name: str, value: Any) -> None:
        self._writable(name)
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        self._writable(name)
        object.__delattr__(self, name)

    def _writable(self, name: str) -> None:
        if self.__dict__.get(_FROZEN):
            raise dataclasses.FrozenInstanceError(
                f"cannot assign to field {name!r}: a checked spec does not change "
                "(change a copy from kschedctl.spec.thawed, then check that)"
            )


@dataclass
class LeaderElection(_Part):
    leader_elect: bool = True
    resource_name: str = ""  # "" → the scheduler name (never the default "kube-scheduler")
    resource_namespace: str = ""  # "" → spec.namespace
    lease_duration: str = "15s"
    renew_deadline: str = "10s"
    retry_period: str = "2s"


@dataclass
class ServiceSettings(_Part):
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
class PodSettings(_Part):
    """In-cluster forms (pod, deployment; static-pod takes resources from here)."""

    resources: dict[str, Any] = field(default_factory=lambda: {"requests": {"cpu": "100m"}})
    node_selector: dict[str, Any] = field(default_factory=dict)
    tolerations: list[Any] = field(default_factory=list)
    priority_class_name: str = "system-cluster-critical"
    verbosity: int = 2


BUILTIN_BINARY = "/usr/local/bin/kschedctl"


@dataclass
class CustomSettings(_Part):
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
class BuiltinSettings(_Part):
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
class MetricsScraper(_Part):
    """Who scrapes the scheduler's /metrics: the ServiceAccount a ClusterRole granting ``get`` on
    the non-resource URL /metrics is bound to (kube-prometheus' Prometheus by default)."""

    namespace: str = "monitoring"
    service_account: str = "prometheus-k8s"  # "" → no RBAC (the scraper has it already)


@dataclass
class MetricsSettings(_Part):
    """Scraping the scheduler (in-cluster forms: pod, deployment)."""

    service: bool = False  # a headless Service NAME-metrics on the metrics port
    service_monitor: bool = False  # a Prometheus Operator ServiceMonitor selecting it
    scraper: MetricsScraper = field(default_factory=MetricsScraper)

    @property
    def scraper_rbac(self) -> bool:
        """Render the scraper's ClusterRole and binding (the Service asked, a scraper named)."""
        return self.service and bool(self.scraper.service_account)


@dataclass
class Routing(_Part):
    """Which new pods this scheduler takes without their manifests naming it (``spec.routing``):
    rendered as a MutatingAdmissionPolicy that sets their ``spec.schedulerName``
    (kschedctl.render.routing). The selectors are Kubernetes LabelSelectors; a pod is routed
    when every part given matches."""

    # None: not given (no restriction by namespace); {}: every namespace, said on purpose.
    namespace_selector: dict[str, Any] | None = None
    pod_selector: dict[str, Any] | None = None
    priority_class_names: list[Any] = field(default_factory=list)
    # Pods that name a scheduler other than default-scheduler keep it unless this is true.
    include_named_pods: bool = False
    # kube-system is never matched unless the scheduler lives there and this is true.
    allow_kube_system: bool = False


@dataclass
class Spec(_Part):
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
    routing: Routing | None = None  # None: no routing (pods name the scheduler themselves)

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
        return self.on_host(".yaml")

    @property
    def host_plugin_dir(self) -> str:
        """Where the host forms install ``builtin.plugins``: beside the config on the host."""
        return self.on_host("-plugins")

    def on_host(self, suffix: str) -> str:
        """The scheduler's name plus ``suffix`` in ``service.configDir`` on the host."""
        return f"{self.service.config_dir.rstrip('/')}/{self.name}{suffix}"

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
                config[camel(key)] = getattr(self, key)
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


class CheckedSpec(Spec):
    """A spec the checker passed, read-only: what render, deploy and the config hash take.

    Only the checker makes one (:func:`kschedctl.spec.ensure_valid`; loading ends there), as a
    copy of the spec it checked; its fields and its parts' fields cannot be set. To change
    one, :func:`thawed` gives a plain copy, and the changed spec is checked in its turn.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("a CheckedSpec comes from the checker: kschedctl.spec.ensure_valid")

    def __eq__(self, other: object) -> bool:  # equal to a plain spec of the same fields
        if not isinstance(other, Spec):
            return NotImplemented
        return _fields(self) == _fields(other)

    __hash__ = None  # type: ignore[assignment]  # as Spec's: its containers are not hashable

    @classmethod
    def _of(cls, spec: Spec) -> CheckedSpec:
        """A read-only copy of ``spec``, which the checker found no error in."""
        checked: CheckedSpec = _copy(spec, frozen=True)
        return checked


def thawed(spec: Spec) -> Spec:
    """A plain (writable) copy of ``spec``, checked or not: to change, then check again."""
    plain: Spec = _copy(spec, frozen=False)
    return plain


def _fields(obj: Any) -> tuple[Any, ...]:
    return tuple(getattr(obj, name) for name in _names(type(obj)))


def _names(cls: Any) -> list[str]:
    return [f.name for f in dataclasses.fields(cls)]


def _copy(obj: Any, *, frozen: bool) -> Any:
    """A deep copy of ``obj``; its spec dataclasses read-only (``frozen``) or plain."""
    if not isinstance(obj, _Part):
        return copy.deepcopy(obj)
    cls = (CheckedSpec if frozen else Spec) if isinstance(obj, Spec) else type(obj)
    new = object.__new__(cls)
    for name, value in zip(_names(cls), _fields(obj), strict=True):
        new.__dict__[name] = _copy(value, frozen=frozen)
    if frozen:
        new.__dict__[_FROZEN] = True
    return new


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def yaml_fields(cls: type) -> dict[str, dataclasses.Field[Any]]:
    return {camel(f.name): f for f in dataclasses.fields(cls) if f.metadata.get("yaml", True)}


def _section_to_dict(obj: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, f in yaml_fields(type(obj)).items():
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
        if isinstance(obj, Routing) and (value is None or value in ([], False)):
            continue  # not given: the field's default (an explicit {} selector stays)
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


def part_type(hint: Any) -> type | None:
    """The spec dataclass a field's type hint holds (``Routing | None`` too), else None."""
    for candidate in (hint, *typing.get_args(hint)):
        if isinstance(candidate, type) and dataclasses.is_dataclass(candidate):
            return candidate
    return None


def expected_type(hint: Any) -> Any:
    if hint in _SCALARS:
        return hint
    origin = typing.get_origin(hint)
    if origin in (list, dict):
        return origin
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    return expected_type(args[0]) if args else None


def plugin_file(path: str) -> str:
    """The file name plugin ``path`` is installed under: the pod's plugin directory and the
    host's hold every plugin side by side, so the file names of a spec's plugins differ."""
    return path.rsplit("/", 1)[-1]
