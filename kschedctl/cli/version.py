"""``kschedctl version``: client, server and each scheduler's version skew, as kubectl and
helm print theirs. ``--client`` works offline (it never loads the kubernetes client)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from kschedctl import __version__
from kschedctl.cli import output, registers
from kschedctl.cli.common import connect
from kschedctl.cli.kube import DEFAULT_KUBE, Kube
from kschedctl.cli.kubeflags import kube_flags
from kschedctl.cli.options import DEFAULT_PRINTING, Printing, output_flags
from kschedctl.model.config.versions import DEFAULT_VERSION, supported_minors
from kschedctl.printers import formats

HELP = """Print the client's version and, unless --client, the API server's version and the
version skew of every scheduler the cluster serves (its kube-scheduler image against the API
server: as new or one minor older is supported)."""

FORMATS = (formats.TABLE, formats.YAML, formats.JSON)


def client_version() -> dict[str, Any]:
    """``clientVersion`` of ``version -o json``: kschedctl's version and the Kubernetes
    versions it writes configurations for."""
    minors = supported_minors()
    return {
        "version": __version__,
        "kubernetesVersions": {
            "oldest": minors[0],
            "newest": minors[-1],
            "default": DEFAULT_VERSION,
        },
    }


@kube_flags
@output_flags(FORMATS, " (default: text)")
def version(
    client: Annotated[
        bool, typer.Option("--client", help="Only the client's version (no cluster needed).")
    ] = False,
    kube: Kube = DEFAULT_KUBE,
    printing: Printing = DEFAULT_PRINTING,
) -> None:
    fmt = printing.format()
    data: dict[str, Any] = {"clientVersion": client_version()}
    if not client:
        from kschedctl.ops.version import version_report  # the cluster's part only: on use

        with connect(kube) as cluster:
            data.update(version_report(cluster).to_dict())
    if not fmt.is_table:
        output.emit(data, fmt, no_headers=printing.no_headers)
        return
    versions = data["clientVersion"]["kubernetesVersions"]
    output.echo(
        f"Client Version: {__version__} (Kubernetes {versions['oldest']}–{versions['newest']}, "
        f"default {versions['default']})"
    )
    if client:
        return
    output.echo(f"Server Version: {data['serverVersion'].get('gitVersion', '?')}")  # escaped
    rows = [
        (s["name"], s["namespace"] or "-", s["image"] or "-", s["skew"]) for s in data["schedulers"]
    ]
    if rows:
        output.echo()
        output.print_table(
            ("scheduler", "namespace", "image", "skew"), rows, headers=printing.headers
        )


register = registers("version", version, help=HELP)
