"""kubectl-style options shared by cluster-facing commands (typer ``Annotated`` aliases)."""

from __future__ import annotations

from enum import Enum
from typing import Annotated

import typer


class OutputFormat(str, Enum):
    table = "table"
    wide = "wide"
    yaml = "yaml"
    json = "json"


Kubeconfig = Annotated[
    str | None,
    typer.Option(
        "--kubeconfig", help="Path to the kubeconfig file (default: $KUBECONFIG or ~/.kube/config)."
    ),
]
Context = Annotated[str | None, typer.Option("--context", help="The kubeconfig context to use.")]
Namespace = Annotated[
    str | None, typer.Option("-n", "--namespace", help="Namespace (default: the context's).")
]
AllNamespaces = Annotated[
    bool, typer.Option("-A", "--all-namespaces", help="Across all namespaces.")
]
Output = Annotated[
    OutputFormat, typer.Option("-o", "--output", help="Output format.", case_sensitive=False)
]
