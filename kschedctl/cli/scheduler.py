"""`kschedctl scheduler run`: kschedctl's own scheduler, as a long-running process."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from kschedctl.cli.options import Context, Kubeconfig
from kschedctl.model.scheduling.strategies import DEFAULT_STRATEGY, STRATEGIES

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
    plugins: Annotated[
        list[str] | None,
        typer.Option(
            "--plugin",
            metavar="PATH.py|package.module",
            help='A Python scheduling plugin (filter and/or score; README "Scheduling '
            'plugins"); repeatable, run in the order given after the built-in filters. '
            "Refused at start if it cannot be loaded.",
            show_default=False,
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
            "--lease-name",
            help="The Lease (default: the scheduler name; kube-scheduler only with "
            "--replaces-default).",
        ),
    ] = None,
    replaces_default: Annotated[
        bool,
        typer.Option(
            "--replaces-default",
            help="Be the cluster's default scheduler: --name default-scheduler, holding "
            "kube-scheduler's Lease kube-system/kube-scheduler (stop kube-scheduler first).",
        ),
    ] = False,
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
    # Imported here: the scheduling package and the client layers cost start-up time that
    # --help and the other commands must not pay.
    from kschedctl.ops.run_scheduler import RunSettings, run_scheduler

    run_scheduler(
        RunSettings(
            name=name,
            strategy=strategy.value,
            policy=policy,
            plugins=tuple(plugins or ()),
            kubeconfig=kubeconfig,
            context=context,
            leader_elect=leader_elect,
            lease_name=lease_name,
            lease_namespace=lease_namespace,
            replaces_default=replaces_default,
            lease_duration=lease_duration,
            renew_deadline=renew_deadline,
            retry_period=retry_period,
            qps=qps,
            burst=burst,
            metrics_port=metrics_port,
            metrics_address=metrics_address,
            percentage_of_nodes_to_score=percentage_of_nodes_to_score,
            pod_initial_backoff=pod_initial_backoff,
            pod_max_backoff=pod_max_backoff,
            verbosity=verbosity,
        )
    )


def register(app: typer.Typer) -> None:
    app.add_typer(scheduler_app, name="scheduler")
