"""The built wheel ships the templates and completions, and renders from them.

Builds a wheel without build isolation (hatchling comes with the test extras), so it needs
no network; it still takes a few seconds, hence the ``slow`` marker
(``python -m pytest -m "not slow"`` skips it).
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable, "-m", "pip", "wheel", str(ROOT),
            "--no-deps", "--no-build-isolation", "--quiet", "-w", str(out),
        ],
        check=True,
        timeout=300,
    )  # fmt: skip
    (path,) = out.glob("kschedctl-*.whl")
    return path


def test_wheel_contains_templates_and_completions(wheel: Path) -> None:
    assert "kschedctl/_generated/completion_table.py" in zipfile.ZipFile(wheel).namelist()
    names = set(zipfile.ZipFile(wheel).namelist())
    for template in (ROOT / "templates").glob("*.j2"):
        assert f"kschedctl/_data/templates/{template.name}" in names
    for script in ("kschedctl.bash", "_kschedctl", "kschedctl.fish"):
        assert f"kschedctl/_data/completions/{script}" in names
    # The Helm chart's Go templates (copied verbatim by render --as helm-chart).
    for template in (ROOT / "templates" / "helm-chart").iterdir():
        assert f"kschedctl/_data/templates/helm-chart/{template.name}" in names


def test_wheel_ships_the_json_schemas(wheel: Path) -> None:
    """``kschedctl schema`` prints these, and editors or CI jobs may read them directly."""
    archive = zipfile.ZipFile(wheel)
    for name in ("scheduler.schema.json", "policy.schema.json"):
        shipped = archive.read(f"kschedctl/_generated/schemas/{name}").decode()
        assert shipped == (ROOT / "kschedctl" / "_generated" / "schemas" / name).read_text()


def test_wheel_marks_the_package_typed(wheel: Path) -> None:
    """PEP 561: ``py.typed`` tells type checkers to use kschedctl's own annotations."""
    assert "kschedctl/py.typed" in zipfile.ZipFile(wheel).namelist()


def test_installed_layout_renders_from_packaged_templates(wheel: Path, tmp_path: Path) -> None:
    zipfile.ZipFile(wheel).extractall(tmp_path / "site")
    probe = (
        "from kschedctl.render import forms as render, templates;"
        "from kschedctl.spec import default_spec;"
        "print(templates.templates_dir());"
        "print(render.render(default_spec('s'), 'example-pod'), end='')"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe],
        env={**os.environ, "PYTHONPATH": str(tmp_path / "site")},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    where, _, text = result.stdout.partition("\n")
    assert where == str(tmp_path / "site" / "kschedctl" / "_data" / "templates")
    assert "schedulerName: s" in text


def test_wheel_installs_the_kubectl_plugin_executables(wheel: Path) -> None:
    # kubectl finds plugins by executable name on PATH: kubectl-sched runs `kubectl sched`,
    # kubectl_complete-sched answers its completion requests.
    archive = zipfile.ZipFile(wheel)
    (entry_points,) = [n for n in archive.namelist() if n.endswith(".dist-info/entry_points.txt")]
    scripts = archive.read(entry_points).decode()
    assert "kschedctl = kschedctl.quick_complete:main" in scripts
    assert "kubectl-sched = kschedctl.cli.plugin:kubectl_sched" in scripts
    assert "kubectl_complete-sched = kschedctl.cli.plugin:kubectl_complete_sched" in scripts
