"""Service-form schedulers in the lab: the unit's ExecStart run as a lab-managed process.

Each is recorded under ``<lab>/procs/service_<unit>.json`` (pid + executable), the same
records ``lab down`` stops, so nothing outlives the lab.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from kschedctl.lab import processes
from kschedctl.lab.cluster import Lab


def _record(lab: Lab, unit: str) -> Path:
    return lab.dir / "procs" / f"service_{unit}.json"


def running(lab: Lab, unit: str) -> dict[str, object] | None:
    try:
        record = json.loads(_record(lab, unit).read_text())
    except (FileNotFoundError, ValueError):
        return None
    alive = processes.is_running(record["pid"], record["exe"], record.get("started"))
    return record if alive else None


def start(lab: Lab, unit: str, argv: list[str]) -> int:
    """(Re)start ``argv`` as the lab's stand-in for ``systemctl enable --now UNIT``."""
    stop(lab, unit)
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


def stop(lab: Lab, unit: str) -> bool:
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
