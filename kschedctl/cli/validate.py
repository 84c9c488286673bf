"""``kschedctl validate FILE…``: check specs and KubeSchedulerConfigurations (offline)."""

# No "from __future__ import annotations": typer would re-evaluate every annotation string
# at each start-up; evaluated once at import they cost less (benchmarks/startup.py).

import json
from enum import Enum
from typing import Annotated

import typer

from kschedctl import output
from kschedctl.cli.options import KubernetesVersion, check_version_option
from kschedctl.cli.paths import guard_paths
from kschedctl.errors import SpecError, printable


class ValidateOutput(str, Enum):
    text = "text"
    json = "json"


@guard_paths
def validate(
    files: Annotated[
        list[str],
        typer.Argument(
            help="Spec files, workspace directories, KubeSchedulerConfiguration files, or "
            "manifests (ConfigMaps holding a config, pods running kube-scheduler).",
            metavar="FILE...",
            show_default=False,
        ),
    ],
    kubernetes_version: KubernetesVersion = None,
    replaces_default: Annotated[
        bool,
        typer.Option(
            "--replaces-default",
            help="The config is the cluster's own scheduler: allow default-scheduler and the "
            "kube-scheduler Lease.",
        ),
    ] = False,
    fmt: Annotated[
        ValidateOutput,
        typer.Option("-o", "--output", help="text: FILE: field.path: message lines; json."),
    ] = ValidateOutput.text,
) -> None:
    """Check specs and KubeSchedulerConfigurations (see HELP)."""
    # Imported here so that --help and shell completion do not pay for yaml.
    from kschedctl.ops.validate import validate_files

    check_version_option(kubernetes_version)
    result = validate_files(files, kubernetes_version, replaces_default=replaces_default)
    if fmt is ValidateOutput.json:
        typer.echo(json.dumps([r.to_dict() for r in result.reports], indent=2))
    else:
        for report in result.reports:
            for problem in report.problems:
                typer.echo(str(problem))
    for report in result.reports:
        if report.valid and not report.checked:
            # Plain text: a file name is the user's, never markup or escape sequences.
            typer.echo(
                f"note: {printable(report.path)}: no scheduler configuration found, nothing "
                "checked",
                err=True,
            )
    if result.invalid:
        raise SpecError(
            "",
            f"{len(result.invalid)} of {len(result.reports)} file(s) invalid "
            f"({result.problem_count} problem(s), {result.rules})",
        )
    output.info(f"{len(result.reports)} file(s) valid ({result.rules})")


HELP = (
    "Check scheduler specs and KubeSchedulerConfiguration files with kube-scheduler's own "
    "rules for the target version, plus the traps of running several schedulers.\n\n"
    "Traps: a profile named (or defaulting to) default-scheduler, the shared Lease "
    "kube-scheduler, replicas without leader election, removed flags and ports. Problems "
    "go to stdout as FILE: field.path: message, the summary to stderr. Exit 0 when every "
    "file is valid, 3 otherwise. Works offline."
)


def register(app: typer.Typer) -> None:
    app.command("validate", help=HELP, no_args_is_help=True)(validate)
