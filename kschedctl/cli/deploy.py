"""`kschedctl deploy`: put a scheduler on the cluster (or on this host) and prove it serves.

The workflow is :func:`kschedctl.ops.deploy.deploy`; this module parses flags and prints.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from kschedctl.base.errors import UsageError
from kschedctl.cli import cluster_completers, options, output, registers
from kschedctl.cli.common import connect
from kschedctl.cli.kubeflags import DEFAULT_KUBE, Kube, kube_flags_without_as
from kschedctl.cli.paths import guard_paths
from kschedctl.render import forms

if TYPE_CHECKING:
    from kschedctl.ops.deploy import DeployResult


class Program(str, Enum):
    kube_scheduler = "kube-scheduler"
    builtin = "builtin"


# --as choices: the deployable forms of the one forms table (new forms appear by themselves).
DeployForm = Enum("DeployForm", {name: name for name in forms.DEPLOY_FORMS}, type=str)  # type: ignore[misc]


def _form(as_form: str | None, aliases: dict[str, bool]) -> str:
    """The form from ``--as FORM`` or its documented aliases ``--as-FORM``: one form, named
    once or consistently; two different ones are a usage error (exit 2)."""
    named = {f"--as-{form}": form for form, on in aliases.items() if on}
    if as_form is not None:
        named[f"--as {as_form}"] = as_form
    chosen = set(named.values())
    if len(chosen) > 1:
        raise UsageError(
            f"{' and '.join(sorted(named))} name different forms: choose one",
            hint=f"kschedctl deploy SRC --as {'|'.join(forms.DEPLOY_FORMS)}",
        )
    if not chosen:
        raise UsageError(
            "choose a form: --as " + "|".join(forms.DEPLOY_FORMS),
            hint="--as-pod, --as-deployment, --as-service and --as-static-pod are aliases",
        )
    return chosen.pop()


@guard_paths
@kube_flags_without_as
def deploy_command(
    src: Annotated[
        str,
        typer.Argument(
            help="Workspace directory, spec file, or a scheduler name (all defaults).",
            autocompletion=cluster_completers.deploy_sources,
        ),
    ],
    as_form: Annotated[
        DeployForm | None,
        typer.Option(
            "--as",
            help="The form: "
            + "; ".join(f"{f.name}: {f.holds}" for f in forms.FORMS if f.deploy)
            + ".",
            case_sensitive=False,
            show_default=False,
        ),
    ] = None,
    as_pod: Annotated[
        bool,
        typer.Option("--as-pod", help="Same as --as pod (a bare Pod, its ConfigMap and RBAC)."),
    ] = False,
    as_deployment: Annotated[
        bool,
        typer.Option(
            "--as-deployment",
            help="Same as --as deployment (ServiceAccount, RBAC, ConfigMap, Deployment).",
        ),
    ] = False,
    as_service: Annotated[
        bool,
        typer.Option(
            "--as-service", help="Same as --as service (a systemd unit on this host, Lease RBAC)."
        ),
    ] = False,
    as_static_pod: Annotated[
        bool,
        typer.Option(
            "--as-static-pod",
            help="Same as --as static-pod (a kubeadm static pod manifest on this host).",
        ),
    ] = False,
    kube: Kube = DEFAULT_KUBE,
    namespace: Annotated[
        str | None,
        typer.Option(
            "-n",
            "--namespace",
            help="Namespace of the scheduler (default: the spec's, kube-system).",
        ),
    ] = None,
    kubernetes_version: Annotated[
        str | None,
        typer.Option(
            "--kubernetes-version",
            help="Target version (default: the spec's; for a bare name the server's).",
        ),
    ] = None,
    image: Annotated[
        str | None,
        typer.Option(
            "--image",
            help="Scheduler image (default: registry.k8s.io/kube-scheduler:<version>; for "
            "--program builtin the repository's Dockerfile image, kschedctl:<version>).",
        ),
    ] = None,
    program: Annotated[
        Program | None,
        typer.Option(
            "--program",
            help="kube-scheduler, or builtin: kschedctl's own scheduler (default: the spec's).",
        ),
    ] = None,
    replicas: Annotated[
        int | None, typer.Option("--replicas", min=1, help="Replicas of the deployment form.")
    ] = None,
    dry_run: options.DryRun = "none",
    wait: Annotated[
        bool, typer.Option("--wait/--no-wait", help="Wait until the scheduler serves.")
    ] = True,
    verify: Annotated[
        bool,
        typer.Option("--verify/--no-verify", help="Prove it with a canary pod it must schedule."),
    ] = True,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds to wait.")] = 180.0,
    canary_namespace: Annotated[
        str, typer.Option("--canary-namespace", help="Namespace of the canary pod.")
    ] = "default",
    root: Annotated[
        Path, typer.Option("--root", help="Host forms: install files under this root.")
    ] = Path("/"),
    manifests_dir: Annotated[
        Path | None,
        typer.Option(
            "--manifests-dir",
            help="Static-pod form: kubelet's manifest directory (default ROOT/etc/kubernetes/manifests).",
        ),
    ] = None,
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
    unit or manifest under --root.
    """
    # Imported here, not at the top: the use case pulls in the cluster, host and render layers,
    # which `kschedctl --help` and the offline commands must not pay for.
    from kschedctl import hosts
    from kschedctl.ops import deploy as use_case
    from kschedctl.ops.overrides import deploy_source
    from kschedctl.ops.reporter import Reporter

    aliases = {"pod": as_pod, "deployment": as_deployment, "service": as_service,
               "static-pod": as_static_pod}  # fmt: skip
    form = _form(as_form.value if as_form is not None else None, aliases)
    mode = options.checked_dry_run(dry_run)
    spec = use_case.load_target(
        src, namespace=namespace, image=image, replicas=replicas,
        program=program.value if program else None, kubernetes_version=kubernetes_version,
    )  # fmt: skip
    request = use_case.DeployRequest(
        spec, form, server_dry_run=mode == "server", wait=wait, verify=verify,
        timeout=timeout, canary_namespace=canary_namespace,
        follow_server_version=not kubernetes_version and use_case.is_bare_name(src),
        overrides=_overrides(namespace=namespace, image=image, replicas=replicas,
                             program=program.value if program else None,
                             kubernetesVersion=kubernetes_version),
        history_max=history_max,
    )  # fmt: skip
    if mode == "client":
        # The files as they would be on a real host under --root: a client dry run looks
        # nothing up, not even whether the kubeconfig is a lab's.
        on_machine = hosts.SystemdHost(root, manifests_dir)
        typer.echo(use_case.client_dry_run(request, on_machine), nl=False)
        return
    host = hosts.for_target(kube.kubeconfig, root, manifests_dir)
    report = Reporter(done=output.echo, info=output.info, warn=output.warn)
    with connect(kube) as cluster:
        result, _written = deploy_source(cluster, host, request, src, save=save, report=report)
        print_summary(result)


def _overrides(**given: object) -> dict[str, object]:
    """The flags given that change the deployed state, by their spec field."""
    return {field: value for field, value in given.items() if value is not None}


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
