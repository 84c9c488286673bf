"""`kschedctl logs NAME`: a scheduler's output, every replica, the leader marked.

The lines come from :func:`kschedctl.ops.logs.open_logs`; this module filters and prints them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from kschedctl.base.errors import UsageError
from kschedctl.cli import completers, output, registers
from kschedctl.cli.common import SchedulerName, connect
from kschedctl.cli.kube import DEFAULT_KUBE, Kube
from kschedctl.cli.kubeflags import kube_flags
from kschedctl.cli.options import AllNamespaces, Namespace, Since, namespace_scope

if TYPE_CHECKING:
    pass


@kube_flags
def logs(
    name: SchedulerName,
    follow: Annotated[
        bool,
        typer.Option(
            "-f",
            "--follow",
            help="Keep streaming, across replica restarts and replacements, until interrupted.",
        ),
    ] = False,
    since: Since = None,
    tail: Annotated[
        int | None,
        typer.Option(
            "--tail", help="Only the last N lines of each replica.", min=0, show_default=False
        ),
    ] = None,
    all_replicas: Annotated[
        bool,
        typer.Option(
            "--all-replicas/--leader-only",
            help="Every replica (default), or only the one holding the leader Lease.",
        ),
    ] = True,
    prefix: Annotated[
        bool | None,
        typer.Option(
            "--prefix/--no-prefix",
            help="Prefix lines with \\[pod] (default: when more than one replica is shown).",
            show_default=False,
        ),
    ] = None,
    grep: Annotated[
        str | None,
        typer.Option(
            "--grep", help="Only lines matching this regular expression.", show_default=False
        ),
    ] = None,
    timestamps: Annotated[
        bool, typer.Option("--timestamps", help="Show each line's timestamp.")
    ] = False,
    previous: Annotated[
        bool,
        typer.Option(
            "-p",
            "--previous",
            help="The previous container of each replica: the one that crashed or was "
            "restarted (pod and deployment forms).",
        ),
    ] = False,
    container: Annotated[
        str | None,
        typer.Option(
            "-c",
            "--container",
            help="This container of each pod (default: the scheduler's own).",
            show_default=False,
        ),
    ] = None,
    out: Annotated[
        str | None,
        typer.Option(
            "-o",
            "--output",
            help="json (one object per line: pod, container, leader, time, message) or raw "
            "(the message only). Default: each line after its \\[pod], the leader marked.",
            autocompletion=completers.choices(("json", "raw")),
            show_default=False,
        ),
    ] = None,
    kube: Kube = DEFAULT_KUBE,
    namespace: Namespace = None,
    all_namespaces: AllNamespaces = False,
) -> None:
    """The scheduler's logs: every replica, merged in time order, each pod in a colour of its
    own on a terminal, "(leader)" on the lines a pod logged while it led (from its Lease's
    acquireTime and its own "acquired lease" / "stopped leading" lines).

    pods/log for the pod and deployment forms (--previous: the container that crashed), the
    journal for the service form; 'forbidden', leader-Lease waits and scheduling failures are
    highlighted on a terminal.
    """
    # on use: every command module is imported when the CLI starts
    from kschedctl.model.config.durations import parse_duration
    from kschedctl.observe.loglines import Grep

    if out is not None and out not in ("json", "raw"):
        raise UsageError(f"unknown output format {out!r}", hint="use -o json or -o raw")
    since_seconds = int(max(1, parse_duration(since))) if since else None
    try:
        keep = Grep(grep)
    except ValueError as err:
        raise UsageError(
            str(err),
            hint="--grep takes a Python regular expression without backreferences, "
            "lookarounds or atomic groups (it is matched in time linear in the line)",
        ) from err
    # Imported here, not at the top: the use case pulls in the cluster and host layers, which
    # `kschedctl --help` and the offline commands must not pay for.
    from kschedctl import hosts
    from kschedctl.cli.logview import Printer
    from kschedctl.ops.logs import LogsRequest, open_logs

    request = LogsRequest(
        name, follow, since_seconds, tail, all_replicas, previous,
        namespace_scope(namespace, all_namespaces), container,
    )  # fmt: skip
    with connect(kube) as cluster:
        try:
            with open_logs(
                cluster, hosts.for_target(kube.kubeconfig), request, output.warn
            ) as stream:
                Printer(prefix, timestamps, keep, out)(stream.lines, stream.sources)
        except KeyboardInterrupt:
            pass  # Ctrl-C is how a follow ends: exit 0


register = registers("logs", logs)
