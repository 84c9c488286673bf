"""One lab: a directory holding the state, PKI, logs and pid records of a local control plane.

``up`` starts etcd → kube-apiserver (waits for /readyz) → kube-controller-manager → the default
kube-scheduler (its own port and Lease) → kwok, creates the simulated nodes, then starts the
runner (``kschedctl.lab.runner``), which really runs scheduler pods bound to those nodes (the
order and the flags: :mod:`kschedctl.lab.startup`). Every process is recorded (pid + executable
+ start time, :mod:`kschedctl.lab.components`) in ``lab.json`` the moment it starts, and
carries the lab's mark (:mod:`kschedctl.lab.processes`), so ``down`` — or the next ``up`` after a
crash — stops exactly what this lab started and nothing else, even if a record was lost.

The directory is 0700 and every key, kubeconfig and token in it 0600 (:mod:`kschedctl.lab.private`);
etcd serves TLS only and accepts only clients with a certificate of its own CA.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import ssl
import time
from pathlib import Path
from typing import Any

from kschedctl.base import signals
from kschedctl.base.errors import LabError, UsageError
from kschedctl.lab import binaries, components, processes, startup
from kschedctl.lab.components import Progress, free_port, port_in_use, start_again, wait
from kschedctl.lab.private import private_dir
from kschedctl.lab.state import MARKER, ComponentState, LabDir, LabState

COMPONENTS = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok",
              "runner")  # fmt: skip
MARKED_ROUNDS = 5  # `down`'s searches for marked processes whose records were lost


class Lab(LabDir):
    """The lab's API: ``up``, ``down`` and ``status``; faults for tests and drills (``restart``,
    ``hold``, ``release``); ``revive``, which the runner calls to keep the components running."""

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
                start_again(self, component)
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
            startup.start_all(startup.Startup(self, state, bins, progress, timeout), nodes)
            with self._exclusive():
                state.ready = True
                self._save(state)
            _record_start_up(self.dir, len(nodes), time.time() - state.started)
        except BaseException:  # an error, Ctrl-C, SIGTERM or SIGHUP (kschedctl.base.signals)
            with contextlib.suppress(OSError):  # after a SIGHUP the terminal may be gone
                progress("start-up failed; stopping what was started")
            self.down()
            raise
        return state

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
        port = startup.start_runner(self, state, processes.proxy_free_environment())
        wait(self, state, "runner", f"http://127.0.0.1:{port}/healthz", timeout, progress)

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
            start_again(self, component)
            self._save(state)
        if name == "kube-apiserver":
            url = f"https://127.0.0.1:{component.port}/readyz"
            wait(self, state, name, url, timeout, lambda _m: None)

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
                start_again(self, component)
            self._save(state)

    def probe(self, url: str) -> tuple[bool, str]:
        """GET a health endpoint of one of the lab's components (:func:`components.probe`)."""
        return components.probe(self, url)

    def etcd_tls(self, client: str | None) -> ssl.SSLContext:
        """A TLS context that trusts etcd's CA and presents ``client``'s certificate (None:
        none)."""
        return components.etcd_tls(self, client)

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
        recorded = state.components if state is not None else {}
        # The runner first, so it restarts nothing; then what it and other commands started,
        # while the API server still answers (a scheduler releases its Lease on SIGTERM); then
        # the control plane in reverse start order, etcd last.
        runner = recorded.get("runner")
        if runner is not None and runner.stop():
            stopped.append("runner")
        for extra in self._extra_processes():
            if processes.stop(extra["pid"], extra["exe"], started=extra.get("started")):
                stopped.append(extra.get("name", str(extra["pid"])))
        for name in reversed([n for n in recorded if n != "runner"]):
            component = recorded[name]
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
        shown: dict[str, Any] = {}
        for name in COMPONENTS:
            c = state.components.get(name)
            if c is None:
                shown[name] = {"state": "not started"}
                continue
            alive = c.running()
            healthy = False
            if alive:
                scheme = "http" if name in ("kwok", "runner") else "https"
                path = "/readyz" if name == "kube-apiserver" else "/healthz"
                if name == "etcd":
                    path = "/health"
                healthy, _ = self.probe(f"{scheme}://127.0.0.1:{c.port}{path}")
            shown[name] = {
                "state": ("healthy" if healthy else "unhealthy") if alive else "stopped",
                "pid": c.pid,
                "port": c.port,
                "log": c.log,
            }
        nodes = None
        if shown["kube-apiserver"].get("state") == "healthy":
            # lab.api loads the kubernetes client: only once the API server runs
            from kschedctl.kubeclient.client import Cluster
            from kschedctl.lab import api

            with Cluster.connect(str(self.kubeconfig)) as cluster:
                nodes = api.node_counts(cluster)
        return {
            "dir": str(self.dir),
            "running": any(v["state"] != "stopped" and v["state"] != "not started"
                           for v in shown.values()),
            "kubeconfig": str(self.kubeconfig),
            "server": f"https://127.0.0.1:{state.api_port}",
            "versions": state.versions,
            "components": shown,
            "nodes": nodes,
        }  # fmt: skip


def _record_start_up(directory: Path, nodes: int, seconds: float) -> None:
    """With ``KSCHEDCTL_LAB_TIMINGS=FILE``, append how long this lab took to be Ready (a JSON
    line): how benchmarks/suite.py counts the labs a test run starts and what they cost."""
    path = os.environ.get("KSCHEDCTL_LAB_TIMINGS")
    if path:
        record = {"dir": str(directory), "nodes": nodes, "seconds": round(seconds, 2)}
        with open(path, "a") as out:  # one short write: lines of parallel labs never interleave
            out.write(json.dumps(record) + "\n")
