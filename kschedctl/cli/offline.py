"""Options and helpers shared by the offline commands (create, render, validate)."""

# No "from __future__ import annotations": typer would re-evaluate every annotation string
# at each start-up; evaluated once at import they cost less (benchmarks/startup.py).

from typing import Annotated

import typer

from kschedctl.config.versions import DEFAULT_VERSION, parse_version, supported_minors
from kschedctl.errors import UsageError

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
