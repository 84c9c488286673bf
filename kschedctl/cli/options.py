"""Options shared by several commands, declared once (typer ``Annotated`` aliases).

kubectl's flags for the cluster-facing commands (``--kubeconfig``, ``--context``,
``--cluster``, ``--user``, ``-n/--namespace``, ``-A``, ``-o``, ``--since``) and ``--kubernetes-version`` for the offline
ones. Every command module is imported at start-up (they register themselves), so one module
of aliases costs nothing more than several.
"""

from __future__ import annotations

from typing import Annotated

import typer

from kschedctl.cli import completers
from kschedctl.config.versions import DEFAULT_VERSION, parse_version, supported_minors
from kschedctl.errors import UsageError

Kubeconfig = Annotated[
    str | None,
    typer.Option(
        "--kubeconfig", help="Path to the kubeconfig file (default: $KUBECONFIG or ~/.kube/config)."
    ),
]
Context = Annotated[
    str | None,
    typer.Option(
        "--context", help="The kubeconfig context to use.", autocompletion=completers.contexts
    ),
]
ClusterName = Annotated[
    str | None,
    typer.Option(
        "--cluster",
        help="The kubeconfig cluster to use (instead of the context's).",
        autocompletion=completers.clusters,
    ),
]
User = Annotated[
    str | None,
    typer.Option(
        "--user",
        help="The kubeconfig user to use (instead of the context's).",
        autocompletion=completers.users,
    ),
]
Namespace = Annotated[
    str | None,
    typer.Option(
        "-n",
        "--namespace",
        help="Namespace (default: the context's, else default).",
        autocompletion=completers.namespaces,
    ),
]
AllNamespaces = Annotated[
    bool, typer.Option("-A", "--all-namespaces", help="Across all namespaces.")
]

# -o values, per command: `check_output` (cli/common.py) refuses others with exit 2.
TABLE_FORMATS = ("table", "yaml", "json")
WIDE_FORMATS = ("table", "wide", "yaml", "json")


def _listed(formats: tuple[str, ...]) -> str:
    return f"{', '.join(formats[:-1])} or {formats[-1]}."


# Plain strings, not an Enum: an unknown value is reported by check_output, which names the
# formats this command accepts.
TableOutput = Annotated[
    str,
    typer.Option(
        "-o",
        "--output",
        help=_listed(TABLE_FORMATS),
        autocompletion=completers.choices(TABLE_FORMATS),
    ),
]
WideOutput = Annotated[
    str,
    typer.Option(
        "-o",
        "--output",
        help=_listed(WIDE_FORMATS),
        autocompletion=completers.choices(WIDE_FORMATS),
    ),
]

# --since DURATION (parsed by config.durations.parse_duration); the help says what it bounds.
Since = Annotated[
    str | None,
    typer.Option(
        "--since", help="Only lines newer than this duration (30s, 10m, 2h).", show_default=False
    ),
]
EventsSince = Annotated[
    str | None,
    typer.Option(
        "--since", help="Only events seen within this duration (30s, 10m, 2h).", show_default=False
    ),
]

KubernetesVersion = Annotated[
    str | None,
    typer.Option(
        "--kubernetes-version",
        help=(
            f"Target Kubernetes version, 1.X or 1.X.Y ({supported_minors()[0]}–"
            f"{supported_minors()[-1]}; default {DEFAULT_VERSION})."
        ),
        show_default=False,
    ),
]


def check_version_option(value: str | None) -> None:
    """An unsupported --kubernetes-version is a usage error (exit 2) with the reason."""
    if value is None:
        return
    try:
        parse_version(value)
    except ValueError as err:
        raise UsageError(
            f"--kubernetes-version {value}: {err}",
            hint=f"supported: {', '.join(supported_minors())}",
        ) from err
