"""Usage errors in kubectl's plain form, on stderr, exit 2::

    error: unknown flag: --namespce
    Did you mean --namespace?
    See 'kschedctl why -h' for help.

with a did-you-mean for flags and for the values of choice options (``--as deploymnet``), and
the program spelled as the user called it (``kubectl sched …`` as a kubectl plugin).
"""

from __future__ import annotations

import ast
import difflib
import re
from collections.abc import Sequence
from typing import Any, NoReturn

import typer
from typer._click import exceptions as click_exceptions  # typer's own copy of click
from typer._click.globals import get_current_context

from kschedctl.base.errors import printable

EXIT_USAGE = 2
ARGV = "kschedctl.argv"  # ctx.meta: the words the root command parsed
# typer's completion flags, left out in favour of `kschedctl completion SHELL`
_GONE = {"--install-completion", "--show-completion"}


def click_usage_error() -> type[Exception]:
    return click_exceptions.UsageError


class BadChoice(click_exceptions.UsageError):
    """A value a command checks against its choices itself (``--sort-by cpux``), printed like
    a bad value of a click choice. ``text``: the error line, when kubectl words it otherwise."""

    def __init__(self, name: str, value: str, choices: Sequence[str], text: str | None = None):
        super().__init__(text or name, ctx=get_current_context(silent=True))
        self.name, self.value, self.choices, self.text = name, value, list(choices), text


def bad_choice(name: str, value: str, choices: Sequence[str], text: str | None = None) -> NoReturn:
    """Exit 2 for ``value``, not one of ``choices`` of option or argument ``name``: the error,
    the closest choice (``Did you mean cpu?``) and ``See '… -h' for help.``"""
    raise BadChoice(name, value, choices, text)


def exit_on(err: Any, root: Any) -> None:
    """Print ``err`` (click's UsageError) kubectl's way and exit 2; a request for help (no
    arguments to a command that needs some) is left to click. ``root``: the root command's
    context, for an error raised without one (an option missing its value)."""
    if isinstance(err, getattr(click_exceptions, "NoArgsIsHelpError", ())):
        return
    ctx = err.ctx or root
    path = ctx.command_path if err.ctx is not None else _named_path(root)
    lines = message(err, ctx)
    lines.append(f"See '{printable(path)} -h' for help.")
    for line in lines:
        typer.echo(line, err=True)
    _exit(ctx)


def _named_path(root: Any) -> str:
    # the command the words name (`kschedctl lab up`): the command an error without a
    # context of its own came from
    words, command = [root.command_path], root.command
    for word in root.meta.get(ARGV, []):
        sub = getattr(command, "commands", {}).get(word)
        if sub is None:
            if not word.startswith("-"):
                break
            continue
        words.append(word)
        command = sub
    return " ".join(words)


def _exit(ctx: Any) -> NoReturn:
    raise typer.Exit(EXIT_USAGE)


def message(err: Any, ctx: Any) -> list[str]:
    """The error line and, when one is close, the did-you-mean line."""
    if isinstance(err, click_exceptions.NoSuchOption):
        flag = err.option_name
        if flag in _GONE:
            root = ctx.find_root().info_name or "kschedctl"
            return [
                f"error: unknown flag: {flag}",
                f"Completion scripts come from '{root} completion bash|zsh|fish|powershell'.",
            ]
        names = [o for p in ctx.command.get_params(ctx) for o in (*p.opts, *p.secondary_opts)]
        lines = [f"error: unknown flag: {printable(flag)}"]
        return lines + _did_you_mean(flag, [n for n in names if n.startswith("-")])
    if isinstance(err, BadChoice):
        return _choice_lines(err.name, err.value, err.choices, err.text)
    param = getattr(err, "param", None)
    choices = [
        getattr(c, "value", c) for c in getattr(getattr(param, "type", None), "choices", None) or ()
    ]
    if isinstance(err, click_exceptions.BadParameter) and param is not None and choices:
        if param.param_type_name == "option":
            value = given_value(param, ctx.meta.get(ARGV, []))
            name = ", ".join(param.opts)
        else:
            value = _rejected(err.message)
            name = param.metavar or (param.name or "").upper()
        if value is not None:
            return _choice_lines(name, value, [str(c) for c in choices])
    text = printable(" ".join(err.format_message().split()))
    return [f"error: {text[:1].lower()}{text[1:]}"]


def _choice_lines(
    name: str, value: str, choices: Sequence[str], text: str | None = None
) -> list[str]:
    first = text or f'invalid value "{value}" for {name}: one of {", ".join(choices)}'
    return [f"error: {printable(first)}", *_did_you_mean(value, list(choices))]


# typer's choice type rejects an argument's value as "'zhs' is not one of …": the value is
# the quoted word it starts with (an argument, unlike an option, has no flag to find in argv)
_REJECTED = re.compile(r"""^('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*") is not one of""")


def _rejected(text: str) -> str | None:
    found = _REJECTED.match(text)
    value = ast.literal_eval(found.group(1)) if found else None
    return value if isinstance(value, str) else None


def given_value(param: Any, argv: list[str]) -> str | None:
    """The value the command line gave option ``param`` (its last one), if it can be found."""
    found = None
    for index, word in enumerate(argv):
        for opt in param.opts:
            if word == opt and index + 1 < len(argv):
                found = argv[index + 1]
            elif opt.startswith("--") and word.startswith(f"{opt}="):
                found = word.split("=", 1)[1]
            elif not opt.startswith("--") and word.startswith(opt) and len(word) > len(opt):
                found = word[len(opt) :]
    return found


def _did_you_mean(word: str, candidates: list[str]) -> list[str]:
    close = difflib.get_close_matches(word, candidates, n=1, cutoff=0.6)
    return [f"Did you mean {close[0]}?"] if close else []
