"""One lab: a directory holding the state, PKI, logs and pid records of a local control plane.

``up`` starts etcd → kube-apiserver (waits for /readyz) → kube-controller-manager → the default
kube-scheduler (its own port and Lease) → kwok, creates the simulated nodes, then starts the
runner (``kschedctl.lab.runner``), which really runs scheduler pods bound to those nodes. Every
process is recorded (pid + executable + start time) in ``lab.json`` the moment it starts, and
carries the lab's mark (:mod:`kschedctl.lab.processes`), so ``down`` — or the next ``up`` after a
crash — stops exactly what this lab started and nothing else, even if a record was lost.

The directory is 0700 and every key, kubeconfig and token in it 0600 (:mod:`kschedctl.lab.private`);
etcd serves TLS only and accepts only clients with a certificate of its own CA.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import socket
import ssl
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from kschedctl.base import signals
from kschedctl.base.errors import LabError, UsageError
from kschedctl.lab import binaries, pki, processes
from kschedctl.lab.images import kwok_admitted_expression, kwok_selector_key
from kschedctl.lab.private import private_dir, write_private

if TYPE_CHECKING:
    from kschedctl.k8s.client import Cluster

MARKER = ".kschedctl-lab"
STATE = "lab.json"
COMPONENTS = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok",
              "runner")  # fmt: skip
KWOK_STAGES = Path(__file__).parent / "kwok-stages.yaml"
KWOK_LOGS_CRD = Path(__file__).parent / "kwok-logs-crd.yaml"
KWOK_PORT_FORWARD_CRD = Path(__file__).parent / "kwok-portforward-crd.yaml"
SERVICE_CIDR = "10.96.0.0/16"
POD_CIDR = "10.244.0.0/16"
NODE_LEASE_SECONDS = 40
MARKED_ROUNDS = 5  # `down`'s searches for marked processes whose records were lost

Progress = Callable[[str], None]


@dataclass
class ComponentState:
    pid: int
    exe: str
    port: int
    log: str
    argv: list[str] = field(default_factory=list)  # to restart it as it was started
    env: dict[str, str] = field(default_factory=dict)  # what it set beyond the proxy-free env
    started: int | None = None  # start time (ticks): the pid alone may be reused

    def running(self) -> bool:
        return processes.is_running(self.pid, self.exe, self.started)

    def stop(self) -> bool:
        return processes.stop(self.pid, self.exe, started=self.started)


@dataclass
class LabState:
    api_port: int
    versions: dict[str, str]
    started: float
    components: dict[str, ComponentState] = field(default_factory=dict)
    bin_dir: str = ""
    ready: bool = False  # `up` finished: from then on the runner keeps components running
    # Components stopped on purpose (Lab.hold): the runner does not revive them. A key of its
    # own (not a component field) so that a runner of an older kschedctl still reads lab.json.
    held: list[str] = field(default_factory=list)

    def to_json(self) -> str:
        data = {
            "apiPort": self.api_port,
            "versions": self.versions,
            "started": self.started,
            "binDir": self.bin_dir,
            "ready": self.ready,
            "held": self.held,
            "components": {k: vars(v) for k, v in self.components.items()},
        }
        return json.dumps(data, indent=2) + "\n"

    @classmethod
    def from_json(cls, text: str) -> LabState:
        data = json.loads(text)
        return cls(
            api_port=data["apiPort"],
            versions=data.get("versions", {}),
            started=data.get("started", 0.0),
            bin_dir=data.get("binDir", ""),
            ready=data.get("ready", False),
            held=list(data.get("held", [])),
            components={k: ComponentState(**v) for k, v in data.get("components", {}).items()},
        )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def port_in_use(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


def advertise_address() -> str:
    """The host's outbound address (kube-apiserver refuses to advertise loopback)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        try:
            sock.connect(("192.0.2.254", 9))  # no packet is sent for UDP connect
            return str(sock.getsockname()[0])
        except OSError:
            return "127.0.0.1"


class Lab:
    def __init__(self, directory: Path) -> None:
        self.dir = directory.expanduser().resolve()

    # -- paths ----------------------------------------------------------------------------------
    @property
    def kubeconfig(self) -> Path:
        return self.dir / "kubeconfig"

    @property
    def pki(self) -> Path:
        return self.dir / "pki"

    def log(self, component: str) -> Path:
        return self.dir / "logs" / f"{component}.log"

    # -- state ----------------------------------------------------------------------------------
    def is_lab_dir(self) -> bool:
        return (self.dir / MARKER).exists()

    def state(self) -> LabState | None:
        try:
            return LabState.from_json((self.dir / STATE).read_text())
        except FileNotFoundError:
            return None
        except (ValueError, KeyError, TypeError) as err:
            raise LabError(
                f"{self.dir / STATE} is corrupt: {err}",
                hint=f"stop leftovers and clean up with `kschedctl lab down --dir {self.dir}`",
            ) from err

    def _save(self, state: LabState) -> None:
        write_private(self.dir / STATE, state.to_json())

    @contextlib.contextmanager
    def _exclusive(self) -> Iterator[None]:
        """One writer at a time for read-modify-write of lab.json (the runner revives
        components while a test may restart one)."""
        with open(self.dir / ".lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _start_component(self, component: ComponentState) -> None:
        """Start a recorded component again (its argv, log and env) and record the process."""
        pid = processes.start(
            component.argv, Path(component.log),
            processes.proxy_free_environment(component.env), cwd=self.dir,
        )  # fmt: skip
        component.pid, component.started = pid, processes.start_ticks(pid)

    def revive(self) -> list[str]:
        """Start again every control-plane process that exited, as systemd's Restart=always
        or a kubelet would: kube-scheduler exits when it loses its Lease during an API-server
        outage, and a real cluster restarts it. Called by the lab runner every few seconds."""
        revived: list[str] = []
        with self._exclusive():
            try:
                state = self.state()
            except LabError:  # corrupt: nothing to start again from; `lab down` cleans up
                return revived
            if state is None or not state.ready:  # `up` is still starting them
                return revived
            for name, component in state.components.items():
                if name == "runner" or not component.argv or name in state.held:
                    continue
                if component.running():
                    continue
                self._start_component(component)
                revived.append(name)
            if revived:
                self._save(state)
        return revived

    def retire(self, name: str) -> bool:
        """Stop component ``name`` for good: its record goes, so :meth:`revive` does not start
        it again (``simulate``: the candidate must be the lab's only scheduler). True if it was
        stopped."""
        with self._exclusive():
            state = self.state()
            component = state.components.pop(name, None) if state is not None else None
            if state is None or component is None:
                return False
            stopped = not component.running() or component.stop()
            if not stopped:
                raise LabError(f"cannot stop the lab's {name} (pid {component.pid})")
            self._save(state)
            return True

    def running_components(self) -> dict[str, ComponentState]:
        state = self.state() if self.is_lab_dir() else None
        if state is None:
            return {}
        return {name: c for name, c in state.components.items() if c.running()}

    def export_line(self) -> str:
        return f"export KUBECONFIG={self.kubeconfig}"

    # -- up -------------------------------------------------------------------------------------
    def up(
        self,
        nodes: list[dict[str, Any]],
        *,
        bin_dir: str | None = None,
        api_port: int | None = None,
        progress: Progress = lambda _m: None,
        timeout: float = 120.0,
    ) -> LabState:
        if self.dir.exists() and any(self.dir.iterdir()):
            if not self.is_lab_dir():
                raise UsageError(
                    f"{self.dir} exists and is not a lab directory; refusing to use it",
                    hint="pass an empty or new directory with --dir",
                )
            live = self.running_components()
            if live:
                raise LabError(
                    f"a lab is already running in {self.dir} ({', '.join(live)})",
                    hint=f"use it ({self.export_line()}), or stop it first with "
                    f"`kschedctl lab down --dir {self.dir}`",
                )
            progress(f"cleaning a stale lab directory left by a previous run: {self.dir}")
            self.down()
        if api_port is not None and port_in_use(api_port):
            raise LabError(
                f"port {api_port} on 127.0.0.1 is already in use",
                hint="pick another --api-port, or leave it out to use a free port",
            )
        bins = binaries.locate(bin_dir)
        private_dir(self.dir)
        (self.dir / MARKER).write_text("kschedctl lab directory; `kschedctl lab down` removes it\n")
        processes.new_identity(self.dir)  # before anything starts: every process carries it
        state = LabState(
            api_port=api_port or free_port(),
            versions=binaries.versions(),
            started=time.time(),
            bin_dir=str(bins["kube-apiserver"].parent),
        )
        self._save(state)
        try:
            self._start_all(state, bins, nodes, progress, timeout)
            with self._exclusive():
                state.ready = True
                self._save(state)
        except BaseException:  # an error, Ctrl-C, SIGTERM or SIGHUP (kschedctl.base.signals)
            with contextlib.suppress(OSError):  # after a SIGHUP the terminal may be gone
                progress("start-up failed; stopping what was started")
            self.down()
            raise
        return state

    def _start_all(
        self,
        state: LabState,
        bins: dict[str, Path],
        nodes: list[dict[str, Any]],
        progress: Progress,
        timeout: float,
    ) -> None:
        advertise = advertise_address()
        progress("generating certificates")
        pki.generate(self.pki, advertise)
        self._write_kubeconfigs(state.api_port)
        env = processes.proxy_free_environment()

        etcd_port, peer_port = free_port(), free_port()
        self._start(state, "etcd", bins, etcd_port, env, self._etcd_args(etcd_port, peer_port))
        self._wait(state, "etcd", f"https://127.0.0.1:{etcd_port}/health", timeout, progress)

        p = self.pki
        self._start(state, "kube-apiserver", bins, state.api_port, env, [
            f"--etcd-servers=https://127.0.0.1:{etcd_port}",
            f"--etcd-cafile={pki.etcd_file(p, 'ca', 'crt')}",
            f"--etcd-certfile={pki.etcd_file(p, pki.ETCD_APISERVER_CLIENT, 'crt')}",
            f"--etcd-keyfile={pki.etcd_file(p, pki.ETCD_APISERVER_CLIENT, 'key')}",
            "--bind-address=127.0.0.1", f"--secure-port={state.api_port}",
            f"--advertise-address={advertise}",
            f"--tls-cert-file={p / 'apiserver.crt'}",
            f"--tls-private-key-file={p / 'apiserver.key'}",
            f"--client-ca-file={p / 'ca.crt'}",
            # Published in kube-system/extension-apiserver-authentication, as on kubeadm; a
            # scheduler's delegated authentication logs errors every second without it.
            f"--requestheader-client-ca-file={p / 'ca.crt'}",
            "--requestheader-allowed-names=front-proxy-client",
            "--requestheader-username-headers=X-Remote-User",
            "--requestheader-group-headers=X-Remote-Group",
            "--requestheader-extra-headers-prefix=X-Remote-Extra-",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            f"--service-account-key-file={p / 'sa.pub'}",
            f"--service-account-signing-key-file={p / 'sa.key'}",
            f"--service-cluster-ip-range={SERVICE_CIDR}",
            "--authorization-mode=Node,RBAC", "--allow-privileged=true",
            "--kubelet-preferred-address-types=InternalIP,Hostname",
            "--profiling=false",
        ])  # fmt: skip
        self._wait(state, "kube-apiserver", f"https://127.0.0.1:{state.api_port}/readyz",
                   timeout, progress)  # fmt: skip

        # lab.api loads the kubernetes client: only once the API server runs
        from kschedctl.lab import api  # the kubernetes client is needed from here on only

        with api.connect(self.kubeconfig) as cluster:
            self._start_rest(state, bins, nodes, progress, timeout, env, cluster)

    def _etcd_args(self, client_port: int, peer_port: int) -> list[str]:
        """One member on loopback, TLS on both of its listeners, client certificates required;
        no other listener (metrics are served on the client port, behind the same TLS)."""
        server = [
            f"--cert-file={pki.etcd_file(self.pki, pki.ETCD_SERVER, 'crt')}",
            f"--key-file={pki.etcd_file(self.pki, pki.ETCD_SERVER, 'key')}",
            f"--trusted-ca-file={pki.etcd_file(self.pki, 'ca', 'crt')}",
            "--client-cert-auth=true",
        ]
        peer = [
            f"--peer-cert-file={pki.etcd_file(self.pki, pki.ETCD_SERVER, 'crt')}",
            f"--peer-key-file={pki.etcd_file(self.pki, pki.ETCD_SERVER, 'key')}",
            f"--peer-trusted-ca-file={pki.etcd_file(self.pki, 'ca', 'crt')}",
            "--peer-client-cert-auth=true",
        ]
        return [
            "--name=lab", f"--data-dir={self.dir / 'etcd'}",
            f"--listen-client-urls=https://127.0.0.1:{client_port}",
            f"--advertise-client-urls=https://127.0.0.1:{client_port}",
            f"--listen-peer-urls=https://127.0.0.1:{peer_port}",
            f"--initial-advertise-peer-urls=https://127.0.0.1:{peer_port}",
            f"--initial-cluster=lab=https://127.0.0.1:{peer_port}",
            *server, *peer,
            "--unsafe-no-fsync=true", "--log-level=warn", "--quota-backend-bytes=8589934592",
        ]  # fmt: skip

    def _start_rest(
        self,
        state: LabState,
        bins: dict[str, Path],
        nodes: list[dict[str, Any]],
        progress: Progress,
        timeout: float,
        env: dict[str, str],
        cluster: Cluster,
    ) -> None:
        # lab.api loads the kubernetes client: only once the API server runs
        from kschedctl.lab import api

        p = self.pki
        kcm_port = free_port()
        self._start(state, "kube-controller-manager", bins, kcm_port, env, [
            f"--kubeconfig={self.dir / 'controller-manager.kubeconfig'}",
            "--leader-elect=false", "--bind-address=127.0.0.1", f"--secure-port={kcm_port}",
            f"--service-account-private-key-file={p / 'sa.key'}",
            f"--root-ca-file={p / 'ca.crt'}", "--use-service-account-credentials=true",
            f"--cluster-signing-cert-file={p / 'ca.crt'}",
            f"--cluster-signing-key-file={p / 'ca.key'}",
            "--profiling=false",
        ])  # fmt: skip

        sched_port = free_port()
        sched_config = self.dir / "default-scheduler.yaml"
        sched_config.write_text(yaml.safe_dump(self._default_scheduler_config(), sort_keys=False))
        self._start(state, "kube-scheduler", bins, sched_port, env, [
            f"--config={sched_config}", "--bind-address=127.0.0.1",
            f"--secure-port={sched_port}",
        ])  # fmt: skip

        # kwok watches Logs and PortForward objects only if their CRDs exist; it does not
        # install them.
        progress("installing kwok's Logs and PortForward CustomResourceDefinitions")
        api.install_crds(cluster, KWOK_LOGS_CRD, timeout)
        api.install_crds(cluster, KWOK_PORT_FORWARD_CRD, timeout)
        kwok_port = free_port()
        kwok_env = {"HOME": str(self.dir / "kwok-home")}
        (self.dir / "kwok-home").mkdir(exist_ok=True)
        self._start(state, "kwok", bins, kwok_port, kwok_env, [
            f"--kubeconfig={self.kubeconfig}", f"--config={self._kwok_stages()}",
            "--manage-all-nodes=false",
            "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
            "--node-ip=127.0.0.1", "--node-name=localhost", f"--node-port={kwok_port}",
            f"--server-address=127.0.0.1:{kwok_port}",
            f"--node-lease-duration-seconds={NODE_LEASE_SECONDS}", f"--cidr={POD_CIDR}",
            "--enable-crds=Logs", "--enable-crds=PortForward",
        ])  # fmt: skip
        runner_port = self._start_runner(state, env)  # its start-up overlaps the waits below
        self._wait(state, "kube-controller-manager", f"https://127.0.0.1:{kcm_port}/healthz",
                   timeout, progress)  # fmt: skip
        self._wait(state, "kube-scheduler", f"https://127.0.0.1:{sched_port}/healthz",
                   timeout, progress)  # fmt: skip
        self._wait(state, "kwok", f"http://127.0.0.1:{kwok_port}/healthz", timeout, progress)

        if nodes:
            progress(f"creating {len(nodes)} simulated node(s)")
            api.create_nodes(cluster, nodes)
            api.wait_nodes_ready(cluster, [n["metadata"]["name"] for n in nodes], timeout)
        progress("waiting for the default ServiceAccount")
        api.wait_default_service_account(cluster, "default", timeout)
        self._wait(state, "runner", f"http://127.0.0.1:{runner_port}/healthz", timeout, progress)

    def _start_runner(self, state: LabState, env: dict[str, str]) -> int:
        """Start the runner (scheduler pods as processes) with this interpreter; its port."""
        port = free_port()
        python = os.path.realpath(sys.executable)  # what /proc/<pid>/exe shows
        self._start(state, "runner", {}, port, env, [
            "-m", "kschedctl", "lab", "runner", f"--dir={self.dir}", f"--health-port={port}",
        ], exe=python, argv0=sys.executable)  # fmt: skip
        return port

    def restart_runner(self, timeout: float = 60.0, progress: Progress = lambda _m: None) -> None:
        """Start the runner of a running lab again (after it crashed, or to pick up new code).

        The processes it ran keep running meanwhile; the new runner adopts them.
        """
        state = self.state() if self.is_lab_dir() else None
        server = state.components.get("kube-apiserver") if state is not None else None
        if state is None or server is None or not server.running():
            raise LabError(f"no lab is running in {self.dir}",
                           hint="start one with `kschedctl lab up`")  # fmt: skip
        old = state.components.get("runner")
        if old is not None:
            old.stop()
        port = self._start_runner(state, processes.proxy_free_environment())
        self._wait(state, "runner", f"http://127.0.0.1:{port}/healthz", timeout, progress)

    def _kwok_stages(self) -> Path:
        """kwok's default stages, except that pod-ready leaves the runner's pods alone and waits
        for the runner's admission of every pod.

        kwok would mark them Running and Ready the moment they are bound, before their process
        even started; the runner reports their status itself, as a kubelet would. And kwok
        would run a pod the node has no room for; the runner rejects it as a kubelet does.
        """
        stages = list(yaml.safe_load_all(KWOK_STAGES.read_text()))
        for stage in stages:
            if stage and stage["metadata"]["name"] == "pod-ready":
                stage["spec"]["selector"]["matchExpressions"] += [
                    {"key": kwok_selector_key(), "operator": "DoesNotExist"},
                    kwok_admitted_expression(),  # the runner's kubelet admission said yes
                ]
        path = self.dir / "kwok-stages.yaml"
        path.write_text(yaml.dump_all(stages, Dumper=_BlockDumper, sort_keys=False))
        return path

    def _default_scheduler_config(self) -> dict[str, Any]:
        return {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "clientConnection": {"kubeconfig": str(self.dir / "scheduler.kubeconfig")},
            # The defaults of a kubeadm cluster: Lease kube-system/kube-scheduler.
            "leaderElection": {"leaderElect": True},
            "profiles": [{"schedulerName": "default-scheduler"}],
        }

    def _write_kubeconfigs(self, api_port: int) -> None:
        for client in pki.CLIENTS:
            name = "kubeconfig" if client.file_stem == "admin" else f"{client.file_stem}.kubeconfig"
            self._kubeconfig(self.dir / name, api_port, client.file_stem, client.user)

    def _kubeconfig(self, path: Path, api_port: int, stem: str, user: str) -> None:
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "kschedctl-lab", "cluster": {
                "server": f"https://127.0.0.1:{api_port}",
                "certificate-authority": str(self.pki / "ca.crt")}}],
            "users": [{"name": user, "user": {
                "client-certificate": str(self.pki / f"{stem}.crt"),
                "client-key": str(self.pki / f"{stem}.key")}}],
            "contexts": [{"name": "kschedctl-lab", "context": {
                "cluster": "kschedctl-lab", "user": user, "namespace": "default"}}],
            "current-context": "kschedctl-lab",
        }  # fmt: skip
        write_private(path, yaml.safe_dump(config, sort_keys=False))  # it names a client key

    def _start(
        self,
        state: LabState,
        name: str,
        bins: dict[str, Path],
        port: int,
        env: dict[str, str],
        args: list[str],
        exe: str | None = None,
        argv0: str | None = None,
    ) -> None:
        exe = exe or str(bins[name])
        log = self.log(name)
        argv = [argv0 or exe, *args]
        extra = {k: v for k, v in env.items() if k == "HOME"}
        pid = processes.start(argv, log, processes.proxy_free_environment(extra), cwd=self.dir)
        state.components[name] = ComponentState(
            pid=pid, exe=exe, port=port, log=str(log), argv=argv, env=extra,
            started=processes.start_ticks(pid),
        )  # fmt: skip
        self._save(state)

    def restart(self, name: str, *, down_for: float = 0.0, timeout: float = 120.0) -> None:
        """Stop one component and start it again as it was (faults for tests and drills).

        ``down_for`` keeps it stopped that many seconds first, like a real outage.
        """
        with self._exclusive():  # the runner must not revive it during the outage
            state = self.state() if self.is_lab_dir() else None
            component = state.components.get(name) if state is not None else None
            if state is None or component is None or not component.argv:
                raise LabError(f"no component {name!r} to restart in {self.dir}")
            component.stop()
            state.held = [n for n in state.held if n != name]  # the runner revives it again
            time.sleep(down_for)
            self._start_component(component)
            self._save(state)
        if name == "kube-apiserver":
            url = f"https://127.0.0.1:{component.port}/readyz"
            self._wait(state, name, url, timeout, lambda _m: None)

    def hold(self, name: str) -> None:
        """Stop one component (by its recorded pid) and keep it stopped until :meth:`release`:
        the runner does not revive it meanwhile. For drills that replace it, as an operator
        moves kube-scheduler's static-pod manifest away to run another default scheduler."""
        with self._exclusive():
            state = self.state() if self.is_lab_dir() else None
            component = state.components.get(name) if state is not None else None
            if state is None or component is None or name == "runner":
                raise LabError(f"no component {name!r} to stop in {self.dir}")
            if name not in state.held:
                state.held.append(name)
            self._save(state)  # first: the runner must not revive it once it is stopped
            component.stop()

    def release(self, name: str) -> None:
        """Start a component that :meth:`hold` stopped again, as it was started."""
        with self._exclusive():
            state = self.state() if self.is_lab_dir() else None
            component = state.components.get(name) if state is not None else None
            if state is None or component is None:
                raise LabError(f"no component {name!r} to start in {self.dir}")
            state.held = [n for n in state.held if n != name]
            if not component.running():
                self._start_component(component)
            self._save(state)

    def _wait(
        self, state: LabState, name: str, url: str, timeout: float, progress: Progress
    ) -> None:
        progress(f"waiting for {name} ({url})")
        component = state.components[name]
        deadline = time.monotonic() + timeout
        last = ""
        while time.monotonic() < deadline:
            if not component.running():
                raise LabError(
                    f"{name} exited during start-up; the end of {component.log}:\n"
                    + processes.log_tail(Path(component.log)),
                    hint=_exit_hint(Path(component.log)),
                )
            ok, last = self.probe(url)
            if ok:
                return
            time.sleep(0.2)
        raise LabError(
            f"{name} did not become healthy within {timeout:.0f}s ({url}: {last}); "
            f"the end of {component.log}:\n" + processes.log_tail(Path(component.log)),
        )

    def probe(self, url: str) -> tuple[bool, str]:
        """GET a health endpoint: the API server with the admin identity, etcd with its health
        check client (verified against etcd's CA), others unverified."""
        context = None
        if url.startswith("https://"):
            if f":{self._api_port()}/" in url:
                context = ssl.create_default_context(cafile=str(self.pki / "ca.crt"))
                context.load_cert_chain(str(self.pki / "admin.crt"), str(self.pki / "admin.key"))
            elif f":{self._etcd_port()}/" in url:
                context = self.etcd_tls(pki.ETCD_HEALTHCHECK_CLIENT)
            else:
                context = ssl._create_unverified_context()  # self-signed component certs
        handler = urllib.request.ProxyHandler({})
        opener = urllib.request.build_opener(handler, urllib.request.HTTPSHandler(context=context))
        try:
            with opener.open(url, timeout=3) as response:
                body = response.read(200).decode(errors="replace")
                return response.status == 200, body
        except (urllib.error.URLError, OSError, ssl.SSLError) as err:
            return False, str(getattr(err, "reason", err))

    def etcd_tls(self, client: str | None) -> ssl.SSLContext:
        """A TLS context that trusts etcd's CA and presents ``client``'s certificate (None:
        none)."""
        context = ssl.create_default_context(cafile=str(pki.etcd_file(self.pki, "ca", "crt")))
        if client is not None:
            context.load_cert_chain(
                str(pki.etcd_file(self.pki, client, "crt")),
                str(pki.etcd_file(self.pki, client, "key")),
            )
        return context

    def _api_port(self) -> int:
        state = self.state()
        return state.api_port if state else -1

    def _etcd_port(self) -> int:
        state = self.state()
        etcd = state.components.get("etcd") if state else None
        return etcd.port if etcd else -1

    # -- down / status --------------------------------------------------------------------------
    def down(self) -> list[str]:
        """Stop every process this lab recorded (by pid) and remove the directory; a SIGTERM
        or SIGHUP meanwhile takes effect once it is done (half a lab would outlive us)."""
        with signals.deferred():
            return self._down()

    def _down(self) -> list[str]:
        stopped: list[str] = []
        if not self.dir.exists():
            return stopped
        if not self.is_lab_dir():
            raise UsageError(
                f"{self.dir} is not a lab directory (no {MARKER}); refusing to remove it",
                hint="pass the directory `kschedctl lab up --dir` created",
            )
        try:
            state = self.state()
        except LabError:
            state = None
        components = state.components if state is not None else {}
        # The runner first, so it restarts nothing; then what it and other commands started,
        # while the API server still answers (a scheduler releases its Lease on SIGTERM); then
        # the control plane in reverse start order, etcd last.
        runner = components.get("runner")
        if runner is not None and runner.stop():
            stopped.append("runner")
        for extra in self._extra_processes():
            if processes.stop(extra["pid"], extra["exe"], started=extra.get("started")):
                stopped.append(extra.get("name", str(extra["pid"])))
        for name in reversed([n for n in components if n != "runner"]):
            component = components[name]
            if component.stop():
                stopped.append(name)
        # Whatever a crash left unrecorded (or a corrupt lab.json hides): the processes that
        # carry this lab's mark — never one that merely names a file of the directory.
        # In rounds: without its records a runner may be found after a pod process it then
        # restarts; the next round finds the restarted one.
        identity = processes.read_identity(self.dir)
        for _round in range(MARKED_ROUNDS if identity is not None else 0):
            assert identity is not None
            found = processes.marked(identity)
            if not found:
                break
            for process in found:
                if processes.stop(process.pid, process.exe, started=process.started):
                    stopped.append(f"pid {process.pid} ({Path(process.exe).name})")
        shutil.rmtree(self.dir)
        return stopped

    def _extra_processes(self) -> list[dict[str, Any]]:
        """Processes other kschedctl commands started in this lab (records under procs/)."""
        records = []
        for record in sorted((self.dir / "procs").glob("*.json")):
            try:
                data = json.loads(record.read_text())
            except (ValueError, OSError):
                continue  # a lost record: its process carries the lab's mark
            if (
                isinstance(data, dict)
                and type(data.get("pid")) is int
                and isinstance(data.get("exe"), str)
                and (data.get("started") is None or type(data["started"]) is int)
            ):
                records.append(data)
        return records

    def status(self) -> dict[str, Any]:
        state = self.state() if self.is_lab_dir() else None
        if state is None:
            return {"dir": str(self.dir), "running": False, "components": {}, "nodes": None}
        components: dict[str, Any] = {}
        for name in COMPONENTS:
            c = state.components.get(name)
            if c is None:
                components[name] = {"state": "not started"}
                continue
            alive = c.running()
            healthy = False
            if alive:
                scheme = "http" if name in ("kwok", "runner") else "https"
                path = "/readyz" if name == "kube-apiserver" else "/healthz"
                if name == "etcd":
                    path = "/health"
                healthy, _ = self.probe(f"{scheme}://127.0.0.1:{c.port}{path}")
            components[name] = {
                "state": ("healthy" if healthy else "unhealthy") if alive else "stopped",
                "pid": c.pid,
                "port": c.port,
                "log": c.log,
            }
        nodes = None
        if components["kube-apiserver"].get("state") == "healthy":
            # lab.api loads the kubernetes client: only once the API server runs
            from kschedctl.lab import api

            with api.connect(self.kubeconfig) as cluster:
                nodes = api.node_counts(cluster)
        return {
            "dir": str(self.dir),
            "running": any(v["state"] != "stopped" and v["state"] != "not started"
                           for v in components.values()),
            "kubeconfig": str(self.kubeconfig),
            "server": f"https://127.0.0.1:{state.api_port}",
            "versions": state.versions,
            "components": components,
            "nodes": nodes,
        }  # fmt: skip


class _BlockDumper(yaml.SafeDumper):
    """Multi-line strings (kwok's templates) as readable ``|`` blocks."""


_BlockDumper.add_representer(
    str,
    lambda dumper, text: dumper.represent_scalar(
        "tag:yaml.org,2002:str", text, style="|" if "\n" in text else None
    ),
)


def _exit_hint(log: Path) -> str | None:
    tail = processes.log_tail(log, 40)
    if "address already in use" in tail:
        return "another process took the port; run `kschedctl lab up` again (it picks free ports)"
    return None
