"""As a kubectl plugin (`kubectl sched …`), the commands kschedctl suggests — error hints,
warnings, next steps — say `kubectl sched …`; one place decides the name
(kschedctl.base.errors.called_as)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from kschedctl.base import errors
from kschedctl.cli import COMMANDS

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = "from kschedctl.cli.plugin import kubectl_sched as k; k()"


@pytest.fixture
def as_plugin() -> Iterator[None]:
    errors.called_as("kubectl sched", COMMANDS)
    yield
    errors.called_as(errors.PROGRAM, ())


@pytest.mark.parametrize(
    ("text", "spelled"),
    [
        ("run kschedctl deploy s --as deployment", "run kubectl sched deploy s --as deployment"),
        ("`kschedctl status s`", "`kubectl sched status s`"),
        ('eval "$(kschedctl lab env)"', 'eval "$(kubectl sched lab env)"'),
        ("line one\nkschedctl why pod", "line one\nkubectl sched why pod"),
        ("kschedctl's own scheduler", "kschedctl's own scheduler"),
        ("rendered by kschedctl from scheduler.yaml", "rendered by kschedctl from scheduler.yaml"),
        ("kschedctl.io/scheduler", "kschedctl.io/scheduler"),
        ("see ./kschedctl render", "see ./kschedctl render"),
        ("kschedctl listing", "kschedctl listing"),
    ],
    ids=[
        "plain",
        "quoted",
        "subshell",
        "second-line",
        "possessive",
        "prose",
        "label",
        "path",
        "not-a-command",
    ],  # fmt: skip
)
def test_suggested_commands_are_spelled_as_called(as_plugin: None, text: str, spelled: str) -> None:
    assert errors.program() == "kubectl sched"
    assert errors.as_called(text) == spelled


def test_called_as_kschedctl_nothing_changes() -> None:
    assert errors.program() == errors.PROGRAM
    assert errors.as_called("kschedctl deploy s") == "kschedctl deploy s"


def _plugin(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", PLUGIN, *args],
        env={**os.environ, "PYTHONPATH": str(ROOT), "KUBECONFIG": str(cwd / "none")},
        capture_output=True, text=True, cwd=cwd, timeout=60,
    )  # fmt: skip


def test_plugin_next_steps_and_hints_say_kubectl_sched(tmp_path: Path) -> None:
    created = _plugin("create", "s", cwd=tmp_path)
    assert created.returncode == 0, created.stderr
    said = " ".join(created.stderr.split())
    assert "kubectl sched deploy s --as deployment" in said
    assert "kubectl sched render s --as helm-chart ./charts/s" in said
    assert "kschedctl " not in said
    again = _plugin("create", "s", cwd=tmp_path)
    assert again.returncode == 1
    assert "hint: pass --force to replace it, or render from it: kubectl sched render s" in (
        again.stderr
    )
    builtin = _plugin("create", "own", "--program", "builtin", cwd=tmp_path)
    assert builtin.returncode == 0, builtin.stderr
    assert "on `kubectl sched deploy`" in " ".join(builtin.stderr.split())
