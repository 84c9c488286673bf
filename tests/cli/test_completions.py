"""The committed completion scripts match the CLI, and completion works."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from kschedctl.cli import completion_scripts
from kschedctl.cli.options import TABLE_FORMATS, WIDE_FORMATS


def test_completion_scripts_are_up_to_date() -> None:
    stale = []
    for shell, name in completion_scripts.FILES.items():
        path = completion_scripts.source_dir() / name
        current = path.read_text(encoding="utf-8") if path.exists() else ""
        if current != completion_scripts.completion_script(shell):
            stale.append(str(path))
    table = completion_scripts.table_path()
    if not table.exists() or table.read_text(encoding="utf-8") != completion_scripts.table_text():
        stale.append(str(table))
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


ROOT = completion_scripts.source_dir().parent


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args],
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def bash_candidates(words: str, env: dict[str, str] | None = None) -> list[str]:
    """What bash gets for the last word of ``words`` (a trailing space: a new word)."""
    parts = words.split(" ")
    result = _run(
        ["-m", "kschedctl"],
        {
            "_KSCHEDCTL_COMPLETE": "complete_bash",
            "COMP_WORDS": words,
            "COMP_CWORD": str(len(parts) - 1),
            **(env or {}),
        },
    )
    assert result.returncode == 0 and result.stderr == "", result.stderr
    return result.stdout.split()


def kubectl_plugin_completion(*args: str, env: dict[str, str] | None = None) -> list[str]:
    """What kubectl reads from kubectl_complete-sched ARGS (lines, directive last)."""
    code = "from kschedctl.cli.plugin import kubectl_complete_sched as c; c()"
    result = _run(["-c", code, *args], env or {})
    assert result.returncode == 0 and result.stderr == "", result.stderr
    return result.stdout.splitlines()


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        ("kschedctl list -o ", list(WIDE_FORMATS)),
        ("kschedctl list -o y", ["yaml"]),
        ("kschedctl status s -o ", list(TABLE_FORMATS)),
        ("kschedctl lab status --output j", [f for f in TABLE_FORMATS if f.startswith("j")]),
    ],
    ids=["list", "list-prefix", "status-no-wide", "long-flag"],
)
def test_output_values_are_the_ones_each_command_accepts(words: str, expected: list[str]) -> None:
    assert bash_candidates(words) == expected


@pytest.fixture
def kubeconfigs(tmp_path: Path) -> dict[str, str]:
    def config(contexts: list[str], clusters: list[str], users: list[str]) -> dict:
        return {
            "contexts": [{"name": c, "context": {"cluster": "x"}} for c in contexts],
            "clusters": [{"name": c, "cluster": {"server": "https://192.0.2.1"}} for c in clusters],
            "users": [{"name": u, "user": {}} for u in users],
        }

    first, second = tmp_path / "first", tmp_path / "second"
    first.write_text(yaml.safe_dump(config(["prod-a", "dev"], ["x"], ["alice"])))
    second.write_text(yaml.safe_dump(config(["prod-b", "dev"], ["y"], ["bob"])))
    return {"KUBECONFIG": os.pathsep.join([str(first), str(tmp_path / "gone"), str(second)])}


def test_contexts_clusters_and_users_come_from_every_kubeconfig_file(kubeconfigs) -> None:
    assert bash_candidates("kschedctl list --context ", kubeconfigs) == ["prod-a", "dev", "prod-b"]
    assert bash_candidates("kschedctl why --context prod", kubeconfigs) == ["prod-a", "prod-b"]
    assert bash_candidates("kschedctl events --cluster ", kubeconfigs) == ["x", "y"]
    assert bash_candidates("kschedctl logs s --user ", kubeconfigs) == ["alice", "bob"]


def test_contexts_follow_an_explicit_kubeconfig(kubeconfigs) -> None:
    first = kubeconfigs["KUBECONFIG"].split(os.pathsep)[0]
    words = f"kschedctl list --kubeconfig {first} --context "
    assert bash_candidates(words, kubeconfigs) == ["prod-a", "dev"]


def test_no_kubeconfig_means_no_candidates_and_no_error(tmp_path: Path) -> None:
    env = {"KUBECONFIG": str(tmp_path / "none")}
    assert bash_candidates("kschedctl list --context ", env) == []
    assert bash_candidates("kschedctl why -n ", env) == []
    (tmp_path / "bad").write_text("{{{")
    assert bash_candidates("kschedctl list --context ", {"KUBECONFIG": str(tmp_path / "bad")}) == []


@pytest.mark.parametrize(
    "words", ["kschedctl why -n ", "kschedctl status ", "kschedctl why ", "kschedctl remove x"]
)
def test_an_unreachable_cluster_gives_no_candidates_within_the_budget(
    kubeconfigs, words: str
) -> None:
    # 192.0.2.1 (TEST-NET-1) never answers: the lookup is abandoned after the budget
    env = {**kubeconfigs, "KSCHEDCTL_COMPLETION_TIMEOUT": "0.5"}
    started = time.monotonic()
    assert bash_candidates(words, env) == []
    assert time.monotonic() - started < 10  # start-up plus 0.5 s, not a connect timeout


def test_kubectl_plugin_completion_protocol(kubeconfigs) -> None:
    lines = kubectl_plugin_completion("li")
    assert lines[-1] == ":4"  # cobra's ShellCompDirectiveNoFileComp
    assert lines[0].startswith("list\t")
    assert kubectl_plugin_completion("list", "-o", "") == [*WIDE_FORMATS, ":4"]
    assert kubectl_plugin_completion("list", "--context", "prod", env=kubeconfigs) == [
        "prod-a",
        "prod-b",
        ":4",
    ]
    # a free-form argument (a file): no candidates, the shell's default completion
    assert kubectl_plugin_completion("validate", "") == [":0"]


def test_kubectl_plugin_help_names_kubectl_sched() -> None:
    code = "from kschedctl.cli.plugin import kubectl_sched as k; k()"
    result = _run(["-c", code, "list", "--help"], {"COLUMNS": "100"})
    assert result.returncode == 0
    assert "Usage: kubectl sched list [OPTIONS]" in result.stdout
    result = _run(["-c", code, "nosuch"], {})
    assert result.returncode == 2
    assert "kubectl sched" in result.stderr


def test_kubectl_plugin_errors_suggest_kubectl_sched_commands() -> None:
    code = "from kschedctl.cli.plugin import kubectl_sched as k; k()"
    result = _run(["-c", code, "list", "--kubeconfig", "/dev/null/none"], {})
    assert result.returncode in (4, 5), result.stderr
    assert "$(kubectl sched lab env)" in result.stderr
    assert "kschedctl " not in result.stderr.replace("kschedctl.io", "")
    direct = _run(["-m", "kschedctl", "list", "--kubeconfig", "/dev/null/none"], {})
    assert "$(kschedctl lab env)" in direct.stderr
