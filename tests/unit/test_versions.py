"""The version table: supported range, patch mapping, probes, refusals with reasons."""

from __future__ import annotations

import pytest

from kschedctl.model.config import versions
from kschedctl.model.config.versions import parse_version


@pytest.mark.parametrize(
    ("text", "tag"),
    [
        ("1.36", "v1.36.3"),  # the lab's version
        ("v1.36", "v1.36.3"),
        ("1.25", "v1.25.16"),
        ("1.37", "v1.37.0"),
        ("1.30.2", "v1.30.2"),
        ("v1.33.1", "v1.33.1"),
    ],
)
def test_parse_version_maps_bare_minor_to_documented_patch(text: str, tag: str) -> None:
    assert parse_version(text).tag == tag


def test_every_supported_minor_has_a_patch() -> None:
    assert versions.supported_minors()[0] == "1.25"
    assert versions.supported_minors()[-1] == "1.37"
    for minor in range(versions.OLDEST_MINOR, versions.NEWEST_MINOR + 1):
        assert minor in versions.PATCH_RELEASES


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("1.24", "GA in 1.25"),
        ("1.18", "v1beta3 in 1.29"),
        ("1.38", "newer than this kschedctl knows"),
        ("2.1", "does not exist"),
        ("latest", "not a Kubernetes version"),
        ("1", "not a Kubernetes version"),
    ],
)
def test_unsupported_versions_are_refused_with_the_reason(text: str, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        parse_version(text)


@pytest.mark.parametrize(
    ("minor", "liveness", "readiness", "named"),
    [
        ("1.25", "/healthz", "/healthz", False),
        ("1.31", "/healthz", "/healthz", False),
        ("1.32", "/livez", "/readyz", False),
        ("1.33", "/livez", "/readyz", False),
        ("1.34", "/livez", "/readyz", True),
        ("1.37", "/livez", "/readyz", True),
    ],
)
def test_probe_paths_follow_kubeadm(minor: str, liveness: str, readiness: str, named: bool) -> None:
    probes = versions.probes(parse_version(minor))
    assert (probes.liveness, probes.readiness, probes.startup) == (liveness, readiness, liveness)
    assert probes.named_port is named


def test_invalid_plugins_follow_validation_go() -> None:
    # invalidPluginsByVersion for v1: SelectorSpread until 1.28 (then gone from the registry),
    # nothing in 1.29–1.30, the cloud volume-limit plugins from 1.31 on.
    assert versions.removed_plugins(parse_version("1.28")) == ("SelectorSpread",)
    assert versions.removed_plugins(parse_version("1.30")) == ()
    assert "EBSLimits" not in versions.removed_plugins(parse_version("1.30"))
    assert "EBSLimits" in versions.removed_plugins(parse_version("1.31"))
    assert "EBSLimits" in versions.removed_plugins(parse_version("1.36"))


def test_lease_verbs_follow_the_builtin_role() -> None:
    assert versions.lease_verbs(parse_version("1.30")) == ("get", "update")
    assert versions.lease_verbs(parse_version("1.36")) == ("get", "update", "list", "watch")


def test_extension_points_are_the_config_fields_of_each_release() -> None:
    # pkg/scheduler/apis/config/types.go (type Plugins) of each release, via registry_data.
    assert "preEnqueue" not in versions.extension_points(parse_version("1.25"))
    assert versions.extension_points(parse_version("1.26"))[0] == "preEnqueue"
    assert versions.extension_points(parse_version("1.36"))[-2:] == (
        "placementGenerate",
        "placementScore",
    )
    v137 = versions.extension_points(parse_version("1.37"))
    assert "podGroupPostFilter" in v137
    assert "placementFeasible" not in v137  # on upstream master, not in v1.37.2
