"""``kschedctl render SRC --as FORM``: print one rendered form to stdout (offline)."""

# No "from __future__ import annotations": typer would re-evaluate every annotation string
# at each start-up; evaluated once at import they cost less (benchmarks/startup.py).

import sys
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from kschedctl.base.errors import UsageError
from kschedctl.cli import registers
from kschedctl.cli.options import (
    DATA_FORMATS,
    DEFAULT_PRINTING,
    KubernetesVersion,
    Printing,
    check_version_option,
    output_flags,
)
from kschedctl.cli.paths import guard_paths
from kschedctl.render import forms

# The choices and their help come from the FORMS table (kschedctl.render.forms imports only
# the standard library at module level, so --help and completion stay cheap).
Form = Enum("Form", {name: name for name in forms.RENDER_FORMS}, type=str)  # type: ignore[misc]


def _as_help() -> str:
    """``--as`` help: each form (with a note where its name does not say it), then the helpers."""
    listed = [
        f"{f.name} ({f.help})" if f.help else f.name
        for f in forms.FORMS
        if not f.host_helper and not f.directory
    ]
    helpers = [f for f in forms.FORMS if f.host_helper]
    return (
        f"What to print: {', '.join(listed)}; {' / '.join(f.name for f in helpers)}: "
        f"the {' and '.join(f.help for f in helpers)} the {' and '.join(forms.HOST_FORMS)} "
        f"forms need; {' / '.join(forms.DIRECTORY_FORMS)}: GitOps exports, written to DIR."
    )


@guard_paths
@output_flags(DATA_FORMATS, "")
def render(
    src: Annotated[
        str,
        typer.Argument(
            help="A workspace directory, a spec file, or a bare scheduler name (all defaults).",
            metavar="SRC",
            show_default=False,
        ),
    ],
    form: Annotated[
        Form,
        typer.Option(
            "--as",
            help=_as_help(),
            case_sensitive=False,
            show_default=False,
        ),
    ],
    add_to: Annotated[
        Path | None,
        typer.Option(
            "--add-to",
            help=(
                "With --as config: print this existing KubeSchedulerConfiguration with the "
                "scheduler's profile(s) added (one kube-scheduler, several names)."
            ),
            show_default=False,
        ),
    ] = None,
    directory: Annotated[
        Path | None,
        typer.Argument(
            help=f"The directory {' and '.join(forms.DIRECTORY_FORMS)} write (new or empty).",
            metavar="[DIR]",
            show_default=False,
        ),
    ] = None,
    kubernetes_version: KubernetesVersion = None,
    printing: Printing = DEFAULT_PRINTING,
) -> None:
    """Print one rendered form of a scheduler (see HELP)."""
    # Imported here so that --help and shell completion do not pay for the spec model.
    from kschedctl import spec as specs

    fmt = printing.format() if printing.out is not None else None
    check_version_option(kubernetes_version)
    if add_to is not None and form.value != "config":
        raise UsageError("--add-to works with --as config only")
    exported = form.value in forms.DIRECTORY_FORMS
    if exported and directory is None:
        raise UsageError(f"--as {form.value} writes a directory: name it, e.g. "
                         f"kschedctl render {src} --as {form.value} ./{form.value}")  # fmt: skip
    if directory is not None and not exported:
        raise UsageError(f"--as {form.value} prints to stdout; DIR is for "
                         f"{' and '.join(forms.DIRECTORY_FORMS)} only")  # fmt: skip
    spec = specs.spec_from_source(src)
    if kubernetes_version is not None:
        spec = specs.ensure_valid(specs.with_version(spec, kubernetes_version), source=src)
    if directory is not None:
        from kschedctl.render.workspace import write_export  # on use: exports only

        for path in write_export(directory, forms.render_directory(spec, form.value)):
            typer.echo(str(path))
        return
    if add_to is not None:
        text = specs.read_text(add_to)
        from kschedctl.render.added_profile import add_profile  # on use: --add-to only

        rendered = add_profile(text, spec, source=str(add_to))
    else:
        rendered = forms.render(spec, form.value)
    if fmt is None or fmt.kind == "yaml":
        # -o yaml: the documents as rendered (comments kept), what kubectl apply -f - reads
        sys.stdout.write(rendered)
        sys.stdout.flush()
        return
    from kschedctl.cli import output  # on use: rich and the printers (start-up)

    output.emit(rendered_objects(rendered, form.value), fmt, no_headers=printing.no_headers)


def rendered_objects(text: str, form: str) -> object:
    """The rendered documents as ``-o json`` and the templates read them: the object for one
    document, a kubectl ``List`` for several. A form that is not Kubernetes objects (the
    systemd unit) is refused with exit 2."""
    import yaml  # on use (start-up)

    from kschedctl.printers.formats import as_list

    try:
        documents = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError:
        documents = []
    if not documents or not all(isinstance(d, dict) and d.get("kind") for d in documents):
        raise UsageError(
            f"--as {form} is not Kubernetes objects: only the text form prints it",
            hint=f"kschedctl render SRC --as {form} (without -o)",
        )
    return documents[0] if len(documents) == 1 else as_list(documents)


HELP = (
    "Print one rendered form of a scheduler to stdout; bundles are multi-document YAML. "
    f"{' and '.join(forms.DIRECTORY_FORMS)} (GitOps exports) are directories: written to DIR, "
    "their paths printed.\n\n"
    "SRC is a workspace directory (from create), a spec file, or a bare scheduler name "
    "(all defaults). Pipe it on: kschedctl render my-scheduler --as deployment | "
    "kubectl apply -f -. Works offline."
)


register = registers("render", render, help=HELP, no_args_is_help=True)
