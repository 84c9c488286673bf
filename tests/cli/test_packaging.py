"""The package installs the ways people install it: pipx, and the Dockerfile's hash-locked pip.

There is no Docker engine here, so the Dockerfile's own commands are run in a clean virtual
environment: the same ``pip install --require-hashes`` of requirements/*.txt, the same wheel
build without build isolation, the same bytecode compilation. These tests install from PyPI
(a minute or so), hence ``slow``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = (ROOT / "Dockerfile").read_text()

pytestmark = pytest.mark.slow


def _run(*cmd: str | Path, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(
        [str(c) for c in cmd], capture_output=True, text=True, timeout=600, env=env, cwd=ROOT
    )
    assert proc.returncode == 0, f"{cmd}: {proc.stdout[-2000:]}{proc.stderr[-2000:]}"
    return proc.stdout


def _locked(path: Path) -> dict[str, list[str]]:
    """name -> pinned versions (several when markers split them by Python version)."""
    pins: dict[str, list[str]] = {}
    for name, version in re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)", path.read_text(), re.M):
        pins.setdefault(name.lower().replace("_", "-"), []).append(version)
    return pins


def test_the_lock_pins_every_dependency_within_pyproject_bounds() -> None:
    pins = _locked(ROOT / "requirements" / "runtime.txt")
    for req in map(Requirement, metadata.requires("kschedctl") or []):
        if req.marker is not None:  # an extra's (test) dependency: not in the image
            continue
        versions = pins.get(req.name.lower())
        assert versions, f"{req.name} is not in requirements/runtime.txt: run requirements/lock"
        assert all(req.specifier.contains(v) for v in versions), (req, versions)
    build = _locked(ROOT / "requirements" / "build.txt")
    assert "hatchling" in build


def test_the_dockerfile_installs_only_locked_hashes_as_a_non_root_user() -> None:
    froms = re.findall(r"^FROM (\S+)", DOCKERFILE, re.M)
    assert froms and all(f == "${PYTHON_IMAGE}${PYTHON_DIGEST:+@}${PYTHON_DIGEST}" for f in froms)
    assert re.search(r"^ARG PYTHON_DIGEST=sha256:[0-9a-f]{64}$", DOCKERFILE, re.M)  # pinned
    installs = re.findall(r"pip install ([^\n\\&]+)", DOCKERFILE)
    assert installs, "no pip install in the Dockerfile"
    for args in installs:
        assert "--no-deps" in args, args  # nothing resolved at build time
        assert "--require-hashes" in args or "/wheels/" in args, args
    assert "--no-build-isolation" in DOCKERFILE  # the backend comes from the lock too
    assert re.search(r"^USER 65532:65532$", DOCKERFILE, re.M)
    for label in ("title", "description", "version", "licenses"):
        assert f"org.opencontainers.image.{label}=" in DOCKERFILE
    for source in re.findall(r"^COPY (?!--from)(.+) \S+$", DOCKERFILE, re.M):
        for name in source.split():
            assert (ROOT / name).exists(), f"the Dockerfile copies {name}, which does not exist"


def test_the_dockerfile_steps_install_and_run_in_a_clean_venv(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", venv)
    py = venv / "bin" / "python"
    pip = (py, "-m", "pip", "--disable-pip-version-check", "--quiet")
    _run(*pip, "install", "--require-hashes", "--no-deps", "-r", "requirements/build.txt")
    wheels = tmp_path / "wheels"
    _run(*pip, "wheel", "--no-deps", "--no-build-isolation", "--wheel-dir", wheels, ".")
    _run(*pip, "install", "--require-hashes", "--no-deps", "-r", "requirements/runtime.txt")
    (wheel,) = wheels.glob("kschedctl-*.whl")
    _run(*pip, "install", "--no-deps", wheel)
    _run(*pip, "check")  # the lock holds every dependency, at versions that fit
    purelib = _run(py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").strip()
    _run(py, "-m", "compileall", "-q", "--invalidation-mode", "unchecked-hash", purelib)
    assert list(Path(purelib, "kubernetes", "__pycache__").glob("*.pyc"))
    assert "kschedctl" in _run(venv / "bin" / "kschedctl", "--version")


def test_pipx_installs_the_cli_and_the_kubectl_plugin(tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    _run(sys.executable, "-m", "venv", tools)
    _run(tools / "bin" / "python", "-m", "pip", "install", "--quiet", "pipx==1.18.4")
    env = {
        **os.environ,
        "PIPX_HOME": str(tmp_path / "pipx"),
        "PIPX_BIN_DIR": str(tmp_path / "bin"),
        "PIPX_MAN_DIR": str(tmp_path / "man"),
    }
    _run(tools / "bin" / "pipx", "install", "--python", sys.executable, str(ROOT), env=env)
    bins = {p.name for p in (tmp_path / "bin").iterdir()}
    assert {"kschedctl", "kubectl-sched", "kubectl_complete-sched"} <= bins
    assert "kubectl sched" in _run(tmp_path / "bin" / "kubectl-sched", "--help", env=env)
    assert "kschedctl" in _run(tmp_path / "bin" / "kschedctl", "--version", env=env)
