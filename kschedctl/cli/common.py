"""Helpers shared by the cluster-facing commands."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from kschedctl.cli import cluster_completers

if TYPE_CHECKING:
    from kschedctl.kubeclient.client import Cluster


def scheduler_argument(help: str, **extra: Any) -> Any:
    """The NAME argument of the commands about one scheduler, completed from the cluster."""
    return typer.Argument(help=help, autocompletion=cluster_completers.schedulers, **extra)


SchedulerName = Annotated[str, scheduler_argument("Scheduler name (a profile's schedulerName).")]


def connect(
    kubeconfig: str | None,
    context: str | None,
    cluster: str | None = None,
    user: str | None = None,
) -> Cluster:
    """A Cluster, to use as ``with connect(kubeconfig, context, cluster, user) as cluster:``
    (kubectl's --kubeconfig, --context, --cluster and --user).

    Imported on use: offline commands never load the client layer (the kubernetes client
    alone costs ~0.25–0.45 s of start-up).
    """
    from kschedctl.kubeclient.client import Cluster

    connected = Cluster.connect(kubeconfig, context, cluster=cluster, user=user)
    if not connected.verifies_tls and connected.server not in _WARNED_INSECURE:
        from kschedctl.cli import output

        _WARNED_INSECURE.add(connected.server)
        output.warn(
            f"the certificate of {connected.server} is not verified (insecure-skip-tls-verify "
            "in the kubeconfig); set the cluster's certificate-authority instead to know it "
            "is your API server"
        )
    return connected


# The servers warned about in this process: one line per command, not one per request.
_WARNED_INSECURE: set[str] = set()


def age(seconds: float | None) -> str:
    """kubectl-style short age: 5s, 3m, 2h, 4d."""
    if seconds is None:
        return "-"
    seconds = max(0, int(seconds))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size * 2 or (unit == "m" and seconds >= 120):
            return f"{seconds // size}{unit}"
    return f"{seconds}s"
