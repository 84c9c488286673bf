"""`kschedctl scheduler run`: kschedctl's own scheduler, as a long-running process."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from kschedctl.cli.options import Context, Kubeconfig
from kschedctl.errors import KschedError, UsageError
from kschedctl.scheduling.strategies import DEFAULT_STRATEGY, STRATEGIES

scheduler_app = typer.Typer(
    help=f"kschedctl's own scheduler: the filters `why` uses, {' or '.join(STRATEGIES)} "
    "scoring, and fallback steps for pods no node fits.",
    no_args_is_help=True,
)

DEFAULT_PORT = 10259

# The --strategy choices, from the one table of strategies (a cheap import: no filters).
if TYPE_CHECKING:

    class Strategy(str, Enum):
        value: str

else:
    Strategy = Enum("Strategy", {name: name for name in STRATEGIES}, type=str)
DEFAULT_CHOICE = Strategy(DEFAULT_STRATEGY)
STRATEGY_HELP = "; ".join(f"{name}: {s.summary}" for name, s in STRATEGIES.items()) + "."


@scheduler_app.command("run")
def run(
    name: Annotated[
        str,
        typer.Option(
            "--name",
            help="The scheduler name pods ask for (spec.schedulerName).",
            show_default=False,
        ),
    ],
    policy: Annotated[
        Path | None,
        typer.Option(
            "--policy",
            help="Fallback policy file (kind: FallbackPolicy); refused at start if invalid.",
        ),
    ] = None,
    strategy: Annotated[
        Strategy,
        typer.Option(
            "--strategy",
            help=STRATEGY_HELP,
            case_sensitive=False,
        ),
    ] = DEFAULT_CHOICE,
    kubeconfig: Kubeconfig = None,
    context: Context = None,
    leader_elect: Annotated[
        bool,
        typer.Option(
            "--leader-elect/--no-leader-elect",
            help="Hold a Lease so that only one replica schedules.",
        ),
    ] = True,
    lease_name: Annotated[
        str | None,
        typer.Option(
            "--lease-name", help="The Lease (default: the scheduler name; never kube-scheduler)."
        ),
    ] = None,
    lease_namespace: Annotated[
        str, typer.Option("--lease-namespace", help="Namespace of the Lease.")
    ] = "kube-system",
    lease_duration: Annotated[
        float,
        typer.Option(
            "--lease-duration",
            help="Seconds a standby waits after the last renewal before taking over.",
        ),
    ] = 15.0,
    renew_deadline: Annotated[
        float,
        typer.Option(
            "--renew-deadline",
            help="Seconds the leader keeps scheduling without a successful renewal.",
        ),
    ] = 10.0,
    retry_period: Annotated[
        float, typer.Option("--retry-period", help="Seconds between Lease attempts.")
    ] = 2.0,
    qps: Annotated[
        float,
        typer.Option(
            "--qps", help="Client requests per second (kube-scheduler's clientConnection.qps)."
        ),
    ] = 50.0,
    burst: Annotated[
        int, typer.Option("--burst", help="Client burst (clientConnection.burst).")
    ] = 100,
    metrics_port: Annotated[
        int,
        typer.Option(
            "--metrics-port",
            help="Port of /healthz, /readyz and /metrics (plain HTTP; 0: any free port).",
        ),
    ] = DEFAULT_PORT,
    metrics_address: Annotated[
        str, typer.Option("--metrics-address", help="Address to serve them on.")
    ] = "0.0.0.0",
    percentage_of_nodes_to_score: Annotated[
        int,
        typer.Option(
            "--percentage-of-nodes-to-score",
            min=0,
            max=100,
            help="Stop filtering after this share of nodes fits (0: kube-scheduler's adaptive default).",
        ),
    ] = 0,
    pod_initial_backoff: Annotated[
        float,
        typer.Option(
            "--pod-initial-backoff", help="Seconds before the first retry of a pod no node fits."
        ),
    ] = 1.0,
    pod_max_backoff: Annotated[
        float, typer.Option("--pod-max-backoff", help="Cap of the doubling backoff, seconds.")
    ] = 10.0,
    verbosity: Annotated[
        int,
        typer.Option(
            "-v", "--v", help="Log verbosity: 0 warnings, 1 decisions, 2 and up everything."
        ),
    ] = 1,
) -> None:
    """Run kschedctl's scheduler until SIGTERM: it places pods whose spec.schedulerName is
    --name, records the fallback step that placed a pod (event and annotation
    kschedctl.io/fallback-step), and serves /healthz, /readyz and /metrics."""
    import logging
    import signal
    import socket
    import uuid

    from kschedctl.config.validation import dns_label_problem, dns_subdomain_problem
    from kschedctl.observe.schedulers import BUILTIN_LEASE_ANNOTATION
    from kschedctl.scheduling.algorithm import Algorithm
    from kschedctl.scheduling.leader import LeaderElector
    from kschedctl.scheduling.loop import SchedulerLoop, Settings
    from kschedctl.scheduling.policy import EMPTY, POD_POLICY_ANNOTATION, load_policy
    from kschedctl.scheduling.serving import HealthServer

    problem = dns_label_problem(name)
    if problem:
        raise UsageError(f"--name {name!r}: scheduler name {problem}")
    if name == "default-scheduler":
        raise UsageError("--name default-scheduler is the cluster's own scheduler; pick another")
    lease = lease_name or name
    if leader_elect:
        if lease == "kube-scheduler":
            raise UsageError(
                "--lease-name kube-scheduler is the default scheduler's lock: this scheduler "
                "would wait forever as its standby",
                hint="leave --lease-name out (the Lease is then named after --name)",
            )
        problem = dns_subdomain_problem(lease)
        if problem:
            raise UsageError(f"--lease-name {lease!r}: Lease name {problem}")
        try:
            LeaderElector(
                "check", lease_namespace, lease, lease_duration, renew_deadline, retry_period
            )
        except ValueError as err:
            raise UsageError(f"lease timing: {err}") from err
    if qps <= 0 or burst < 1:
        raise UsageError("--qps must be positive and --burst at least 1")
    # A bad policy stops us here, before any connection: it names the file and the field.
    fallback = load_policy(policy) if policy is not None else EMPTY

    logging.basicConfig(
        level=logging.WARNING if verbosity <= 0 else logging.INFO,
        format="%(asctime)s.%(msecs)03d %(levelname).1s %(message)s",
        datefmt="%Y-%m-%dT%H:%M:%S",
    )
    log = logging.getLogger("kschedctl.scheduler")
    if verbosity < 2:
        logging.getLogger("urllib3").setLevel(logging.ERROR)

    from kschedctl.cli.common import connect
    from kschedctl.k8s.scheduler_api import ClusterSchedulerApi

    cluster = connect(kubeconfig, context)
    api = ClusterSchedulerApi(cluster, qps=qps, burst=burst)
    identity = f"{socket.gethostname()}_{uuid.uuid4()}"
    settings = Settings(
        name=name,
        algorithm=Algorithm(
            strategy.value, percentage_of_nodes_to_score, fallback, api.server_version()
        ),
        identity=identity,
        leader_elect=leader_elect,
        lease_namespace=lease_namespace,
        lease_name=lease,
        lease_duration=lease_duration,
        renew_deadline=renew_deadline,
        retry_period=retry_period,
        initial_backoff=pod_initial_backoff,
        max_backoff=max(pod_max_backoff, pod_initial_backoff),
        lease_annotations={
            BUILTIN_LEASE_ANNOTATION: name,
            POD_POLICY_ANNOTATION: fallback.to_json(),
            "kschedctl.io/strategy": strategy.value,
        },
    )
    loop = SchedulerLoop(api, settings)
    try:
        health = HealthServer(
            metrics_address, metrics_port, loop.healthy, loop.ready, loop.metrics.render
        )
    except OSError as err:
        raise KschedError(
            f"cannot serve /healthz and /metrics on {metrics_address}:{metrics_port}: {err.strerror}",
            hint="pick another --metrics-port (0 for any free port)",
        ) from err
    health.start()

    def stop(signum: int, _frame: object) -> None:
        log.info("received %s: shutting down", signal.Signals(signum).name)
        loop.stop.set()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    steps = ", ".join(s.name for s in fallback.steps) or "none"
    log.info(
        "scheduler %s starting (identity %s, strategy %s, fallback steps: %s, %s, serving on %s:%d)",
        name, identity, strategy.value, steps,
        f"Lease {lease_namespace}/{lease}" if leader_elect else "no leader election",
        metrics_address, health.port,
    )  # fmt: skip
    try:
        loop.run()
    finally:
        health.stop()
        cluster.close()
    log.info("scheduler %s stopped", name)


def register(app: typer.Typer) -> None:
    app.add_typer(scheduler_app, name="scheduler")
