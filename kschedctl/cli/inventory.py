"""`kschedctl list`: every scheduler the cluster runs, or that pods ask for."""

from __future__ import annotations

from typing import Annotated

import typer

from kschedctl import output
from kschedctl.cli.common import age, check_output, connect
from kschedctl.cli.options import Context, Kubeconfig

OutputOpt = Annotated[str, typer.Option("-o", "--output", help="table, wide, yaml or json.")]


def list_schedulers(
    kubeconfig: Kubeconfig = None, context: Context = None, out: OutputOpt = "table"
) -> None:
    """Every scheduler: default-scheduler, those kschedctl deployed, kube-scheduler Deployments,
    Pods and static pods it did not deploy, and names pods request that nothing serves."""
    check_output(out, ("table", "wide", "yaml", "json"))
    from kschedctl.k8s.inventory import snapshot
    from kschedctl.schedulers import discover

    cluster = connect(kubeconfig, context)
    try:
        schedulers = discover(snapshot(cluster))
    finally:
        cluster.close()
    if out in ("yaml", "json"):
        output.emit_data({"schedulers": [s.to_dict() for s in schedulers]}, out)
        return
    columns = ["name", "form", "namespace", "ready", "leader", "renewed", "pending", "health"]
    if out == "wide":
        columns += ["managed", "instance", "lease", "found-by"]
    rows = []
    for s in schedulers:
        ready = "-" if s.desired is None else f"{s.ready or 0}/{s.desired}"
        health = "ok" if s.healthy else ("NOT SERVED" if not s.served else "unhealthy")
        row = [
            s.name, s.form, s.namespace or "-", ready, s.leader or "-",
            age(s.lease.renew_age) if s.lease else "-", s.pending, health,
        ]  # fmt: skip
        if out == "wide":
            row += [
                "yes" if s.managed else "no", s.instance or "-",
                s.lease.ref if s.lease else "-", ",".join(s.sources),
            ]  # fmt: skip
        rows.append(row)
    output.print_table(columns, rows)
    for s in schedulers:
        if not s.served and s.pending:
            output.warn(
                f"{s.pending} pod(s) ask for scheduler {s.name!r} but nothing serves it: they "
                f"stay Pending with no events. Deploy it: kschedctl create {s.name} && "
                f"kschedctl deploy {s.name} --as-deployment"
            )


def register(app: typer.Typer) -> None:
    app.command("list")(list_schedulers)
