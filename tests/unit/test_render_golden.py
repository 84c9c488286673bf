"""Golden files: every rendered file of several specs, byte for byte.

Update after an intended change with ``KSCHEDCTL_UPDATE_GOLDEN=1 python -m pytest
tests/unit/test_render_golden.py`` and review the diff in git.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import pytest

from kschedctl.render.added_profile import add_profile
from kschedctl.render.forms import render_workspace
from kschedctl.spec import load_spec

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
SPECS = GOLDEN / "specs"
CASES = [
    "single",
    "multi-profile",
    "ha",
    "custom-plugins",
    "host-service",
    "builtin",
    "custom-coscheduling",
    "custom-quota",
    "custom-image",
    "metrics",
]
UPDATE = os.environ.get("KSCHEDCTL_UPDATE_GOLDEN") == "1"


def _compare(path: Path, actual: str) -> None:
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
                tofile="rendered",
            )
        )
        pytest.fail(
            f"{path.name} differs from its golden file:\n{diff}\n"
            "If the change is intended: KSCHEDCTL_UPDATE_GOLDEN=1 python -m pytest "
            "tests/unit/test_render_golden.py",
            pytrace=False,
        )


@pytest.mark.parametrize("case", CASES)
def test_workspace_matches_golden(case: str) -> None:
    files = render_workspace(load_spec(SPECS / f"{case}.yaml"))
    out = GOLDEN / case
    for name, content in files.items():
        _compare(out / name, content)
    if not UPDATE:
        stale = sorted(p.name for p in out.iterdir() if p.name not in files)
        assert not stale, f"golden files no longer rendered (delete them): {stale}"


def test_add_profile_matches_golden() -> None:
    existing = (SPECS / "existing-config.yaml").read_text()
    text = add_profile(existing, load_spec(SPECS / "single.yaml"), source="kube-scheduler.yaml")
    _compare(GOLDEN / "add-profile" / "kube-scheduler.yaml", text)
