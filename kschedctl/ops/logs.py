"""A scheduler's output: its pods' logs (every replica, the leader marked), or its host's.

pods/log for the pod, deployment and static-pod forms; for the service form (and plain
processes) the host's journal or log file, through the :class:`~kschedctl.hosts.Host`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from kschedctl.base.errors import KschedError, NotFoundError, UsageError
from kschedctl.hosts import Host
from kschedctl.k8s.inventory import snapshot
from kschedctl.k8s.logs import Follower, Replica, leadership, read_all, replicas, with_container
from kschedctl.kubeclient.client import Cluster
from kschedctl.observe.discovery import discover
from kschedctl.observe.identity import impostor_note, pick
from kschedctl.observe.loglines import Leadership, LogLine
from kschedctl.observe.schedulers import Scheduler


def _quiet(_message: str) -> None:
    return None


@dataclass(frozen=True)
class LogsRequest:
    name: str  # the scheduler name (a profile's schedulerName)
    follow: bool = False  # keep streaming, across replica restarts, until closed
    since_seconds: int | None = None
    tail: int | None = None  # lines per replica
    all_replicas: bool = True  # False: only the replica holding the leader Lease
    previous: bool = False  # the container instance before the current one (kubectl -p)
    namespace: str | None = None  # which of the schedulers claiming the name (a conflict)
    container: str | None = None  # -c: this container of each pod (default: the scheduler's)


@dataclass
class LogStream:
    """Lines to drain, and how many sources they come from; close it (or use ``with``)."""

    lines: Iterator[LogLine]
    sources: int
    close: Callable[[], None] = field(default=lambda: None)

    def __enter__(self) -> LogStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_logs(
    cluster: Cluster, host: Host, request: LogsRequest, warn: Callable[[str], None] = _quiet
) -> LogStream:
    """The output of scheduler ``request.name``; NotFoundError if nothing serves that name.

    Replicas that cannot be read (a container still starting) are reported through ``warn``.
    """
    # Only the scheduler known to be the one of that name: an impostor's output is not its.
    entry = pick(discover(snapshot(cluster)), request.name, request.namespace)
    if entry is None or not entry.served:
        raise NotFoundError(
            f"no scheduler named {request.name!r} is running{impostor_note(entry)}",
            hint="`kschedctl list` shows the schedulers in this cluster",
        )
    if request.previous and request.follow:
        raise UsageError(
            "--previous and --follow cannot be combined: the previous container has ended",
            hint=f"kschedctl logs {request.name} --previous",
        )
    if entry.form in ("service", "process"):
        if request.previous:
            where = (
                f"journalctl -u {entry.name}.service keeps every run of it (--boot, --since)"
                if entry.form == "service"
                else "its earlier output is wherever that process wrote it"
            )
            raise UsageError(
                f"--previous reads a pod's previous container, but {entry.name} runs as a "
                f"{'systemd unit' if entry.form == 'service' else 'process'} on its host",
                hint=f"drop --previous: {where}",
            )
        return _host_logs(host, entry, request)
    return _pod_logs(cluster, entry, request, warn)


def _pod_logs(
    cluster: Cluster, entry: Scheduler, request: LogsRequest, warn: Callable[[str], None]
) -> LogStream:
    found = with_container(replicas(cluster, entry), request.container, entry)
    lease = leadership(cluster, entry)
    leader = lease.holder
    if not request.all_replicas:
        if leader is None:
            raise KschedError(
                f"{entry.name} has no leader now (no Lease holder among its pods)",
                hint=f"drop --leader-only to see every replica; `kschedctl status {entry.name}`",
            )
        found = [r for r in found if r.pod == leader]
    if not found and not request.follow:
        raise NotFoundError(
            f"{entry.name} has no running pod to read logs from",
            hint=f"`kschedctl status {entry.name}` shows its objects and pods",
        )
    sources = len(found) if request.all_replicas else 1
    if request.previous:
        return _previous_logs(cluster, entry, request, found, lease, warn)
    if not request.follow:
        unreadable = _Unreadable(warn)
        read = read_all(
            cluster, found, since_seconds=request.since_seconds, tail=request.tail, warn=unreadable
        )
        if request.container and found and len(unreadable) == len(found):
            raise NotFoundError(
                f"no pod of {entry.name} has a readable container {request.container!r}: "
                f"{unreadable[0]}",
                hint=f"drop -c to read the scheduler's own container; `kschedctl status "
                f"{entry.name}` lists its pods",
            )
        return LogStream((lease.mark(x) for x in lease.witness(read)), sources)
    follower = Follower(
        cluster, entry, since_seconds=request.since_seconds, tail=request.tail,
        container=request.container, warn=warn,
    )  # fmt: skip
    stream: Iterator[LogLine] = follower.lines()
    if not request.all_replicas:
        stream = (line for line in stream if line.source == follower.leader.holder)
    return LogStream(stream, sources, follower.close)


def _previous_logs(
    cluster: Cluster,
    entry: Scheduler,
    request: LogsRequest,
    found: list[Replica],
    lease: Leadership,
    warn: Callable[[str], None],
) -> LogStream:
    """Each replica's previous container (the one that crashed or was restarted); replicas
    that never restarted are named through ``warn``, and none having restarted is an error."""
    unreadable = _Unreadable(warn)
    read = read_all(
        cluster,
        found,
        since_seconds=request.since_seconds,
        tail=request.tail,
        warn=unreadable,
        previous=True,
    )
    if found and len(unreadable) == len(found):
        raise NotFoundError(
            f"no previous container to read: {unreadable[0]}"
            if len(found) == 1
            else f"no previous container to read in any of {entry.name}'s {len(found)} pods",
            hint=f"only a container that restarted has one; `kschedctl logs {entry.name}` "
            "reads the current one",
        )
    return LogStream((lease.mark(x) for x in lease.witness(read)), len(found))


class _Unreadable(list[str]):
    """The messages of the replicas :func:`read_all` could not read, each passed on to
    ``warn`` too: when none could be read, the command fails instead."""

    def __init__(self, warn: Callable[[str], None]) -> None:
        super().__init__()
        self.warn = warn

    def __call__(self, message: str) -> None:
        self.append(message)
        self.warn(message)


def _host_logs(host: Host, entry: Scheduler, request: LogsRequest) -> LogStream:
    lines = host.log_lines(
        entry.name,
        entry.form,
        follow=request.follow,
        since_seconds=request.since_seconds,
        tail=request.tail,
    )
    if lines is not None:
        return LogStream(lines, 1, _closer(lines))
    where = "a systemd unit on its host" if entry.form == "service" else "a process on its host"
    raise KschedError(
        f"{entry.name} runs as {where}; its output is not readable from here",
        hint=f"on that host: journalctl -u {entry.name}.service"
        if entry.form == "service"
        else "read its output on the host where it runs",
    )


def _closer(lines: Iterator[Any]) -> Callable[[], None]:
    """Closing a generator runs its ``finally``: a follow stops, journalctl is terminated."""
    close = getattr(lines, "close", None)
    return close if callable(close) else lambda: None
