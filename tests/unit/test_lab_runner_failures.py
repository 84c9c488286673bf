"""The lab runner's kubelet failures: image pulls, volume mounts, OOM kills (no processes)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from kschedctl.lab import images
from kschedctl.lab.runner import volumes
from kschedctl.lab.runner.container import ContainerRunner, Options
from kschedctl.lab.runner.programs import ImagePullError
from kschedctl.lab.runner.restarts import memory_limit

POD = {
    "metadata": {"name": "sched-0", "namespace": "ns", "uid": "u-1"},
    "spec": {"nodeName": "node-1"},
}
BAD = "registry.k8s.io/kube-scheduler:v1.99.0"


@pytest.mark.parametrize(
    ("image", "pullable"),
    [
        ("registry.k8s.io/kube-scheduler:v1.36.3", True),
        ("registry.k8s.io/kube-scheduler:v1.25.16", True),
        ("k8s.gcr.io/kube-scheduler:v1.25.0", True),
        ("registry.k8s.io/kube-scheduler:v1.37.0-rc.1", True),
        # a patch newer than kschedctl's table, of a minor that still gets patches
        ("registry.k8s.io/kube-scheduler:v1.36.9", True),
        ("registry.k8s.io/kube-scheduler:v1.99.0", False),  # no such minor
        ("registry.k8s.io/kube-scheduler:v1.30.99", False),  # past the line's last patch
        ("registry.k8s.io/kube-scheduler:1.36.3", False),  # Kubernetes tags start with v
        ("registry.k8s.io/kube-scheduler:latest", False),
        ("registry.k8s.io/kube-scheduler", False),  # no tag is latest: there is none
        ("registry.k8s.io/scheduler-plugins/kube-scheduler:v0.33.5", True),
        ("registry.k8s.io/scheduler-plugins/kube-scheduler:v1.36.3", False),
        ("registry.k8s.io/kube-scheduler@sha256:" + "a" * 64, True),  # a digest: unknowable
        ("example.com/mirror/kube-scheduler:anything", True),  # other registries: unknowable
        ("kschedctl.local/custom-kube-scheduler:v1.36.3", True),
    ],
)
def test_pull_error_only_for_tags_the_projects_registry_does_not_have(
    image: str, pullable: bool
) -> None:
    assert (images.pull_error(image) is None) == pullable


def test_pull_error_is_containerds_not_found() -> None:
    assert images.pull_error(BAD) == (
        f'rpc error: code = NotFound desc = failed to pull and unpack image "{BAD}": '
        f'failed to resolve reference "{BAD}": {BAD}: not found'
    )


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, str, str]] = []

    def __call__(self, kind: str, reason: str, message: str) -> None:
        self.events.append((kind, reason, message))


def _runner(
    tmp_path: Path, prepare: Any, events: Recorder, container: dict[str, Any] | None = None
) -> ContainerRunner:
    return ContainerRunner(
        POD, container or {"name": "c", "image": BAD}, "kube-scheduler", tmp_path / "pod",
        tmp_path, Options(restart_backoff=10, max_restart_backoff=300), prepare=prepare,
        log=lambda _m: None, event=events,
    )  # fmt: skip


def _cannot_pull(_container: Any) -> Any:
    raise ImagePullError(images.pull_error(BAD))


def test_image_pull_fails_then_backs_off_then_pulls_again(tmp_path: Path) -> None:
    events = Recorder()
    runner = _runner(tmp_path, _cannot_pull, events)
    t0 = time.time() + 1
    runner.step(t0, False)
    waiting = runner.status()["state"]["waiting"]
    assert waiting == {"reason": "ErrImagePull", "message": images.pull_error(BAD)}
    assert events.events == [
        ("Normal", "Pulling", f'Pulling image "{BAD}"'),
        ("Warning", "Failed", f'Failed to pull image "{BAD}": {images.pull_error(BAD)}'),
        ("Warning", "Failed", "Error: ErrImagePull"),
    ]
    events.events.clear()
    runner.step(t0 + 2, False)  # the next sync: in back-off
    waiting = runner.status()["state"]["waiting"]
    assert waiting["reason"] == "ImagePullBackOff"
    assert waiting["message"] == f'Back-off pulling image "{BAD}": ErrImagePull: ' + str(
        images.pull_error(BAD)
    )
    assert events.events == [
        ("Normal", "BackOff", f'Back-off pulling image "{BAD}"'),
        ("Warning", "Failed", "Error: ImagePullBackOff"),
    ]
    assert runner.next_start == pytest.approx(t0 + 10)
    events.events.clear()
    runner.step(t0 + 5, False)  # not due: nothing happens
    assert events.events == []
    runner.step(t0 + 10, False)  # the window is over: pulled again, failed again
    assert runner.status()["state"]["waiting"]["reason"] == "ErrImagePull"
    assert runner.pull_backoff.window == 20  # doubled, as the kubelet's
    assert runner.restart_count == 0 and runner.status()["lastState"] == {}


def test_a_missing_volume_waits_in_container_creating_without_a_message(tmp_path: Path) -> None:
    def unmountable(_container: Any) -> Any:
        raise volumes.VolumeError('configmap "absent" not found', "config")

    events = Recorder()
    runner = _runner(tmp_path, unmountable, events)
    runner.step(time.time() + 1, False)
    # The kubelet's status says nothing more: FailedMount events (the worker's) say why.
    assert runner.status()["state"] == {"waiting": {"reason": "ContainerCreating"}}
    assert events.events == []


def test_failed_mount_event_is_the_kubelets_text(tmp_path: Path) -> None:
    pod = {"metadata": {"name": "p", "namespace": "ns", "uid": "u"},
           "spec": {"volumes": [{"name": "config", "configMap": {"name": "absent"}}]}}  # fmt: skip

    class NoObjects:
        def get_object(self, *_a: Any) -> None:
            return None

    with pytest.raises(volumes.VolumeError) as caught:
        volumes.materialise(pod, tmp_path / "pod", tmp_path / "lab", NoObjects())  # type: ignore[arg-type]
    assert caught.value.volume == "config"
    assert caught.value.event_message() == (
        'MountVolume.SetUp failed for volume "config" : configmap "absent" not found'
    )
    assert volumes.VolumeError("x").event_message() == "MountVolume.SetUp failed: x"


@pytest.mark.parametrize(
    ("limits", "expected"),
    [({"memory": "64Mi"}, 64 * 2**20), ({"memory": "1G"}, 10**9), ({}, None),
     ({"memory": "lots"}, None)],
)  # fmt: skip
def test_memory_limit(limits: dict[str, str], expected: int | None) -> None:
    assert memory_limit({"resources": {"limits": limits}}) == expected


def test_over_the_memory_limit_is_sigkilled_and_reported_oomkilled(tmp_path: Path) -> None:
    events = Recorder()
    container = {"name": "c", "image": "registry.k8s.io/kube-scheduler:v1.36.3",
                 "resources": {"limits": {"memory": "1Ki"}}}  # fmt: skip
    runner = _runner(tmp_path, _cannot_pull, events, container)
    sent: list[signal.Signals] = []
    runner.pid = os.getpid()  # any live process uses more than 1Ki
    runner._signal = sent.append  # type: ignore[method-assign]
    assert runner._over_memory_limit() is True
    assert sent == [signal.SIGKILL]
    assert runner._over_memory_limit() is False  # killed once
    now = time.time()
    runner._exited(137, now, "")
    terminated = runner.status()["lastState"]["terminated"]
    assert (terminated["reason"], terminated["exitCode"]) == ("OOMKilled", 137)
    assert runner.oom_killed is False  # the next run starts clean


def test_within_the_memory_limit_runs_on(tmp_path: Path) -> None:
    container = {"name": "c", "image": "x", "resources": {"limits": {"memory": "1Ti"}}}
    runner = _runner(tmp_path, _cannot_pull, Recorder(), container)
    runner.pid = os.getpid()
    assert runner._over_memory_limit() is False
