"""Help as kubectl prints it: plain text, the commands in panels, an Examples section, one
metavar style (upper case: NAME, FILE, FORM), lines wrapped between words only.

Every command class of the CLI gets :class:`PlainHelp` mixed in (``kschedctl.cli.build_app``),
so help is formatted here and nowhere else; what it says per command (panel, one-line summary,
examples) comes from :mod:`kschedctl.cli.examples`.
"""

from __future__ import annotations

import inspect
import os
import shutil
import textwrap
from typing import Any

from kschedctl.cli import examples

# Options whose long name does not say what their value is.
_METAVARS = {
    "as": "FORM",
    "dry-run": "MODE",
    "sort-by": "FIELD",
    "output": "FORMAT",
    "kubeconfig": "FILE",
    "root": "DIR",
}
_NAME_COLUMN = 24  # at most: a longer name puts its help on the next line, as click does
_MAX_WIDTH = 100


def width() -> int:
    """The width help is wrapped at: the terminal's (or $COLUMNS), at most 100."""
    columns = os.environ.get("COLUMNS", "")
    total = int(columns) if columns.isdigit() else shutil.get_terminal_size().columns
    return max(40, min(total, _MAX_WIDTH))


def _wrap(text: str, size: int, indent: str = "") -> list[str]:
    # never inside a word (a long word overflows its line) nor at a hyphen (static-pod)
    return textwrap.wrap(
        text,
        max(size, 20),
        initial_indent=indent,
        subsequent_indent=indent,
        break_long_words=False,
        break_on_hyphens=False,
    ) or [indent.rstrip()]


def metavar(param: Any) -> str:
    """The placeholder of an option's value or of an argument, upper case."""
    explicit = getattr(param, "metavar", None)
    if param.param_type_name == "argument":
        name = explicit if explicit and explicit == explicit.upper() else (param.name or "ARG")
        name = name.strip("[]").upper().replace("_", "-")
        if param.nargs != 1 and not name.endswith("..."):
            name += "..."
        return name if param.required else f"[{name}]"
    if getattr(param, "is_flag", False) or getattr(param, "count", False):
        return ""
    if explicit and explicit == explicit.upper() and not explicit.startswith("["):
        return explicit
    longest = max(param.opts, key=len).lstrip("-")
    last = longest.split("-")[-1]
    if longest in _METAVARS:
        return _METAVARS[longest]
    kind = getattr(param.type, "name", "")
    if kind in ("int", "int range"):
        return "N"
    if kind in ("float", "float range"):
        return "SECONDS" if last in ("timeout", "settle", "duration", "deadline", "period",
                                     "backoff") else "NUMBER"  # fmt: skip
    if kind == "path" or last == "dir":
        return "DIR" if last == "dir" or not getattr(param.type, "file_okay", True) else "FILE"
    return last.upper()


def _plain(text: str) -> str:
    # help texts were written for rich's markup, where a bracket is escaped: \[pod]
    return " ".join(text.replace("\\[", "[").split())


def _choices(param: Any) -> list[str]:
    choices = getattr(param.type, "choices", None) or ()
    return [getattr(c, "value", c) for c in choices]


def option_name(param: Any) -> str:
    value = metavar(param)
    shorts = [o for o in param.opts if not o.startswith("--")]
    longs = [o for o in param.opts if o.startswith("--")]
    names = ", ".join([*shorts, *longs])
    if param.secondary_opts:
        names += " / " + ", ".join(param.secondary_opts)
    return f"{names} {value}" if value else names


def option_help(param: Any, ctx: Any) -> str:
    record = param.get_help_record(ctx)
    text = _plain(record[1] if record else "")
    choices = _choices(param)
    if choices and not all(choice in text for choice in choices):
        text = f"{text} One of: {', '.join(choices)}.".strip()
    return text


def _definitions(rows: list[tuple[str, str]], total: int, column: int = 0) -> list[str]:
    column = column or min(max((len(name) for name, _ in rows), default=0), _NAME_COLUMN)
    lines: list[str] = []
    for name, text in rows:
        indent = " " * (column + 4)
        body = _wrap(text, total - 1, indent) if text else []
        if len(name) > column:
            lines.append(f"  {name}")
            lines += body
        elif body:
            lines.append(f"  {name.ljust(column)}  {body[0].lstrip()}")
            lines += body[1:]
        else:
            lines.append(f"  {name}")
    return lines


def _paragraphs(text: str, total: int) -> list[str]:
    lines: list[str] = []
    for paragraph in inspect.cleandoc(text).split("\n\n"):
        paragraph = paragraph.replace("\b\n", "").strip("\b\n")
        if not paragraph.strip():
            continue
        if lines:
            lines.append("")
        lines += _wrap(_plain(paragraph), total - 1, "  ")
    return lines


def command_path(ctx: Any) -> str:
    """The command's words after the program name: "", "deploy", "lab up"."""
    words = []
    while ctx.parent is not None:
        words.append(ctx.info_name or "")
        ctx = ctx.parent
    return " ".join(reversed(words))


def prog(ctx: Any) -> str:
    return ctx.find_root().info_name or "kschedctl"


def usage(command: Any, ctx: Any) -> str:
    pieces = (
        ["[OPTIONS]"] if any(p.param_type_name == "option" for p in command.get_params(ctx)) else []
    )
    pieces += [
        metavar(p) for p in command.params if p.param_type_name == "argument" and not p.hidden
    ]
    if getattr(command, "commands", None) is not None:
        pieces.append("COMMAND [ARGS]...")
    return f"Usage: {ctx.command_path} {' '.join(pieces)}".rstrip()


def examples_lines(ctx: Any) -> list[str]:
    lines: list[str] = []
    for comment, line in examples.examples(command_path(ctx)):
        if lines:
            lines.append("")
        lines.append(f"  # {comment}")
        lines.append(f"  {examples.spelled(line, prog(ctx))}")
    return lines


def help_text(command: Any, ctx: Any) -> str:
    """The whole help of ``command``, as ``-h`` prints it."""
    total = width()
    out = [usage(command, ctx), ""]
    if command.help:
        out += [*_paragraphs(command.help, total), ""]
    if examples_lines(ctx):
        out += ["Examples:", *examples_lines(ctx), ""]
    arguments = [
        (metavar(p).strip("[]"), option_help(p, ctx))
        for p in command.get_params(ctx)
        if p.param_type_name == "argument" and not p.hidden and p.help
    ]
    if arguments:
        out += ["Arguments:", *_definitions(arguments, total), ""]
    subcommands = getattr(command, "commands", None)
    if subcommands is not None:
        out += _command_sections(command, ctx, total)
    options = [
        (option_name(p), option_help(p, ctx))
        for p in command.get_params(ctx)
        if p.param_type_name == "option" and not p.hidden
    ]
    if options:
        out += ["Options:", *_definitions(options, total), ""]
    if subcommands is not None:
        out.append(f"Use '{ctx.command_path} COMMAND -h' for more about a command.")
    return "\n".join(out).rstrip("\n") + "\n"


def _command_sections(group: Any, ctx: Any, total: int) -> list[str]:
    panels: dict[str, list[tuple[str, str]]] = {}
    for name in group.list_commands(ctx):
        sub = group.get_command(ctx, name)
        if sub is None or sub.hidden:
            continue
        path = f"{command_path(ctx)} {name}".strip()
        summary = examples.summary(path) or sub.get_short_help_str(limit=total)
        panels.setdefault(examples.panel(path), []).append((name, summary))
    out: list[str] = []
    # one name column for every panel, as kubectl aligns its command groups
    column = max((len(name) for rows in panels.values() for name, _ in rows), default=0)
    for title in sorted(panels, key=examples.panel_order):
        out += [f"{title}:", *_definitions(panels[title], total, column), ""]
    return out


class PlainHelp:
    """Mixed into every command class: help formatted by :func:`help_text`."""

    def get_help(self, ctx: Any) -> str:
        return help_text(self, ctx).rstrip("\n")
