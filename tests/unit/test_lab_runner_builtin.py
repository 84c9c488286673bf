"""The lab runner runs kschedctl images (program: builtin) as ``python -m kschedctl``."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from kschedctl.lab.runner import programs


def context(tmp_path: Path) -> programs.LaunchContext:
    return programs.LaunchContext(
        binaries={}, lab_version="v1.36.3", kubeconfig=tmp_path / "sa.kubeconfig",
        run_dir=tmp_path / "run", mounts=[], local_port=40002,
    )  # fmt: skip


def test_the_rendered_command_runs_with_this_interpreter(tmp_path: Path) -> None:
    command = ["kschedctl", "scheduler", "run", "--name=fb", "--policy=/lab/cm/policy.yaml",
               "--metrics-port=10259"]  # fmt: skip
    launch = programs.launch("kschedctl", "kschedctl:0.1.0", command, [], context(tmp_path))
    assert launch.argv == [
        sys.executable, "-m", "kschedctl", "scheduler", "run", "--name=fb",
        "--policy=/lab/cm/policy.yaml", "--metrics-port=10259",
        f"--kubeconfig={tmp_path / 'sa.kubeconfig'}", "--metrics-port=40002",
        "--metrics-address=127.0.0.1",
    ]  # fmt: skip
    assert launch.exe == os.path.realpath(sys.executable)
    assert (launch.serving_port, launch.local_port) == (10259, 40002)


def test_args_only_use_the_entrypoint_and_the_default_port(tmp_path: Path) -> None:
    launch = programs.launch(
        "kschedctl", "kschedctl:1", [], ["scheduler", "run", "--name=x", "--kubeconfig=/k"],
        context(tmp_path),
    )  # fmt: skip
    assert launch.argv[3:6] == ["scheduler", "run", "--name=x"]
    assert "--kubeconfig=/k" in launch.argv and launch.argv.count("--kubeconfig=/k") == 1
    assert launch.serving_port == 10259


def test_other_commands_are_refused(tmp_path: Path) -> None:
    with pytest.raises(programs.LaunchError, match="kschedctl entrypoint only"):
        programs.launch("kschedctl", "kschedctl:1", ["sh", "-c", "x"], [], context(tmp_path))


def test_other_kschedctl_commands_serve_nothing(tmp_path: Path) -> None:
    launch = programs.launch(
        "kschedctl", "kschedctl:1", ["kschedctl", "--version"], [], context(tmp_path)
    )
    assert launch.argv[3:] == ["--version"] and launch.serving_port is None
