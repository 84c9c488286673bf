"""`--plugin` on `scheduler run` and `why`: a plugin that cannot be loaded is exit 3, before
any connection, naming the file and what is wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

BAD = {
    "empty.py": ("X = 1\n", "empty.py: defines neither filter(pod, node, ctx) nor score(pod, node, ctx)"),
    "broken.py": ("def filter(:\n", "broken.py: is not valid Python (line 1)"),
    "imports.py": ("import not_installed_anywhere\n", "imports.py: importing it raised ModuleNotFoundError: No module named 'not_installed_anywhere'"),
    "weight.py": ("WEIGHT = 0\ndef score(pod, node, ctx): return 1\n", "weight.py: WEIGHT 0 must be a number greater than 0"),
}  # fmt: skip


@pytest.mark.parametrize("command", [["scheduler", "run", "--name", "mine"], ["why", "p"]])
@pytest.mark.parametrize("file", list(BAD))
def test_an_unusable_plugin_is_exit_3_before_any_connection(
    run, tmp_path: Path, command: list[str], file: str
) -> None:
    text, message = BAD[file]
    (tmp_path / file).write_text(text)
    result = run(*command, "--plugin", file)
    assert result.exit_code == 3, result.stderr
    assert f"error: {message}" in result.stderr
    assert 'hint: see docs/commands/own-scheduler.md, "Scheduling plugins"' in result.stderr
    assert result.stdout == ""


def test_a_missing_plugin_file_and_a_missing_module(run) -> None:
    result = run("scheduler", "run", "--name", "mine", "--plugin", "nope.py")
    assert result.exit_code == 5
    assert "error: nope.py: cannot read the plugin: no such file" in result.stderr
    result = run("why", "p", "--plugin", "no_such_package.plugin")
    assert result.exit_code == 3
    assert "no_such_package.plugin: cannot import it: ModuleNotFoundError" in result.stderr


def test_the_second_of_two_plugins_is_checked_too(run, tmp_path: Path) -> None:
    (tmp_path / "good.py").write_text("def filter(pod, node, ctx):\n    return None\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "good.py").write_text("def score(pod, node, ctx):\n    return 1\n")
    result = run("scheduler", "run", "--name", "mine", "--plugin", "good.py",
                 "--plugin", "sub/good.py")  # fmt: skip
    assert result.exit_code == 3
    assert "plugin name 'good' is also the name of good.py" in result.stderr


def test_a_loadable_plugin_gets_past_the_check_to_the_connection(run, tmp_path: Path) -> None:
    (tmp_path / "ok.py").write_text("def filter(pod, node, ctx):\n    return None\n")
    result = run("why", "p", "--plugin", "ok.py", "--kubeconfig", str(tmp_path / "missing"))
    assert result.exit_code != 3 and "ok.py" not in result.stderr
