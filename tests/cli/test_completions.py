"""The committed completion scripts match the CLI, and completion works."""

from __future__ import annotations

import os
import subprocess
import sys

from kschedctl.cli import completion_scripts


def test_completion_scripts_are_up_to_date() -> None:
    stale = []
    for shell, name in completion_scripts.FILES.items():
        path = completion_scripts.source_dir() / name
        current = path.read_text(encoding="utf-8") if path.exists() else ""
        if current != completion_scripts.completion_script(shell):
            stale.append(str(path))
    assert not stale, (
        f"completion scripts are out of date with the CLI: {stale}. "
        f"Regenerate them with: {completion_scripts.REGENERATE}"
    )


def test_command_tree_lists_the_offline_commands() -> None:
    tree = "\n".join(completion_scripts.command_tree())
    assert "kschedctl create NAME --custom-plugin --dir --force" in tree
    assert "kschedctl render SRC [DIR] --add-to --as --kubernetes-version" in tree
    assert "kschedctl schema SPEC|POLICY" in tree
    assert "kschedctl validate FILE..." in tree


def test_bash_completion_offers_commands_and_forms() -> None:
    def complete(words: str, cword: int) -> list[str]:
        env = {
            **os.environ,
            "_KSCHEDCTL_COMPLETE": "complete_bash",
            "COMP_WORDS": words,
            "COMP_CWORD": str(cword),
        }
        result = subprocess.run(
            [sys.executable, "-m", "kschedctl"],
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
        return result.stdout.split()

    assert "create" in complete("kschedctl cr", 1)
    assert "static-pod" in complete("kschedctl render x --as st", 4)


def test_check_mode_reports_drift(tmp_path) -> None:
    assert completion_scripts.main(["--check", str(tmp_path)]) == 1
    assert completion_scripts.main([str(tmp_path)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(completion_scripts.FILES.values())
    assert completion_scripts.main(["--check", str(tmp_path)]) == 0
