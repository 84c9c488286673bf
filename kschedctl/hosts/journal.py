"""Reading the output of schedulers that run on a host, not in a pod: journal or log file.

A service-form scheduler writes to the journal of its unit (``journalctl -u NAME.service``).
In the lab the unit's ExecStart runs as a lab process whose output goes to
``<lab>/logs/service_NAME.service.log``, and the lab's default scheduler (a plain process,
found through its Lease) to ``<lab>/logs/kube-scheduler.log``; both are read as files (which
file is the host's choice: :meth:`kschedctl.hosts.host.Host.log_file`). Other plain processes
(e.g. ``kschedctl scheduler run`` on some host) are not readable from here.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
from collections import deque
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import BinaryIO

from kschedctl.hosts.systemd import unit_name_for
from kschedctl.observe.loglines import LogLine

_KLOG = re.compile(r"^[IWEF](\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{6})")


def journal_available() -> bool:
    return shutil.which("journalctl") is not None and (
        Path("/run/systemd/journal").is_dir() or Path("/var/log/journal").is_dir()
    )


def journal_argv(
    name: str, *, follow: bool, since_seconds: int | None, tail: int | None
) -> list[str]:
    argv = ["journalctl", "-u", unit_name_for(name), "--no-pager", "-o", "cat"]
    if since_seconds is not None:
        argv += ["--since", f"-{since_seconds}s"]
    if tail is not None:
        argv += ["-n", str(tail)]
    if follow:
        argv.append("-f")
    return argv


def klog_time(text: str, now: datetime) -> datetime | None:
    """The time in a klog header (``I0102 15:04:05.000000``, the host's local time); klog
    omits the year."""
    match = _KLOG.match(text)
    if not match:
        return None
    month, day, hour, minute, second, micro = (int(g) for g in match.groups())
    try:
        local = datetime(now.year, month, day, hour, minute, second, micro)
    except ValueError:
        return None
    moment = local.astimezone(timezone.utc)
    if moment > now + timedelta(days=1):  # a December line read in January
        moment = moment.replace(year=now.year - 1)
    return moment


def _stamp(moment: datetime | None) -> str | None:
    return moment.isoformat().replace("+00:00", "Z") if moment else None


def read_file(
    path: Path, source: str, *, since_seconds: int | None, tail: int | None
) -> tuple[list[LogLine], int]:
    """The file's lines (klog time when present), limited like pods/log's sinceSeconds and
    tailLines (a line without a header belongs to the line before it), and the offset a
    follow continues from."""
    now = datetime.now(timezone.utc)
    cutoff = now - timedelta(seconds=since_seconds) if since_seconds is not None else None
    keep: deque[LogLine] = deque(maxlen=tail if tail is not None else None)
    current: datetime | None = None
    raw = b""
    with open(path, "rb") as handle:
        for raw in iter(handle.readline, b""):
            if not raw.endswith(b"\n"):
                break  # a line still being written: the follow picks it up whole
            text = raw.decode(errors="replace").rstrip("\n")
            current = klog_time(text, now) or current
            if cutoff is None or (current is not None and current >= cutoff):
                keep.append(LogLine(source, text, _stamp(current)))
        offset = handle.tell() - (len(raw) if raw and not raw.endswith(b"\n") else 0)
    return list(keep), offset


def follow_file(
    path: Path, source: str, stop: threading.Event, offset: int | None = None
) -> Iterator[LogLine]:
    """Lines appended from ``offset`` on (default: the current end), until ``stop``; survives
    truncation and replacement of the file. The file is opened now, so nothing written
    between this call and the first read is lost."""
    handle = open(path, "rb")  # noqa: SIM115 - closed by _follow, reopened on rotation
    if offset is None:
        handle.seek(0, os.SEEK_END)
    else:
        handle.seek(offset)
    return _follow(path, source, stop, handle)


def _follow(path: Path, source: str, stop: threading.Event, handle: BinaryIO) -> Iterator[LogLine]:
    now = datetime.now(timezone.utc)
    pending = b""
    try:
        while not stop.is_set():
            chunk = handle.readline()
            if chunk:
                pending += chunk
                if pending.endswith(b"\n"):
                    text = pending.decode(errors="replace").rstrip("\n")
                    pending = b""
                    yield LogLine(source, text, _stamp(klog_time(text, now)))
                continue
            try:
                on_disk = path.stat()
                replaced = on_disk.st_ino != os.fstat(handle.fileno()).st_ino
                truncated = on_disk.st_size < handle.tell()
            except OSError:
                replaced, truncated = False, False
            if replaced or truncated:
                handle.close()
                handle = open(path, "rb")  # noqa: SIM115
                pending = b""
                continue
            stop.wait(0.25)
    finally:
        handle.close()


def journal_lines(argv: list[str], source: str) -> Iterator[LogLine]:
    """Lines of a journalctl run (ends with it; ``-f`` runs until the caller stops reading)."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        for raw in proc.stdout:
            text = raw.rstrip("\n")
            yield LogLine(source, text, _stamp(klog_time(text, datetime.now(timezone.utc))))
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()


def recent_host_lines(name: str, form: str, kubeconfig: str | None) -> list[str]:
    """The last ten minutes of a host scheduler's output (for `why`): the lab's file, or the
    service's journal; nothing for a process that is neither."""
    # Imported here: kschedctl.hosts imports this module.
    from kschedctl.hosts import for_target

    return for_target(kubeconfig).recent_log_lines(name, form)
