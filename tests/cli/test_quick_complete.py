"""quick_complete answers a TAB exactly as typer does, or leaves it to typer.

Every command, option name, option value and argument position of the table is completed
by both, for bash, zsh and fish, and compared byte for byte — with typer's wrapping of zsh
and fish descriptions at the terminal's width turned off (quick_complete keeps each one on
one line, whatever the terminal).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import typer

from kschedctl import quick_complete
from kschedctl.cli import app, completion_scripts

TABLE = completion_scripts.completion_table()
COMMAND_PATHS = sorted(TABLE["commands"])


def _configured_order(self, ctx) -> list[str]:
    # click orders -h/--help by a set (hash order, per process); the table by the app's list
    names = [n for n in ctx.help_option_names if n not in {o for p in self.params for o in p.opts}]
    return names


@pytest.fixture(scope="module")
def cli():
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("typer._click.core.Command.get_help_option_names", _configured_order)
        yield typer.main.get_command(app)  # built once: typer builds it anew on each call


def typer_answer(
    cli, shell: str, env: dict[str, str], monkeypatch, capsys
) -> tuple[str | None, int]:
    from typer._completion_classes import completion_init
    from typer.completion import shell_complete

    completion_init()
    monkeypatch.setattr("typer.rich_utils.MAX_WIDTH", 1_000_000)  # no wrapping
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    try:
        code = shell_complete(cli, {}, "kschedctl", "_KSCHEDCTL_COMPLETE", f"complete_{shell}")
    except SystemExit as stop:  # fish's is-args answers with its exit status
        code = int(stop.code or 0)
        return None, code
    out = capsys.readouterr().out
    return out[:-1] if out.endswith("\n") else out, code


def shell_env(shell: str, line: str, action: str = "get-args") -> dict[str, str]:
    if shell == "bash":
        return {"COMP_WORDS": line, "COMP_CWORD": str(len(line.split(" ")) - 1)}
    env = {"_TYPER_COMPLETE_ARGS": line}
    if shell == "fish":
        env["_TYPER_COMPLETE_FISH_ACTION"] = action
    return env


def lines() -> list[str]:
    found = [
        "kschedctl render 'my spec.yaml' --as d",  # quotes: split like shlex
        'kschedctl list --context "la',
        "kschedctl render x\\ y --as ",
        "kschedctl  list   -o\ty",  # shlex's other whitespace
        "kschedctl ",
        "kschedctl c",
        "kschedctl -",
        "kschedctl --",
        "kschedctl lab ",
        "kschedctl lab s",
    ]
    for path in COMMAND_PATHS:
        base = f"kschedctl {path} ".replace("  ", " ")
        found += [base, base + "-", base + "--", base + "x ", base + "x -", base + "x y "]
        for param in TABLE["commands"][path]["params"]:
            if param["kind"] != "option":
                continue
            for opt in param["all_opts"]:
                found.append(base + opt[:2])
                if not param["flag"]:
                    found += [base + f"{opt} ", base + f"{opt} x ", base + f"{opt} x -"]
                    for value in param.get("values", [])[:3]:
                        found += [base + f"{opt} {value[:1]}", base + f"{opt} {value.upper()[:2]}"]
                    if opt.startswith("--"):
                        found.append(base + f"{opt}=")
                else:
                    found.append(base + f"{opt} -")
    return sorted(set(found))


LINES = lines()


@pytest.fixture
def kubeconfig(tmp_path: Path, monkeypatch) -> dict[str, str]:
    config = tmp_path / "config"
    config.write_text(
        "contexts: [{name: lab, context: {cluster: c}}, {name: prod, context: {cluster: c}}]\n"
        "clusters: [{name: c, cluster: {server: 'https://192.0.2.1'}}]\n"
        "users: [{name: admin, user: {}}]\n"
    )
    monkeypatch.chdir(tmp_path)
    # a lookup that reaches the cluster is typer's; keep it short in this test
    return {"KUBECONFIG": str(config), "KSCHEDCTL_COMPLETION_TIMEOUT": "0.05"}


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_quick_answers_equal_typers(cli, shell: str, kubeconfig, monkeypatch, capsys) -> None:
    answered = 0
    for line in LINES:
        env = {**kubeconfig, **shell_env(shell, line)}
        quick = quick_complete.answer(shell, env, TABLE)
        if quick is None:
            continue
        answered += 1
        assert quick == typer_answer(cli, shell, env, monkeypatch, capsys), line
    assert answered > len(LINES) * 0.8  # the fast path answers nearly every static TAB


def test_fish_is_args_exit_status(cli, kubeconfig, monkeypatch, capsys) -> None:
    for line in ["kschedctl list -o ", "kschedctl validate ", "kschedctl render x --as "]:
        env = {**kubeconfig, **shell_env("fish", line, "is-args")}
        assert quick_complete.answer("fish", env, TABLE) == typer_answer(
            cli, "fish", env, monkeypatch, capsys
        )


@pytest.mark.parametrize(
    "line",
    [
        "kschedctl why -n ",
        "kschedctl status ",
        "kschedctl why ",
        "kschedctl nosuch ",
        "kschedctl list -- x",
    ],
    ids=["namespaces", "schedulers", "pods", "unknown-command", "double-dash"],
)
def test_cluster_lookups_and_unknown_words_are_left_to_typer(line: str) -> None:
    assert quick_complete.answer("bash", shell_env("bash", line), TABLE) is None


def test_contexts_are_answered_from_the_kubeconfig(kubeconfig) -> None:
    env = {**kubeconfig, **shell_env("bash", "kschedctl list --context ")}
    assert quick_complete.answer("bash", env, TABLE) == ("lab\nprod", 0)


def test_other_shells_are_left_to_typer() -> None:
    assert quick_complete.answer("powershell", {}, TABLE) is None
