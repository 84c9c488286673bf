"""A kubeconfig with insecure-skip-tls-verify: one plain warning line per command, not
urllib3's InsecureRequestWarning block for every request."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

from kschedctl.lab.cluster import Lab

ROOT = Path(__file__).resolve().parents[2]


def test_an_insecure_kubeconfig_warns_once_per_command(lab: Lab, tmp_path: Path) -> None:
    config = yaml.safe_load(lab.kubeconfig.read_text())
    cluster = config["clusters"][0]["cluster"]
    cluster.pop("certificate-authority", None)
    cluster.pop("certificate-authority-data", None)
    cluster["insecure-skip-tls-verify"] = True
    kubeconfig = tmp_path / "insecure"
    kubeconfig.write_text(yaml.safe_dump(config))
    result = subprocess.run(
        [sys.executable, "-m", "kschedctl", "list"],
        capture_output=True, text=True, cwd=tmp_path, timeout=240,
        env={**os.environ, "PYTHONPATH": str(ROOT), "KUBECONFIG": str(kubeconfig)},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "default-scheduler" in result.stdout
    assert "InsecureRequestWarning" not in result.stderr
    # Other warnings may come (pods of other tests asking for a scheduler nothing serves):
    # the certificate's is said once.
    warnings = [line for line in result.stderr.splitlines() if "is not verified" in line]
    assert warnings == [
        f"warning: the certificate of {cluster['server']} is not verified "
        "(insecure-skip-tls-verify); set the cluster's certificate-authority instead to know it "
        "is your API server"
    ]
