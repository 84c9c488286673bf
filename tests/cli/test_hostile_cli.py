"""Hostile specs through the CLI: validate and render agree, nothing is written, exit 3."""

from __future__ import annotations

from pathlib import Path

import pytest

HEADER = "apiVersion: kschedctl.io/v1alpha1\nkind: Scheduler\nmetadata:\n  name: s\n"


@pytest.mark.parametrize(
    "body",
    [
        "spec:\n  program: builtin\n  image: example.com/k:1\n  extraArgs: [1]\n",
        'spec:\n  service:\n  user: "m\\nkind: ClusterRoleBinding"\n'.replace("  user", "    user"),
        'spec:\n  service:\n    bindAddress: "fe80::1%x\\n[Service]\\nExecStartPre=/bin/sh"\n',
        "spec:\n  service:\n    configDir: /../../../../tmp/x\n",
        'spec:\n  kubernetesVersion: "\u0661.\u0663\u0666"\n',
        "spec:\n  replicas: 2147483648\n",
        "spec:\n  profiles: [{schedulerName: s}, {schedulerName: 'a\u2028b'}]\n",
    ],
    ids=[
        "builtin-extra-args",
        "user",
        "bind-address",
        "config-dir",
        "version",
        "replicas",
        "u2028",
    ],
)
def test_validate_and_render_refuse_alike(run, tmp_path: Path, body: str) -> None:
    (tmp_path / "s.yaml").write_text(HEADER + body, encoding="utf-8")
    validated = run("validate", "s.yaml")
    rendered = run("render", "s.yaml", "--as", "service")
    assert (validated.exit_code, rendered.exit_code) == (3, 3), (validated.stdout, rendered.stderr)
    assert rendered.stdout == ""
    assert "Traceback" not in validated.stdout + validated.stderr + rendered.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--image", "foo[/bar]"], "spec.image: 'foo[/bar]' is not an image reference"),
        (["--replicas", "2147483648"], "spec.replicas: 2147483648 is out of range"),
        (["-n", "Kube System"], "spec.namespace"),
    ],
    ids=["image", "replicas", "namespace"],
)
def test_create_refuses_before_writing(run, tmp_path: Path, args: list[str], message: str) -> None:
    result = run("create", "s", *args)
    assert result.exit_code == 3, result.stderr
    assert message in result.stderr
    assert not (tmp_path / "s").exists()
