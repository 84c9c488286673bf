"""observe/crash.py: why a scheduler's container does not run, from plain-dict pods."""

from __future__ import annotations

from typing import Any

import pytest

from kschedctl.observe.crash import (
    CrashReport,
    configmap_volumes,
    exit_meaning,
    key_line,
    missing_object,
    pod_problems,
)

IMAGE = "registry.k8s.io/kube-scheduler:v1.36.3"


def pod(
    *statuses: dict[str, Any],
    memory: str | None = None,
    phase: str = "Running",
    init: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "kube-scheduler", "image": IMAGE}
    if memory:
        container["resources"] = {"limits": {"memory": memory}}
    status: dict[str, Any] = {"phase": phase, "containerStatuses": list(statuses)}
    if init is not None:
        status["initContainerStatuses"] = init
    return {
        "metadata": {"name": "s-1", "namespace": "kube-system", "uid": "u1"},
        "spec": {
            "nodeName": "n1",
            "containers": [container],
            "volumes": [{"name": "config", "configMap": {"name": "s-config"}}],
        },
        "status": status,
    }


def waiting(why: str, message: str = "", restarts: int = 0, **last: Any) -> dict[str, Any]:
    """A waiting container status; ``last``: its lastState.terminated."""
    return {
        "name": "kube-scheduler",
        "image": IMAGE,
        "ready": False,
        "restartCount": restarts,
        "state": {"waiting": {"reason": why, **({"message": message} if message else {})}},
        "lastState": {"terminated": last} if last else {},
    }


CRASH_MESSAGE = "back-off 20s restarting failed container=kube-scheduler pod=s-1_kube-system(u1)"


def test_crash_loop_with_the_last_termination_and_a_logs_hint() -> None:
    status = waiting(
        "CrashLoopBackOff", CRASH_MESSAGE, 3,
        exitCode=1, reason="Error", finishedAt="2026-12-03T09:00:00Z",
    )  # fmt: skip
    (problem,) = pod_problems(pod(status), scheduler="my-scheduler")
    assert problem.to_dict() == {
        "pod": "kube-system/s-1",
        "container": "kube-scheduler",
        "reason": "CrashLoopBackOff",
        "message": CRASH_MESSAGE,
        "restarts": 3,
        "lastTerminationReason": "Error",
        "exitCode": 1,
        "finishedAt": "2026-12-03T09:00:00Z",
        "missing": None,
        "hint": problem.hint,
    }
    assert "kschedctl logs my-scheduler --previous" in problem.hint
    assert problem.headline == (
        "CrashLoopBackOff (last termination: Error, exit code 1; 3 restart(s))"
    )


def test_crash_loop_hint_without_a_scheduler_name_is_kubectls() -> None:
    status = waiting("CrashLoopBackOff", CRASH_MESSAGE, 1, exitCode=2, reason="Error")
    (problem,) = pod_problems(pod(status))
    assert "kubectl logs -n kube-system s-1 -c kube-scheduler --previous" in problem.hint


def test_oom_killed_names_the_memory_limit() -> None:
    status = waiting("CrashLoopBackOff", CRASH_MESSAGE, 2, exitCode=137, reason="OOMKilled")
    (problem,) = pod_problems(pod(status, memory="64Mi"))
    assert (problem.last_reason, problem.exit_code) == ("OOMKilled", 137)
    assert "resources.limits.memory (now 64Mi)" in problem.hint
    assert "killed by SIGKILL" in problem.headline


@pytest.mark.parametrize(
    ("reason", "message"),
    [
        ("ErrImagePull", "rpc error: code = NotFound desc = failed to pull and unpack image"),
        ("ImagePullBackOff", 'Back-off pulling image "registry.k8s.io/kube-scheduler:v1.99.0"'),
    ],
    ids=["err-image-pull", "image-pull-back-off"],
)
def test_image_pull_failures_name_the_image(reason: str, message: str) -> None:
    (problem,) = pod_problems(pod(waiting(reason, message)))
    assert (problem.reason, problem.message, problem.restarts) == (reason, message, 0)
    assert problem.exit_code is None and problem.last_reason is None
    assert IMAGE in problem.hint and "imagePullSecrets" in problem.hint


@pytest.mark.parametrize(
    ("reason", "expected"),
    [
        ("InvalidImageName", "not a valid image reference"),
        ("ErrImageNeverPull", "imagePullPolicy is Never"),
        ("RunContainerError", "check its command, args"),
        ("CreateContainerError", "check its command, args"),
    ],
)
def test_other_kubelet_reasons_get_their_own_hint(reason: str, expected: str) -> None:
    (problem,) = pod_problems(pod(waiting(reason, "the runtime said no")))
    assert problem.reason == reason and expected in problem.hint


def test_create_container_config_error_names_the_missing_configmap() -> None:
    status = waiting("CreateContainerConfigError", 'configmap "s-env" not found')
    (problem,) = pod_problems(pod(status), scheduler="s")
    assert problem.missing == "ConfigMap kube-system/s-env"
    assert problem.hint.startswith("create the missing ConfigMap kube-system/s-env")
    assert "kschedctl deploy s" in problem.hint


def test_create_container_config_error_names_a_missing_key() -> None:
    message = "couldn't find key level in ConfigMap kube-system/s-env"
    (problem,) = pod_problems(pod(waiting("CreateContainerConfigError", message)))
    assert problem.missing == "key level in ConfigMap kube-system/s-env"


def test_create_container_config_error_without_a_name_says_what_to_fix() -> None:
    status = waiting("CreateContainerConfigError", "unsupported fieldRef spec.foo")
    (problem,) = pod_problems(pod(status))
    assert problem.missing is None and "env/envFrom/volumeMounts" in problem.hint


def test_container_creating_with_failed_mount_events_is_failed_mount() -> None:
    event = 'MountVolume.SetUp failed for volume "config" : configmap "s-config" not found'
    (problem,) = pod_problems(
        pod(waiting("ContainerCreating"), phase="Pending"), mount_failures=["older", event]
    )
    assert (problem.reason, problem.message) == ("FailedMount", event)
    assert problem.missing == "ConfigMap kube-system/s-config"


def test_container_creating_with_a_known_missing_configmap_and_no_event() -> None:
    (problem,) = pod_problems(
        pod(waiting("ContainerCreating"), phase="Pending"), missing_configmaps=["s-config"]
    )
    assert problem.reason == "FailedMount" and problem.missing == "ConfigMap kube-system/s-config"


def test_container_creating_alone_is_starting_not_a_problem() -> None:
    assert pod_problems(pod(waiting("ContainerCreating"), phase="Pending")) == []


def test_pod_without_container_statuses_but_failed_mounts() -> None:
    bare = pod(phase="Pending")
    bare["status"].pop("containerStatuses")
    event = 'MountVolume.SetUp failed for volume "config" : secret "s-tls" not found'
    (problem,) = pod_problems(bare, mount_failures=[event])
    assert (problem.container, problem.missing) == ("kube-scheduler", "Secret kube-system/s-tls")


def test_running_containers_are_not_problems_even_after_restarts() -> None:
    running = {
        "name": "kube-scheduler", "ready": True, "restartCount": 4,
        "state": {"running": {"startedAt": "2026-12-03T09:00:00Z"}},
        "lastState": {"terminated": {"exitCode": 1, "reason": "Error"}},
    }  # fmt: skip
    assert pod_problems(pod(running)) == []


def test_a_container_that_will_not_restart_reports_its_final_termination() -> None:
    done = {
        "name": "kube-scheduler", "restartCount": 0,
        "state": {"terminated": {"exitCode": 1, "reason": "Error",
                                 "finishedAt": "2026-12-03T09:01:00Z"}},
    }  # fmt: skip
    (problem,) = pod_problems(pod(done, phase="Failed"))
    assert (problem.reason, problem.last_reason, problem.exit_code) == ("Error", "Error", 1)
    assert problem.finished_at == "2026-12-03T09:01:00Z"
    completed = {"name": "kube-scheduler", "state": {"terminated": {"exitCode": 0}}}
    assert pod_problems(pod(completed, phase="Succeeded")) == []


def test_init_containers_come_first() -> None:
    init = [{"name": "wait", "state": {"waiting": {"reason": "ErrImagePull"}}}]
    problems = pod_problems(pod(waiting("PodInitializing"), init=init, phase="Pending"))
    assert [p.container for p in problems] == ["wait"]


@pytest.mark.parametrize(
    ("code", "meaning"),
    [(None, ""), (0, ""), (1, ""), (137, "killed by SIGKILL"), (143, "killed by SIGTERM"),
     (139, "killed by SIGSEGV"), (140, "killed by signal 12"), (255, "")],
)  # fmt: skip
def test_exit_meaning(code: int | None, meaning: str) -> None:
    assert exit_meaning(code) == meaning


@pytest.mark.parametrize(
    ("message", "missing"),
    [
        ('configmap "a" not found', "ConfigMap ns/a"),
        ('secrets "b" not found', None),  # the API's plural NotFound is not the kubelet's
        ('secret "b" not found', "Secret ns/b"),
        ("couldn't find key k in Secret ns/c", "key k in Secret ns/c"),
        ("nothing here", None),
    ],
)
def test_missing_object(message: str, missing: str | None) -> None:
    assert missing_object(message, "ns") == missing


def test_configmap_volumes_skip_optional_ones_and_read_projections() -> None:
    spec = {
        "volumes": [
            {"name": "a", "configMap": {"name": "one"}},
            {"name": "b", "configMap": {"name": "two", "optional": True}},
            {"name": "c", "projected": {"sources": [{"configMap": {"name": "three"}},
                                                    {"secret": {"name": "s"}}]}},
            {"name": "d", "emptyDir": {}},
        ]
    }  # fmt: skip
    assert configmap_volumes({"spec": spec}) == ["one", "three"]


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        (
            ["I1203 09:00:00.000000 1 serving.go:386] Generated self-signed cert",
            'E1203 09:00:00.100000 1 run.go:72] "command failed" err="no kind \\"Nope\\""',
            "I1203 09:00:00.200000 1 other.go:1] shutting down",
        ],
            'E1203 09:00:00.100000 1 run.go:72] "command failed" err="no kind \\"Nope\\""',
        ),
        (["starting", "Error: unknown flag: --bogus", "usage ..."],
         "Error: unknown flag: --bogus"),
        (["starting", "could not load: invalid value", "bye"], "could not load: invalid value"),
        (["starting", "bye", ""], "bye"),
        ([], None),
    ],
    ids=["klog-error", "cobra-error", "errorish", "last-line", "empty"],
)  # fmt: skip
def test_key_line(lines: list[str], expected: str | None) -> None:
    assert key_line(lines) == expected


def test_crash_report_json_keys_are_the_contract() -> None:
    status = waiting("CrashLoopBackOff", CRASH_MESSAGE, 1, exitCode=1, reason="Error")
    (problem,) = pod_problems(pod(status))
    report = CrashReport(problem, ["I1203 ok", "Error: bad config"], None)
    assert list(report.to_dict()) == [
        "pod", "container", "reason", "message", "restarts", "lastTerminationReason",
        "exitCode", "finishedAt", "missing", "hint", "previousLog", "keyLine",
        "previousLogError",
    ]  # fmt: skip
    assert report.to_dict()["keyLine"] == "Error: bad config"


def test_scheduler_pods_leave_out_deleted_and_replaced_pods() -> None:
    from kschedctl.observe.schedulers import Scheduler
    from kschedctl.ops.crash import pods_of_scheduler

    def named(name: str, **meta: object) -> dict[str, object]:
        return {"metadata": {"name": name, "namespace": "ns", **meta}, "status": {}}

    rs = [{"kind": "ReplicaSet", "name": "s-6d4"}]
    evicted = named("s-6d4-old", ownerReferences=rs)
    evicted["status"] = {"phase": "Failed", "reason": "Evicted"}
    pods = [
        named("s-6d4-new", ownerReferences=rs),
        evicted,
        named("s-6d4-going", ownerReferences=rs, deletionTimestamp="2026-12-03T09:00:00Z"),
        named("labelled", labels={"kschedctl.io/scheduler": "s"}),
        named("other"),
    ]
    entry = Scheduler("s", "deployment", namespace="ns", pods=["s-6d4-new", "s-6d4-old"])
    found = pods_of_scheduler(pods, "s", entry)  # type: ignore[arg-type]
    assert [p["metadata"]["name"] for p in found] == ["labelled", "s-6d4-new"]
