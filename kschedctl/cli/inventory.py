"""`kschedctl list`: the schedulers a cluster runs or pods ask for."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from kschedctl.cli import output, registers
from kschedctl.cli.common import age, connect
from kschedctl.cli.kube import DEFAULT_KUBE, Kube
from kschedctl.cli.kubeflags import kube_flags
from kschedctl.cli.options import (
    DEFAULT_PRINTING,
    DEFAULT_SELECTORS,
    WIDE_FORMATS,
    AllNamespaces,
    Namespace,
    Printing,
    Selectors,
    namespace_scope,
    output_flags,
    selector_flags,
)
from kschedctl.observe import identity

if TYPE_CHECKING:
    from kschedctl.observe.schedulers import Scheduler
    from kschedctl.ops.list import SchedulerList
    from kschedctl.printers.formats import OutputFormat


@kube_flags
@output_flags(WIDE_FORMATS)
@selector_flags
def list_schedulers(
    kube: Kube = DEFAULT_KUBE,
    printing: Printing = DEFAULT_PRINTING,
    selectors: Selectors = DEFAULT_SELECTORS,
    namespace: Namespace = None,
    all_namespaces: AllNamespaces = False,
    watch: Annotated[
        bool,
        typer.Option(
            "-w",
            "--watch",
            help="After the list, keep showing changes until interrupted (a live table on a "
            "terminal, appended rows otherwise); Ctrl-C ends it with exit 0.",
        ),
    ] = False,
) -> None:
    """Every scheduler in the cluster, with health, leader and Pending pods.

    default-scheduler, those kschedctl deployed, kube-scheduler Deployments, Pods and static pods
    it did not deploy, and names pods request that nothing serves. -l matches the labels of the
    object serving a scheduler; --field-selector metadata.name, metadata.namespace, form, managed,
    healthy, served, leader ….
    """
    fmt = printing.format()
    labels, fields = selectors.parsed()
    scope = namespace_scope(namespace, all_namespaces)
    # Imported here: --help and the offline commands must not pay for the cluster layers.
    from kschedctl.ops.list import scheduler_list

    with connect(kube) as cluster:
        if watch:
            from kschedctl.cli.listwatch import watch_list  # on use (start-up)

            fetch = lambda: scheduler_list(cluster, labels, fields, scope)  # noqa: E731
            watch_list(fetch, fmt, printing.no_headers, list_columns, list_rows)
            return
        found = scheduler_list(cluster, labels, fields, scope)
    if not fmt.is_table:
        output.emit(found.to_dict(), fmt, no_headers=printing.no_headers)
        return
    if not found.schedulers:
        output.info(
            "no scheduler matches"
            if any(selectors)
            else "no scheduler found" + (f" in namespace {scope}" if scope else "")
        )
    else:
        output.print_table(list_columns(fmt), list_rows(found, fmt), headers=printing.headers)
    for line in claim_warnings(found):
        output.warn(line)
    for s in found.unserved:
        output.warn(
            f"{s.pending} pod(s) ask for scheduler {s.name!r} but nothing serves it: they "
            f"stay Pending with no events. Deploy it: kschedctl create {s.name} && "
            f"kschedctl deploy {s.name} --as deployment"
        )


def list_columns(fmt: OutputFormat) -> list[str]:
    # ROUTING: kschedctl's routing rule (ns:team=ml), or -; HEALTH stays the last word
    columns = ["name", "form", "namespace", "ready", "leader", "renewed", "pending", "routing",
               "health"]  # fmt: skip
    if fmt.kind == "wide":
        columns += ["managed", "instance", "lease", "found-by"]
    return columns


def list_rows(found: SchedulerList, fmt: OutputFormat) -> list[list[Any]]:
    """One row per scheduler; a conflict shows each candidate (CONFLICT), and every impostor
    of a name gets a row of its own (IMPOSTOR), in its namespace."""
    rows = []
    for entry in found.schedulers:
        shown = [(c, "CONFLICT") for c in entry.candidates] or [(entry, health_text(entry))]
        for s, health in [*shown, *((i, "IMPOSTOR") for i in entry.impostors)]:
            ready = "-" if s.desired is None else f"{s.ready or 0}/{s.desired}"
            row = [
                s.name, s.form, s.namespace or "-", ready, s.leader or "-",
                age(s.lease.renew_age) if s.lease else "-", s.pending, s.routing or "-",
                health,
            ]  # fmt: skip
            if fmt.kind == "wide":
                row += [
                    "yes" if s.managed else "no", s.instance or "-",
                    s.lease.ref if s.lease else "-", ",".join(s.sources),
                ]  # fmt: skip
            rows.append(row)
    return rows


def claim_warnings(found: SchedulerList) -> list[str]:
    """A line per conflict and per impostor (list's stderr)."""
    lines = []
    for s in found.schedulers:
        if s.candidates:
            lines.append(
                f"conflict: {len(s.candidates)} schedulers claim the name {s.name!r}: "
                f"{identity.claims(s)}; none is known to be it, so status and logs need -n"
            )
        lines += [
            f"impostor: {i.instance or i.form} in namespace {i.namespace or '-'} claims the "
            f"name {s.name!r} but is not it: {i.reason}"
            for i in s.impostors
        ]
    return lines


def health_text(s: Scheduler) -> str:
    """list's HEALTH: ok, NOT SERVED, the kubelet's reason its pods do not run
    (CrashLoopBackOff, ImagePullBackOff, FailedMount, …), or unhealthy; a scheduler that
    serves while one of its pods does not run is ``degraded (REASON)``."""
    if s.candidates:
        return "CONFLICT"
    if not s.served:
        return "NOT SERVED"
    if s.healthy:
        return f"degraded ({s.problem})" if s.problem else "ok"
    return s.problem or "unhealthy"


register = registers("list", list_schedulers)
