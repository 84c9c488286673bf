"""One gitVersion parser (model/config/versions.py) behind diagnosis and the scheduler's API."""

from __future__ import annotations

import pytest

from kschedctl.model.config.versions import parse_git_version, server_version_or_default


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("v1.36.3", (1, 36, 3)),
        ("1.33.5", (1, 33, 5)),
        ("v1.33.5-eks-a1b2c3", (1, 33, 5)),
        ("v1.31.2+k3s1", (1, 31, 2)),
        ("v1.35", (1, 35)),
        ("v1.35.x", (1, 35)),
        ("", None),
        ("banana", None),
        (" v1.36.3", None),
    ],
    ids=[
        "release",
        "no-v",
        "eks",
        "k3s",
        "no-patch",
        "bad-patch",
        "empty",
        "word",
        "leading-space",
    ],
)
def test_parse_git_version(text: str, expected: tuple[int, ...] | None) -> None:
    assert parse_git_version(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [("v1.34.1", (1, 34, 1)), ("v1.35", (1, 35)), ("", (1, 36)), ("unknown", (1, 36))],
    ids=["release", "no-patch", "empty", "unreadable"],
)
def test_diagnosis_version_falls_back_to_the_engine_default(
    text: str, expected: tuple[int, ...]
) -> None:
    assert server_version_or_default(text) == expected


class _Cluster:
    def __init__(self, git_version: str) -> None:
        self.git_version = git_version

    def server_version(self) -> dict[str, str]:
        return {"gitVersion": self.git_version}


@pytest.mark.parametrize(
    ("text", "expected"),
    [("v1.34.1-gke.100", (1, 34, 1)), ("v1.35", (1, 36)), ("", (1, 36))],
    ids=["release", "no-patch-is-unreadable", "empty"],
)
def test_scheduler_api_server_version(text: str, expected: tuple[int, ...]) -> None:
    from kschedctl.k8s.scheduler_api import ClusterSchedulerApi

    api = ClusterSchedulerApi.__new__(ClusterSchedulerApi)
    api.cluster = _Cluster(text)  # type: ignore[assignment]
    assert api.server_version() == expected
