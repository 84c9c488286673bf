"""`kschedctl version` against the lab: the server's version and the version skew of a
scheduler deployed one minor older than the API server (supported), in text and JSON."""

from __future__ import annotations

import json
from pathlib import Path

from e2e_helpers import run

from kschedctl import __version__
from kschedctl.kubeclient.client import Cluster
from kschedctl.lab.cluster import Lab
from kschedctl.model.config.versions import parse_git_version


def test_version_shows_server_and_each_schedulers_skew(
    lab: Lab, cluster: Cluster, tmp_path: Path
) -> None:
    server = cluster.server_version()["gitVersion"]
    major, minor = parse_git_version(server)[:2]  # type: ignore[index]
    older = f"{major}.{minor - 1}"
    name = "skewed-sched"
    try:
        deployed = run(
            lab, "deploy", name, "--as-deployment", "--kubernetes-version", older,
            "--no-verify", "--timeout", "120", cwd=tmp_path,
        )  # fmt: skip
        assert deployed.returncode == 0, deployed.stderr

        shown = run(lab, "version", "-o", "json", cwd=tmp_path)
        assert shown.returncode == 0, shown.stderr
        report = json.loads(shown.stdout)
        assert report["clientVersion"]["version"] == __version__
        assert report["serverVersion"]["gitVersion"] == server
        (ours,) = [s for s in report["schedulers"] if s["name"] == name]
        assert ours["namespace"] == "kube-system"
        assert f"kube-scheduler:v{older}." in ours["image"]
        assert ours["skew"] == "one minor older (supported)"

        text = run(lab, "version", cwd=tmp_path)
        assert text.returncode == 0, text.stderr
        lines = text.stdout.splitlines()
        assert lines[0].startswith(f"Client Version: {__version__} ")
        assert lines[1] == f"Server Version: {server}"
        (row,) = [line for line in lines if line.startswith(f"{name} ")]
        assert row.split()[1:3] == ["kube-system", ours["image"]]
        assert row.endswith("one minor older (supported)")
    finally:
        run(lab, "remove", name, "--force", cwd=tmp_path)
