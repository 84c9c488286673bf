"""The lab as the host of the host forms: files under ``<lab>/host``, static pods in
``<lab>/manifests`` (the lab's kubelet stand-in runs them), and a service-form scheduler's unit
run as a lab-managed process whose output goes to ``<lab>/logs/service_<unit>.log``.

Each such process is recorded under ``<lab>/procs/service_<unit>.json`` (pid + executable), the
same records ``lab down`` stops, so nothing outlives the lab.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

from kschedctl.base.errors import KschedError
from kschedctl.hosts import systemd
from kschedctl.hosts.host import Host, Say
from kschedctl.lab import binaries, processes
from kschedctl.lab.cluster import Lab
from kschedctl.lab.components import free_port
from kschedctl.model.config.versions import DEFAULT_SCHEDULER_NAME
from kschedctl.observe.schedulers import LAB_ANNOTATION
from kschedctl.spec import CheckedSpec, Spec, ensure_valid, thawed


def _record(lab: Lab, unit: str) -> Path:
    return lab.dir / "procs" / f"service_{unit}.json"


def running(lab: Lab, unit: str) -> dict[str, object] | None:
    try:
        record = json.loads(_record(lab, unit).read_text())
    except (FileNotFoundError, ValueError):
        return None
    alive = processes.is_running(record["pid"], record["exe"], record.get("started"))
    return record if alive else None


def start_unit(lab: Lab, unit: str, argv: list[str]) -> int:
    """(Re)start ``argv`` as the lab's stand-in for ``systemctl enable --now UNIT``."""
    stop_unit(lab, unit)
    log = lab.dir / "logs" / f"service_{unit}.log"
    pid = processes.start(argv, log, processes.proxy_free_environment(), cwd=lab.dir)
    record = _record(lab, unit)
    record.parent.mkdir(parents=True, exist_ok=True)
    exe = _executable(argv[0])
    record.write_text(
        json.dumps(
            {
                "name": f"service {unit}",
                "pid": pid,
                "exe": exe,
                "log": str(log),
                "started": processes.start_ticks(pid),
            }
        )
    )
    return pid


def _executable(program: str) -> str:
    """What ``/proc/<pid>/exe`` will show: the program, or the interpreter of a ``#!`` script
    (the ``kschedctl`` command of program builtin is one)."""
    path = os.path.realpath(program)
    try:
        with open(path, "rb") as f:
            head = f.readline(256)
    except OSError:
        return path
    if head.startswith(b"#!"):
        interpreter = head[2:].decode(errors="replace").split()
        if interpreter and not interpreter[0].endswith("/env"):
            return os.path.realpath(interpreter[0])
    return path


def stop_unit(lab: Lab, unit: str) -> bool:
    record = _record(lab, unit)
    try:
        data = json.loads(record.read_text())
    except (FileNotFoundError, ValueError):
        return False
    stopped = processes.stop(data["pid"], data["exe"], started=data.get("started"))
    record.unlink(missing_ok=True)
    return stopped


def lab_for_kubeconfig(kubeconfig: str | None) -> Lab | None:
    """The lab whose admin kubeconfig this is (``$KUBECONFIG`` when not given), if any."""
    path = kubeconfig or os.environ.get("KUBECONFIG", "").split(os.pathsep)[0]
    if not path:
        return None
    directory = Path(path).expanduser().resolve().parent
    lab = Lab(directory)
    if Path(path).name == "kubeconfig" and lab.is_lab_dir():
        return lab
    return None


class LabHost(Host):
    """The lab whose API server the kubeconfig points at, standing in for a machine."""

    loopback_pod_ips = True  # the lab runner's pods listen on 127.0.0.1

    def __init__(self, lab: Lab, manifests_dir: Path | None = None) -> None:
        super().__init__(lab.dir / "host", manifests_dir or lab.dir / "manifests")
        self.lab = lab

    def note(self) -> str:
        return f"deploying into the lab at {self.lab.dir} (host files under {self.root})"

    def prepare(self, spec: Spec, form: str, *, dry_run: bool = False) -> CheckedSpec:
        """Host paths of the lab: files under <lab>/host; the service runs the lab's binary."""
        spec = thawed(spec)
        # Both checked before anything is written: inside <lab>/host, or refused.
        kubeconfig = systemd.under(self.root, spec.service.kubeconfig, systemd.KUBECONFIG_FIELD)
        config_dir = systemd.under(self.root, spec.service.config_dir, systemd.CONFIG_DIR_FIELD)
        if not kubeconfig.exists() and not dry_run:
            # The lab's system:kube-scheduler identity, as kubeadm's scheduler.conf.
            systemd.write_files(
                {kubeconfig: (self.lab.dir / "scheduler.kubeconfig").read_text()},
                (self.root,),
                mode=0o600,  # it holds a client key
            )
        if form == "service":
            # A systemd unit reads host paths directly: point them into the lab.
            spec.service.binary = (
                _kschedctl_command()
                if spec.program == "builtin"
                else str(binaries.locate()["kube-scheduler"])
            )
            spec.service.config_dir = str(config_dir)
            spec.service.kubeconfig = str(kubeconfig)
        # Several host-form schedulers share this host: give each a free port, kept across deploys.
        spec.service.secure_port = self._deployed_port(spec, form) or free_port()
        return ensure_valid(spec)  # the lab's paths and port: a changed spec, checked

    def _deployed_port(self, spec: Spec, form: str) -> int | None:
        path = (
            systemd.unit_path(spec, self.root)
            if form == "service"
            else self.manifests_dir / f"{spec.name}.yaml"
        )
        match = re.search(r"--secure-port=(\d+)", path.read_text()) if path.is_file() else None
        return int(match.group(1)) if match else None

    def annotations(self) -> dict[str, str]:
        return {LAB_ANNOTATION: str(self.lab.dir)}

    def start_service(
        self, spec: Spec, files: dict[Path, str], changed: bool, info: Say, warn: Say
    ) -> bool:
        unit = systemd.unit_name(spec)
        if changed or not running(self.lab, unit):
            argv = systemd.exec_start(files[systemd.unit_path(spec, self.root)])
            pid = start_unit(self.lab, unit, argv)
            info(f"lab: started {unit}'s ExecStart as pid {pid}")
            return False
        return True

    def liveness(self, spec: Spec, form: str) -> Callable[[], None] | None:
        if form != "service":
            return None
        unit = systemd.unit_name(spec)

        def alive() -> None:
            if running(self.lab, unit) is None:
                log = self.lab.dir / "logs" / f"service_{unit}.log"
                raise KschedError(
                    f"{unit} exited; the end of {log}:\n{processes.log_tail(log, 5)}",
                    hint=f"fix the cause, then `kschedctl deploy {spec.name} --as-service` again",
                )

        return alive

    def stop_service(self, name: str, files: list[Path], info: Say) -> None:
        unit = systemd.unit_name_for(name)
        if stop_unit(self.lab, unit):
            info(f"lab: stopped {unit}")

    def log_file(self, name: str, form: str) -> Path | None:
        """The lab's file of a service-form scheduler, or of the lab's own default scheduler (a
        plain process, found through its Lease)."""
        if form == "service":
            path = self.lab.log(f"service_{systemd.unit_name_for(name)}")
        elif form == "process" and name == DEFAULT_SCHEDULER_NAME:
            path = self.lab.log("kube-scheduler")
        else:
            return None
        return path if path.is_file() else None


def _kschedctl_command() -> str:
    """This installation's ``kschedctl`` script (it runs with the lab's interpreter)."""
    beside = Path(sys.executable).parent / "kschedctl"
    found = str(beside) if beside.is_file() else shutil.which("kschedctl")
    if not found:
        raise KschedError("cannot find the kschedctl command to run as the lab's service")
    return found
