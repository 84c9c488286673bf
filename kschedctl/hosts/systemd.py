"""The host forms (systemd service, static pod): which files go where, and systemd itself.

Paths are the spec's host paths placed under ``root`` (``/`` on a real host; a directory of
the lab, or a staging directory, otherwise). Writing is all-or-nothing per file (temp + rename)
and remembers nothing: ``remove`` recomputes the same paths from the same inputs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from kschedctl.errors import KschedError
from kschedctl.render.escape import exec_start_argv
from kschedctl.render.forms import render
from kschedctl.spec import Spec

UNIT_DIR = "/etc/systemd/system"
MANIFESTS_DIR = "/etc/kubernetes/manifests"


def under(root: Path, path: str) -> Path:
    """``path`` on the host rooted at ``root`` (a path already inside ``root`` stays as is)."""
    if Path(path).is_relative_to(root) and root != Path("/"):
        return Path(path)
    return root / path.lstrip("/")


def unit_name_for(name: str) -> str:
    return f"{name}.service"


def unit_name(spec: Spec) -> str:
    return unit_name_for(spec.name)


def service_files(spec: Spec, root: Path) -> dict[Path, str]:
    return {
        under(root, spec.host_config_path): render(spec, "host-config"),
        under(root, f"{UNIT_DIR}/{unit_name(spec)}"): render(spec, "service"),
    }


def static_pod_files(spec: Spec, root: Path, manifests_dir: Path) -> dict[Path, str]:
    return {
        under(root, spec.host_config_path): render(spec, "host-config"),
        manifests_dir / f"{spec.name}.yaml": render(spec, "static-pod"),
    }


def changed(files: dict[Path, str]) -> bool:
    return any(not p.is_file() or p.read_text() != text for p, text in files.items())


def write_files(files: dict[Path, str]) -> None:
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.kschedctl-tmp")
        tmp.write_text(text)
        os.chmod(tmp, 0o644)
        tmp.replace(path)


def remove_files(paths: list[Path]) -> list[Path]:
    removed = []
    for path in paths:
        if path.is_file():
            path.unlink()
            removed.append(path)
    return removed


def systemd_running(root: Path) -> bool:
    """systemctl works here: a real root and a booted systemd (not a container's stub)."""
    return (
        root == Path("/")
        and shutil.which("systemctl") is not None
        and Path("/run/systemd/system").is_dir()
    )


def systemctl(*args: str) -> None:
    proc = subprocess.run(["systemctl", *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise KschedError(
            f"systemctl {' '.join(args)} failed: {proc.stderr.strip() or proc.stdout.strip()}",
            hint="run it yourself to see why (needs root), then deploy again",
        )


def service_commands(spec: Spec) -> list[str]:
    return ["systemctl daemon-reload", f"systemctl enable --now {unit_name(spec)}"]


def exec_start(unit_text: str) -> list[str]:
    """The unit's ExecStart as argv, systemd's quoting undone (kschedctl.render.escape)."""
    return exec_start_argv(unit_text)
