"""The import contracts in pyproject.toml (``[tool.importlinter]``) hold.

They are the architecture as checked facts: imports point down the layers, the pure packages
import neither the kubernetes client nor typer/rich/click, the offline commands never import
the kubernetes client, and no package has an import cycle between its modules. CI runs
``lint-imports`` too; this test makes ``python -m pytest`` check them as well.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def lint_imports() -> str:
    """The ``lint-imports`` installed next to this interpreter (import-linter, a test extra)."""
    beside = Path(sys.executable).with_name("lint-imports")
    found = str(beside) if beside.exists() else shutil.which("lint-imports")
    assert found, "lint-imports not found: install the test extras (pip install -e '.[test]')"
    return found


def test_import_contracts_are_kept() -> None:
    result = subprocess.run(
        [lint_imports(), "--no-cache"],
        cwd=ROOT,  # lint-imports reads ./pyproject.toml
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
