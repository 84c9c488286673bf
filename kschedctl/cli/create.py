"""``kschedctl create NAME``: write a scheduler workspace (offline)."""

# No "from __future__ import annotations": typer would re-evaluate every annotation string
# at each start-up; evaluated once at import they cost less (benchmarks/startup.py).

from pathlib import Path
from typing import Annotated

import typer

from kschedctl.base.errors import UsageError, printable
from kschedctl.cli import output, registers
from kschedctl.cli.options import KubernetesVersion, check_version_option
from kschedctl.cli.paths import guard_paths
from kschedctl.cli.usage import bad_choice
from kschedctl.render import forms


@guard_paths
def create(
    name: Annotated[
        str,
        typer.Argument(
            help="Scheduler name: a DNS-1123 label, the schedulerName pods will ask for.",
            metavar="NAME",
            show_default=False,
        ),
    ],
    parent: Annotated[
        Path,
        typer.Option("--dir", help="Parent directory; the workspace is PARENT/NAME."),
    ] = Path("."),
    kubernetes_version: KubernetesVersion = None,
    namespace: Annotated[
        str | None,
        typer.Option("-n", "--namespace", help="Namespace of the scheduler and its Lease."),
    ] = None,
    replicas: Annotated[
        int | None,
        typer.Option(
            "--replicas", help="Replicas of the deployment form (>1 needs leader election)."
        ),
    ] = None,
    leader_elect: Annotated[
        bool | None,
        typer.Option(
            "--leader-elect/--no-leader-elect",
            help="Leader election on a Lease named after the scheduler (default: on).",
        ),
    ] = None,
    image: Annotated[
        str | None,
        typer.Option(
            "--image", help="Scheduler image (default: registry.k8s.io/kube-scheduler:vX.Y.Z)."
        ),
    ] = None,
    program: Annotated[
        str | None,
        typer.Option(
            "--program",
            help="kube-scheduler (default), builtin or custom: a kube-scheduler image with "
            "plugins of its own (--image; --custom-plugin unless it is scheduler-plugins).",
        ),
    ] = None,
    custom_plugins: Annotated[
        list[str] | None,
        typer.Option(
            "--custom-plugin",
            help="With --program custom: a plugin the image adds, as NAME:Point[,Point…] "
            "(e.g. NodeLabelMatch:Filter); repeatable.",
        ),
    ] = None,
    plugins: Annotated[
        list[str] | None,
        typer.Option(
            "--plugin",
            help="With --program builtin: a plugin file (.py) of the scheduler, copied into "
            "the workspace as plugins/FILE and listed in spec.builtin.plugins; repeatable, "
            "in the order they run.",
        ),
    ] = None,
    replaces_default: Annotated[
        bool,
        typer.Option(
            "--replaces-default",
            help="Replace the cluster's default scheduler: NAME must be default-scheduler; it "
            "runs in kube-system and holds the Lease kube-system/kube-scheduler.",
        ),
    ] = False,
    route_namespace_labels: Annotated[
        list[str] | None,
        typer.Option(
            "--route-namespace-label",
            metavar="KEY=VALUE",
            help="spec.routing: send new pods of namespaces with this label to the scheduler "
            "(a MutatingAdmissionPolicy; Kubernetes 1.34+); repeatable, all must match.",
        ),
    ] = None,
    route_pod_labels: Annotated[
        list[str] | None,
        typer.Option(
            "--route-pod-label",
            metavar="KEY=VALUE",
            help="spec.routing: only pods with this label; repeatable, all must match.",
        ),
    ] = None,
    force: Annotated[
        bool,
        typer.Option(
            "--force", help="Replace PARENT/NAME if it is a kschedctl workspace (or empty)."
        ),
    ] = False,
) -> None:
    """Write a scheduler workspace PARENT/NAME/ (see HELP)."""
    # Imported here so that --help and shell completion do not pay for the spec model.
    from kschedctl.ops.create import create_workspace
    from kschedctl.spec import PROGRAMS, CustomSettings, Routing, default_spec

    check_version_option(kubernetes_version)
    if program is not None and program not in PROGRAMS:
        bad_choice("--program", program, PROGRAMS)
    if custom_plugins and program != "custom":
        raise UsageError("--custom-plugin needs --program custom")
    if plugins and program != "builtin":
        raise UsageError("--plugin needs --program builtin (kschedctl's own scheduler)")
    custom = None
    if program == "custom":
        custom = CustomSettings(plugins=[_custom_plugin(text) for text in custom_plugins or []])
    spec = default_spec(
        name,
        program=program,
        custom=custom,
        kubernetes_version=kubernetes_version,
        namespace=namespace,
        replicas=replicas,
        leader_elect=leader_elect,
        image=image,
        replaces_default=replaces_default or None,
    )
    if route_namespace_labels or route_pod_labels:
        # checked with the spec: keys and values as Kubernetes checks labels
        spec.routing = Routing(
            namespace_selector=_match_labels("--route-namespace-label", route_namespace_labels),
            pod_selector=_match_labels("--route-pod-label", route_pod_labels),
        )
    created = create_workspace(spec, parent, plugins=plugins, force=force)
    for path in created.paths:
        typer.echo(str(path))
    for warning in created.warnings:
        output.warn(warning)
    for note in created.notes:
        output.info(note)


def _custom_plugin(text: str) -> dict[str, object]:
    """``NAME:Point,Point`` → a spec.custom.plugins entry (checked with the spec)."""
    name, sep, points = text.partition(":")
    if not sep or not name or not points:
        raise UsageError(
            f"--custom-plugin {printable(text)}: expected NAME:Point[,Point…], "
            "e.g. NodeLabelMatch:Filter"
        )
    return {"name": name, "extensionPoints": [p.strip() for p in points.split(",")]}


def _match_labels(flag: str, given: list[str] | None) -> dict[str, object] | None:
    """``KEY=VALUE`` flags → a LabelSelector of matchLabels (None: the flag not given)."""
    if not given:
        return None
    labels: dict[str, str] = {}
    for text in given:
        key, sep, value = text.partition("=")
        if not sep or not key:
            raise UsageError(f"{flag} {printable(text)}: expected KEY=VALUE, e.g. team=ml")
        if labels.get(key, value) != value:
            raise UsageError(f"{flag}: {printable(key)} given twice with different values")
        labels[key] = value
    return {"matchLabels": labels}


HELP = (
    "Write a scheduler workspace PARENT/NAME/: scheduler.yaml and every rendered form.\n\n"
    "Files: scheduler.yaml (the spec, the one source of truth), "
    f"{forms.WORKSPACE_SCHEMA} (its JSON Schema), "
    + "".join(f"{f.file_name('NAME')}, " for f in forms.FORMS if not f.directory)
    + f"{forms.WORKSPACE_README}. Prints the paths written (stdout) and the next steps "
    "(stderr). Refuses an existing PARENT/NAME without --force; --force replaces only a "
    "kschedctl workspace or an empty directory. Works offline."
)


register = registers("create", create, help=HELP, no_args_is_help=True)
