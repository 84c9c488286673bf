"""`kschedctl lab up --bin-dir DIR`: a lab from binaries the user brings (official release
binaries) and not from the build cache. It starts a control plane of its own: the binaries it
runs are the point of the test, and the session lab runs the cache's."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from e2e_helpers import wait_for

from kschedctl.kubeclient.client import Cluster
from kschedctl.lab import processes
from kschedctl.lab.cluster import Lab


def _bring(binaries: dict[str, Path], into: Path) -> None:
    """``into`` holds each binary as a file of its own name, as unpacked release archives do
    (hard links: the lab resolves symbolic links, which would lead back into the cache)."""
    into.mkdir()
    for name, path in binaries.items():
        try:
            os.link(path, into / name)
        except OSError:  # another filesystem
            shutil.copy2(path, into / name)


def test_lab_up_with_bin_dir_runs_those_binaries_with_an_empty_cache(
    lab_binaries: dict[str, Path], tmp_path: Path, own_lab_dir: Path
) -> None:
    bin_dir = tmp_path / "release"
    _bring(lab_binaries, bin_dir)
    cache = tmp_path / "empty-cache"
    cache.mkdir()
    env = {**os.environ, "KSCHEDCTL_CACHE_DIR": str(cache)}

    def kschedctl(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "kschedctl", *args],
            capture_output=True, text=True, timeout=300, env=env,
        )  # fmt: skip

    up = kschedctl(
        "lab", "up", "--bin-dir", str(bin_dir), "--nodes", "1", "--dir", str(own_lab_dir)
    )
    assert up.returncode == 0, up.stderr
    lab = Lab(own_lab_dir)
    assert up.stdout.strip() == lab.export_line()
    state = lab.state()
    assert state is not None
    assert Path(state.bin_dir) == bin_dir
    # every Go component of the lab runs from DIR (the runner is kschedctl itself)
    go_components = {k: c for k, c in state.components.items() if k != "runner"}
    assert go_components.keys() >= {"etcd", "kube-apiserver", "kube-controller-manager", "kwok"}
    assert {Path(c.exe).parent for c in go_components.values()} == {bin_dir}
    cluster = Cluster.connect(str(lab.kubeconfig))
    try:
        wait_for(
            lambda: [
                n["metadata"]["name"]
                for n in cluster.list("/api/v1/nodes")
                if any(
                    c["type"] == "Ready" and c["status"] == "True"
                    for c in n["status"].get("conditions") or []
                )
            ]
            == ["lab-node-1"],
            120, "the lab's one node Ready",
        )  # fmt: skip
    finally:
        cluster.close()
    assert not any(cache.rglob("*")), "nothing is built or cached: the binaries came from DIR"

    pids = [(c.pid, c.exe) for c in state.components.values()]
    down = kschedctl("lab", "down", "--dir", str(own_lab_dir))
    assert down.returncode == 0, down.stderr
    assert not own_lab_dir.exists()
    assert not [p for p in pids if processes.is_running(*p)]
