"""Which Kubernetes versions kschedctl renders for, and what changes between them.

Pure: no I/O, no typer/rich/kubernetes. Facts come from upstream Kubernetes: config API
versions (v1 GA in 1.25; v1beta2 removed in 1.28 by kubernetes/kubernetes PR #117649, v1beta3 in
1.29 by PR #119994), the plugin registry and v1 types
(``staging/src/k8s.io/kube-scheduler/config/v1/types.go``), kubeadm's probes
(``cmd/kubeadm/app/phases/controlplane/manifests.go``), removed flags
(``cmd/kube-scheduler/app/options/deprecated.go``) and image names (``registry.k8s.io``, the
CHANGELOG's "Container Images").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kschedctl._generated import registry_data
from kschedctl.model.config.shapes import image_tag, shown

CONFIG_GROUP = "kubescheduler.config.k8s.io"
CONFIG_API_VERSION = f"{CONFIG_GROUP}/v1"
IMAGE_REPOSITORY = "registry.k8s.io/kube-scheduler"
PAUSE_IMAGE = "registry.k8s.io/pause:3.10"

OLDEST_MINOR = 25
NEWEST_MINOR = 37
DEFAULT_VERSION = "1.36"

# The patch a bare "1.X" maps to (README "Kubernetes versions"). 1.36 follows the lab, which
# builds k8s v1.36.3; the others are released patches (the last one of each finished line).
PATCH_RELEASES: dict[int, int] = {
    25: 16,
    26: 15,
    27: 16,
    28: 15,
    29: 15,
    30: 14,
    31: 13,
    32: 9,
    33: 5,
    34: 1,
    35: 4,
    36: 3,
    37: 0,
}

# Config API versions that kube-scheduler used to accept: (removed in minor, why).
REMOVED_CONFIG_VERSIONS: dict[str, int] = {
    "v1alpha1": 19,
    "v1alpha2": 20,
    "v1beta1": 23,
    "v1beta2": 28,
    "v1beta3": 29,
}

# Strict ASCII digits (``\d`` would take "١.٣٦"), bounded, nothing before or after (``$``
# would take a trailing newline).
_VERSION_RE = re.compile(r"v?([0-9]{1,4})\.([0-9]{1,4})(?:\.([0-9]{1,4}))?", re.ASCII)


@dataclass(frozen=True, order=True)
class KubeVersion:
    """A target Kubernetes version; ``patch`` is filled from PATCH_RELEASES for a bare X.Y."""

    major: int
    minor: int
    patch: int

    @property
    def minor_version(self) -> str:
        return f"{self.major}.{self.minor}"

    @property
    def tag(self) -> str:
        return f"v{self.major}.{self.minor}.{self.patch}"

    def at_least(self, minor: int) -> bool:
        return self.minor >= minor


def unsupported_reason(major: int, minor: int) -> str | None:
    """Why kschedctl does not render for this version, or None when it does."""
    if major != 1:
        return f"Kubernetes {major}.{minor} does not exist (yet); kschedctl knows 1.x only"
    if minor < OLDEST_MINOR:
        return (
            f"Kubernetes 1.{minor} has no {CONFIG_API_VERSION} (GA in 1.25) and is out of "
            "support; kschedctl renders only v1 configs (v1beta2 was removed in 1.28, "
            "v1beta3 in 1.29). Upgrade the cluster, or target 1.25 or newer"
        )
    if minor > NEWEST_MINOR:
        return (
            f"Kubernetes 1.{minor} is newer than this kschedctl knows (1.{OLDEST_MINOR}–"
            f"1.{NEWEST_MINOR}); its config API, flags and probes are unchecked. "
            "Upgrade kschedctl"
        )
    return None


def parse_version(text: str) -> KubeVersion:
    """``1.36``, ``v1.36`` or ``1.36.3`` → KubeVersion; ValueError with the reason otherwise."""
    match = _VERSION_RE.fullmatch(text) if isinstance(text, str) else None
    if not match:
        raise ValueError(
            f"{shown(text)} is not a Kubernetes version (expected 1.X or 1.X.Y, e.g. 1.36)"
        )
    major, minor = int(match.group(1)), int(match.group(2))
    reason = unsupported_reason(major, minor)
    if reason:
        raise ValueError(reason)
    patch = match.group(3)
    return KubeVersion(major, minor, int(patch) if patch is not None else PATCH_RELEASES[minor])


# A tag of a Kubernetes release image (registry.k8s.io): v1.36.3, and pre-releases such as
# v1.37.0-rc.1; groups: major, minor, patch, the pre-release suffix.
RELEASE_TAG = re.compile(r"v(\d+)\.(\d+)\.(\d+)(-(?:alpha|beta|rc)\.\d+)?", re.ASCII)
# A /version gitVersion: ``v1.36.3``, or with a distro suffix (``v1.33.5-eks-…``, ``v1.31.2+k3s1``).
_GIT_VERSION_RE = re.compile(r"v?(\d+)\.(\d+)(?:\.(\d+))?")


def parse_git_version(text: str) -> tuple[int, ...] | None:
    """(major, minor, patch) of a gitVersion, (major, minor) if it has no patch, else None.

    Suffixes after the numbers are ignored; a text that does not start with them is None.
    """
    match = _GIT_VERSION_RE.match(text)
    if not match:
        return None
    return tuple(int(g) for g in match.groups() if g is not None)


def server_version_or_default(git_version: str) -> tuple[int, ...]:
    """The API server's version from its /version gitVersion, as :func:`parse_git_version` reads
    it; (1, 36), the version the filter engine assumes, when it is unreadable."""
    return parse_git_version(git_version or "") or (1, 36)


def image_kubernetes_version(image: str) -> tuple[int, int] | None:
    """(major, minor) of the Kubernetes release a scheduler image's tag stands for, else None.

    ``v1.33.5`` is 1.33; a scheduler-plugins tag ``v0.X.Y`` is built on Kubernetes 1.X (its
    go.mod requires k8s.io/kubernetes v1.X: kschedctl.model.config.distributions), not release 0.X.
    """
    parsed = parse_git_version(image_tag(image))
    if parsed is None or len(parsed) < 2:
        return None
    if parsed[0] == 0:
        return (1, parsed[1])
    return (parsed[0], parsed[1])


def supported_minors() -> list[str]:
    return [f"1.{m}" for m in range(OLDEST_MINOR, NEWEST_MINOR + 1)]


def default_image(version: KubeVersion) -> str:
    return f"{IMAGE_REPOSITORY}:{version.tag}"


@dataclass(frozen=True)
class Probes:
    """Health endpoints kube-scheduler serves on its secure port, as kubeadm probes them."""

    liveness: str
    readiness: str
    startup: str
    named_port: bool  # kubeadm 1.34+ probes the named container port "probe-port"


PROBE_PORT_NAME = "probe-port"


def probes(version: KubeVersion) -> Probes:
    # kube-scheduler serves /livez and /readyz since 1.31; kubeadm switched to them in 1.32
    # (PR #126945) and to the named port in 1.34 (PR #132776). We follow kubeadm.
    if version.at_least(32):
        return Probes("/livez", "/readyz", "/livez", named_port=version.at_least(34))
    return Probes("/healthz", "/healthz", "/healthz", named_port=False)


def removed_plugins(version: KubeVersion) -> tuple[str, ...]:
    """Plugins kube-scheduler's validation refuses by name in a v1 config.

    validation.go's invalidPluginsByVersion, read from each version's source into
    :mod:`registry_data` (SelectorSpread until 1.28, the cloud volume-limit plugins since 1.31).
    Plugins that are simply absent from the registry are build_profiles' business.
    """
    return registry_data.INVALID_PLUGINS[version.minor_version]


def extension_points(version: KubeVersion) -> tuple[str, ...]:
    """The config's plugins fields (``preEnqueue`` from 1.26, ``placementGenerate`` and
    ``placementScore`` from 1.36, ``podGroupPostFilter`` from 1.37), in upstream's order.

    Read from each version's ``pkg/scheduler/apis/config/types.go`` (type Plugins) into
    :mod:`registry_data`.
    """
    points = registry_data.CONFIG_POINTS[version.minor_version]
    return tuple(point[0].lower() + point[1:] for point in points)


def config_fields(version: KubeVersion) -> tuple[str, ...]:
    """Top-level fields of a v1 KubeSchedulerConfiguration (strict decoding rejects others)."""
    fields = [
        "apiVersion",
        "kind",
        "parallelism",
        "leaderElection",
        "clientConnection",
        "enableProfiling",
        "enableContentionProfiling",
        "percentageOfNodesToScore",
        "podInitialBackoffSeconds",
        "podMaxBackoffSeconds",
        "profiles",
        "extenders",
    ]
    if version.at_least(28):
        fields.append("delayCacheUntilActive")  # PR #115754
    if version.at_least(37):
        fields.append("percentageOfPlacementsToScore")  # master after 1.36, see above
    return tuple(fields)


def lease_verbs(version: KubeVersion) -> tuple[str, ...]:
    """Verbs the built-in system:kube-scheduler role grants on its own Lease name.

    We grant the same on the additional scheduler's Lease (the built-in rule names only
    "kube-scheduler"). v1.36's bootstrap policy adds list/watch for coordinated leader election
    (alpha in 1.31); older releases grant get/update only.
    """
    if version.at_least(31):
        return ("get", "update", "list", "watch")
    return ("get", "update")


# kube-scheduler flags that no longer exist (kubernetes/kubernetes PRs #102805, #105424, #119130;
# cmd/kube-scheduler/app/options/deprecated.go): flag → (removed in, what instead).
REMOVED_FLAGS: dict[str, str] = {
    "--scheduler-name": "removed in 1.22: name the scheduler with spec.profiles[].schedulerName",
    "--hard-pod-affinity-symmetric-weight": "removed in 1.22: use InterPodAffinityArgs",
    "--policy-config-file": "removed in 1.23 with the Policy API: use profiles and pluginConfig",
    "--policy-configmap": "removed in 1.23 with the Policy API: use profiles and pluginConfig",
    "--policy-configmap-namespace": "removed in 1.23 with the Policy API",
    "--use-legacy-policy-config": "removed in 1.23 with the Policy API",
    "--algorithm-provider": "removed with the Policy API (~1.23): use profiles and plugins",
    "--address": "the insecure port is gone (1.23): kube-scheduler serves HTTPS on --secure-port",
    "--port": "the insecure port 10251 is gone (1.23): use spec.service.securePort",
    "--lock-object-name": "removed in 1.28: use spec.leaderElection.resourceName",
    "--lock-object-namespace": "removed in 1.28: use spec.leaderElection.resourceNamespace",
}

# Flags the config file makes useless or that kschedctl sets itself from the spec.
IGNORED_WITH_CONFIG: dict[str, str] = {
    "--kubeconfig": "ignored when --config is set: use spec.service.kubeconfig",
    "--kube-api-qps": "ignored when --config is set: use spec.clientConnection.qps",
    "--kube-api-burst": "ignored when --config is set: use spec.clientConnection.burst",
    "--kube-api-content-type": "ignored when --config is set: use spec.clientConnection",
    "--profiling": "ignored when --config is set",
    "--contention-profiling": "ignored when --config is set",
}
MANAGED_FLAGS: dict[str, str] = {
    "--config": "kschedctl sets --config itself",
    "--secure-port": "set spec.service.securePort (host forms); in-cluster forms use 10259",
    "--bind-address": "set spec.service.bindAddress",
    "--authentication-kubeconfig": "set spec.service.kubeconfig",
    "--authorization-kubeconfig": "set spec.service.kubeconfig",
    "--v": "set spec.service.verbosity or spec.pod.verbosity",
    "-v": "set spec.service.verbosity or spec.pod.verbosity",
    "--leader-elect": "set spec.leaderElection.leaderElect",
    "--leader-elect-lease-duration": "set spec.leaderElection.leaseDuration",
    "--leader-elect-renew-deadline": "set spec.leaderElection.renewDeadline",
    "--leader-elect-retry-period": "set spec.leaderElection.retryPeriod",
    "--leader-elect-resource-lock": "leases is the only lock; nothing to set",
    "--leader-elect-resource-name": "set spec.leaderElection.resourceName",
    "--leader-elect-resource-namespace": "set spec.leaderElection.resourceNamespace",
}

DEFAULT_SCHEDULER_NAME = "default-scheduler"
DEFAULT_LEASE_NAME = "kube-scheduler"
DEFAULT_SECURE_PORT = 10259
INSECURE_PORT = 10251
