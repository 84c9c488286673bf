"""`kschedctl lab`: a real local control plane with simulated nodes."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from kschedctl.base import limits
from kschedctl.base.errors import EXIT_ERROR, LabError
from kschedctl.cli import output
from kschedctl.cli.options import DEFAULT_PRINTING, Printing, output_flags
from kschedctl.cli.progress import StderrBuildProgress
from kschedctl.printers import formats

if TYPE_CHECKING:
    from kschedctl.lab.cluster import Lab

lab_app = typer.Typer(
    help="A real local control plane (etcd, kube-apiserver, kube-controller-manager, "
    "kube-scheduler) with simulated kwok nodes, built from Go modules.",
    no_args_is_help=True,
)

# `lab status` reports components, not objects: every -o value but name (and wide).
STATUS_FORMATS = tuple(f for f in formats.ALL_FORMATS if f not in (formats.NAME, formats.WIDE))

LabDir = Annotated[
    Path | None,
    typer.Option(
        "--dir",
        help="Lab directory (default: $KSCHEDCTL_LAB_DIR or ~/.local/state/kschedctl/lab). "
        "Several labs can live side by side in different directories.",
    ),
]


def _lab(directory: Path | None) -> Lab:
    # Imported here: --help and the other commands must not pay for the lab's modules.
    from kschedctl.lab.cluster import Lab
    from kschedctl.lab.paths import default_lab_dir

    return Lab(directory or default_lab_dir())


@lab_app.command("build")
def build(
    force: Annotated[bool, typer.Option("--force", help="Rebuild even if cached.")] = False,
) -> None:
    """Build etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl and kwok
    from the pinned Go modules into the per-user cache (needs Go >= 1.26; reused when cached),
    and custom-kube-scheduler: kube-scheduler with kschedctl's example plugin NodeLabelMatch."""
    # lab modules load when a lab command runs, not at start-up
    from kschedctl.lab import binaries

    with StderrBuildProgress() as report:
        results = binaries.build(force=force, progress=report)
    for module, path, _elapsed in results:
        typer.echo(f"{module.title()}\t{path}")


@lab_app.command("up")
def up(
    directory: LabDir = None,
    nodes: Annotated[
        int,
        typer.Option(
            "--nodes",
            min=0,
            max=limits.MAX_NODES,
            help="Number of simulated nodes (4 cpu, 8Gi, 110 pods).",
        ),
    ] = 4,
    nodes_file: Annotated[
        Path | None,
        typer.Option(
            "--nodes-file",
            help="YAML file describing nodes: `nodes: [{name, count, labels, taints, capacity, "
            "unschedulable, devices}]` (devices: DRA devices published as ResourceSlices). "
            "Replaces --nodes.",
        ),
    ] = None,
    bin_dir: Annotated[
        Path | None,
        typer.Option("--bin-dir", help="Use the binaries in DIR (e.g. official release binaries)."),
    ] = None,
    api_port: Annotated[
        int | None, typer.Option("--api-port", help="kube-apiserver port (default: a free one).")
    ] = None,
    timeout: Annotated[
        float, typer.Option("--timeout", help="Seconds to wait for each component.")
    ] = 120.0,
) -> None:
    """Start the lab and print the `export KUBECONFIG=…` line (stdout) to use it."""
    # lab modules load when a lab command runs, not at start-up
    from kschedctl.lab import nodes as lab_nodes

    if nodes_file is not None:
        node_objects = lab_nodes.load_nodes_file(nodes_file)
    else:
        node_objects = lab_nodes.default_nodes(nodes)
    lab = _lab(directory)
    started = time.monotonic()
    lab.up(node_objects, bin_dir=str(bin_dir) if bin_dir else None, api_port=api_port,
           progress=output.info, timeout=timeout)  # fmt: skip
    output.info(
        f"lab ready in {time.monotonic() - started:.1f}s: {len(node_objects)} node(s), "
        f"kubeconfig {lab.kubeconfig}"
    )
    typer.echo(lab.export_line())


@lab_app.command("down")
def down(directory: LabDir = None) -> None:
    """Stop exactly the processes this lab started (recorded by pid, executable and start time,
    or carrying the lab's mark) and remove its directory; never one that only names it."""
    lab = _lab(directory)
    if not lab.dir.exists():
        output.info(f"no lab in {lab.dir}; nothing to do")
        return
    stopped = lab.down()
    output.info(f"stopped {', '.join(stopped) if stopped else 'nothing (no process was running)'}"
                f"; removed {lab.dir}")  # fmt: skip


@lab_app.command("status")
@output_flags(STATUS_FORMATS)
def status(
    directory: LabDir = None,
    printing: Printing = DEFAULT_PRINTING,
) -> None:
    """Health of each component and the node count. Exits 1 when the lab is not running."""
    fmt = printing.format()
    lab = _lab(directory)
    report = lab.status()
    if not fmt.is_table:
        output.emit(report, fmt, no_headers=printing.no_headers)
    else:
        rows = [
            (name, c["state"], c.get("pid", ""), c.get("port", ""), c.get("log", ""))
            for name, c in report["components"].items()
        ]
        output.print_table(
            ("component", "state", "pid", "port", "log"), rows, headers=printing.headers
        )
        nodes = report["nodes"]
        if nodes is not None:
            typer.echo(f"\nnodes: {nodes['ready']}/{nodes['total']} Ready")
        if report["running"]:
            typer.echo(f"server: {report['server']}\n{lab.export_line()}")
    if not report["running"]:
        output.info(f"no lab is running in {lab.dir}; start one with `kschedctl lab up`")
        raise typer.Exit(EXIT_ERROR)


@lab_app.command("env")
def env(directory: LabDir = None) -> None:
    """Print the `export KUBECONFIG=…` line for the lab: eval "$(kschedctl lab env)"."""
    lab = _lab(directory)
    if not lab.running_components():
        raise LabError(f"no lab is running in {lab.dir}", hint="start one with `kschedctl lab up`")
    typer.echo(lab.export_line())


@lab_app.command("runner", hidden=True)
def runner(
    directory: LabDir = None,
    health_port: Annotated[
        int, typer.Option("--health-port", help="Serve /healthz on this port (0: any).")
    ] = 0,
    restart_backoff: Annotated[
        float,
        typer.Option(
            "--restart-backoff",
            envvar="KSCHEDCTL_LAB_RESTART_BACKOFF",
            help="First restart back-off in seconds (the kubelet's is 10).",
        ),
    ] = 10.0,
    max_restart_backoff: Annotated[
        float,
        typer.Option(
            "--max-restart-backoff",
            envvar="KSCHEDCTL_LAB_MAX_RESTART_BACKOFF",
            help="Longest restart back-off in seconds (the kubelet's is 300).",
        ),
    ] = 300.0,
    max_probe_period: Annotated[
        float | None,
        typer.Option(
            "--max-probe-period",
            envvar="KSCHEDCTL_LAB_MAX_PROBE_PERIOD",
            help="Cap probes' initialDelaySeconds and periodSeconds (default: as "
            "written), so pods in the lab become Ready sooner.",
        ),
    ] = None,
) -> None:
    """Run scheduler pods bound to simulated nodes as local processes (`lab up` starts it)."""
    # the runner loads the kubernetes client: only in its process
    from kschedctl.lab.runner.container import Options
    from kschedctl.lab.runner.supervisor import main

    options = Options(restart_backoff, max_restart_backoff, max_probe_period)
    raise typer.Exit(main(_lab(directory).dir, options, health_port))


def register(app: typer.Typer) -> None:
    app.add_typer(lab_app, name="lab")
