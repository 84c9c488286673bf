"""Defaults and retargeting: what a spec leaves out, filled in; a spec moved to another program
or Kubernetes version, the defaults that belonged to the old one following.
"""

from __future__ import annotations

import copy
from typing import Any

from kschedctl import __version__
from kschedctl.model.config import distributions, versions
from kschedctl.spec.model import (
    BUILTIN_BINARY,
    ServiceSettings,
    Spec,
)


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
