"""The command-line interface: one typer module per command group, registered here.

This package parses arguments, calls the core and presents results. It is the only place
that turns a :class:`~kschedctl.base.errors.KschedError` into ``error:``/``hint:`` on stderr and an
exit code (see :class:`KschedGroup`).
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import os
import sys
from collections.abc import Callable, Iterable
from typing import Any

import typer
from typer._completion_classes import completion_init
from typer.core import TyperCommand, TyperGroup

from kschedctl import __version__
from kschedctl.base.errors import EXIT_INTERRUPTED, KschedError, as_called, printable
from kschedctl.base.signals import Terminated, unwinding_on_termination
from kschedctl.cli import examples, usage
from kschedctl.cli.helpformat import PlainHelp
from kschedctl.cli.usage import click_usage_error


def report_error(err: KschedError) -> None:
    # Messages may quote user text: each of their lines is printed without control characters
    # (no terminal escape sequences, no carriage return overwriting the line). The commands
    # they suggest are spelled the way the user called us (`kubectl sched …` as a plugin:
    # kschedctl.base.errors.called_as).
    typer.echo(f"error: {_lines(err.message)}", err=True)
    if err.hint:
        typer.echo(f"hint: {_lines(err.hint)}", err=True)


def _lines(text: str) -> str:
    return "\n".join(printable(line) for line in as_called(text).split("\n"))


class KschedGroup(PlainHelp, TyperGroup):
    """Root group: the one place errors become messages and exit codes, and where SIGTERM and
    SIGHUP become an unwinding like Ctrl-C's (:mod:`kschedctl.base.signals`): whatever a command
    started (a lab, a child process) is stopped on the way out, whichever of them ends it.
    Usage errors (an unknown flag, a bad value) are printed in kubectl's plain form
    (:mod:`kschedctl.cli.usage`)."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        ctx.meta[usage.ARGV] = list(args)
        try:
            return super().parse_args(ctx, args)
        except click_usage_error() as err:
            usage.exit_on(err, ctx)
            raise

    # typer.Context narrows click's Context; click always passes typer's here.
    def invoke(self, ctx: typer.Context) -> Any:  # type: ignore[override]
        try:
            with unwinding_on_termination():
                return super().invoke(ctx)
        except click_usage_error() as err:
            usage.exit_on(err, ctx)
            raise
        except KschedError as err:
            report_error(err)
            ctx.exit(err.exit_code)
        except KeyboardInterrupt:
            _say("interrupted")
            ctx.exit(EXIT_INTERRUPTED)
        except Terminated as err:
            _say(str(err))
            ctx.exit(err.exit_code)


def _say(message: str) -> None:
    # After a SIGHUP the terminal may be gone: the exit code must not depend on stderr.
    with contextlib.suppress(OSError):
        typer.echo(message, err=True)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"kschedctl {__version__}")
        raise typer.Exit()


def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Show the version and exit."
    ),
) -> None:
    """Run more than one scheduler in a Kubernetes cluster: write, deploy, watch, debug."""


# Every command: its name → the module whose register(app) adds it, in the order of --help
# (groups such as top, scheduler and lab come after the plain commands there;
# tests/cli/test_cli_registry.py checks the table against what the modules register). Command
# modules import heavy things (the kubernetes client above all) inside command bodies only.
COMMANDS: dict[str, str] = {
    "create": "create",
    "render": "render",
    "validate": "validate",
    "schema": "schema",
    "deploy": "deploy",
    "diff": "diff",
    "remove": "remove",
    "history": "history",
    "rollback": "rollback",
    "list": "inventory",
    "status": "status",
    "why": "why",
    "events": "events",
    "top": "top",
    "snapshot": "snapshot",
    "logs": "logs",
    "scheduler": "scheduler",
    "simulate": "simulate",
    "lab": "lab",
    "completion": "completion",
    "version": "version",
}


def registers(
    name: str, command: Callable[..., Any], **settings: Any
) -> Callable[[typer.Typer], None]:
    """The ``register(app)`` of a module whose one command is ``command``: added as ``name``,
    with typer's ``settings`` (help, no_args_is_help, cls)."""

    def register(app: typer.Typer) -> None:
        app.command(name, **settings)(command)

    return register


def build_app(modules: Iterable[str] | None = None) -> typer.Typer:
    """The CLI with the commands of ``modules`` (default: all of them)."""
    built = typer.Typer(
        name="kschedctl",
        cls=KschedGroup,
        help="Run more than one scheduler in a Kubernetes cluster: write, deploy, watch, debug.",
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        context_settings={"help_option_names": ["-h", "--help"]},
        # help and usage errors are plain text, formatted by kschedctl.cli.helpformat
        rich_markup_mode=None,
        # typer's --install-completion/--show-completion guess the shell (and got it wrong):
        # `kschedctl completion SHELL` prints the script for the shell named
        add_completion=False,
    )
    built.callback()(_root)
    # typer registers its shells' completion classes only with add_completion: the scripts
    # of `kschedctl completion` call back with _KSCHEDCTL_COMPLETE=complete_<shell>
    completion_init()
    for module in dict.fromkeys(COMMANDS.values()) if modules is None else modules:
        importlib.import_module(f"kschedctl.cli.{module}").register(built)
    _describe(built.registered_commands, built.registered_groups, "")
    return built


def _describe(commands: list[Any], groups: list[Any], prefix: str) -> None:
    # Every command gets the one-line summary of kschedctl.cli.examples and kschedctl's plain
    # help (a class with PlainHelp mixed in, whatever class its module chose).
    for info in commands:
        name = info.name or info.callback.__name__.replace("_", "-")
        info.short_help = examples.summary(f"{prefix}{name}") or info.short_help
        info.cls = _plain(info.cls if isinstance(info.cls, type) else TyperCommand)
    for info in groups:
        name = info.name if isinstance(info.name, str) else ""
        summary = examples.summary(f"{prefix}{name}")
        if summary:
            info.short_help = summary
        base = info.cls if isinstance(info.cls, type) else None
        own = info.typer_instance.info.cls
        info.cls = _plain(base or (own if isinstance(own, type) else TyperGroup))
        sub = info.typer_instance
        _describe(sub.registered_commands, sub.registered_groups, f"{prefix}{name} ")


@functools.cache
def _plain(base: type) -> type:
    if issubclass(base, PlainHelp):
        return base
    return type(base.__name__, (PlainHelp, base), {"__module__": base.__module__})


app: typer.Typer  # the whole CLI, built on first use (tests, the kubectl plugin, completion)


def __getattr__(name: str) -> Any:
    if name == "app":
        globals()["app"] = built = build_app()
        return built
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _modules_for(args: list[str]) -> tuple[str, ...] | None:
    # A command line that names its command needs only that command's module: typer reads the
    # signature of every registered function when it builds the group (about a third of an
    # offline command's start-up with all of them). --help, --version, completion and an
    # unknown name get the whole CLI, so their output lists every command.
    if args and args[0] in COMMANDS and "_KSCHEDCTL_COMPLETE" not in os.environ:
        return (COMMANDS[args[0]],)
    return None


def main() -> None:
    build_app(_modules_for(sys.argv[1:]))(prog_name="kschedctl")


if __name__ == "__main__":  # pragma: no cover
    main()
