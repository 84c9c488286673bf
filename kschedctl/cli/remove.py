"""`kschedctl remove`: delete exactly what kschedctl deployed for a scheduler.

The workflow is :func:`kschedctl.ops.remove.remove`; this module parses flags and prints.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from kschedctl.cli import options, output, registers
from kschedctl.cli.common import connect, scheduler_argument
from kschedctl.cli.kube import DEFAULT_KUBE, Kube
from kschedctl.cli.kubeflags import kube_flags

if TYPE_CHECKING:
    from kschedctl.ops.remove import RemoveResult


@kube_flags
def remove_command(
    name: Annotated[str, scheduler_argument("The scheduler name kschedctl deployed.")],
    kube: Kube = DEFAULT_KUBE,
    namespace: options.Namespace = None,
    all_namespaces: options.AllNamespaces = False,
    dry_run: options.DryRun = "none",
    force: Annotated[bool, typer.Option("--force", help="Remove even if Pending pods or controllers still need this scheduler.")] = False,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds to wait for its pods to stop.")] = 120.0,
) -> None:  # fmt: skip
    """Remove exactly what kschedctl deployed for a scheduler, its Lease included.

    Namespaced and cluster-scoped objects, and for the service and static-pod forms the host
    files (stopping the unit). Refuses while Pending pods or controllers (Deployments, Jobs, …)
    still need it (--force overrides; bound pods keep running and do not count); exits 5 if
    nothing is there. --dry-run=client lists what would go; --dry-run=server sends every
    DELETE with dryRun=All.
    """
    mode = options.checked_dry_run(dry_run)
    # Imported here, not at the top: the use case pulls in the cluster and host layers, which
    # `kschedctl --help` and the offline commands must not pay for.
    from kschedctl.ops.remove import remove, stranded_summary
    from kschedctl.ops.reporter import Reporter

    report = Reporter(done=output.echo, info=output.info, warn=output.warn)
    with connect(kube) as cluster:
        result = remove(cluster, name, force=force, dry_run=mode == "client",
                        server_dry_run=mode == "server", timeout=timeout, report=report,
                        namespace=options.namespace_scope(namespace, all_namespaces))  # fmt: skip
    if result.server_dry_run:
        output.info(
            f"server dry run: the API server accepts deleting {len(result.deleted)} object(s) "
            f"of {name}; nothing was deleted, host files were left alone"
        )
        return
    if result.dry_run:
        _print_plan(result, force)
        return
    output.info(f"{name} removed")
    left = result.removal.orphans
    if left.stranded:
        output.warn(f"{stranded_summary(left, name)}: they stay Pending with no events")


def _print_plan(result: RemoveResult, force: bool) -> None:
    # on use, as in remove_command: start-up imports no use case
    from kschedctl.observe.orphans import bounded
    from kschedctl.ops.remove import stranded_summary

    removal = result.removal
    left = removal.orphans
    if left.stranded and not force:
        output.warn(
            f"without --force, remove refuses: {stranded_summary(left, removal.name)}: "
            f"{bounded(left.stranded)}"
        )
    for ref in removal.refs:
        output.echo(f"{ref} would be deleted")
    for namespace, lease in removal.leases:
        output.echo(f"lease/{lease} -n {namespace} would be deleted")
    for path in removal.files:
        output.echo(f"file {path} would be removed")


register = registers("remove", remove_command, cls=options.DryRunCommand)
