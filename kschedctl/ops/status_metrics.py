"""`kschedctl status NAME --metrics`'s Metrics section: each replica's own ``/metrics``, read
through ``pods/portforward`` (:mod:`kschedctl.k8s.scrape` says why not ``pods/proxy``),
summarized by :mod:`kschedctl.observe.metrics`.

What each pod is sent, and never more: the caller's credentials open the port-forward at the
API server and stop there. A kube-scheduler replica is sent a token minted for the purpose
(:mod:`kschedctl.k8s.tokens`): of the scheduler's metrics-reader ServiceAccount (allowed only
``get`` on ``/metrics``; kschedctl deploys ``NAME-metrics-reader`` with the pod and deployment
forms), valid 10 minutes. kschedctl's own scheduler serves ``/metrics`` without
authentication and is sent nothing. A kube-scheduler with no reader (kube-scheduler itself, a
static pod, an older deploy) is sent nothing either: its /healthz, /readyz and /livez are read
anonymously and the section says how to let kschedctl read its metrics.

The reader is always a ServiceAccount of the pod's own namespace: whoever can run pods there
can already use its rights (a pod may name any ServiceAccount of its namespace), so its token
tells the pod's editors nothing they could not have had.

Never fails the status: a replica whose metrics cannot be read carries the reason (forbidden
and the RBAC that would allow it, unreachable, not a scheduler) and every other section is
printed as usual. Replicas are read in parallel, each within :data:`TIMEOUT` seconds.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypedDict

from kschedctl.base.errors import KschedError
from kschedctl.k8s.scrape import Target, get_via_port_forward, probe_via_port_forward
from kschedctl.k8s.tokens import MintedToken, mint_token, service_account_exists
from kschedctl.kubeclient.client import Cluster
from kschedctl.observe.containers import scheduler_container
from kschedctl.observe.metrics import (
    SUMMARY_PREFIXES,
    MetricsFormatError,
    MetricsSummary,
    metrics_endpoint,
    parse_text,
    summarize,
)
from kschedctl.observe.schedulers import Scheduler, owner

TIMEOUT = 5.0  # seconds per replica (they are read in parallel)
MAX_REPLICAS = 10  # a status, not a scraper
HEALTH_PATHS = ["/healthz", "/readyz", "/livez"]  # kube-scheduler serves these to anyone
READER_SUFFIX = "-metrics-reader"  # templates/_metrics.yaml.j2 (the status reader)


class Sent(TypedDict):
    """What a replica's pod was sent besides the request: the caller's credentials, never."""

    token: bool  # a minted token (else no credentials at all)
    serviceAccount: str | None  # namespace/name whose token it was
    lifetimeSeconds: int | None


class ReplicaMetrics(TypedDict):
    pod: str  # namespace/name
    port: int | None
    leader: bool | None  # None: unknown (no leader election, or nothing read)
    summary: MetricsSummary | None  # None: see problem
    problem: str | None
    sent: Sent | None  # None: not contacted
    health: dict[str, str] | None  # path → "200 ok": read without credentials instead


class MetricsReport(TypedDict):
    replicas: list[ReplicaMetrics]
    problem: str | None  # why no replica could be asked at all
    reader: str | None  # namespace/name of the ServiceAccount tokens are minted for
    readerProblem: str | None  # why no token is minted (kube-scheduler replicas)


def reader_name(entry: Scheduler, asked: str | None) -> str | None:
    """The metrics-reader ServiceAccount to mint tokens for, in the scheduler's namespace:
    the one asked for, else the one kschedctl deploys with a managed scheduler."""
    if asked:
        return asked
    name = owner({"metadata": {"labels": entry.labels}}) if entry.managed else None
    return name + READER_SUFFIX if name else None


def no_reader_problem(entry: Scheduler, reader: str | None) -> str:
    """Why a kube-scheduler's /metrics are not read, and how to allow it."""
    namespace = entry.namespace or "default"
    suggested = reader or f"{entry.name}{READER_SUFFIX}"
    if not reader:
        why = "kschedctl did not deploy this scheduler: it has no metrics-reader ServiceAccount"
    elif entry.managed and reader == reader_name(entry, None):
        again = ": deploy it again" if entry.form in ("pod", "deployment") else ""
        why = (
            f"its metrics-reader ServiceAccount {namespace}/{reader} does not exist (kschedctl "
            f"deploys it with a kube-scheduler's pod and deployment forms{again})"
        )
    else:
        why = f"ServiceAccount {namespace}/{reader} does not exist"
    return (
        f"{why}, and kschedctl never sends your own credentials to a pod; to let it mint a "
        f"token to read them, create a ServiceAccount in {namespace} allowed only `get` on "
        f"/metrics (kubectl -n {namespace} create serviceaccount {suggested}; kubectl create "
        f"clusterrole {suggested} --verb=get --non-resource-url=/metrics; kubectl create "
        f"clusterrolebinding {suggested} --clusterrole={suggested} "
        f"--serviceaccount={namespace}:{suggested}) and pass --metrics-reader {suggested}"
    )


def read_metrics(
    cluster: Cluster,
    entry: Scheduler | None,
    pods: list[dict[str, Any]],
    reader: str | None = None,
) -> MetricsReport:
    """The Metrics section for scheduler ``entry`` (``pods``: the cluster's pods);
    ``reader``: the metrics-reader ServiceAccount of its namespace (None: NAME-metrics-reader)."""
    report: MetricsReport = {"replicas": [], "problem": None, "reader": None, "readerProblem": None}
    if entry is None:
        report["problem"] = "nothing serves this name: no scheduler to ask"
        return report
    if not entry.pods:
        where = {
            "service": "a systemd service on a host",
            "process": "a process on a host",
        }.get(entry.form, f"a {entry.form}")
        report["problem"] = (
            f"it runs as {where}, not in a pod: there is no pod to forward a port to; on that "
            "host, GET https://127.0.0.1:<service.securePort>/metrics as a user allowed `get` "
            "on the non-resource URL /metrics"
        )
        return report
    by_name = {(p["metadata"].get("namespace"), p["metadata"].get("name")): p for p in pods}
    prepared = [
        _prepare(entry, name, by_name.get((entry.namespace, name)))
        for name in entry.pods[:MAX_REPLICAS]
    ]
    token = None
    if any(target is not None and target.https for _, target in prepared):
        report["reader"], report["readerProblem"] = _reader(cluster, entry, reader)
    if report["reader"]:
        namespace, account = report["reader"].split("/", 1)
        try:  # one token for every replica: 10 minutes, the API's shortest
            token = mint_token(cluster, namespace, account)
        except KschedError as err:
            report["reader"] = None
            report["readerProblem"] = err.message + (f"; {err.hint}" if err.hint else "")
    with ThreadPoolExecutor(max_workers=len(prepared)) as pool:
        report["replicas"] = list(pool.map(lambda p: _read(cluster, report, token, *p), prepared))
    return report


def _reader(cluster: Cluster, entry: Scheduler, asked: str | None) -> tuple[str | None, str | None]:
    """(namespace/name of the reader ServiceAccount, None) or (None, why there is none)."""
    namespace = entry.namespace or "default"
    account = reader_name(entry, asked)
    if account is None:
        return None, no_reader_problem(entry, None)
    try:
        found = service_account_exists(cluster, namespace, account)
    except KschedError as err:
        return None, f"cannot read ServiceAccount {namespace}/{account}: {err.message}"
    if not found:
        return None, no_reader_problem(entry, account)
    return f"{namespace}/{account}", None


def _prepare(
    entry: Scheduler, name: str, pod: dict[str, Any] | None
) -> tuple[ReplicaMetrics, Target | None]:
    """A replica's reading before anything is sent, and the port to forward (None: nothing
    to read, the reading says why)."""
    reading: ReplicaMetrics = {
        "pod": f"{entry.namespace}/{name}", "port": None,
        "leader": _lease_leader(entry, name, pod), "summary": None, "problem": None,
        "sent": None, "health": None,
    }  # fmt: skip
    container = scheduler_container((pod or {}).get("spec") or {})
    if pod is None or container is None:
        reading["problem"] = "not a kube-scheduler or kschedctl scheduler pod"
        return reading, None
    endpoint = metrics_endpoint(container, entry.namespace or "")
    reading["port"] = endpoint.port
    if endpoint.port is None:
        reading["problem"] = endpoint.problem
        return reading, None
    phase = (pod.get("status") or {}).get("phase")
    if phase != "Running":
        reading["problem"] = f"the pod is {phase or 'not started'}, not Running"
        return reading, None
    target = Target(entry.namespace or "", name, endpoint.port, endpoint.https)
    return reading, target


NOTHING: Sent = {"token": False, "serviceAccount": None, "lifetimeSeconds": None}


def _read(
    cluster: Cluster,
    report: MetricsReport,
    token: MintedToken | None,
    reading: ReplicaMetrics,
    target: Target | None,
) -> ReplicaMetrics:
    """Read one replica: kschedctl's own scheduler with no credentials, a kube-scheduler with
    the minted token, or, without one, its health endpoints anonymously."""
    if target is None:
        return reading
    reading["sent"] = NOTHING
    try:
        if target.https and token is None:
            reading["problem"] = report["readerProblem"]
            answers = probe_via_port_forward(cluster, target, HEALTH_PATHS, TIMEOUT)
            reading["health"] = {
                path: f"{a.status} {a.body.strip()[:60] or a.reason}" for path, a in answers.items()
            }
            return reading
        bearer = None
        if target.https and token is not None:
            bearer = token.token
            reading["sent"] = {
                "token": True, "serviceAccount": token.service_account,
                "lifetimeSeconds": token.seconds,
            }  # fmt: skip
        text = get_via_port_forward(cluster, target, "/metrics", TIMEOUT, bearer=bearer)
    except KschedError as err:
        reading["problem"] = err.message + (f"; {err.hint}" if err.hint else "")
        return reading
    try:
        summary = summarize(parse_text(text, SUMMARY_PREFIXES))
    except MetricsFormatError as err:
        reading["problem"] = f"its /metrics is not Prometheus text: {err}"
        return reading
    if summary is None:
        reading["problem"] = (
            f"port {target.port} serves metrics, but no scheduler's "
            "(no scheduler_schedule_attempts_total): not a kube-scheduler"
        )
        return reading
    reading["summary"] = summary
    if summary["leader"] is not None:
        reading["leader"] = summary["leader"]
    return reading


def _lease_leader(entry: Scheduler, name: str, pod: dict[str, Any] | None) -> bool | None:
    """Does the Lease name this pod as its holder? (kube-scheduler's identity is
    ``<hostname>_<uuid>``: a pod's hostname is its name; a host-network pod, such as a static
    pod, shares its node's UTS namespace: pkg/kubelet/kuberuntime/util/util.go NamespacesForPod.)"""
    holder = entry.lease.holder if entry.lease else None
    if not holder:
        return None
    spec = (pod or {}).get("spec") or {}
    hostname = spec.get("nodeName") if spec.get("hostNetwork") else None
    return holder.split("_", 1)[0] == (hostname or name)
