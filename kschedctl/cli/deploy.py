"""`kschedctl deploy`: put a scheduler on the cluster (or on this host) and prove it serves.

The workflow is :func:`kschedctl.ops.deploy.deploy`; this module parses flags and prints.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from kschedctl.base.errors import UsageError
from kschedctl.cli import options, output, registers
from kschedctl.cli.common import connect
from kschedctl.cli.deployflags import (
    DEFAULT_TARGET,
    CanaryNamespace,
    Source,
    Target,
    Timeout,
    Verify,
    Wait,
    target_flags,
)
from kschedctl.cli.kube import DEFAULT_KUBE, Kube
from kschedctl.cli.kubeflags import kube_flags_without_as
from kschedctl.cli.paths import guard_paths

if TYPE_CHECKING:
    from kschedctl.ops.deploy import DeployResult


@guard_paths
@target_flags
@kube_flags_without_as
def deploy_command(
    src: Source,
    target: Target = DEFAULT_TARGET,
    kube: Kube = DEFAULT_KUBE,
    dry_run: options.DryRun = "none",
    diff: Annotated[
        bool,
        typer.Option(
            "--diff", help="Print what the deploy changes (as `kschedctl diff`) before applying."
        ),
    ] = False,
    wait: Wait = True,
    verify: Verify = True,
    timeout: Timeout = 180.0,
    canary_namespace: CanaryNamespace = "default",
    save: Annotated[
        bool,
        typer.Option(
            "--save/--no-save",
            help="Write --replicas, --image, --program, --namespace and --kubernetes-version "
            "back to SRC's scheduler.yaml after a successful deploy (--no-save: record them in "
            "the revision only).",
        ),
    ] = True,
    history_max: Annotated[
        int,
        typer.Option("--history-max", min=1, help="Revisions kept in the cluster (helm's)."),
    ] = 10,
) -> None:
    """Deploy a scheduler and wait until it serves (Ready pods, its Lease held, a canary bound).

    Objects are applied with server-side apply (field manager kschedctl); host forms write the
    unit or manifest under --root. --diff prints the changes first, as `kschedctl diff` does.
    """
    # Imported here, not at the top: the use case pulls in the cluster, host and render layers,
    # which `kschedctl --help` and the offline commands must not pay for.
    from kschedctl import hosts
    from kschedctl.cli.progress import StderrWaitProgress
    from kschedctl.ops import deploy as use_case
    from kschedctl.ops.overrides import deploy_source
    from kschedctl.ops.reporter import Reporter

    mode = options.checked_dry_run(dry_run)
    request = target.request(
        src, server_dry_run=mode == "server", wait=wait, verify=verify, timeout=timeout,
        canary_namespace=canary_namespace,
        history_max=history_max,
    )  # fmt: skip
    if mode == "client":
        if diff:
            raise UsageError(
                "--diff compares with the cluster, which --dry-run=client never reads",
                hint="use --dry-run=server with --diff, or `kschedctl diff` alone",
            )
        # The files as they would be on a real host under --root: a client dry run looks
        # nothing up, not even whether the kubeconfig is a lab's.
        on_machine = hosts.SystemdHost(target.root, target.manifests_dir)
        typer.echo(use_case.client_dry_run(request, on_machine), nl=False)
        return
    host = hosts.for_target(kube.kubeconfig, target.root, target.manifests_dir)
    with StderrWaitProgress() as progress, connect(kube) as cluster:
        report = Reporter(
            done=progress.before(output.echo), info=progress.before(output.info),
            warn=progress.before(output.warn), progress=progress,
        )  # fmt: skip
        planned = None
        if diff:
            # on use, as above: only --diff needs them
            from kschedctl.cli.diff_view import print_diff
            from kschedctl.ops.diff import diff as preview

            # one plan for both: what is shown is what is applied (a new lab port included)
            planned = use_case.plan(cluster, host, request, report)
            print_diff(preview(cluster, host, request, report, planned))
        result, _written = deploy_source(
            cluster, host, request, src, save=save, report=report, planned=planned
        )
    print_summary(result)


def print_summary(result: DeployResult) -> None:
    """The last lines (stderr): what the dry run or the wait proved."""
    name = result.spec.name
    if result.server_dry_run:
        output.info(f"server dry run: the API server accepts all {len(result.applied)} object(s)")
    if result.canary_node is not None:
        output.info(f"canary pod was scheduled by {name} onto {result.canary_node} and removed")
    if result.waited:
        leader = f", leader {result.leader}" if result.leader else ""
        output.info(f"{name} is serving ({result.form}{leader}) after {result.seconds:.1f}s")


register = registers("deploy", deploy_command, cls=options.DryRunCommand)
