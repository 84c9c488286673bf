"""The command-line interface: one typer module per command group, registered here.

This package parses arguments, calls the core and presents results. It is the only place
that turns a :class:`~kschedctl.errors.KschedError` into ``error:``/``hint:`` on stderr and an
exit code (see :class:`KschedGroup`).
"""

from __future__ import annotations

import re
from typing import Any

import typer
from typer.core import TyperGroup

from kschedctl import __version__
from kschedctl.errors import EXIT_INTERRUPTED, KschedError, printable

# A command line quoted in a message: `kschedctl …` or $(kschedctl …).
_QUOTED_COMMAND = re.compile(r"(`|\$\()kschedctl ")


def report_error(err: KschedError, prog: str = "kschedctl") -> None:
    # Messages may quote user text: each of their lines is printed without control characters
    # (no terminal escape sequences, no carriage return overwriting the line). The commands
    # they suggest are spelled the way the user called us (`kubectl sched …` as a plugin).
    typer.echo(f"error: {_lines(err.message, prog)}", err=True)
    if err.hint:
        typer.echo(f"hint: {_lines(err.hint, prog)}", err=True)


def _lines(text: str, prog: str) -> str:
    if prog != "kschedctl":
        text = _QUOTED_COMMAND.sub(lambda m: f"{m.group(1)}{prog} ", text)
    return "\n".join(printable(line) for line in text.split("\n"))


class KschedGroup(TyperGroup):
    """Root group: the one place errors become messages and exit codes."""

    # typer.Context narrows click's Context; click always passes typer's here.
    def invoke(self, ctx: typer.Context) -> Any:  # type: ignore[override]
        try:
            return super().invoke(ctx)
        except KschedError as err:
            report_error(err, ctx.find_root().info_name or "kschedctl")
            ctx.exit(err.exit_code)
        except KeyboardInterrupt:
            typer.echo("interrupted", err=True)
            ctx.exit(EXIT_INTERRUPTED)


app = typer.Typer(
    name="kschedctl",
    cls=KschedGroup,
    help="Run more than one scheduler in a Kubernetes cluster: write, deploy, watch, debug.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    rich_markup_mode="rich",
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"kschedctl {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Show the version and exit."
    ),
) -> None:
    """Run more than one scheduler in a Kubernetes cluster: write, deploy, watch, debug."""


# In the order they appear in --help.
COMMAND_MODULES: tuple[str, ...] = (
    "create",
    "render",
    "validate",
    "schema",
    "deploy",
    "remove",
    "inventory",
    "status",
    "why",
    "events",
    "top",
    "snapshot",
    "logs",
    "scheduler",
    "simulate",
    "lab",
)


def _register() -> None:
    # Each command module exposes register(app). They import heavy things (the kubernetes
    # client above all) inside command bodies only, so offline commands stay fast.
    import importlib

    for name in COMMAND_MODULES:
        importlib.import_module(f"kschedctl.cli.{name}").register(app)


_register()


def main() -> None:
    app(prog_name="kschedctl")


if __name__ == "__main__":  # pragma: no cover
    main()
