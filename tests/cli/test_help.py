"""Help people can scan: every command's -h at 80 columns, its Examples section, the
examples themselves parsed by the real CLI, and usage errors in kubectl's plain form."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from typing import Any

import pytest
import typer.main
from typer._click import exceptions as click_exceptions
from typer.testing import CliRunner

from kschedctl import cli
from kschedctl.cli import examples, helpformat


def _commands() -> Iterator[tuple[str, Any]]:
    """(command words, click command) of every visible command and group, the root first."""

    def walk(cmd: Any, words: list[str]) -> Iterator[tuple[str, Any]]:
        yield " ".join(words), cmd
        for name, sub in sorted(getattr(cmd, "commands", {}).items()):
            if not sub.hidden:
                yield from walk(sub, [*words, name])

    yield from walk(typer.main.get_command(cli.app), [])


COMMANDS = dict(_commands())


def _help(words: str, monkeypatch: pytest.MonkeyPatch, prog: str = "kschedctl") -> str:
    monkeypatch.setenv("COLUMNS", "80")
    result = CliRunner().invoke(cli.app, [*words.split(), "-h"], prog_name=prog)
    assert result.exit_code == 0, result.output
    return result.stdout


def _source_words(cmd: Any, ctx: Any) -> set[str]:
    """Every word the help of ``cmd`` is made of: its text, its options' names, metavars and
    help (as helpformat gives them)."""
    texts = [helpformat._plain(cmd.help or "")]
    for param in cmd.get_params(ctx):
        if getattr(param, "hidden", False):
            continue
        texts.append(helpformat.option_help(param, ctx))
        if param.param_type_name == "option":
            texts.append(helpformat.option_name(param))
    return {word for text in texts for word in text.split()}


@pytest.mark.parametrize("words", sorted(COMMANDS), ids=lambda w: w or "kschedctl")
def test_help_at_80_columns_cuts_no_word_and_has_examples(
    words: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = _help(words, monkeypatch)
    cmd = COMMANDS[words]
    ctx = cmd.context_class(cmd, info_name=words.split()[-1] if words else "kschedctl")
    shown = set(text.split())
    # a word broken across lines, or cut short with "…", is not shown whole
    assert _source_words(cmd, ctx) - shown == set()
    lines = text.splitlines()
    assert all(len(line) <= 80 or " " not in line.strip() for line in lines)
    assert not any(line != line.rstrip() for line in lines)
    if words:  # the root lists the commands instead
        assert "Examples:" in lines
        first = lines.index("Examples:") + 1
        assert lines[first].startswith("  # ") and "kschedctl " in lines[first + 1]


def test_metavars_are_upper_case_and_arguments_look_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    for words, cmd in COMMANDS.items():
        for param in cmd.params:
            shown = helpformat.metavar(param)
            assert shown == shown.upper(), (words, param.name, shown)
        usage_line = _help(words, monkeypatch).splitlines()[0]
        assert not re.search(r"[{}]", usage_line), usage_line
    assert "--as FORM" in _help("render", monkeypatch)
    assert (
        "static-pod" in _help("render", monkeypatch).split("--as FORM")[1].replace(",", " ").split()
    )


def test_the_root_help_groups_commands_in_panels(monkeypatch: pytest.MonkeyPatch) -> None:
    text = _help("", monkeypatch)
    titles = [line for line in text.splitlines() if line.endswith("Commands:")]
    assert titles == [
        "Offline Commands:",
        "Cluster Commands:",
        "Troubleshooting Commands:",
        "Own Scheduler Commands:",
        "Lab Commands:",
        "Other Commands:",
    ]
    # one line per command: its summary, never the whole description
    for name in cli.COMMANDS:
        (line,) = [row for row in text.splitlines() if row.startswith(f"  {name} ")]
        assert examples.summary(name) in " ".join(line.split())
    assert "--install-completion" not in text and "--show-completion" not in text


def test_every_command_has_an_entry_and_every_entry_a_command() -> None:
    assert set(examples.HELP) == {words for words in COMMANDS if words}


def _example_args(line: str) -> list[list[str]]:
    """The kschedctl command lines in an example (a shell line: pipes, &&, redirections)."""
    shell = line.replace("<(", " ").replace("$(", " ").replace(")", " ")
    words = [word for quoted in shlex.split(shell) for word in quoted.split()]
    found: list[list[str]] = []
    current: list[str] | None = None
    for word in words:
        if word == "kschedctl":
            current = []
            found.append(current)
        elif word in ("|", "&&", ">", ";") or word.startswith(">"):
            current = None
        elif current is not None:
            current.append(word)
    return found


def _parse(args: list[str]) -> None:
    """Parse ``args`` as kschedctl would, without running the command: an unknown flag or a
    value an option refuses raises click's UsageError."""
    root = typer.main.get_command(cli.app)
    ctx = root.make_context("kschedctl", list(args))
    cmd: Any = root
    rest = [*getattr(ctx, "_protected_args", []), *ctx.args]
    while getattr(cmd, "commands", None) is not None and rest:
        name, cmd, rest = cmd.resolve_command(ctx, rest)
        try:
            ctx = cmd.make_context(name, list(rest), parent=ctx)
        except click_exceptions.BadParameter as err:
            # a file an example names need not exist here; everything else must parse
            if (
                getattr(getattr(err, "param", None), "type", None) is None
                or err.param.type.name != "path"
            ):
                raise
            return
        rest = [*getattr(ctx, "_protected_args", []), *ctx.args]


EXAMPLES = [(words, line) for words, (_, _, shown) in examples.HELP.items() for _, line in shown]


@pytest.mark.parametrize(("words", "line"), EXAMPLES, ids=[line for _, line in EXAMPLES])
def test_every_example_parses(words: str, line: str) -> None:
    runs = _example_args(line)
    assert runs, line
    for args in runs:
        _parse(args)
    assert any(" ".join(args).startswith(words) for args in runs), (words, line)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            ["why", "--namespce", "x"],
            [
                "error: unknown flag: --namespce",
                "Did you mean --namespace?",
                "See '{prog} why -h' for help.",
            ],
        ),
        (
            ["render", "x", "--as", "deploymnet"],
            [
                'error: invalid value "deploymnet" for --as: one of '
                "config, service, pod, deployment, routing, static-pod, example-pod, "
                "helm-chart, kustomize, host-config, host-rbac",
                "Did you mean deployment?",
                "See '{prog} render -h' for help.",
            ],
        ),
        (
            ["deploy", "x", "--as=deploymnet"],
            [
                'error: invalid value "deploymnet" for --as: one of '
                "pod, deployment, service, static-pod",
                "Did you mean deployment?",
                "See '{prog} deploy -h' for help.",
            ],
        ),
        (["--bogus"], ["error: unknown flag: --bogus", "See '{prog} -h' for help."]),
        (
            ["lab", "up", "--nodes"],
            ["error: option '--nodes' requires an argument.", "See '{prog} lab up -h' for help."],
        ),
        (
            ["--install-completion"],
            [
                "error: unknown flag: --install-completion",
                "Completion scripts come from '{prog} completion bash|zsh|fish|powershell'.",
                "See '{prog} -h' for help.",
            ],
        ),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) and v and v[0][:1] != "e" else "",
)
@pytest.mark.parametrize("prog", ["kschedctl", "kubectl sched"])
def test_usage_errors_are_plain_with_did_you_mean(
    args: list[str], expected: list[str], prog: str
) -> None:
    result = CliRunner().invoke(cli.app, args, prog_name=prog, env={"NO_COLOR": "1"})
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.splitlines() == [line.format(prog=prog) for line in expected]


def test_examples_name_the_program_as_called(monkeypatch: pytest.MonkeyPatch) -> None:
    text = _help("why", monkeypatch, prog="kubectl sched")
    assert "  kubectl sched why web-0 -n team-a" in text.splitlines()
    assert text.startswith("Usage: kubectl sched why ")
