"""``kschedctl validate FILE…``: check specs and KubeSchedulerConfigurations (offline)."""

# No "from __future__ import annotations": typer would re-evaluate every annotation string
# at each start-up; evaluated once at import they cost less (benchmarks/startup.py).

import json
from enum import Enum
from typing import Annotated, Any

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
    judged = _judge_check(kube_scheduler)
    result = validate_files(files, kubernetes_version, replaces_default=replaces_default)
    verdicts = _judge(judged, result.reports)
    if fmt is ValidateOutput.json:
        typer.echo(json.dumps([_with_verdict(r, verdicts) for r in result.reports], indent=2))
    else:
        for report in result.reports:
            for problem in report.problems:
                typer.echo(str(problem))
        _print_verdicts(result.reports, verdicts)
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


def _judge_check(path: str | None) -> str | None:
    """The binary of --kube-scheduler, checked before any file is read (exit 5 if unusable)."""
    if path is None:
        return None
    from kschedctl.ops.judge import check_binary

    return str(check_binary(path))


def _judge(binary: str | None, reports: list[Any]) -> dict[str, Any]:
    if binary is None:
        return {}
    from kschedctl.ops.judge import judge_file

    return {r.path: judge_file(binary, r.path) for r in reports}


def _with_verdict(report: Any, verdicts: dict[str, Any]) -> dict[str, Any]:
    entry: dict[str, Any] = report.to_dict()
    if report.path in verdicts:
        from kschedctl.ops.judge import agrees

        verdict = verdicts[report.path]
        entry["kubeScheduler"] = verdict.to_dict() if verdict else None
        entry["agrees"] = agrees(report.problems, verdict) if verdict else None
    return entry


def _print_verdicts(reports: list[Any], verdicts: dict[str, Any]) -> None:
    """kube-scheduler's verdict per file: a note when it agrees, its messages when it does not."""
    from kschedctl.ops.judge import agrees

    for report in reports:
        verdict = verdicts.get(report.path)
        if verdict is None:
            continue
        said = "accepted" if verdict.accepted else "refused"
        name = printable(report.path)
        if agrees(report.problems, verdict):
            typer.echo(f"note: {name}: kube-scheduler: {said}", err=True)
            continue
        ours = "valid" if verdict.accepted is False else "invalid"
        typer.echo(f"{name}: kube-scheduler {said} it, validate says {ours}: disagreement")
        for message in verdict.messages:
            typer.echo(f"{name}: kube-scheduler: {printable(message)}")


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
