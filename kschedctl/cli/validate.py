"""``kschedctl validate FILE…``: check specs and KubeSchedulerConfigurations (offline)."""

# No "from __future__ import annotations": typer would re-evaluate every annotation string
# at each start-up; evaluated once at import they cost less (benchmarks/startup.py).

import json
from enum import Enum
from typing import TYPE_CHECKING, Annotated

import typer

from kschedctl.base import yamltext
from kschedctl.base.errors import NotFoundError, SpecError, printable
from kschedctl.cli import output, registers
from kschedctl.cli.options import KubernetesVersion, check_version_option
from kschedctl.cli.paths import guard_paths

if TYPE_CHECKING:
    from kschedctl.ops.validate import FileReport


class ValidateOutput(str, Enum):
    text = "text"
    json = "json"
    yaml = "yaml"


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
        typer.Option(
            "-o",
            "--output",
            help="text: FILE: field.path: message lines (warnings as FILE: field.path: "
            "warning: message); json or yaml: a list of files, each problem with its severity.",
        ),
    ] = ValidateOutput.text,
    strict: Annotated[
        bool,
        typer.Option("--strict", help="Warnings fail too (exit 3), not only errors."),
    ] = False,
    kube_scheduler: Annotated[
        str | None,
        typer.Option(
            "--kube-scheduler",
            metavar="PATH",
            help="Also run this kube-scheduler binary on each config (--write-config-to, no API "
            "server) and show its verdict next to validate's.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Check specs and KubeSchedulerConfigurations (see HELP)."""
    # Imported here so that --help and shell completion do not pay for yaml.
    from kschedctl.ops.validate import validate_files

    check_version_option(kubernetes_version)
    result = validate_files(
        files, kubernetes_version, replaces_default=replaces_default, kube_scheduler=kube_scheduler
    )
    if fmt is ValidateOutput.json:
        typer.echo(json.dumps([r.to_dict() for r in result.reports], indent=2))
    elif fmt is ValidateOutput.yaml:
        typer.echo(yamltext.to_yaml([r.to_dict() for r in result.reports], document=True), nl=False)
    else:
        for report in result.reports:
            for problem in report.problems:
                typer.echo(str(problem))
    # -o json/yaml carry the verdicts in the document: stdout stays one parseable document.
    _print_verdicts(result.reports, to_stdout=fmt is ValidateOutput.text)
    for report in result.reports:
        if report.valid and not report.checked:
            # Plain text: a file name is the user's, never markup or escape sequences.
            typer.echo(
                f"note: {printable(report.path)}: no scheduler configuration found, nothing "
                "checked",
                err=True,
            )
    warned = f", {result.warning_count} warning(s)" if result.warning_count else ""
    if result.missing:
        # a missing file is exit 5 in every command (README "Exit codes"), before exit 3
        names = ", ".join(printable(r.path) for r in result.missing[:5])
        more = len(result.missing) - 5
        others = len(result.invalid) - len(result.missing)
        raise NotFoundError(
            f"{len(result.missing)} of {len(result.reports)} file(s) not found: {names}"
            + (f" and {more} more" if more > 0 else "")
            + (f"; {others} other file(s) invalid" if others else ""),
            hint="check the path (a workspace directory needs its scheduler.yaml; "
            "`kschedctl create NAME` writes one)",
        )
    if result.invalid:
        raise SpecError(
            "",
            f"{len(result.invalid)} of {len(result.reports)} file(s) invalid "
            f"({result.problem_count} problem(s){warned}, {result.rules})",
        )
    if strict and result.warning_count:
        raise SpecError(
            "",
            f"{result.warning_count} warning(s) and --strict ({len(result.reports)} file(s) "
            f"otherwise valid, {result.rules})",
        )
    output.info(f"{len(result.reports)} file(s) valid ({result.rules}{warned})")


def _print_verdicts(reports: "list[FileReport]", *, to_stdout: bool) -> None:
    """kube-scheduler's verdict per file (--kube-scheduler): a note on stderr when it agrees,
    a line and its own messages when it does not (stdout in text mode, beside the problems;
    stderr when stdout holds a JSON or YAML document)."""
    for report in reports:
        verdict = report.verdict
        if verdict is None:
            continue
        said = "accepted" if verdict.accepted else "refused"
        name = printable(report.path)
        if report.agrees:
            typer.echo(f"note: {name}: kube-scheduler: {said}", err=True)
            continue
        ours = "valid" if report.valid else "invalid"
        typer.echo(
            f"{name}: kube-scheduler {said} it, validate says {ours}: disagreement",
            err=not to_stdout,
        )
        for message in verdict.messages:
            typer.echo(f"{name}: kube-scheduler: {printable(message)}", err=not to_stdout)


HELP = (
    "Check scheduler specs and KubeSchedulerConfiguration files with kube-scheduler's own "
    "rules for the target version, plus the traps of running several schedulers.\n\n"
    "Traps: a profile named (or defaulting to) default-scheduler, the shared Lease "
    "kube-scheduler, replicas without leader election, removed flags and ports. Problems "
    "go to stdout as FILE: field.path: message, the summary to stderr. A configuration "
    "is judged as kube-scheduler judges it: decoded (JSON if it starts with '{', else YAML, "
    "first document only), defaulted, then validated. Warnings (FILE: field.path: warning: "
    "message) are what kube-scheduler runs but probably not as meant, such as documents "
    "after the first. A cluster snapshot (kind: Snapshot, from `kschedctl snapshot`) is "
    "checked as `kschedctl simulate` reads it. Exit 0 when no file has errors (--strict: nor "
    "warnings), 3 otherwise. "
    "Works offline."
)


register = registers("validate", validate, help=HELP, no_args_is_help=True)
