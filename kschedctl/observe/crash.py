"""Why a scheduler's container does not run (pure): the kubelet's reasons, read from a pod.

A scheduler that crashes, cannot pull its image or waits for a missing ConfigMap schedules
nothing, and its pods say why in ``status.containerStatuses``: the waiting reason the kubelet
set (``CrashLoopBackOff``, ``ImagePullBackOff``/``ErrImagePull``,
``CreateContainerConfigError``, ``RunContainerError``, …), the last termination
(``lastState.terminated``: ``Error``, ``OOMKilled``, the exit code) and the restart count. A
volume that cannot be mounted leaves the container in ``ContainerCreating`` with no message at
all: the kubelet says it only in ``FailedMount`` events (``MountVolume.SetUp failed for volume
"config" : configmap "x" not found``, k8s.io/kubernetes pkg/volume/util/operationexecutor
operation_executor.go ``generateVolumeMsg``), so those events' messages are an input too.

:func:`pod_problems` turns one pod into :class:`ContainerProblem` entries, each with a one-line
hint of what to do; :func:`key_line` picks the line of a crashed container's log that says why.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

# Waiting reasons of a container that is starting normally (kubelet: kuberuntime and
# pkg/kubelet/kubelet_pods.go), not problems on their own.
STARTING = ("ContainerCreating", "PodInitializing")
FAILED_MOUNT = "FailedMount"
IMAGE_PULL = ("ImagePullBackOff", "ErrImagePull")  # pkg/kubelet/images/types.go
# What a configuration error names as missing: the kubelet's wording (pkg/kubelet/kubelet_pods.go
# makeEnvironmentVariables, and the configmap/secret volume plugins).
_MISSING = re.compile(r'\b(configmap|secret) "([^"]+)" not found', re.IGNORECASE)
_MISSING_KEY = re.compile(r"couldn't find key (\S+) in (ConfigMap|Secret) (\S+)")
# Signals by number, for an exit code above 128 (the runtime reports 128 + signal).
_SIGNALS = {1: "SIGHUP", 2: "SIGINT", 6: "SIGABRT", 9: "SIGKILL", 11: "SIGSEGV", 15: "SIGTERM"}
# A line that says why a program stopped: klog's error/fatal header (E0102 15:04:05.000000),
# Go's `Error: …` of a cobra command (k8s.io/component-base/cli/run.go), a panic.
_ERROR_LINE = re.compile(r"^(?:[EF]\d{4} |Error: |panic: |fatal error: )")
_ERRORISH = re.compile(r"\b(?:error|err=|failed|fatal|invalid|unknown flag)\b", re.IGNORECASE)


class ProblemEntry(TypedDict):
    """One container's problem as ``status -o json`` shows it (keys and order: a contract)."""

    pod: str
    container: str
    reason: str
    message: str
    restarts: int
    lastTerminationReason: str | None
    exitCode: int | None
    finishedAt: str | None
    missing: str | None
    hint: str


@dataclass(frozen=True)
class ContainerProblem:
    """Why one container of a scheduler's pod does not run."""

    namespace: str
    pod: str
    container: str
    reason: str  # the kubelet's waiting reason, FailedMount, or the final termination reason
    message: str
    restarts: int = 0
    last_reason: str | None = None  # lastState.terminated.reason: Error, OOMKilled, …
    exit_code: int | None = None
    finished_at: str | None = None
    missing: str | None = None  # "ConfigMap NS/NAME", "key K in Secret NS/NAME"
    hint: str = ""

    @property
    def headline(self) -> str:
        """One line: ``CrashLoopBackOff (last exit: Error, code 1; 4 restarts)``."""
        parts = []
        if self.last_reason is not None or self.exit_code is not None:
            code = f", exit code {self.exit_code}" if self.exit_code is not None else ""
            meaning = exit_meaning(self.exit_code)
            parts.append(
                f"last termination: {self.last_reason or 'unknown'}{code}"
                + (f" ({meaning})" if meaning else "")
            )
        if self.restarts:
            parts.append(f"{self.restarts} restart(s)")
        return self.reason + (f" ({'; '.join(parts)})" if parts else "")

    def to_dict(self) -> ProblemEntry:
        return {
            "pod": f"{self.namespace}/{self.pod}",
            "container": self.container,
            "reason": self.reason,
            "message": self.message,
            "restarts": self.restarts,
            "lastTerminationReason": self.last_reason,
            "exitCode": self.exit_code,
            "finishedAt": self.finished_at,
            "missing": self.missing,
            "hint": self.hint,
        }


def exit_meaning(code: int | None) -> str:
    """What an exit code above 128 says: the signal that ended the process ("" otherwise)."""
    if code is None or code <= 128 or code > 128 + 64:
        return ""
    signal = code - 128
    return f"killed by {_SIGNALS.get(signal, f'signal {signal}')}"


def missing_object(message: str, namespace: str) -> str | None:
    """The ConfigMap/Secret (or key of one) a kubelet message says is missing."""
    key = _MISSING_KEY.search(message)
    if key:
        return f"key {key.group(1)} in {key.group(2)} {key.group(3)}"
    found = _MISSING.search(message)
    if found:
        kind = "ConfigMap" if found.group(1).lower() == "configmap" else "Secret"
        return f"{kind} {namespace}/{found.group(2)}"
    return None


def _memory_limit(pod: Mapping[str, Any], container: str) -> str | None:
    for spec in (pod.get("spec") or {}).get("containers") or []:
        if spec.get("name") == container:
            limit = ((spec.get("resources") or {}).get("limits") or {}).get("memory")
            return str(limit) if limit is not None else None
    return None


def _image(pod: Mapping[str, Any], container: str, status: Mapping[str, Any]) -> str:
    spec = pod.get("spec") or {}
    for spec_container in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]:
        if spec_container.get("name") == container:
            return str(spec_container.get("image") or "")
    return str(status.get("image") or "")


def _logs_hint(namespace: str, pod: str, container: str, scheduler: str | None) -> str:
    if scheduler:
        return f"kschedctl logs {scheduler} --previous"
    return f"kubectl logs -n {namespace} {pod} -c {container} --previous"


def hint_for(
    problem: ContainerProblem,
    *,
    image: str = "",
    memory_limit: str | None = None,
    scheduler: str | None = None,
) -> str:
    """What to do about ``problem``, in one line."""
    ns, pod, container = problem.namespace, problem.pod, problem.container
    if problem.reason == "OOMKilled" or problem.last_reason == "OOMKilled":
        now = f" (now {memory_limit})" if memory_limit else ""
        return (
            f"container {container} ran out of memory: raise its resources.limits.memory{now} "
            "(kschedctl spec: spec.pod.resources.limits.memory), or lower what it caches "
            "(fewer profiles, a smaller percentageOfNodesToScore)"
        )
    if problem.reason in IMAGE_PULL:
        return (
            f"image {image or '?'} cannot be pulled: check that the repository and tag exist "
            "(registry.k8s.io/kube-scheduler is tagged with Kubernetes releases, e.g. v1.36.3) "
            "and, for a private registry, the pod's imagePullSecrets"
        )
    if problem.reason == "InvalidImageName":
        return f"image {image or '?'} is not a valid image reference: fix spec.image"
    if problem.reason == "ErrImageNeverPull":
        return (
            f"imagePullPolicy is Never and image {image or '?'} is not on the node: load it "
            "there, or change imagePullPolicy"
        )
    if problem.missing:
        return (
            f"create the missing {problem.missing} (or fix the pod's reference to it); "
            f"`kschedctl deploy {scheduler}` applies the ConfigMap kschedctl renders"
            if scheduler
            else f"create the missing {problem.missing} (or fix the pod's reference to it)"
        )
    if problem.reason == "CreateContainerConfigError":
        return "fix the container's env/envFrom/volumeMounts: the kubelet cannot build them"
    if problem.reason in ("RunContainerError", "CreateContainerError", "StartError"):
        return (
            "the runtime cannot start the container: check its command, args and the "
            "image's entrypoint"
        )
    if problem.reason == FAILED_MOUNT:
        return f"a volume cannot be mounted: kubectl describe pod {pod} -n {ns} shows why"
    if problem.reason == "CrashLoopBackOff" or problem.exit_code not in (None, 0):
        return (
            f"it exits right after starting (a bad flag or config, a missing file, no access "
            f"to the API server): the previous container's log says why — "
            f"{_logs_hint(ns, pod, container, scheduler)}"
        )
    return f"kubectl describe pod {pod} -n {ns} shows the kubelet's events"


def _problem(
    pod: Mapping[str, Any],
    status: Mapping[str, Any],
    mount_failures: Sequence[str],
    missing_configmaps: Iterable[str],
    scheduler: str | None,
) -> ContainerProblem | None:
    meta = pod.get("metadata") or {}
    ns, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
    container = str(status.get("name") or "")
    state = status.get("state") or {}
    last = (status.get("lastState") or {}).get("terminated") or {}
    waiting, terminated = state.get("waiting"), state.get("terminated")
    reason, message = "", ""
    if waiting is not None:
        reason, message = str(waiting.get("reason") or ""), str(waiting.get("message") or "")
        if reason in ("", *STARTING):
            if mount_failures:
                reason, message = FAILED_MOUNT, mount_failures[-1]
            else:
                missing = sorted(missing_configmaps)
                if not missing:
                    return None
                # No event to read (expired, or not readable): the snapshot knows it is gone.
                reason = FAILED_MOUNT
                message = f'configmap "{missing[0]}" not found'
    elif terminated is not None:
        code = terminated.get("exitCode")
        if code in (None, 0):
            return None
        reason = str(terminated.get("reason") or "Error")
        message = str(terminated.get("message") or "")
        last = terminated
    else:
        return None
    exit_code = last.get("exitCode")
    problem = ContainerProblem(
        namespace=ns,
        pod=name,
        container=container,
        reason=reason,
        message=message,
        restarts=int(status.get("restartCount") or 0),
        last_reason=str(last["reason"]) if last.get("reason") else None,
        exit_code=int(exit_code) if isinstance(exit_code, int) else None,
        finished_at=str(last["finishedAt"]) if last.get("finishedAt") else None,
        missing=missing_object(message, ns),
    )
    hint = hint_for(
        problem,
        image=_image(pod, container, status),
        memory_limit=_memory_limit(pod, container),
        scheduler=scheduler,
    )
    return ContainerProblem(**{**problem.__dict__, "hint": hint})


def pod_problems(
    pod: Mapping[str, Any],
    *,
    mount_failures: Sequence[str] = (),
    missing_configmaps: Iterable[str] = (),
    scheduler: str | None = None,
) -> list[ContainerProblem]:
    """Every container of ``pod`` that does not run, init containers first.

    ``mount_failures``: the messages of the pod's ``FailedMount`` events, oldest first.
    ``missing_configmaps``: names of ConfigMaps its volumes need that are known not to exist
    (used when no event says so). ``scheduler`` names the scheduler in the hints.
    """
    status = pod.get("status") or {}
    if status.get("phase") == "Succeeded":
        return []
    found: list[ContainerProblem] = []
    statuses = [
        *(status.get("initContainerStatuses") or []),
        *(status.get("containerStatuses") or []),
    ]
    missing = list(missing_configmaps)
    for container in statuses:
        problem = _problem(pod, container, mount_failures, missing, scheduler)
        if problem is not None:
            found.append(problem)
    if not statuses and mount_failures and (pod.get("spec") or {}).get("nodeName"):
        # The kubelet has not written container statuses yet: the pod's events are all there is.
        containers = (pod.get("spec") or {}).get("containers") or [{}]
        waiting = {"name": containers[0].get("name", ""), "state": {"waiting": {}}}
        problem = _problem(pod, waiting, mount_failures, missing, scheduler)
        if problem is not None:
            found.append(problem)
    return found


def configmap_volumes(pod: Mapping[str, Any]) -> list[str]:
    """The ConfigMaps the pod's volumes need (optional ones left out), projected ones too."""
    names: list[str] = []
    for volume in (pod.get("spec") or {}).get("volumes") or []:
        sources = [volume.get("configMap")] + [
            s.get("configMap") for s in (volume.get("projected") or {}).get("sources") or []
        ]
        for source in sources:
            if isinstance(source, dict) and source.get("name") and not source.get("optional"):
                names.append(str(source["name"]))
    return names


def key_line(lines: Sequence[str]) -> str | None:
    """The line of a crashed container's log that says why it stopped: the last error line
    (klog ``E``/``F``, ``Error: …``, a panic), else the last line mentioning an error, else
    the last line."""
    stripped = [line.strip() for line in lines if line.strip()]
    for pattern in (_ERROR_LINE, _ERRORISH):
        for line in reversed(stripped):
            if pattern.search(line):
                return line
    return stripped[-1] if stripped else None


class CrashEntry(ProblemEntry):
    """``status -o json``'s ``problems`` items: the problem, then the previous container's
    last lines, the line among them that says why, and why they could not be read."""

    previousLog: list[str]
    keyLine: str | None
    previousLogError: str | None


@dataclass
class CrashReport:
    problem: ContainerProblem
    previous_log: list[str] = field(default_factory=list)
    previous_log_error: str | None = None  # why the previous log could not be read

    @property
    def key_line(self) -> str | None:
        return key_line(self.previous_log)

    def to_dict(self) -> CrashEntry:
        return {
            **self.problem.to_dict(),
            "previousLog": list(self.previous_log),
            "keyLine": self.key_line,
            "previousLogError": self.previous_log_error,
        }


def crash_lines(crash: CrashReport) -> list[str]:
    """``status``' account of one problem, a line each (also the message of a deploy that a
    crash stops): the kubelet's reason, the last termination, the fix, the previous
    container's last lines."""
    p = crash.to_dict()
    pod = p["pod"].split("/", 1)[-1]
    lines = [f"pod/{pod} container {p['container']}: {crash.problem.headline}"]
    if p["message"]:
        lines.append(f"  message:  {p['message']}")
    if p["finishedAt"]:
        lines.append(f"  finished: {p['finishedAt']}")
    lines.append(f"  fix:      {p['hint']}")
    if p["previousLog"]:
        lines.append(f"  last {len(p['previousLog'])} line(s) of the previous container:")
        lines.extend(f"    {line}" for line in p["previousLog"])
    elif p["previousLogError"]:
        lines.append(f"  previous container's log: not readable ({p['previousLogError']})")
    return lines
