"""Detached processes identified by pid *and* executable, so a recycled pid is never signalled."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path


def proxy_free_environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The caller's environment without proxies: lab traffic is loopback only."""
    env = {k: v for k, v in os.environ.items() if k.lower() not in {"http_proxy", "https_proxy"}}
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    env.update(extra or {})
    return env


def start(argv: Sequence[str], log: Path, env: Mapping[str, str], cwd: Path) -> int:
    """Start ``argv`` in its own session (it outlives us and ignores our Ctrl-C); return its pid."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as out:
        proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=dict(env),
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
    """SIGTERM, then SIGKILL after ``timeout``; returns whether the process was running."""
    if not is_running(pid, exe, started):
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


def referencing(directory: Path) -> list[tuple[int, str]]:
    """(pid, executable) of the processes whose arguments name a path inside ``directory``."""
    prefix = str(directory).rstrip("/") + "/"
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0")
            exe = os.readlink(entry / "exe")
        except (FileNotFoundError, ProcessLookupError, PermissionError, NotADirectoryError):
            continue
        values = [a.decode(errors="replace").split("=", 1)[-1] for a in args]
        if any(v.startswith(prefix) or v == prefix[:-1] for v in values):
            found.append((int(entry.name), exe.removesuffix(" (deleted)")))
    return found


def log_tail(log: Path, lines: int = 15) -> str:
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
    except FileNotFoundError:
        return ""
