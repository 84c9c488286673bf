"""Generate the shell completion scripts in ``completions/`` (bash, zsh, fish, PowerShell).

Run ``python -m kschedctl.cli.completion_scripts`` after changing any command or option;
``--check`` only reports drift (a test runs it). The scripts come from typer's own
completion support (what ``_KSCHEDCTL_COMPLETE=source_<shell> kschedctl`` prints; ``kschedctl
completion SHELL`` prints the same): they call back into
kschedctl for candidates, so they stay correct as long as the program name and typer's
protocol do. Each script ends with a comment listing the command tree, which makes a changed
command surface show up as drift, so the committed scripts are regenerated with the CLI.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer

from kschedctl.base.generated import write_or_check

PROG = "kschedctl"
COMPLETE_VAR = "_KSCHEDCTL_COMPLETE"
# shell → file name, following each shell's convention for completion files.
FILES = {
    "bash": "kschedctl.bash",
    "zsh": "_kschedctl",
    "fish": "kschedctl.fish",
    "powershell": "kschedctl.ps1",
}
# The command tree as data, for kschedctl/quick_complete.py (answers a TAB without typer):
# a Python module, loaded from its bytecode cache (JSON would cost json's and re's imports).
TABLE_MODULE = "_generated/completion_table.py"
REGENERATE = "python -m kschedctl.cli.completion_scripts"


def source_dir() -> Path:
    """The committed completions/ directory of the source tree."""
    return Path(__file__).resolve().parents[2] / "completions"


def _typer_script(shell: str) -> str:
    # what `_KSCHEDCTL_COMPLETE=source_<shell> kschedctl` prints, made in this process
    from typer._click.shell_completion import get_completion_class
    from typer._completion_classes import completion_init

    from kschedctl.cli import app  # here: kschedctl.cli registers the commands on import

    completion_init()
    complete = get_completion_class(shell)
    if complete is None:
        raise RuntimeError(f"typer has no completion for {shell}")
    script = complete(typer.main.get_command(app), {}, PROG, COMPLETE_VAR).source()
    return script.strip("\n") + "\n"  # zsh wants #compdef on line 1


def command_tree() -> list[str]:
    """One line per command: its path, arguments and options (sorted, stable)."""
    from kschedctl.cli import app  # here: kschedctl.cli registers the commands on import

    lines: list[str] = []

    # Duck-typed click objects: typer >= 0.20 vendors its own copy of click.
    def walk(cmd: Any, path: list[str]) -> None:
        commands = getattr(cmd, "commands", None)
        if commands is not None:
            for name in sorted(commands):
                if not commands[name].hidden:
                    walk(commands[name], [*path, name])
            return
        params = [p for p in cmd.params if not getattr(p, "hidden", False)]
        args = [
            (p.metavar or p.name or "").upper() for p in params if p.param_type_name == "argument"
        ]
        opts = sorted(
            "/".join(p.opts + p.secondary_opts) for p in params if p.param_type_name == "option"
        )
        lines.append(" ".join([PROG, *path, *args, *opts]))

    walk(typer.main.get_command(app), [])
    return lines


def completion_table() -> dict[str, Any]:
    """What quick_complete needs to answer a TAB exactly as typer would, without loading it.

    Per command path (words joined by spaces, "" for the root): its visible subcommands and
    its parameters in click's order, each with the help texts already formatted the way
    typer's zsh and fish classes show them (on one line: typer wraps them at the width of
    the terminal the TAB came from, newlines included), static values (choices, ``completers.choices``),
    or the name of the completer that computes them at TAB time.
    """
    # on use: the generator runs at development time, not on a user's command line
    import re

    from rich.text import Text

    from kschedctl.cli import app

    def _sanitize_help_text(text: str) -> str:
        # typer renders help markup with rich (_completion_classes._sanitize_help_text),
        # wrapped at the terminal's width; here on one line, whatever the terminal
        return Text.from_markup(text).plain.rstrip("\n")

    def helps(text: str | None) -> dict[str, str]:
        if not text:
            return {}
        zsh = (
            text.replace('"', '""').replace("'", "''").replace("$", "\\$")
            .replace("`", "\\`").replace(":", r"\\:")
        )  # fmt: skip
        return {
            "zsh": _sanitize_help_text(zsh),
            "fish": _sanitize_help_text(re.sub(r"\s", " ", text)),
        }

    commands: dict[str, Any] = {}

    def param_entry(param: Any, ctx: Any) -> dict[str, Any]:
        opts = list(param.opts)
        if param.name == "help":
            # click builds the help option from a set (in hash order, new each process):
            # written in the order the app configures (-h, --help), so the table is stable
            opts.sort(key=lambda n: [*ctx.help_option_names, n].index(n))
        entry: dict[str, Any] = {
            "kind": param.param_type_name,
            "name": param.name,
            "opts": opts,
            "all_opts": [*opts, *param.secondary_opts],
            "flag": bool(getattr(param, "is_flag", False) or getattr(param, "count", False)),
            "multiple": bool(getattr(param, "multiple", False)),
            "nargs": param.nargs,
            "hidden": bool(getattr(param, "hidden", False)),
            # click runs callbacks while it parses a TAB's words (--version prints): a given
            # option with one is left to typer
            "callback": param.callback is not None and param.name != "help",
            **helps(getattr(param, "help", None)),
        }
        custom = getattr(param, "_custom_shell_complete", None)
        if custom is not None:
            callback = _autocompletion_of(custom)
            static = getattr(callback, "choices", None)
            if static is not None:
                entry["values"], entry["icase"] = list(static), False
            else:
                entry["completer"] = f"{callback.__module__}:{callback.__qualname__}"
        else:
            values = [item.value for item in param.type.shell_complete(ctx, param, "")]
            if any(not isinstance(v, str) for v in values) or any(
                item.type != "plain" for item in param.type.shell_complete(ctx, param, "")
            ):
                entry["completer"] = "typer"  # not a plain list: answered by typer itself
            elif values:
                entry["values"] = values
                entry["icase"] = not getattr(param.type, "case_sensitive", True)
        return entry

    # Duck-typed click objects: typer >= 0.20 vendors its own copy of click.
    def walk(cmd: Any, ctx: Any, path: list[str]) -> None:
        subcommands = getattr(cmd, "commands", None)
        node: dict[str, Any] = {
            "params": [param_entry(p, ctx) for p in cmd.get_params(ctx)],
            "commands": [],
        }
        commands[" ".join(path)] = node
        if subcommands is None:
            return
        for name in cmd.list_commands(ctx):
            sub = cmd.get_command(ctx, name)
            if sub is None:
                continue
            if not sub.hidden:
                node["commands"].append({"name": name, **helps(sub.get_short_help_str())})
            sub_ctx = sub.context_class(sub, info_name=name, parent=ctx, **sub.context_settings)
            walk(sub, sub_ctx, [*path, name])

    root = typer.main.get_command(app)
    walk(root, root.context_class(root, info_name=PROG, **root.context_settings), [])
    return {"prog": PROG, "commands": commands}


def _autocompletion_of(custom: Any) -> Any:
    """The function given as ``autocompletion=``: typer wraps it twice (a compat closure over
    a ``functools.update_wrapper`` wrapper of it)."""
    for cell in getattr(custom, "__closure__", None) or ():
        wrapped = getattr(cell.cell_contents, "__wrapped__", None)
        if wrapped is not None:
            return wrapped
    return custom


def table_path() -> Path:
    return Path(__file__).resolve().parents[1] / TABLE_MODULE


def table_text() -> str:
    import pprint  # on use, like the generator above

    body = pprint.pformat(completion_table(), width=100, sort_dicts=True)
    return (
        f'"""The command tree for shell completion. Generated by: {REGENERATE} (do not edit).\n'
        "\n"
        "Input: the typer command tree of kschedctl.cli (its commands, options and completers).\n"
        '"""\n'
        "\n"
        "from typing import Any\n"
        "\n"
        f"TABLE: dict[str, Any] = {body}\n"
    )


def completion_script(shell: str) -> str:
    tree = "\n".join(f"#   {line}" for line in command_tree())
    return (
        _typer_script(shell)
        + f"\n# Generated by: {REGENERATE} (do not edit). Commands when generated:\n"
        + tree
        + "\n"
    )


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    check = "--check" in args
    args = [a for a in args if a != "--check"]
    target = Path(args[0]) if args else source_dir()
    outputs = [
        (target / name, lambda shell=shell: completion_script(shell))
        for shell, name in FILES.items()
    ]
    return write_or_check(
        [*outputs, (table_path(), table_text)],
        check=check,
        what="completion scripts",
        regenerate=REGENERATE,
    )


if __name__ == "__main__":
    sys.exit(main())
