"""Starting a container's process with the pod's hostname, and the records that outlive us.

kube-scheduler's leader-election identity is ``<hostname>_<uuid>``; in a cluster the hostname
is the pod name. A UTS namespace gives the process that hostname without touching the host's:
``unshare --uts sh -c 'hostname "$0" && exec "$@"' POD argv…`` (root), or with
``--user --map-root-user`` first (unprivileged, where user namespaces are allowed). Both
``unshare`` and ``sh`` exec, so the pid stays the one we started and ``/proc/<pid>/exe`` ends
up as the program itself.

Each process is recorded in ``<lab>/procs/<ns>_<pod>_<uid>_<container>.json`` (atomically,
0600) before we wait for anything, so ``kschedctl lab down`` stops it even if the runner has
crashed; and it carries the lab's mark from its first instruction (``KSCHEDCTL_LAB_ID``, set
last so a pod's own env cannot change it), so a runner that dies between the spawn and the
record leaves nothing ``lab down`` cannot find.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from kschedctl.lab import processes
from kschedctl.lab.private import private_dir, write_private

SET_HOSTNAME = 'hostname "$0" && exec "$@"'
UNSHARE_FLAGS = (["--uts"], ["--user", "--map-root-user", "--uts"])


@functools.lru_cache(maxsize=1)
def hostname_wrapper() -> tuple[tuple[str, ...], str]:
    """The command prefix that sets a process's hostname, and how (for the log)."""
    unshare, sh, hostname = (shutil.which(n) for n in ("unshare", "sh", "hostname"))
    if not (unshare and sh and hostname):
        return (), "unshare, sh or hostname is missing"
    for flags in UNSHARE_FLAGS:
        try:
            subprocess.run(
                [unshare, *flags, sh, "-c", SET_HOSTNAME, "lab-probe", "true"],
                capture_output=True,
                timeout=10,
                check=True,
            )
        except (OSError, subprocess.SubprocessError):
            continue
        return (unshare, *flags, sh, "-c", SET_HOSTNAME), f"unshare {' '.join(flags)}"
    return (), "unshare is not permitted here (no root, no unprivileged user namespaces)"


def spawn(
    argv: Sequence[str],
    hostname: str,
    env: Mapping[str, str],
    outputs: Mapping[str, Path],
    cwd: Path,
    lab_dir: Path,
) -> subprocess.Popen[bytes]:
    """Start ``argv`` in its own session with ``hostname``, output to the raw files, marked as
    a process of the lab in ``lab_dir``."""
    prefix, _how = hostname_wrapper()
    full = [*prefix, hostname, *argv] if prefix else list(argv)
    with open(outputs["stdout"], "ab") as out, open(outputs["stderr"], "ab") as err:
        return subprocess.Popen(
            full,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            env=processes.marked_environment(env, lab_dir),
            cwd=cwd,
            start_new_session=True,  # our Ctrl-C or SIGTERM must not reach it
            close_fds=True,
        )


def wait_exec(proc: subprocess.Popen[bytes], exe: str, timeout: float = 5.0) -> bool:
    """Wait until ``/proc/<pid>/exe`` is ``exe`` (the wrappers have exec'd) or it exited."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        try:
            if os.readlink(f"/proc/{proc.pid}/exe").removesuffix(" (deleted)") == exe:
                return True
        except OSError:
            return False
        time.sleep(0.01)
    return False


# -- records ------------------------------------------------------------------------------------


def record_path(lab_dir: Path, pod: Mapping[str, Any], container: str) -> Path:
    meta = pod["metadata"]
    return lab_dir / "procs" / f"{meta['namespace']}_{meta['name']}_{meta['uid']}_{container}.json"


def write_record(path: Path, record: Mapping[str, Any]) -> None:
    private_dir(path.parent)
    write_private(path, json.dumps(record, indent=2) + "\n")


def read_records(lab_dir: Path) -> list[tuple[Path, dict[str, Any]]]:
    """The runner's process records (those with a pod uid), oldest first."""
    records = []
    for path in sorted((lab_dir / "procs").glob("*.json")):
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and data.get("uid") and data.get("pid"):
            records.append((path, data))
    return records


def pod_processes(
    lab_dir: Path, namespace: str | None = None, pod: str | None = None
) -> list[dict[str, Any]]:
    """Records of the processes the runner runs for pods (all, a namespace's, or one pod's).

    Each has ``namespace``, ``pod``, ``uid``, ``container``, ``pid``, ``exe``, ``port`` (where
    it listens here) and ``servingPort`` (its port inside the pod).
    """
    return [
        data
        for _path, data in read_records(lab_dir)
        if (namespace is None or data.get("namespace") == namespace)
        and (pod is None or data.get("pod") == pod)
    ]
