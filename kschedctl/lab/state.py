"""The lab directory and its records: paths, ``lab.json``, its lock, the kubeconfigs.

:class:`LabState` is ``lab.json``: the API server's port, the binaries' versions and one
:class:`ComponentState` per process (pid + executable + start time, and the argv and env it
was started with, to start it again as it was). :class:`LabDir` reads and writes them, one
writer at a time; :class:`kschedctl.lab.cluster.Lab` is the lab's API on top.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from kschedctl.base.errors import LabError
from kschedctl.lab import pki, processes
from kschedctl.lab.private import write_private

MARKER = ".kschedctl-lab"
STATE = "lab.json"


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


class LabDir:
    """A lab directory (it may not exist yet): where each file is, and its records."""

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
