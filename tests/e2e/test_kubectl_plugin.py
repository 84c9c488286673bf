"""kubectl habits against the lab: a kubeconfig split over several files, `kubectl sched`
through the lab's own kubectl, and completion candidates read from the cluster."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from e2e_helpers import pod_manifest

from kschedctl.cli.options import WIDE_FORMATS
from kschedctl.kubeclient.client import Cluster
from kschedctl.lab.cluster import Lab

ROOT = Path(__file__).resolve().parents[2]
UNSERVED = "nobody-serves-this"  # a schedulerName: the pod stays Pending


def kschedctl(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kschedctl", *args],
        capture_output=True, text=True, cwd=cwd, timeout=240,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
    )  # fmt: skip


@pytest.fixture
def pending_pod(cluster: Cluster, namespace: str) -> str:
    name = "waits"
    cluster.create(
        f"/api/v1/namespaces/{namespace}/pods", pod_manifest(name, schedulerName=UNSERVED)
    )
    return name


@pytest.fixture
def split_kubeconfig(lab: Lab, tmp_path: Path, namespace: str) -> dict[str, str]:
    """The lab's kubeconfig as kubectl users keep one: the cluster in one file, the user in
    another, contexts in two more (one only in the second file), relative certificate paths."""
    admin = yaml.safe_load(lab.kubeconfig.read_text())
    cluster, user = admin["clusters"][0], admin["users"][0]
    pki = tmp_path / "pki"
    pki.mkdir()
    for key, entry in (("certificate-authority", cluster["cluster"]),):
        shutil.copy(entry[key], pki / "ca.crt")
        entry[key] = "pki/ca.crt"  # relative to the file that defines it
    for key in ("client-certificate", "client-key"):
        target = pki / Path(user["user"][key]).name
        shutil.copy(user["user"][key], target)
        target.chmod(0o600)
        user["user"][key] = f"pki/{target.name}"

    def write(name: str, data: dict) -> str:
        path = tmp_path / name
        path.write_text(yaml.safe_dump(data))
        return str(path)

    context = {"cluster": cluster["name"], "user": user["name"]}
    first = write(
        "contexts-a",
        {
            "current-context": "in-namespace",
            "contexts": [{"name": "in-namespace", "context": {**context, "namespace": namespace}}],
        },
    )
    second = write(
        "contexts-b",
        {
            "current-context": "second-only",  # ignored: the first file set one already
            "contexts": [{"name": "second-only", "context": dict(context)}],
        },
    )
    clusters = write("clusters", {"clusters": [cluster]})
    users = write("users", {"users": [user]})
    missing = str(tmp_path / "missing")
    return {"KUBECONFIG": os.pathsep.join([first, missing, "", second, clusters, users])}


def test_list_with_a_kubeconfig_split_over_four_files(
    split_kubeconfig: dict[str, str], tmp_path: Path
) -> None:
    result = kschedctl("list", "-o", "json", env=split_kubeconfig, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    names = [s["metadata"]["name"] for s in json.loads(result.stdout)["items"]]
    assert "default-scheduler" in names
    result = kschedctl("list", "--context", "second-only", env=split_kubeconfig, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "default-scheduler" in result.stdout


def test_namespace_defaults_to_the_contexts(
    split_kubeconfig: dict[str, str], tmp_path: Path, pending_pod: str, namespace: str
) -> None:
    # the current context's namespace holds the pod: no -n needed
    found = kschedctl("why", pending_pod, "-o", "json", env=split_kubeconfig, cwd=tmp_path)
    assert found.returncode == 6, found.stderr  # findings: nothing serves its scheduler
    assert json.loads(found.stdout)["pod"]["namespace"] == namespace
    # the second context names no namespace: `default`, where the pod is not
    elsewhere = kschedctl(
        "why", pending_pod, "--context", "second-only", env=split_kubeconfig, cwd=tmp_path
    )
    assert elsewhere.returncode == 5, elsewhere.stderr


def test_unknown_context_lists_the_merged_contexts(
    split_kubeconfig: dict[str, str], tmp_path: Path
) -> None:
    result = kschedctl("list", "--context", "nope", env=split_kubeconfig, cwd=tmp_path)
    assert result.returncode == 5
    assert "contexts found: 'in-namespace', 'second-only'" in result.stderr


@pytest.fixture
def plugin_path(tmp_path: Path) -> str:
    """PATH with the executables `pip install` makes from [project.scripts] (the shared venv
    is an editable install of another tree: its bin dir is not this tree's)."""
    scripts = re.search(
        r"^\[project\.scripts\]\n(.*?)(?:^\[|\Z)",
        (ROOT / "pyproject.toml").read_text(),
        re.M | re.S,
    )
    assert scripts
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for line in scripts.group(1).splitlines():
        match = re.fullmatch(r'([\w.-]+) = "([\w.]+):(\w+)"', line.strip())
        if not match:
            continue
        name, module, function = match.groups()
        script = bin_dir / name
        script.write_text(
            f"#!{sys.executable}\nimport sys\nsys.path.insert(0, {str(ROOT)!r})\n"
            f"from {module} import {function}\nsys.exit({function}())\n"
        )
        script.chmod(0o755)
    assert (bin_dir / "kubectl-sched").exists() and (bin_dir / "kubectl_complete-sched").exists()
    return os.pathsep.join([str(bin_dir), str(Path(sys.executable).parent), os.environ["PATH"]])


@pytest.fixture
def lab_kubectl(
    lab: Lab, lab_binaries: dict[str, Path], plugin_path: str, tmp_path: Path
) -> Callable[..., subprocess.CompletedProcess[str]]:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        env = {
            **os.environ,
            "PATH": plugin_path,
            "KUBECONFIG": str(lab.kubeconfig),
            "KSCHEDCTL_COMPLETION_TIMEOUT": "60",  # the candidates, even on a loaded machine
        }
        return subprocess.run(
            [str(lab_binaries["kubectl"]), *args],
            capture_output=True, text=True, env=env, cwd=tmp_path, timeout=240,
        )  # fmt: skip

    return run


def test_kubectl_sched_list_through_the_labs_kubectl(lab_kubectl) -> None:
    result = lab_kubectl("sched", "list", "-o", "json")
    assert result.returncode == 0, result.stderr
    assert "default-scheduler" in [
        s["metadata"]["name"] for s in json.loads(result.stdout)["items"]
    ]
    helped = lab_kubectl("sched", "list", "--help")
    assert "Usage: kubectl sched list" in helped.stdout
    assert "sched" in lab_kubectl("plugin", "list").stdout


def candidates(result: subprocess.CompletedProcess[str]) -> tuple[list[str], str]:
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    return [line.split("\t")[0] for line in lines[:-1]], lines[-1]


def test_kubectl_completes_the_plugin(lab_kubectl, namespace: str, pending_pod: str) -> None:
    # kubectl >= 1.26 asks kubectl_complete-sched for everything after `kubectl sched`
    words, directive = candidates(lab_kubectl("__complete", "sched", "li"))
    assert words == ["list"] and directive == ":4"
    words, _ = candidates(lab_kubectl("__complete", "sched", "list", "-o", ""))
    assert words == list(WIDE_FORMATS)  # list's -o values
    words, _ = candidates(lab_kubectl("__complete", "sched", "status", ""))
    assert "default-scheduler" in words
    words, _ = candidates(lab_kubectl("__complete", "sched", "why", "-n", namespace, ""))
    assert words == [pending_pod]
    words, _ = candidates(lab_kubectl("__complete", "sched", "events", "-n", "e2e-"))
    assert namespace in words


def test_cluster_backed_bash_candidates(
    lab: Lab, namespace: str, pending_pod: str, tmp_path: Path
) -> None:
    def complete(line: str) -> list[str]:
        env = {
            "KUBECONFIG": str(lab.kubeconfig),
            "KSCHEDCTL_COMPLETION_TIMEOUT": "60",
            "_KSCHEDCTL_COMPLETE": "complete_bash",
            "COMP_WORDS": line,
            "COMP_CWORD": str(len(line.split(" ")) - 1),
        }
        result = kschedctl(env=env, cwd=tmp_path)
        assert result.returncode == 0 and result.stderr == "", result.stderr
        return result.stdout.split()

    assert namespace in complete("kschedctl why -n ")
    assert complete(f"kschedctl why -n {namespace} ") == [pending_pod]
    assert complete(f"kschedctl why -n {namespace} pod/w") == [f"pod/{pending_pod}"]
    assert "default-scheduler" in complete("kschedctl status ")
    assert "default-scheduler" in complete("kschedctl logs def")
    assert complete("kschedctl list --context ") == ["kschedctl-lab"]
