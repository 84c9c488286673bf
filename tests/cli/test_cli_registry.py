"""The COMMANDS table of kschedctl.cli against what the command modules register."""

from __future__ import annotations

import subprocess
import sys

import typer.main

from kschedctl import cli


def _names(app: object) -> list[str]:
    group = typer.main.get_group(app)  # type: ignore[arg-type]
    return [name for name in group.list_commands(None) if not group.commands[name].hidden]  # type: ignore[arg-type]


def test_each_module_registers_exactly_its_commands() -> None:
    for module in dict.fromkeys(cli.COMMANDS.values()):
        expected = sorted(name for name, owner in cli.COMMANDS.items() if owner == module)
        assert sorted(_names(cli.build_app((module,)))) == expected, module


def test_the_whole_cli_has_every_command() -> None:
    assert sorted(_names(cli.app)) == sorted(cli.COMMANDS)


def test_a_named_command_loads_only_its_module_and_others_load_all() -> None:
    assert cli._modules_for(["render", "x", "--as", "config"]) == ("render",)
    assert cli._modules_for(["list", "-o", "json"]) == ("inventory",)
    assert cli._modules_for(["--help"]) is None
    assert cli._modules_for(["rendr"]) is None
    assert cli._modules_for([]) is None


def test_an_offline_command_does_not_import_the_other_command_modules() -> None:
    code = (
        "import sys; sys.argv = ['kschedctl', 'render', 'x', '--as', 'config'];"
        "from kschedctl.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith('kschedctl.cli.')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.splitlines()[-1]
    assert "kschedctl.cli.render" in out
    for other in ("deploy", "why", "lab", "events", "inventory"):
        assert f"kschedctl.cli.{other}'" not in out
