"""One pod the runner runs: a thread that owns its directory, processes, logs and status.

The watch thread hands it newer versions of the pod (:meth:`PodWorker.update`) and tells it
when the pod goes (:meth:`terminate`) or the runner stops (:meth:`detach`); everything else
happens on the worker's own thread, a few times a second.
"""

from __future__ import annotations

import logging
import os
import shutil
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from kschedctl.base.errors import KschedError, NotFoundError
from kschedctl.lab import images
from kschedctl.lab.private import private_dir, write_private
from kschedctl.lab.runner import podenv, programs, status, volumes
from kschedctl.lab.runner.container import ContainerRunner, Options, Prepared
from kschedctl.lab.runner.kube import LabApi
from kschedctl.lab.runner.volumes import VolumeError, Volumes

TICK = 0.2
SA_MOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"
TOKEN_RETRY = 60.0

log = logging.getLogger("kschedctl.lab.runner")


@dataclass(frozen=True)
class LabInfo:
    dir: Path
    api_port: int
    binaries: Mapping[str, Path]
    lab_version: str
    free_port: Callable[[], int]

    @property
    def server(self) -> str:
        return f"https://127.0.0.1:{self.api_port}"


def pod_dir_name(pod: Mapping[str, Any]) -> str:
    meta = pod["metadata"]
    return f"{meta['namespace']}_{meta['name']}_{meta['uid']}"


def resource_version(pod: Mapping[str, Any]) -> int:
    try:
        return int(pod["metadata"].get("resourceVersion") or 0)
    except ValueError:
        return 0


class PodWorker(threading.Thread):
    def __init__(
        self,
        pod: dict[str, Any],
        runnable: dict[str, str],  # container name -> program
        lab: LabInfo,
        api: LabApi,
        options: Options,
        records: Mapping[str, Mapping[str, Any]],  # container name -> record to adopt
        on_done: Callable[[str], None],
    ) -> None:
        meta = pod["metadata"]
        super().__init__(name=f"pod-{meta['namespace']}/{meta['name']}", daemon=True)
        self.uid: str = meta["uid"]
        self.ref = f"{meta['namespace']}/{meta['name']}"
        self.lab, self.api, self.options = lab, api, options
        self.on_done = on_done
        self.dir = private_dir(lab.dir / "pods" / pod_dir_name(pod))  # tokens, Secrets: 0700
        self._lock = threading.Lock()
        self._pod = pod
        self._wake = threading.Event()
        self._terminate_grace: float | None = None
        self._detach = False
        self.host_ip = ""
        self.volumes: Volumes | None = None
        self.volume_error = "volumes not set up yet"
        self.volume_retry = 0.0
        self.own_tokens: dict[str, volumes.TokenFile] = {}
        self.logs_applied = False
        self.forwarded: dict[int, int] = {}  # serving port -> local port, as last applied
        self.patch_retry = 0.0
        self.containers = [
            ContainerRunner(
                pod,
                c,
                runnable[c["name"]],
                self.dir,
                lab.dir,
                options,
                self._prepare,
                self._log,
                self._container_event(c["name"]),
            )
            for c in pod["spec"]["containers"]
            if c["name"] in runnable
        ]
        statuses = {s["name"]: s for s in (pod.get("status") or {}).get("containerStatuses") or []}
        for container in self.containers:
            record = records.get(container.name)
            status = statuses.get(container.name)
            if record is None and status is not None:
                container.carry_on(status)  # e.g. in back-off while no runner ran
            if record is not None:
                adopted = container.adopt(record, statuses.get(container.name))
                self._log(
                    f"{'adopted' if adopted else 'lost'} {container.name} "
                    f"(pid {record['pid']}) from an earlier runner"
                )

    # -- called from the watch thread ----------------------------------------------------------

    def update(self, pod: dict[str, Any]) -> None:
        with self._lock:
            if resource_version(pod) >= resource_version(self._pod):
                self._pod = pod
        self._wake.set()

    def terminate(self, grace: float) -> None:
        with self._lock:
            if self._terminate_grace is None or grace < self._terminate_grace:
                self._terminate_grace = grace
        self._wake.set()

    def detach(self) -> None:
        self._detach = True
        self._wake.set()

    @property
    def pod(self) -> dict[str, Any]:
        with self._lock:
            return self._pod

    # -- the thread ----------------------------------------------------------------------------

    def run(self) -> None:
        stopping = False
        while True:
            try:
                if self._detach:
                    for container in self.containers:
                        container.detach()
                    return
                if self._terminate_grace is not None and not stopping:
                    stopping = True
                    for container in self.containers:
                        container.stop(
                            self._terminate_grace,
                            "the pod was deleted",
                            f"Stopping container {container.name}",
                        )
                if stopping:
                    for container in self.containers:
                        container.step(time.time(), terminating=True)
                    if not any(c.running() for c in self.containers):
                        self._clean_up()
                        return
                else:
                    self._tick()
            except Exception:  # a bug must not kill the pod's thread silently
                log.exception("%s: unexpected error in the pod worker", self.ref)
                time.sleep(1)
            self._wake.wait(TICK)
            self._wake.clear()

    def _tick(self) -> None:
        self._ensure_volumes()
        self._ensure_logs()
        now = time.time()
        for container in self.containers:
            container.step(now, terminating=False)
        self._ensure_port_forward()
        self._refresh_tokens()
        self._sync_status()

    def _log(self, message: str) -> None:
        log.info("%s: %s", self.ref, message)

    def _event(self, field_path: str, kind: str, reason: str, message: str) -> None:
        """An Event about the pod, as the kubelet records them; never fails the worker."""
        try:
            self.api.record_event(self.pod, field_path, kind, reason, message)
        except KschedError as err:
            self._log(f"cannot record event {reason}: {err.message}")

    def _container_event(self, container: str) -> Callable[[str, str, str], None]:
        path = f"spec.containers{{{container}}}"
        return lambda kind, reason, message: self._event(path, kind, reason, message)

    # -- volumes, logs, tokens -----------------------------------------------------------------

    def _ensure_volumes(self) -> None:
        if self.volumes is not None or time.monotonic() < self.volume_retry:
            return
        try:
            made = volumes.materialise(self.pod, self.dir, self.lab.dir, self.api)
        except (VolumeError, KschedError) as err:
            message = err.message if isinstance(err, KschedError) else str(err)
            if message != self.volume_error:
                self._log(f"volumes: {message}")
                failed = err if isinstance(err, VolumeError) else VolumeError(message)
                self._event("", "Warning", "FailedMount", failed.event_message())
            self.volume_error = message
            self.volume_retry = time.monotonic() + 2.0
            return
        for note in made.notes:
            self._log(note)
        self.volumes = made

    def _ensure_logs(self) -> None:
        if self.logs_applied:
            return
        entries = [
            {
                "containers": [c.name],
                "logsFile": str(c.output.path),
                "previousLogsFile": str(c.output.previous),
                "follow": True,
            }
            for c in self.containers
        ]
        self.logs_applied = self._kwok_applied(
            "create the kwok Logs object", lambda: self.api.apply_logs(self.pod, entries)
        )

    def _ensure_port_forward(self) -> None:
        """Keep kwok's PortForward on the ports the containers listen on now (a restarted
        process gets a new local port)."""
        ports = {
            c.launch.serving_port: c.launch.local_port
            for c in self.containers
            if c.launch and c.launch.serving_port and c.launch.local_port
        }
        if not ports or ports == self.forwarded:
            return
        if self._kwok_applied(
            "apply the kwok PortForward object",
            lambda: self.api.apply_port_forward(self.pod, ports),
        ):
            self.forwarded = ports

    def _kwok_applied(self, what: str, apply: Callable[[], None]) -> bool:
        """Apply one of kwok's objects for this pod; False (logged, tried again on a later
        step) while the API server refuses it."""
        try:
            apply()
        except KschedError as err:
            self._log(f"cannot {what} yet: {err.message}")
            return False
        return True

    def _refresh_tokens(self) -> None:
        if self.volumes is None:
            return
        for token in self.volumes.tokens:
            if time.time() < token.refresh_at:
                continue
            try:
                volumes.refresh_token(token, self.pod, self.api)
            except KschedError as err:
                self._log(f"token refresh for {token.path.name} failed: {err.message}")
                token.refresh_at = time.time() + TOKEN_RETRY

    # -- what a container needs to start -------------------------------------------------------

    def _prepare(self, container: ContainerRunner) -> Prepared:
        try:
            return self._prepare_launch(container)
        except KschedError as err:  # the API server is unreachable or refuses: retried
            raise VolumeError(err.message) from err

    def _prepare_launch(self, container: ContainerRunner) -> Prepared:
        if self.volumes is None:
            raise VolumeError(self.volume_error)
        # The kubelet pulls the image once the volumes are mounted, before it builds the
        # container's environment (kuberuntime_container.go startContainer).
        pull = images.pull_error(container.image)
        if pull is not None:
            raise programs.ImagePullError(pull)
        pod, spec = self.pod, container.spec
        mounts = self._mounts(spec, self.volumes)
        hostname = podenv.pod_hostname(pod)
        base = {
            "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
            "HOME": str(self.dir / "run"),
            "HOSTNAME": hostname,
            # What in-cluster config reads; the lab API server stands in for the Service.
            "KUBERNETES_SERVICE_HOST": "127.0.0.1",
            "KUBERNETES_SERVICE_PORT": str(self.lab.api_port),
            "KUBERNETES_SERVICE_PORT_HTTPS": str(self.lab.api_port),
        }
        env = podenv.container_env(pod, spec, self.api.lookup, base)
        command = [
            podenv.rewrite_arg(podenv.expand(a, env), mounts) for a in spec.get("command") or []
        ]
        args = [podenv.rewrite_arg(podenv.expand(a, env), mounts) for a in spec.get("args") or []]
        env = {k: podenv.rewrite_path(v, mounts) for k, v in env.items()}
        run_dir = private_dir(self.dir / "run" / container.name)
        ctx = programs.LaunchContext(
            binaries=self.lab.binaries,
            lab_version=self.lab.lab_version,
            kubeconfig=self._kubeconfig(container.name, mounts),
            run_dir=run_dir,
            mounts=mounts,
            local_port=self.lab.free_port(),
        )
        launch = programs.launch(container.program, container.image, command, args, ctx)
        env = {**env, **launch.env}
        cwd = podenv.rewrite_path(spec.get("workingDir") or "", mounts)
        workdir = Path(cwd) if cwd.startswith(str(self.lab.dir)) else run_dir
        return Prepared(launch, env, hostname, workdir)

    def _mounts(self, spec: Mapping[str, Any], made: Volumes) -> list[tuple[str, str]]:
        mounts = []
        for mount in spec.get("volumeMounts") or []:
            path = made.paths.get(mount["name"])
            if path is None:
                raise VolumeError(f"volumeMount {mount['name']} names no volume of the pod")
            sub = mount.get("subPath") or ""
            mounts.append((mount["mountPath"], str(path / sub) if sub else str(path)))
        return mounts

    def _kubeconfig(self, container: str, mounts: list[tuple[str, str]]) -> Path:
        """A kubeconfig that is the pod's ServiceAccount, as in-cluster config would be.

        It reads the token file of the container's own service-account mount (refreshed like
        the kubelet does); a container without one gets a token requested for it alone.
        """
        token = podenv.rewrite_path(f"{SA_MOUNT}/token", mounts)
        mirror = "kubernetes.io/config.mirror" in (self.pod["metadata"].get("annotations") or {})
        if mirror:
            # A static pod has no ServiceAccount (the API server refuses one for mirror pods):
            # it brings its own kubeconfig on a hostPath; anything else is anonymous.
            token = ""
        elif token.startswith(SA_MOUNT):
            own = self.own_tokens.get(container)
            if own is None:
                own = volumes.TokenFile(self.dir / "run" / container / "token", None, 3607, 0o600)
                volumes.refresh_token(own, self.pod, self.api)
                assert self.volumes is not None
                self.volumes.tokens.append(own)
                self.own_tokens[container] = own
                self._log(
                    f"{container} mounts no service-account token at {SA_MOUNT}; "
                    "it gets a token of its own"
                )
            token = str(own.path)
        account = self.pod["spec"].get("serviceAccountName") or "default"
        namespace = self.pod["metadata"]["namespace"]
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": "lab",
                    "cluster": {
                        "server": self.lab.server,
                        "certificate-authority": str(self.lab.dir / "pki" / "ca.crt"),
                    },
                }
            ],
            "users": [{"name": account, "user": {"tokenFile": token} if token else {}}],
            "contexts": [
                {
                    "name": "lab",
                    "context": {"cluster": "lab", "user": account, "namespace": namespace},
                }
            ],
            "current-context": "lab",
        }
        path = private_dir(self.dir / "run" / container) / "kubeconfig"
        return write_private(path, yaml.safe_dump(config, sort_keys=False))

    # -- status --------------------------------------------------------------------------------

    def _sync_status(self) -> None:
        pod = self.pod
        if time.monotonic() < self.patch_retry:
            return
        if not self.host_ip:
            try:
                self.host_ip = self.api.node_ip(pod["spec"]["nodeName"])
            except KschedError:
                pass  # reported without IPs now, with them on a later tick
        runners = {c.name: c for c in self.containers}
        current = (pod.get("status") or {}).get("containerStatuses") or []
        started = status.iso(time.time())
        statuses = [
            runners[c["name"]].status()
            if c["name"] in runners
            else status.simulated_status(c, current, started)
            for c in pod["spec"]["containers"]
        ]
        desired = status.desired_status(pod, statuses, self._phase(), self.host_ip, time.time())
        if not status.needs_patch(pod, desired):
            return
        try:
            self.update(self.api.patch_status(pod, desired))
        except NotFoundError:
            pass  # deleted: the watch tells us next
        except KschedError as err:
            self._log(f"cannot patch the pod status: {err.message}")
            self.patch_retry = time.monotonic() + 1.0

    def _phase(self) -> str:
        if not all(c.ever_ran for c in self.containers):
            return "Pending"  # a container has not been started yet
        finals = [c.terminated for c in self.containers]
        simulated = len(self.pod["spec"]["containers"]) > len(self.containers)
        if simulated or any(f is None for f in finals):
            return "Running"  # the simulated containers never end
        return "Succeeded" if all(f and f["exitCode"] == 0 for f in finals) else "Failed"

    def _clean_up(self) -> None:
        try:
            self.api.delete_logs(self.pod, self.dir)
        except KschedError as err:
            self._log(f"cannot delete the kwok Logs object: {err.message}")
        for container in self.containers:
            container.record_path.unlink(missing_ok=True)
        shutil.rmtree(self.dir, ignore_errors=True)
        self._log("stopped and cleaned up")
        self.on_done(self.uid)
