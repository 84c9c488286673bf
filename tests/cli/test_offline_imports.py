"""Offline commands never load the kubernetes client (~0.25 s of start-up on its own).

Each case runs kschedctl.cli.main in a fresh interpreter and inspects sys.modules afterwards.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

PROBE = """
import sys
sys.argv = ["kschedctl", *sys.argv[1:]]
from kschedctl.cli import main
try:
    main()
except SystemExit:
    pass
loaded = sorted(m for m in sys.modules if m == "kubernetes" or m.startswith("kubernetes."))
print("LOADED:" + ",".join(loaded), file=sys.stderr)
"""


def _loaded(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    result = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    marker = [line for line in result.stderr.splitlines() if line.startswith("LOADED:")]
    assert marker, result.stderr
    return marker[-1].removeprefix("LOADED:")


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["create", "--help"],
        ["render", "--help"],
        ["validate", "--help"],
        ["create", "my-scheduler"],
        ["render", "my-scheduler", "--as", "deployment"],
        ["render", "my-scheduler", "--as", "config"],
        ["validate", "spec.yaml"],
        ["schema", "spec"],
        ["schema", "policy"],
        ["render", "my-scheduler", "--as", "helm-chart", "chart"],
        ["render", "my-scheduler", "--as", "kustomize", "base"],
        ["version", "--client"],
        ["version", "--client", "-o", "json"],
        ["completion", "bash"],
        ["completion", "powershell"],
        ["why", "--namespce", "x"],
    ],
    ids=" ".join,
)
def test_offline_commands_do_not_import_kubernetes(args: list[str], tmp_path: Path) -> None:
    (tmp_path / "spec.yaml").write_text(
        "apiVersion: kschedctl.io/v1alpha1\nkind: Scheduler\nmetadata: {name: s}\n"
    )
    assert _loaded(args, tmp_path) == ""


def test_completion_does_not_import_kubernetes(tmp_path: Path) -> None:
    env = {"_KSCHEDCTL_COMPLETE": "complete_bash", "COMP_WORDS": "kschedctl cr", "COMP_CWORD": "1"}
    assert _loaded([], tmp_path, env) == ""


@pytest.mark.parametrize(
    "words",
    ["kschedctl list -o ", "kschedctl why --context ", "kschedctl render x --as "],
    ids=["output-values", "contexts", "forms"],
)
def test_static_and_kubeconfig_completion_do_not_import_kubernetes(
    words: str, tmp_path: Path
) -> None:
    (tmp_path / "config").write_text("contexts: [{name: lab, context: {cluster: c}}]\n")
    env = {
        "_KSCHEDCTL_COMPLETE": "complete_bash",
        "COMP_WORDS": words,
        "COMP_CWORD": str(len(words.split(" ")) - 1),
        "KUBECONFIG": str(tmp_path / "config"),
    }
    assert _loaded([], tmp_path, env) == ""
