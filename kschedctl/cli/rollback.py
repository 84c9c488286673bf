"""`kschedctl rollback NAME [REVISION]`: deploy a recorded revision again, like `helm rollback`.

The workflow is :func:`kschedctl.ops.rollback.rollback`; this module parses flags and prints.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kschedctl.cli import options, output, registers
from kschedctl.cli.common import SchedulerName, connect
from kschedctl.cli.deploy import print_summary
from kschedctl.cli.deployflags import CanaryNamespace, ManifestsDir, Root, Timeout, Verify, Wait
from kschedctl.cli.kube import DEFAULT_KUBE, Kube
from kschedctl.cli.kubeflags import kube_flags
from kschedctl.cli.paths import guard_paths


@guard_paths
@kube_flags
def rollback_command(
    name: SchedulerName,
    revision: Annotated[
        int | None,
        typer.Argument(
            min=1, show_default=False,
            help="The revision to deploy again (default: the newest that differs from what "
            "runs now; after a failed deploy, the last good one).",
        ),
    ] = None,
    kube: Kube = DEFAULT_KUBE,
    namespace: Annotated[
        str | None,
        typer.Option(
            "-n", "--namespace", show_default=False,
            help="The scheduler's namespace (default: the one holding its revisions).",
        ),
    ] = None,
    dry_run: options.DryRun = "none",
    wait: Wait = True,
    verify: Verify = True,
    timeout: Timeout = 180.0,
    canary_namespace: CanaryNamespace = "default",
    root: Root = Path("/"),
    manifests_dir: ManifestsDir = None,
) -> None:  # fmt: skip
    """Deploy a recorded revision again and wait as deploy does; records a new revision.

    The revision's spec is loaded and checked as a file of yours would be and rendered again
    (never applied as stored); a revision whose recorded hash differs from that rendering is
    refused as tampered or corrupt. Host forms get the revision's files again.
    """
    # the use case loads the cluster, host and render layers: not at start-up
    from kschedctl import hosts
    from kschedctl.ops import deploy as deploy_case
    from kschedctl.ops import rollback as use_case
    from kschedctl.ops.reporter import Reporter

    mode = options.checked_dry_run(dry_run)
    request = use_case.RollbackRequest(
        name, namespace, revision, server_dry_run=mode == "server", wait=wait, verify=verify,
        timeout=timeout, canary_namespace=canary_namespace,
    )  # fmt: skip
    report = Reporter(done=output.echo, info=output.info, warn=output.warn)
    with connect(kube) as cluster:
        if mode == "client":
            plan = use_case.plan(cluster, request, report)
            output.info(f"revision {plan.revision.number} of {name} would be deployed again")
            on_machine = hosts.SystemdHost(root, manifests_dir)
            typer.echo(deploy_case.client_dry_run(plan.request, on_machine), nl=False)
            return
        host = hosts.for_target(kube.kubeconfig, root, manifests_dir)
        chosen, result = use_case.rollback(cluster, host, request, report)
    print_summary(result)
    output.info(f"{name} rolled back to revision {chosen.number}")


register = registers("rollback", rollback_command, cls=options.DryRunCommand)
