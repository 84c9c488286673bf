"""``kschedctl completion SHELL``: print the completion script for that shell."""

from __future__ import annotations

from enum import Enum
from typing import Annotated

import typer

from kschedctl.base.errors import UsageError
from kschedctl.cli import registers
from kschedctl.cli.completion_scripts import FILES

Shell = Enum("Shell", {name: name for name in FILES}, type=str)  # type: ignore[misc]

HELP = """Print the shell completion script for SHELL to stdout.

Load it in your shell's start-up file or save it where your shell looks for completions
(see the examples). The script asks kschedctl for the candidates at each TAB, so it stays
right when kschedctl is upgraded. As a kubectl plugin, kubectl's own completion
(kubectl completion SHELL) completes kubectl sched through kubectl_complete-sched."""


def completion(
    shell: Annotated[
        Shell,
        typer.Argument(help="bash, zsh, fish or powershell.", metavar="SHELL", show_default=False),
    ],
    ctx: typer.Context,
) -> None:
    # on use: the generator builds the whole CLI, which only this command needs
    from kschedctl.cli.completion_scripts import completion_script

    prog = ctx.find_root().info_name or "kschedctl"
    if prog != "kschedctl":
        raise UsageError(
            f"{prog} is completed by kubectl's own completion script",
            hint="kubectl completion bash (or zsh, fish, powershell): kubectl >= 1.26 asks "
            "kubectl_complete-sched for the candidates",
        )
    typer.echo(completion_script(shell.value), nl=False)


register = registers("completion", completion, help=HELP, no_args_is_help=True)
