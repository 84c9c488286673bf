"""One container's life in the lab: start, probe, exit, back off, restart — kubelet-like.

:class:`ContainerRunner` is a state machine advanced by :meth:`step` from its pod's worker
thread, so it needs no locks. It never blocks for long: stopping sends SIGTERM and checks
again on later steps, escalating to SIGKILL after the grace period.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kschedctl.lab import processes
from kschedctl.lab.runner import spawn
from kschedctl.lab.runner.crilog import ContainerLog
from kschedctl.lab.runner.podenv import ContainerConfigError
from kschedctl.lab.runner.probes import ProbeTracker, check, parse_probe
from kschedctl.lab.runner.programs import ImagePullError, Launch, LaunchError
from kschedctl.lab.runner.restarts import Backoff, exit_code, memory_limit, resident_bytes
from kschedctl.lab.runner.status import iso
from kschedctl.lab.runner.volumes import VolumeError

CONTAINER_ID_PREFIX = "kschedctl-lab://"  # containerID = this + pid (kwok sets none)
CONFIG_RETRY = 2.0  # seconds between attempts while a ConfigMap/Secret/volume is missing


@dataclass(frozen=True)
class Options:
    restart_backoff: float = 10.0  # the kubelet's initial CrashLoopBackOff
    max_restart_backoff: float = 300.0
    max_probe_period: float | None = None  # cap on probe delays/periods (lab speed-up)


@dataclass
class Prepared:
    launch: Launch
    env: dict[str, str]
    hostname: str
    cwd: Path


@dataclass(eq=False)
class ContainerRunner:
    pod: Mapping[str, Any]
    spec: Mapping[str, Any]  # the pod's container
    program: str
    pod_dir: Path
    lab_dir: Path
    options: Options
    prepare: Callable[[ContainerRunner], Prepared]
    log: Callable[[str], None]
    event: Callable[[str, str, str], None]  # (type, reason, message) about this container

    proc: subprocess.Popen[bytes] | None = field(default=None, init=False)
    pid: int | None = field(default=None, init=False)  # also set for a process adopted earlier
    exe: str = field(default="", init=False)
    ticks: int | None = field(default=None, init=False)  # start time: with pid, exe, identity
    launch: Launch | None = field(default=None, init=False)
    started_at: float = field(default=0.0, init=False)
    restart_count: int = field(default=0, init=False)
    ever_ran: bool = field(default=False, init=False)
    next_start: float | None = field(default_factory=time.time, init=False)
    waiting: tuple[str, str] = field(default=("ContainerCreating", ""), init=False)
    wait_note: str = field(default="", init=False)  # what the log said beyond the waiting message
    terminated: dict[str, Any] | None = field(default=None, init=False)  # final (no restart)
    last_state: dict[str, Any] = field(default_factory=dict, init=False)
    stopping_since: float | None = field(default=None, init=False)
    stop_reason: str = field(default="", init=False)
    started: bool = field(default=False, init=False)
    ready: bool = field(default=False, init=False)
    trackers: dict[str, ProbeTracker] = field(default_factory=dict, init=False)
    warned: set[str] = field(default_factory=set, init=False)
    oom_killed: bool = field(default=False, init=False)

    def __post_init__(self) -> None:
        meta = self.pod["metadata"]
        self.name: str = self.spec["name"]
        self.image: str = self.spec.get("image", "")
        self.pod_ref = f"{meta['name']}_{meta['namespace']}({meta['uid']})"
        self.restart_policy = (self.pod.get("spec") or {}).get("restartPolicy") or "Always"
        self.grace = float((self.pod.get("spec") or {}).get("terminationGracePeriodSeconds", 30))
        self.stop_grace = self.grace
        self.record_path = spawn.record_path(self.lab_dir, self.pod, self.name)
        self.record_base = {
            "name": f"pod {meta['namespace']}/{meta['name']} container {self.name}",
            "namespace": meta["namespace"],
            "pod": meta["name"],
            "uid": meta["uid"],
            "container": self.name,
        }
        self.output = ContainerLog(self.pod_dir / "logs", self.pod_dir / "run", self.name)
        self.backoff = Backoff(self.options.restart_backoff, self.options.max_restart_backoff)
        self.pull_backoff = Backoff(self.options.restart_backoff, self.options.max_restart_backoff)
        self.memory_limit = memory_limit(self.spec)

    # -- adoption ------------------------------------------------------------------------------

    def carry_on(self, status: Mapping[str, Any]) -> None:
        """Continue the counts an earlier runner reported (it ran this container before)."""
        if not str(status.get("containerID", "")).startswith(CONTAINER_ID_PREFIX) and not (
            status.get("lastState") or status.get("restartCount")
        ):
            return  # not ours: nothing ran yet
        self.restart_count = int(status.get("restartCount") or 0)
        self.last_state = dict(status.get("lastState") or {})
        self.ever_ran = True  # so the next start counts as a restart

    def adopt(self, record: Mapping[str, Any], status: Mapping[str, Any] | None) -> bool:
        """Take over a process an earlier runner started; False if it is gone."""
        count = max(int(record.get("restartCount", 0)), int((status or {}).get("restartCount", 0)))
        self.restart_count = count
        self.ever_ran = True
        self.last_state = dict((status or {}).get("lastState") or {})
        if not processes.is_running(int(record["pid"]), str(record["exe"]), record.get("started")):
            self.record_path.unlink(missing_ok=True)
            self._exited(None, time.time(), "the process ended while no runner watched it")
            return False
        self.pid, self.exe = int(record["pid"]), str(record["exe"])
        self.ticks = record.get("started")
        self.started_at = float(record.get("startedAt", time.time()))
        self.launch = Launch([], self.exe, record.get("servingPort"), record.get("port"))
        self.output.resume()
        self.next_start = None
        self.waiting = ("", "")
        self._arm_probes(time.time(), status)
        return True

    # -- the step ------------------------------------------------------------------------------

    def step(self, now: float, terminating: bool) -> None:
        if self.pid is not None:
            self.output.pump()
            code = self._poll()
            if code is False and self._over_memory_limit():
                return  # SIGKILLed: its exit is seen on a later step, as OOMKilled
            if code is not False:
                self._exited(code, now, self.stop_reason)
                if terminating:
                    self.next_start = None
                elif self.next_start is not None and self.next_start <= now:
                    self._start(now)  # no back-off due: restart in the same step
                return
            if self.stopping_since is not None:
                if now - self.stopping_since >= self.stop_grace:
                    self._signal(signal.SIGKILL)
                return
            if terminating:
                self.stop(self.grace, "the pod is being deleted", f"Stopping container {self.name}")
                return
            self._probe(now)
        elif terminating:
            self.next_start = None
        elif self.next_start is not None and now >= self.next_start:
            self._start(now)

    def running(self) -> bool:
        return self.pid is not None

    def stop(self, grace: float, reason: str, note: str) -> None:
        """SIGTERM now; SIGKILL from a later step once ``grace`` seconds have passed."""
        if self.pid is None or self.stopping_since is not None:
            return
        self.log(f"stopping {self.name} (pid {self.pid}): {reason}")
        self.event("Normal", "Killing", note)
        self.stop_reason = reason
        self.stopping_since = time.time()
        self.stop_grace = grace
        self._signal(signal.SIGTERM)

    def detach(self) -> None:
        """The runner is shutting down: leave the process running, keep what it wrote."""
        if self.pid is not None:
            self.output.pump()

    # -- internals -----------------------------------------------------------------------------

    def _poll(self) -> int | None | bool:
        """Exit code (None: unknown), or False while it runs."""
        assert self.pid is not None
        if self.proc is not None:
            returncode = self.proc.poll()
            return False if returncode is None else exit_code(returncode)
        return False if processes.is_running(self.pid, self.exe, self.ticks) else None

    def _over_memory_limit(self) -> bool:
        """The kernel's OOM killer for the container's cgroup, approximated: a process whose
        resident memory exceeds resources.limits.memory is SIGKILLed and its termination
        reported as OOMKilled, exit code 137 (what containerd reports for a cgroup OOM kill)."""
        if self.memory_limit is None or self.oom_killed or self.pid is None:
            return False
        rss = resident_bytes(self.pid)
        if rss is None or rss <= self.memory_limit:
            return False
        self.log(
            f"{self.name} (pid {self.pid}) uses {rss // 2**20}Mi, over its memory limit "
            f"{self.spec['resources']['limits']['memory']}: killed (OOMKilled)"
        )
        self.oom_killed = True
        self._signal(signal.SIGKILL)
        return True

    def _signal(self, sig: signal.Signals) -> None:
        assert self.pid is not None
        if self.proc is not None and self.proc.poll() is not None:
            return
        if self.proc is None and not processes.is_running(self.pid, self.exe, self.ticks):
            return
        try:
            os.kill(self.pid, sig)
        except ProcessLookupError:
            pass

    def _start(self, now: float) -> None:
        try:
            prepared = self.prepare(self)
        except ContainerConfigError as err:
            if self.waiting != ("CreateContainerConfigError", str(err)):
                self.event("Warning", "Failed", f"Error: {err}")
            self._wait_for("CreateContainerConfigError", str(err), now + CONFIG_RETRY)
            return
        except VolumeError as err:
            # The kubelet leaves the container ContainerCreating with no message while a
            # volume cannot be mounted: only its FailedMount events (the worker's) say why.
            self._wait_for("ContainerCreating", "", now + CONFIG_RETRY, note=str(err))
            return
        except ImagePullError as err:
            self._pull_failed(err, now)
            return
        except LaunchError as err:
            self._failed_start(str(err), now)
            return
        launch = prepared.launch
        for note in launch.notes:
            if note not in self.warned:
                self.warned.add(note)
                self.log(f"{self.name}: {note}")
        if self.ever_ran:
            self.restart_count += 1
            self.backoff.restarted(now)
        outputs = self.output.new_run()
        try:
            proc = spawn.spawn(
                launch.argv, prepared.hostname, prepared.env, outputs, prepared.cwd, self.lab_dir
            )
        except OSError as err:
            self._failed_start(f"cannot start {launch.argv[0]}: {err}", now)
            return
        self.proc, self.pid, self.exe, self.launch = proc, proc.pid, launch.exe, launch
        self.ticks = processes.start_ticks(proc.pid)
        self.started_at, self.ever_ran = now, True
        self.next_start, self.waiting, self.terminated = None, ("", ""), None
        self.stopping_since, self.stop_reason = None, ""
        spawn.write_record(
            self.record_path,
            {
                **self.record_base,
                "pid": proc.pid,
                "exe": launch.exe,
                "started": self.ticks,
                "port": launch.local_port,
                "servingPort": launch.serving_port,
                "hostname": prepared.hostname,
                "startedAt": now,
                "restartCount": self.restart_count,
                "argv": launch.argv,
                "log": str(self.output.path),
            },
        )
        spawn.wait_exec(proc, launch.exe)
        self.log(
            f"started {self.name} (pid {proc.pid}, restart {self.restart_count}): "
            + " ".join(launch.argv)
        )
        self.event("Normal", "Started", f"Started container {self.name}")
        self._arm_probes(now, None)

    def _failed_start(self, message: str, now: float) -> None:
        if self.waiting != ("RunContainerError", message):
            self.event("Warning", "Failed", f"Error: {message}")
        self.backoff.restarted(now)
        self._wait_for("RunContainerError", message, now + (self.backoff.window or 0))

    def _wait_for(self, reason: str, message: str, until: float, note: str = "") -> None:
        if self.waiting != (reason, message) or (note and note != self.wait_note):
            self.log(f"{self.name}: {reason}: {note or message}")
        self.waiting, self.wait_note = (reason, message), note
        self.next_start = until

    def _pull_failed(self, err: ImagePullError, now: float) -> None:
        """The kubelet's image pull and its back-off (k8s.io/kubernetes pkg/kubelet/images
        image_manager.go EnsureImageExists): a pull that fails is ErrImagePull, then
        ImagePullBackOff while the back-off window (10 s doubling to 300 s) lasts, then a new
        pull. The events and messages are the kubelet's."""
        backoff = self.pull_backoff
        window = backoff.window or 0
        image = self.image
        if backoff.window is not None and now - backoff.last_update < window:
            message = f'Back-off pulling image "{image}": ErrImagePull: {err}'
            if self.waiting[0] != "ImagePullBackOff":
                self.event("Normal", "BackOff", f'Back-off pulling image "{image}"')
                self.event("Warning", "Failed", "Error: ImagePullBackOff")
            self._wait_for("ImagePullBackOff", message, backoff.last_update + window)
            return
        self.event("Normal", "Pulling", f'Pulling image "{image}"')
        self.event("Warning", "Failed", f'Failed to pull image "{image}": {err}')
        self.event("Warning", "Failed", "Error: ErrImagePull")
        backoff.restarted(now)
        # The pod worker syncs again soon and finds the image in back-off.
        self._wait_for("ErrImagePull", str(err), now + CONFIG_RETRY)

    def _exited(self, code: int | None, now: float, why: str) -> None:
        self.output.finish()
        self.record_path.unlink(missing_ok=True)
        if self.oom_killed:
            code, why = 137, why or "over its memory limit"
        finished = {
            "exitCode": 137 if code is None else code,
            "reason": "ContainerStatusUnknown"
            if code is None
            else ("OOMKilled" if self.oom_killed else "Completed" if code == 0 else "Error"),
            "startedAt": iso(self.started_at or now),
            "finishedAt": iso(now),
            "containerID": self._container_id(),
        }
        if code is None:
            finished["message"] = "exit code unknown: " + (why or "the process was adopted")
        self.log(
            f"{self.name} (pid {self.pid}) exited with {finished['exitCode']}"
            + (f" ({why})" if why else "")
        )
        self.proc, self.pid = None, None
        self.oom_killed = False
        self.started = self.ready = False
        self.trackers = {}
        self.stopping_since = None
        self.last_state = {"terminated": finished}
        restart = self.restart_policy == "Always" or (
            self.restart_policy == "OnFailure" and finished["exitCode"] != 0
        )
        if not restart:
            self.terminated, self.next_start = finished, None
            return
        delay = self.backoff.delay(now, now)
        self.next_start = now + delay
        if delay:
            self.event(
                "Warning",
                "BackOff",
                f"Back-off restarting failed container {self.name} in pod {self.pod_ref}",
            )
            self.waiting = (
                "CrashLoopBackOff",
                f"back-off {delay:.0f}s restarting failed container={self.name} pod={self.pod_ref}",
            )
        else:
            self.waiting = ("", "")

    def _arm_probes(self, now: float, status: Mapping[str, Any] | None) -> None:
        cap = self.options.max_probe_period
        self.trackers = {}
        for kind, initial in (("startup", False), ("liveness", True), ("readiness", False)):
            spec = parse_probe(self.spec.get(f"{kind}Probe"), self.spec, cap)
            if spec is None:
                continue
            if spec.action not in ("http", "tcp") and kind not in self.warned:
                self.warned.add(kind)
                self.log(
                    f"{self.name}: {spec.action} {kind} probes are not run in the lab; "
                    "they count as passing"
                )
            started_at = now
            if status is not None:  # adopted: carry on from the pod status, probe at once
                initial = bool(status.get("started" if kind == "startup" else "ready", initial))
                started_at = 0.0
            self.trackers[kind] = ProbeTracker(spec, started_at, initial)
        startup = self.trackers.get("startup")
        self.started = startup.result if startup else True
        readiness = self.trackers.get("readiness")
        self.ready = self.started and (readiness.result if readiness else True)

    def _probe(self, now: float) -> None:
        port = self.launch.local_port if self.launch else None
        serving = self.launch.serving_port if self.launch else None

        def run(kind: str) -> ProbeTracker | None:
            tracker = self.trackers.get(kind)
            if tracker is None or not tracker.due(now):
                return None
            # Only the port the program serves on is mapped; anything else is not served.
            target = port if serving is not None and tracker.spec.port == serving else None
            passed, message = check(tracker.spec, target)
            if tracker.record(passed, message, time.time()):
                if not tracker.result:
                    self.event(
                        "Warning", "Unhealthy", f"{kind.capitalize()} probe failed: {message}"
                    )
                self.log(
                    f"{self.name}: {kind} probe "
                    + ("passed" if tracker.result else f"failed: {message}")
                )
            return tracker

        if not self.started:
            tracker = run("startup")
            if tracker is None:
                return
            if tracker.result:
                self.started = True
            elif tracker.failures >= tracker.spec.failure_threshold:
                self.stop(
                    self.grace,
                    f"startup probe failed: {tracker.message}",
                    f"Container {self.name} failed startup probe, will be restarted",
                )
                return
            else:
                return
        liveness = run("liveness")
        if liveness is not None and not liveness.result:
            self.stop(
                self.grace,
                f"liveness probe failed: {liveness.message}",
                f"Container {self.name} failed liveness probe, will be restarted",
            )
            return
        readiness = self.trackers.get("readiness")
        run("readiness")
        self.ready = readiness.result if readiness else True

    def _container_id(self) -> str:
        return f"{CONTAINER_ID_PREFIX}{self.pid}" if self.pid else ""

    # -- status --------------------------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        """This container's ``containerStatuses`` entry."""
        if self.pid is not None:
            state: dict[str, Any] = {"running": {"startedAt": iso(self.started_at)}}
        elif self.terminated is not None:
            state = {"terminated": self.terminated}
        else:
            reason, message = self.waiting
            waiting = {"reason": reason or "ContainerCreating"}
            if message:
                waiting["message"] = message
            state = {"waiting": waiting}
        status: dict[str, Any] = {
            "name": self.name,
            "image": self.image,
            "imageID": "",
            "ready": self.pid is not None and self.ready,
            "started": self.pid is not None and self.started,
            "restartCount": self.restart_count,
            "state": state,
            "lastState": self.last_state,
        }
        if self.pid is not None:
            status["containerID"] = self._container_id()
        return status
