"""A scheduler's replicas and their ``pods/log``: read once, or followed across restarts.

Every request asks for ``timestamps=true``: replicas are merged in time order, and a follow
that the server ended (the container restarted, the API server went away) resumes with
``sinceTime`` from the last line seen, dropping what it already printed.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import KW_ONLY, dataclass, field, replace
from typing import Any

from kschedctl.base.errors import KschedError, NotFoundError, printable, quote
from kschedctl.kubeclient.client import Cluster
from kschedctl.observe.containers import scheduler_container
from kschedctl.observe.identity import deployment_uids, owning_deployment
from kschedctl.observe.loglines import Leadership, LogLine, merge, split_timestamp, time_key
from kschedctl.observe.schedulers import Scheduler


@dataclass(frozen=True)
class Replica:
    namespace: str
    pod: str
    container: str | None  # None: the pod's only container
    containers: tuple[str, ...] = ()  # every container the pod has (what -c may name)


def _container(pod: dict[str, Any]) -> str | None:
    container = scheduler_container(pod.get("spec") or {})
    return container.get("name") if container else None


def _live(pod: dict[str, Any]) -> bool:
    meta, status = pod.get("metadata") or {}, pod.get("status") or {}
    return status.get("phase") not in ("Succeeded", "Failed") and not meta.get("deletionTimestamp")


def replicas(cluster: Cluster, entry: Scheduler) -> list[Replica]:
    """The pods serving ``entry`` now: a Deployment's through its selector, else by name."""
    ns = entry.namespace or "default"
    kind, _, name = (entry.instance or "").partition("/")
    if entry.form == "deployment" and kind == "deployment":
        dep = cluster.get(f"/apis/apps/v1/namespaces/{ns}/deployments/{name}")
        labels = ((dep.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
        selector = ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
        pods = cluster.list(f"/api/v1/namespaces/{ns}/pods", labelSelector=selector)
        # Its pods are those its ReplicaSets own (uids), not any pod carrying its labels.
        owners = deployment_uids(
            cluster.list(f"/apis/apps/v1/namespaces/{ns}/replicasets", labelSelector=selector)
        )
        uid = (dep.get("metadata") or {}).get("uid")
        pods = [p for p in pods if uid and owning_deployment(p, owners) == uid]
    else:
        pods = []
        for pod_name in dict.fromkeys(entry.pods):
            try:
                pods.append(cluster.get(f"/api/v1/namespaces/{ns}/pods/{pod_name}"))
            except NotFoundError:
                continue
    pods = [p for p in pods if _live(p) and scheduler_container(p.get("spec") or {})]
    pods.sort(key=lambda p: p["metadata"]["name"])
    return [Replica(ns, p["metadata"]["name"], _container(p), _names(p)) for p in pods]


def _names(pod: dict[str, Any]) -> tuple[str, ...]:
    spec = pod.get("spec") or {}
    kinds = ("initContainers", "containers", "ephemeralContainers")
    return tuple(c.get("name", "") for kind in kinds for c in spec.get(kind) or ())


def with_container(found: list[Replica], container: str | None, entry: Scheduler) -> list[Replica]:
    """The replicas reading ``container`` (-c): those that have it. None of them has it:
    NotFoundError naming what they run (kubectl: "container X is not valid for pod Y")."""
    if not container:
        return found
    chosen = [replace(r, container=container) for r in found if container in r.containers]
    if found and not chosen:
        names = sorted({n for r in found for n in r.containers})
        raise NotFoundError(
            f"container {quote(container)} is not valid for the pods of {entry.name}: they run "
            + ", ".join(quote(n) for n in names),
            hint=f"drop -c to read the scheduler's own container, or -c {printable(names[0])}",
        )
    return chosen


def leadership(cluster: Cluster, entry: Scheduler) -> Leadership:
    """What ``entry``'s Lease says now: the pod holding it (holder identities start with the
    pod name) and since when (``acquireTime``)."""
    if entry.lease is None:
        return Leadership()
    try:
        lease = cluster.get(
            f"/apis/coordination.k8s.io/v1/namespaces/{entry.lease.namespace}/leases/"
            f"{entry.lease.name}"
        )
    except NotFoundError:
        return Leadership()
    spec = lease.get("spec") or {}
    holder = str(spec.get("holderIdentity") or "").split("_", 1)[0] or None
    return Leadership(holder, spec.get("acquireTime") if holder else None)


def _log_path(replica: Replica) -> str:
    return f"/api/v1/namespaces/{replica.namespace}/pods/{replica.pod}/log"


def read(
    cluster: Cluster,
    replica: Replica,
    *,
    since_seconds: int | None = None,
    tail: int | None = None,
    since_time: str | None = None,
    follow: bool = False,
    previous: bool = False,
) -> Iterator[LogLine]:
    """Lines of one replica's scheduler container: the current instance of it, or with
    ``previous`` the one that ended before it (kubectl logs --previous)."""
    lines = cluster.stream_lines(
        _log_path(replica),
        read_timeout=None if follow else 60,
        partial=not follow,
        container=replica.container,
        follow=follow or None,
        previous=previous or None,
        timestamps=True,
        sinceSeconds=since_seconds if since_time is None else None,
        sinceTime=since_time,
        tailLines=tail if since_time is None else None,
    )
    for raw in lines:
        stamp, text = split_timestamp(raw.decode(errors="replace").rstrip("\r"))
        yield LogLine(replica.pod, text, stamp, container=replica.container)


def recent_lines(
    cluster: Cluster, entry: Scheduler, *, since_seconds: int = 600, tail: int = 300
) -> list[str]:
    """The last lines of every replica (for `why`); unreadable replicas are skipped."""
    out: list[str] = []
    for replica in replicas(cluster, entry):
        try:
            lines = read(cluster, replica, since_seconds=since_seconds, tail=tail)
            out += [line.text for line in lines]
        except KschedError:
            continue
    return out


def previous_lines(
    cluster: Cluster,
    namespace: str,
    pod: str,
    container: str | None,
    tail: int,
    *,
    previous: bool = True,
) -> tuple[list[str], str | None]:
    """The last ``tail`` lines of the container that ran before the current one (``previous``;
    else of the current one), and None; or no lines and why they cannot be read (the API
    server answers 400 "previous terminated container … not found" for a container that
    never restarted)."""
    try:
        lines = read(cluster, Replica(namespace, pod, container), tail=tail, previous=previous)
        return [line.text for line in lines], None
    except KschedError as err:
        return [], err.message


def read_all(
    cluster: Cluster,
    chosen: list[Replica],
    *,
    since_seconds: int | None,
    tail: int | None,
    warn: Callable[[str], None] = lambda _m: None,
    previous: bool = False,
) -> list[LogLine]:
    """Every chosen replica's lines, merged in time order; a replica that cannot be read
    (its container is waiting to start; with ``previous``, it never restarted) is reported
    through ``warn`` and skipped."""

    def one(replica: Replica) -> list[LogLine]:
        try:
            return list(
                read(cluster, replica, since_seconds=since_seconds, tail=tail, previous=previous)
            )
        except KschedError as err:
            warn(f"{replica.pod}: {err.message}")
            return []

    with ThreadPoolExecutor(max_workers=min(8, max(1, len(chosen)))) as pool:
        return merge(pool.map(one, chosen))


@dataclass(eq=False)
class Follower:
    """Follows every replica of a scheduler until ``stop`` is set.

    The caller drains :meth:`lines`. Replicas are looked up again every ``poll`` seconds, so
    pods that replace crashed or rolled ones are picked up; a replica's stream that ends is
    reopened from its last timestamp while the pod lives.
    """

    cluster: Cluster
    entry: Scheduler
    _: KW_ONLY
    since_seconds: int | None
    tail: int | None
    container: str | None = None  # -c: this container of each replica that has it
    poll: float = 2.0
    warn: Callable[[str], None] = lambda _m: None
    stop: threading.Event = field(default_factory=threading.Event, init=False)
    queue: queue.Queue[LogLine] = field(default_factory=queue.Queue, init=False)
    threads: dict[str, threading.Thread] = field(default_factory=dict, init=False)
    current: set[str] = field(default_factory=set, init=False)
    # Per pod: the newest timestamp shown and how many lines carried it.
    last: dict[str, tuple[str, int]] = field(default_factory=dict, init=False)
    leader: Leadership = field(default_factory=Leadership, init=False)

    def _follow(self, replica: Replica, first: bool) -> None:
        warned = False
        while not self.stop.is_set() and replica.pod in self.current:
            # Reopened streams start at the last timestamp shown (sinceTime includes it):
            # skip what is older, and as many lines of that very timestamp as were shown.
            # Within one stream nothing is skipped: lines often share a timestamp.
            mark = self.last.get(replica.pod)
            skip = mark[1] if mark else 0
            try:
                for line in read(
                    self.cluster,
                    replica,
                    # The first replicas start from --since/--tail; later ones from their start.
                    since_seconds=self.since_seconds if first else None,
                    tail=self.tail if first else None,
                    since_time=mark[0] if mark else None,
                    follow=True,
                ):
                    key = time_key(line.time)
                    if mark is not None and line.time:
                        if key < time_key(mark[0]):
                            continue
                        if key == time_key(mark[0]) and skip > 0:
                            skip -= 1
                            continue
                    self._shown(replica.pod, line, key)
                    self.queue.put(line)
                    if self.stop.is_set():
                        return
            except KschedError as err:
                if not warned:  # a container still starting answers 400 until it runs
                    self.warn(f"{replica.pod}: {err.message} (retrying)")
                    warned = True
            self.stop.wait(1.0)

    def _shown(self, pod: str, line: LogLine, key: str) -> None:
        if not line.time:
            return
        previous = self.last.get(pod)
        if previous is not None and time_key(previous[0]) == key:
            self.last[pod] = (previous[0], previous[1] + 1)
        else:
            self.last[pod] = (line.time, 1)

    def _refresh(self, first: bool) -> None:
        try:
            found = with_container(replicas(self.cluster, self.entry), self.container, self.entry)
            lease = leadership(self.cluster, self.entry)
            self.leader.holder, self.leader.since = lease.holder, lease.since
        except KschedError as err:
            self.warn(f"cannot list the replicas of {self.entry.name}: {err.message}")
            return
        self.current = {r.pod for r in found}
        for replica in found:
            thread = self.threads.get(replica.pod)
            if thread is None or not thread.is_alive():
                thread = threading.Thread(
                    target=self._follow, args=(replica, first), daemon=True,
                    name=f"logs-{replica.pod}",
                )  # fmt: skip
                self.threads[replica.pod] = thread
                thread.start()

    def lines(self) -> Iterator[LogLine]:
        """Lines as they arrive, marked "leader" from when their pod led (:class:`Leadership`,
        the Lease as last read)."""
        self._refresh(first=True)
        next_poll = time.monotonic() + self.poll
        while not self.stop.is_set():
            timeout = max(0.0, next_poll - time.monotonic())
            try:
                line = self.queue.get(timeout=min(timeout, 0.5))
            except queue.Empty:
                if time.monotonic() >= next_poll:
                    self._refresh(first=False)
                    next_poll = time.monotonic() + self.poll
                continue
            yield self.leader.mark(line)

    def close(self) -> None:
        self.stop.set()
