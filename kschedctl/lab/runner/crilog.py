"""Container output in CRI log format, the format kwok (like the kubelet) serves for pods/log.

A process writes its stdout and stderr to two raw files of its own (never to a pipe into the
runner: a Go program dies of SIGPIPE on its next write when the reader goes away, so a runner
crash would kill every scheduler). The runner tails them into ``<container>.log``::

    2016-10-06T00:17:09.669794202Z stderr F I1006 00:17:09 leaderelection.go:257] ...

The tail offsets are saved, so a runner started after a crash resumes where the old one
stopped. On a restart the log becomes ``<container>.previous.log`` (``kubectl logs -p``).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from kschedctl.lab.private import private_dir

MAX_LINE = 16 * 1024  # containerd's default max-container-log-line-size
READ_CHUNK = 1 << 20


def timestamp(ns: int) -> str:
    """RFC 3339 with nanoseconds, UTC: ``2016-10-06T00:00:00.000000000Z``."""
    seconds, fraction = divmod(ns, 1_000_000_000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{fraction:09d}Z"


def cri_records(stream: str, line: bytes, ns: int, complete: bool = True) -> bytes:
    """One output line as CRI records: ``P`` (partial) chunks of MAX_LINE, then ``F``."""
    stamp = timestamp(ns).encode()
    chunks = [line[i : i + MAX_LINE] for i in range(0, len(line), MAX_LINE)] or [b""]
    out = []
    for index, chunk in enumerate(chunks):
        tag = b"F" if complete and index == len(chunks) - 1 else b"P"
        out.append(b"%s %s %s %s\n" % (stamp, stream.encode(), tag, chunk))
    return b"".join(out)


class StreamTail:
    """New complete lines of a growing raw output file."""

    def __init__(self, path: Path, stream: str, offset: int = 0) -> None:
        self.path = path
        self.stream = stream
        self.offset = offset  # bytes consumed, including ``pending``
        self.pending = b""

    @property
    def resume_offset(self) -> int:
        """Where a new tail must start so the unfinished line is read again."""
        return self.offset - len(self.pending)

    def read(self, final: bool = False) -> bytes:
        """CRI records for what was appended since the last call (``final``: flush the rest)."""
        try:
            with open(self.path, "rb") as raw:
                raw.seek(self.offset)
                data = raw.read(READ_CHUNK)
        except FileNotFoundError:
            data = b""
        self.offset += len(data)
        data = self.pending + data
        lines = data.split(b"\n")
        self.pending = lines.pop()
        ns = time.time_ns()
        out = [cri_records(self.stream, line, ns) for line in lines]
        if len(self.pending) >= MAX_LINE:
            # A very long line: emit the full chunks now as partial records, like containerd.
            cut = len(self.pending) - len(self.pending) % MAX_LINE
            out.append(cri_records(self.stream, self.pending[:cut], ns, complete=False))
            self.pending = self.pending[cut:]
        if final and self.pending:
            out.append(cri_records(self.stream, self.pending, ns))
            self.pending = b""
        return b"".join(out)


class ContainerLog:
    """The CRI log of one container across its runs, fed from the current run's raw files."""

    def __init__(self, logs_dir: Path, run_dir: Path, container: str) -> None:
        self.path = logs_dir / f"{container}.log"
        self.previous = logs_dir / f"{container}.previous.log"
        self.raw = {s: run_dir / f"{container}.{s}" for s in ("stdout", "stderr")}
        self.state = run_dir / f"{container}.logstate.json"
        self.tails = {s: StreamTail(p, s) for s, p in self.raw.items()}
        private_dir(logs_dir)
        private_dir(run_dir)
        self.path.touch()  # kwok answers `kubectl logs` with an error while it is missing

    def new_run(self) -> dict[str, Path]:
        """Start a run: the last run's log becomes the previous one; fresh raw files."""
        self.finish()
        if any(path.exists() for path in self.raw.values()):  # there was a run before
            os.replace(self.path, self.previous)
            self.path.touch()
        for stream, path in self.raw.items():
            path.write_bytes(b"")
            self.tails[stream] = StreamTail(path, stream)
        self._save()
        return dict(self.raw)

    def resume(self) -> None:
        """Continue tailing a run that an earlier runner started (offsets from its state)."""
        try:
            offsets = json.loads(self.state.read_text())
        except (OSError, ValueError):
            offsets = {}
        for stream, path in self.raw.items():
            self.tails[stream] = StreamTail(path, stream, int(offsets.get(stream, 0)))

    def pump(self, final: bool = False) -> None:
        """Append what the process wrote since the last pump."""
        data = b"".join(tail.read(final) for tail in self.tails.values())
        if data:
            with open(self.path, "ab") as log:
                log.write(data)
            self._save()

    def finish(self) -> None:
        """The process is gone: take its last output, unfinished lines included."""
        self.pump(final=True)

    def _save(self) -> None:
        offsets = {s: t.resume_offset for s, t in self.tails.items()}
        tmp = self.state.with_suffix(".tmp")
        tmp.write_text(json.dumps(offsets))
        tmp.replace(self.state)
