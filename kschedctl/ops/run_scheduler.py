"""`kschedctl scheduler run`: assemble kschedctl's own scheduler and run it until a signal.

The pieces live in :mod:`kschedctl.model.scheduling` (algorithm, loop, leader election, health
server); this module checks the settings, loads the fallback policy, connects, wires them
together and handles SIGTERM/SIGINT.
"""

from __future__ import annotations

import gc
import logging
import signal
import socket
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path

from kschedctl.base.errors import KschedError, UsageError
from kschedctl.k8s.scheduler_api import ClusterSchedulerApi
from kschedctl.kubeclient.client import Cluster
from kschedctl.model.config.defaults import LEASE_NAMESPACE as DEFAULT_LEASE_NAMESPACE
from kschedctl.model.config.shapes import dns_label_problem, dns_subdomain_problem
from kschedctl.model.config.versions import DEFAULT_LEASE_NAME, DEFAULT_SCHEDULER_NAME
from kschedctl.model.scheduling.algorithm import Algorithm
from kschedctl.model.scheduling.leader import LeaderElector
from kschedctl.model.scheduling.loop import CONNECTIONS, SchedulerLoop, Settings
from kschedctl.model.scheduling.pluginload import load_plugins
from kschedctl.model.scheduling.plugins import (
    PLUGIN_FILES_LEASE_ANNOTATION,
    PLUGINS_HASH_LEASE_ANNOTATION,
    PLUGINS_LEASE_ANNOTATION,
    PluginSet,
)
from kschedctl.model.scheduling.policy import EMPTY, POD_POLICY_ANNOTATION, FallbackPolicy
from kschedctl.model.scheduling.policyload import load_policy
from kschedctl.model.scheduling.strategies import DEFAULT_STRATEGY
from kschedctl.observe.schedulers import BUILTIN_LEASE_ANNOTATION
from kschedctl.ops.serving import HealthServer
from kschedctl.render.builtin import bundle_hash

log = logging.getLogger("kschedctl.scheduler")


@dataclass(frozen=True)
class RunSettings:
    """What `scheduler run` takes; the defaults are the command's (and kube-scheduler's for
    the lease timings, client limits and the secure port number)."""

    name: str  # the spec.schedulerName it serves
    strategy: str = DEFAULT_STRATEGY  # a name of scheduling.strategies.STRATEGIES
    policy: Path | None = None  # a FallbackPolicy file
    plugins: tuple[str, ...] = ()  # PATH.py, package.module or package.module:object, in order
    kubeconfig: str | None = None
    context: str | None = None
    leader_elect: bool = True
    lease_name: str | None = None  # None: the scheduler name (kube-scheduler's, replacing it)
    lease_namespace: str = "kube-system"
    # The cluster's default scheduler: default-scheduler on kube-scheduler's own Lease.
    replaces_default: bool = False
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    qps: float = 50.0
    burst: int = 100
    metrics_port: int = 10259
    metrics_address: str = "0.0.0.0"
    percentage_of_nodes_to_score: int = 0  # 0: kube-scheduler's adaptive default
    pod_initial_backoff: float = 1.0
    pod_max_backoff: float = 10.0
    verbosity: int = 1  # 0 warnings, 1 decisions, 2 and up everything

    @property
    def lease(self) -> str:
        return self.lease_name or (DEFAULT_LEASE_NAME if self.replaces_default else self.name)


def check_settings(settings: RunSettings) -> None:
    """Refuse what cannot work (a UsageError, exit 2), before any connection."""
    name, lease = settings.name, settings.lease
    problem = dns_label_problem(name)
    if problem:
        raise UsageError(f"--name {name!r}: scheduler name {problem}")
    if settings.replaces_default:
        # What replacing kube-scheduler means (kschedctl.spec checks the same of a spec).
        if name != DEFAULT_SCHEDULER_NAME:
            raise UsageError(
                f"--replaces-default serves {DEFAULT_SCHEDULER_NAME}, not {name!r}",
                hint=f"--name {DEFAULT_SCHEDULER_NAME}",
            )
        le = (settings.lease_namespace, lease)
        if settings.leader_elect and le != (DEFAULT_LEASE_NAMESPACE, DEFAULT_LEASE_NAME):
            raise UsageError(
                f"--replaces-default holds kube-scheduler's Lease {DEFAULT_LEASE_NAMESPACE}/"
                f"{DEFAULT_LEASE_NAME}, not {'/'.join(le)}: with another one it would bind "
                "alongside kube-scheduler",
                hint="leave --lease-name and --lease-namespace out",
            )
    elif name == DEFAULT_SCHEDULER_NAME:
        raise UsageError(
            "--name default-scheduler is the cluster's own scheduler; pick another",
            hint="or add --replaces-default to replace it (stop kube-scheduler first)",
        )
    if settings.leader_elect:
        if lease == DEFAULT_LEASE_NAME and not settings.replaces_default:
            raise UsageError(
                "--lease-name kube-scheduler is the default scheduler's lock: this scheduler "
                "would wait forever as its standby",
                hint="leave --lease-name out (the Lease is then named after --name)",
            )
        problem = dns_subdomain_problem(lease)
        if problem:
            raise UsageError(f"--lease-name {lease!r}: Lease name {problem}")
        try:
            LeaderElector("check", settings.lease_namespace, lease, settings.lease_duration,
                          settings.renew_deadline, settings.retry_period)  # fmt: skip
        except ValueError as err:
            raise UsageError(f"lease timing: {err}") from err
    if settings.qps <= 0 or settings.burst < 1:
        raise UsageError("--qps must be positive and --burst at least 1")


def _configure_logging(verbosity: int) -> None:
    logging.basicConfig(
        level=logging.WARNING if verbosity <= 0 else logging.INFO,
        format="%(asctime)s.%(msecs)03d %(levelname).1s %(message)s",
        datefmt="%Y-%m-%dT%H:%M:%S",
    )
    if verbosity < 2:
        logging.getLogger("urllib3").setLevel(logging.ERROR)


def run_scheduler(settings: RunSettings) -> None:
    """Schedule until SIGTERM, SIGINT or SIGHUP (from the main thread: it installs signal handlers).

    Bad settings, a bad policy and a plugin that cannot be loaded stop it before any
    connection (exit 2 and 3); a port that cannot be served is an error (exit 1).
    """
    check_settings(settings)
    # A bad policy stops us here, before any connection: it names the file and the field.
    fallback = load_policy(settings.policy) if settings.policy is not None else EMPTY
    # So does a plugin that cannot be imported or defines neither filter nor score.
    plugins = PluginSet(load_plugins(settings.plugins))
    _configure_logging(settings.verbosity)
    with Cluster.connect(settings.kubeconfig, settings.context, connections=CONNECTIONS) as cluster:
        _serve(cluster, settings, fallback, plugins)
    log.info("scheduler %s stopped", settings.name)


def plugin_files_annotations(plugins: PluginSet) -> dict[str, str]:
    """The plugin files' names and the hash of their text as loaded, for the Lease: with
    them `why` uses an installed copy (the host forms') only if it is what runs here. None
    when there is no plugin or one was imported as a module."""
    files = plugins.files()
    if not files:
        return {}
    return {
        PLUGIN_FILES_LEASE_ANNOTATION: ",".join(name for name, _ in files),
        # The ConfigMap forms' config hash, without the config: the same function over the
        # same (file, text) pairs.
        PLUGINS_HASH_LEASE_ANNOTATION: bundle_hash("", files),
    }


def _serve(
    cluster: Cluster, settings: RunSettings, fallback: FallbackPolicy, plugins: PluginSet
) -> None:
    s = settings
    # Plugins may read any annotation: the watches keep them all then.
    api = ClusterSchedulerApi(cluster, qps=s.qps, burst=s.burst, annotations=bool(plugins))
    identity = f"{socket.gethostname()}_{uuid.uuid4()}"
    loop = SchedulerLoop(
        api,
        Settings(
            name=s.name,
            algorithm=Algorithm(
                s.strategy,
                s.percentage_of_nodes_to_score,
                fallback,
                api.server_version(),
                plugins,
            ),
            identity=identity,
            leader_elect=s.leader_elect,
            lease_namespace=s.lease_namespace,
            lease_name=s.lease,
            lease_duration=s.lease_duration,
            renew_deadline=s.renew_deadline,
            retry_period=s.retry_period,
            initial_backoff=s.pod_initial_backoff,
            max_backoff=max(s.pod_max_backoff, s.pod_initial_backoff),
            lease_annotations={
                BUILTIN_LEASE_ANNOTATION: s.name,
                POD_POLICY_ANNOTATION: fallback.to_json(),
                "kschedctl.io/strategy": s.strategy,
                # Which plugins run (names, in order): `why` says when it lacks them.
                PLUGINS_LEASE_ANNOTATION: ",".join(plugins.names()),
                **plugin_files_annotations(plugins),
            },
        ),
    )
    try:
        health = HealthServer(
            s.metrics_address, s.metrics_port, loop.healthy, loop.ready, loop.metrics.render
        )
    except OSError as err:
        raise KschedError(
            f"cannot serve /healthz and /metrics on {s.metrics_address}:{s.metrics_port}: "
            f"{err.strerror}",
            hint="pick another --metrics-port (0 for any free port)",
        ) from err
    health.start()

    def stop(signum: int, _frame: object) -> None:
        log.info("received %s: shutting down", signal.Signals(signum).name)
        loop.stop.set()

    # SIGHUP too (a closed terminal): every way of being told to stop releases the Lease.
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, stop)
    steps = ", ".join(step.name for step in fallback.steps) or "none"
    for plugin in plugins.plugins:
        log.info("plugin %s", plugin.describe())
    log.info(
        "scheduler %s starting (identity %s, strategy %s, fallback steps: %s, plugins: %s, "
        "%s, serving on %s:%d)",
        s.name, identity, s.strategy, steps, ", ".join(plugins.names()) or "none",
        f"Lease {s.lease_namespace}/{s.lease}" if s.leader_elect else "no leader election",
        s.metrics_address, health.port,
    )  # fmt: skip
    _tune_gc(loop)
    try:
        loop.run()
    finally:
        health.stop()


# Allocations between two collections of the youngest generation (CPython's default: 700).
GC_YOUNG_THRESHOLD = 20_000


def _tune_gc(loop: SchedulerLoop) -> None:
    """Keep CPython's cycle collector off the hot path. The caches hold every node and pod
    as plain dicts (freed by reference counting; no cycles), yet a full collection walks
    them all, holding the GIL: at 2,000 nodes and 1,000 pods, 11 of them took 45-65 ms each
    and collections about 1 s of the run. So the young generation is collected
    less often (a decision alone allocates a few thousand tuples), and what the first lists
    loaded is frozen once the caches are synced: collections skip it from then on."""
    gc.set_threshold(GC_YOUNG_THRESHOLD, *gc.get_threshold()[1:])

    def freeze_when_synced() -> None:
        while not loop.ready():
            if loop.stop.wait(0.1):
                return
        gc.collect()  # what start-up left as garbage goes first; the rest stays
        gc.freeze()

    threading.Thread(target=freeze_when_synced, name="gc", daemon=True).start()
