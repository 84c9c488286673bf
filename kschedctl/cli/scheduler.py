"""`kschedctl scheduler run`: kschedctl's own scheduler, as a long-running process."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from kschedctl.cli.kubeflags import CONTEXT, KUBECONFIG
from kschedctl.cli.options import flag, flag_group, plugin_option
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

# RunSettings' fields that are plain options, in --help's order (kube-scheduler's defaults for
# the lease timings, the client limits and the secure port).
run_flags = flag_group(
    "settings",
    {
        "kubeconfig": KUBECONFIG,
        "context": CONTEXT,
        "leader_elect": flag(
            bool,
            True,
            "--leader-elect/--no-leader-elect",
            "Hold a Lease so that only one replica schedules.",
        ),
        "lease_name": flag(
            str | None,
            None,
            "--lease-name",
            "The Lease (default: the scheduler name; kube-scheduler only with --replaces-default).",
        ),
        "replaces_default": flag(
            bool,
            False,
            "--replaces-default",
            "Be the cluster's default scheduler: --name default-scheduler, holding "
            "kube-scheduler's Lease kube-system/kube-scheduler (stop kube-scheduler first).",
        ),
        "lease_namespace": flag(str, "kube-system", "--lease-namespace", "Namespace of the Lease."),
        "lease_duration": flag(
            float,
            15.0,
            "--lease-duration",
            "Seconds a standby waits after the last renewal before taking over.",
        ),
        "renew_deadline": flag(
            float,
            10.0,
            "--renew-deadline",
            "Seconds the leader keeps scheduling without a successful renewal.",
        ),
        "retry_period": flag(float, 2.0, "--retry-period", "Seconds between Lease attempts."),
        "qps": flag(
            float,
            50.0,
            "--qps",
            "Client requests per second (kube-scheduler's clientConnection.qps).",
        ),
        "burst": flag(int, 100, "--burst", "Client burst (clientConnection.burst)."),
        "metrics_port": flag(
            int,
            DEFAULT_PORT,
            "--metrics-port",
            "Port of /healthz, /readyz and /metrics (plain HTTP; 0: any free port).",
        ),
        "metrics_address": flag(str, "0.0.0.0", "--metrics-address", "Address to serve them on."),
        "percentage_of_nodes_to_score": flag(
            int,
            0,
            "--percentage-of-nodes-to-score",
            "Stop filtering after this share of nodes fits (0: kube-scheduler's adaptive default).",
            min=0,
            max=100,
        ),
        "pod_initial_backoff": flag(
            float,
            1.0,
            "--pod-initial-backoff",
            "Seconds before the first retry of a pod no node fits.",
        ),
        "pod_max_backoff": flag(
            float, 10.0, "--pod-max-backoff", "Cap of the doubling backoff, seconds."
        ),
        "verbosity": flag(
            int, 1, ("-v", "--v"), "Log verbosity: 0 warnings, 1 decisions, 2 and up everything."
        ),
    },
    dict,
)


@scheduler_app.command("run")
@run_flags
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
        plugin_option(
            'A Python scheduling plugin (filter and/or score; README "Scheduling plugins"); '
            "repeatable, run in the order given after the built-in filters. Refused at start "
            "if it cannot be loaded."
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
    settings: dict[str, Any] | None = None,
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
            **(settings or {}),
        )
    )


def register(app: typer.Typer) -> None:
    app.add_typer(scheduler_app, name="scheduler")
