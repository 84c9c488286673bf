"""Detached processes identified by pid, executable *and* start time, so a recycled pid is never
signalled; and the lab's mark on every process it starts.

A lab holds a random identity (``lab-id``, mode 0600 in its 0700 directory), made before it
starts anything. Every process started in the lab directory gets ``KSCHEDCTL_LAB_ID=<id>`` in
its environment from its first instruction (:func:`start`; the runner sets it on the pod
processes it spawns), so a process whose record was never written (a crash between the spawn and
the record) or was lost (a corrupt ``lab.json``) is still found — by that mark, which only the
lab's own user can read or set, together with a lab executable and a start time after the lab
was made (:func:`marked`). A process is never picked by its command line: an editor or a
``tail -f`` naming a lab file is not the lab's.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from kschedctl.lab.private import private_dir, write_private

MARKER_ENV = "KSCHEDCTL_LAB_ID"
IDENTITY_FILE = "lab-id"
# What a lab process runs: the lab's binaries and Python (the runner, kschedctl's scheduler).
LAB_PROGRAMS = frozenset(
    {"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl", "kwok"}
)
_PYTHON = re.compile(r"python(\d+(\.\d+)*)?")
_ID = re.compile(r"[0-9a-f]{32}")
START_SLACK = 2.0  # seconds: the boot time in /proc/stat has a resolution of one second


@dataclass(frozen=True)
class Identity:
    """A lab's mark: a random id and when the lab was made (seconds since the epoch)."""

    id: str
    created: float


def new_identity(directory: Path) -> Identity:
    """Make and store a fresh identity for the lab in ``directory``."""
    identity = Identity(secrets.token_hex(16), time.time())
    write_private(
        directory / IDENTITY_FILE, json.dumps({"id": identity.id, "created": identity.created})
    )
    return identity


def read_identity(directory: Path) -> Identity | None:
    """The identity stored in ``directory``; None if there is none or it is not well-formed."""
    try:
        with open(directory / IDENTITY_FILE, "rb") as f:
            data = json.loads(f.read(4096))
        ident, created = data["id"], float(data["created"])
    except (OSError, ValueError, TypeError, KeyError):
        return None
    if not isinstance(ident, str) or not _ID.fullmatch(ident):
        return None
    return Identity(ident, created)


def marked_environment(env: Mapping[str, str], directory: Path) -> dict[str, str]:
    """``env`` carrying the mark of the lab in ``directory`` (and of no other lab)."""
    marked = {k: v for k, v in env.items() if k != MARKER_ENV}
    identity = read_identity(directory)
    if identity is not None:
        marked[MARKER_ENV] = identity.id
    return marked


def proxy_free_environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The caller's environment without proxies: lab traffic is loopback only."""
    env = {k: v for k, v in os.environ.items() if k.lower() not in {"http_proxy", "https_proxy"}}
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    env.update(extra or {})
    return env


def start(argv: Sequence[str], log: Path, env: Mapping[str, str], cwd: Path) -> int:
    """Start ``argv`` in its own session (it outlives us and ignores our Ctrl-C); return its pid.

    ``cwd`` is the lab directory: the process carries that lab's mark (see the module).
    """
    private_dir(log.parent)
    with open(log, "ab") as out:
        proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=marked_environment(env, cwd),
            cwd=cwd,
            start_new_session=True,
            close_fds=True,
        )
    return proc.pid


def start_ticks(pid: int) -> int | None:
    """When ``pid`` started (clock ticks since boot): with the pid, a process's identity."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
    except (FileNotFoundError, ProcessLookupError, PermissionError, IndexError, ValueError):
        return None


def is_running(pid: int, exe: str, started: int | None = None) -> bool:
    """True if ``pid`` is alive (not a zombie), runs ``exe`` and (if known) started then.

    Pids wrap around and many lab processes share one executable (python), so the start
    time is what tells a recorded process from a stranger that got its pid later.
    """
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        actual = os.readlink(f"/proc/{pid}/exe")
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return False
    fields = stat.rsplit(")", 1)[1].split()
    if fields[0] in {"Z", "X"}:
        _reap(pid)
        return False
    if started is not None and int(fields[19]) != started:
        return False
    return actual.removesuffix(" (deleted)") == exe


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass  # not our child: init reaps it


def stop(pid: int, exe: str, timeout: float = 10.0, started: int | None = None) -> bool:
    """SIGTERM, then SIGKILL after ``timeout``; returns whether the process was running.

    Never this process or one of its ancestors, whatever a record says.
    """
    if not is_running(pid, exe, started) or pid in ancestors():
        return False
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not is_running(pid, exe, started):
            return True
        time.sleep(0.1)
    if is_running(pid, exe, started):
        os.kill(pid, signal.SIGKILL)
        while is_running(pid, exe, started):
            time.sleep(0.05)
    return True


def is_lab_program(exe: str) -> bool:
    """Whether ``exe`` (a /proc/<pid>/exe target) is one of the programs a lab runs."""
    name = Path(exe.removesuffix(" (deleted)")).name
    return name in LAB_PROGRAMS or _PYTHON.fullmatch(name) is not None


def ancestors() -> set[int]:
    """This process and every process above it: never to be signalled by it."""
    found: set[int] = set()
    pid = os.getpid()
    while pid > 0 and pid not in found:
        found.add(pid)
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            pid = int(stat.rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            break
    return found


def _boot_time() -> float:
    for line in Path("/proc/stat").read_text().splitlines():
        if line.startswith("btime "):
            return float(line.split()[1])
    return 0.0


def process_environment(pid: int, settle: float = 0.5) -> list[bytes]:
    """The ``NAME=value`` entries ``pid`` was started with.

    A process that has just exec'd shows an empty environment for a moment (the kernel closes
    the exec pipe Popen waits on before it maps the new stack): an empty one is read again for
    up to ``settle`` seconds.
    """
    deadline = time.monotonic() + settle
    while True:
        raw = Path(f"/proc/{pid}/environ").read_bytes()
        if raw or time.monotonic() >= deadline:
            return [entry for entry in raw.split(b"\0") if entry]
        time.sleep(0.01)


@dataclass(frozen=True)
class Marked:
    pid: int
    exe: str
    started: int  # ticks since boot


def marked(identity: Identity) -> list[Marked]:
    """The processes carrying ``identity``'s mark that run a lab program and started after the
    lab was made — except this process and its ancestors. Command lines are never looked at."""
    needle = f"{MARKER_ENV}={identity.id}".encode()
    spared = ancestors()
    boot, hertz = _boot_time(), os.sysconf("SC_CLK_TCK")
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) in spared:
            continue
        try:
            exe = os.readlink(entry / "exe")
            if not is_lab_program(exe):
                continue
            environ = process_environment(int(entry.name))
        except (OSError, ValueError):
            continue  # gone, a kernel thread, or another user's
        ticks = start_ticks(int(entry.name))
        if needle not in environ or ticks is None:
            continue
        if boot + ticks / hertz < identity.created - START_SLACK:
            continue
        found.append(Marked(int(entry.name), exe.removesuffix(" (deleted)"), ticks))
    return found


def log_tail(log: Path, lines: int = 15) -> str:
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
    except FileNotFoundError:
        return ""
