"""The one golden-file comparison the golden tests share (rendered forms, pictures)."""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import pytest

UPDATE = os.environ.get("KSCHEDCTL_UPDATE_GOLDEN") == "1"


def compare_golden(path: Path, actual: str, test_file: str) -> None:
    """Fail with a diff when ``actual`` differs from ``path``; with KSCHEDCTL_UPDATE_GOLDEN=1,
    (re)write ``path`` instead. ``test_file`` is named in the hint to regenerate."""
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual, encoding="utf-8")
        return
    if not path.exists():
        pytest.fail(f"{path} is missing; create it with KSCHEDCTL_UPDATE_GOLDEN=1")
    expected = path.read_text(encoding="utf-8")
    if expected != actual:
        diff = "".join(
            difflib.unified_diff(
                expected.splitlines(keepends=True),
                actual.splitlines(keepends=True),
                fromfile=f"{path} (golden)",
                tofile="produced",
            )
        )
        pytest.fail(
            f"{path.name} differs from its golden file:\n{diff[:8000]}\n"
            f"If the change is intended: KSCHEDCTL_UPDATE_GOLDEN=1 python -m pytest {test_file}",
            pytrace=False,
        )
