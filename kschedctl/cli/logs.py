"""`kschedctl logs NAME`: a scheduler's output, every replica, the leader marked."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Annotated

import typer

from kschedctl import output
from kschedctl.cli.common import connect
from kschedctl.cli.options import Context, Kubeconfig
from kschedctl.errors import KschedError, NotFoundError, UsageError

if TYPE_CHECKING:
    from kschedctl.k8s.client import Cluster
    from kschedctl.observe.loglines import Grep, LogLine
    from kschedctl.observe.schedulers import Scheduler


def logs(
    name: Annotated[str, typer.Argument(help="Scheduler name (a profile's schedulerName).")],
    follow: Annotated[
        bool,
        typer.Option(
            "-f",
            "--follow",
            help="Keep streaming, across replica restarts and replacements, until interrupted.",
        ),
    ] = False,
    since: Annotated[
        str | None,
        typer.Option(
            "--since",
            help="Only lines newer than this duration (30s, 10m, 2h).",
            show_default=False,
        ),
    ] = None,
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
    kubeconfig: Kubeconfig = None,
    context: Context = None,
) -> None:
    """The scheduler's logs: every replica, merged in time order, the leader marked.

    pods/log for the pod and deployment forms, the journal for the service form; 'forbidden',
    leader-Lease waits and scheduling failures are highlighted on a terminal.
    """
    from kschedctl.config.durations import parse_duration
    from kschedctl.observe.loglines import Grep

    since_seconds = int(max(1, parse_duration(since))) if since else None
    try:
        keep = Grep(grep)
    except ValueError as err:
        raise UsageError(str(err), hint="--grep takes a Python regular expression") from err
    from kschedctl.k8s.inventory import snapshot
    from kschedctl.observe.schedulers import discover

    cluster = connect(kubeconfig, context)
    try:
        entry = next((s for s in discover(snapshot(cluster)) if s.name == name), None)
        if entry is None or not entry.served:
            raise NotFoundError(
                f"no scheduler named {name!r} is running",
                hint="`kschedctl list` shows the schedulers in this cluster",
            )
        show = _Printer(prefix, timestamps, keep)
        if entry.form in ("service", "process"):
            _host_logs(entry, kubeconfig, follow, since_seconds, tail, show)
        else:
            _pod_logs(cluster, entry, follow, since_seconds, tail, all_replicas, show)
    except KeyboardInterrupt:
        pass  # Ctrl-C is how a follow ends: exit 0
    finally:
        cluster.close()


class _Printer:
    """Prints lines: markup on a terminal only, plain when piped (stdout is data)."""

    def __init__(self, prefix: bool | None, timestamps: bool, keep: Grep) -> None:
        self.console = output.stdout_console()
        self.color = self.console.is_terminal
        self.prefix = prefix
        self.timestamps = timestamps
        self.keep = keep

    def __call__(self, lines: Iterable[LogLine], sources: int) -> None:
        from kschedctl.observe.loglines import render

        prefix = self.prefix if self.prefix is not None else sources > 1
        for line in lines:
            if not self.keep(line):
                continue
            text = render(line, prefix=prefix, timestamps=self.timestamps, color=self.color)
            if self.color:
                self.console.print(text, soft_wrap=True, highlight=False)
            else:
                self.console.file.write(text + "\n")
                self.console.file.flush()


def _pod_logs(
    cluster: Cluster,
    entry: Scheduler,
    follow: bool,
    since_seconds: int | None,
    tail: int | None,
    all_replicas: bool,
    show: _Printer,
) -> None:
    from kschedctl.k8s.logs import Follower, leader_pod, read_all, replicas
    from kschedctl.observe.loglines import LogLine

    found = replicas(cluster, entry)
    leader = leader_pod(cluster, entry)
    if not all_replicas:
        if leader is None:
            raise KschedError(
                f"{entry.name} has no leader now (no Lease holder among its pods)",
                hint=f"drop --leader-only to see every replica; `kschedctl status {entry.name}`",
            )
        found = [r for r in found if r.pod == leader]
    if not found and not follow:
        raise NotFoundError(
            f"{entry.name} has no running pod to read logs from",
            hint=f"`kschedctl status {entry.name}` shows its objects and pods",
        )
    sources = len(found) if all_replicas else 1
    if not follow:
        lines = read_all(cluster, found, since_seconds=since_seconds, tail=tail, warn=output.warn)
        show((LogLine(x.source, x.text, x.time, x.source == leader) for x in lines), sources)
        return
    follower = Follower(cluster, entry, since_seconds=since_seconds, tail=tail, warn=output.warn)
    stream: Iterator[LogLine] = follower.lines()
    if not all_replicas:
        stream = (line for line in stream if line.leader)
    try:
        show(stream, sources)
    finally:
        follower.close()


def _host_logs(
    entry: Scheduler,
    kubeconfig: str | None,
    follow: bool,
    since_seconds: int | None,
    tail: int | None,
    show: _Printer,
) -> None:
    from kschedctl.hosts import journal

    path = journal.lab_log_file(entry.name, entry.form, kubeconfig)
    if path is not None:
        lines, offset = journal.read_file(path, entry.name, since_seconds=since_seconds, tail=tail)
        show(lines, 1)
        if follow:
            stop = threading.Event()
            try:
                show(journal.follow_file(path, entry.name, stop, offset), 1)
            finally:
                stop.set()
        return
    if entry.form == "service" and journal.journal_available():
        argv = journal.journal_argv(
            entry.name, follow=follow, since_seconds=since_seconds, tail=tail
        )
        show(journal.journal_lines(argv, entry.name), 1)
        return
    where = "a systemd unit on its host" if entry.form == "service" else "a process on its host"
    raise KschedError(
        f"{entry.name} runs as {where}; its output is not readable from here",
        hint=f"on that host: journalctl -u {entry.name}.service"
        if entry.form == "service"
        else "read its output on the host where it runs",
    )


def register(app: typer.Typer) -> None:
    app.command("logs")(logs)
