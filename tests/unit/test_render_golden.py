"""Golden files: every rendered file of several specs, byte for byte.

Update after an intended change with ``KSCHEDCTL_UPDATE_GOLDEN=1 python -m pytest
tests/unit/test_render_golden.py`` and review the diff in git.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from golden_compare import UPDATE, compare_golden

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
    "builtin-plugins",
    "routing",
    "routing-beta",
]


def _compare(path: Path, actual: str) -> None:
    compare_golden(path, actual, "tests/unit/test_render_golden.py")


@pytest.mark.parametrize("case", CASES)
def test_workspace_matches_golden(case: str) -> None:
    files = render_workspace(load_spec(SPECS / f"{case}.yaml"))
    out = GOLDEN / case
    for name, content in files.items():
        _compare(out / name, content)
    if not UPDATE:
        written = {str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()}
        stale = sorted(written - set(files))
        assert not stale, f"golden files no longer rendered (delete them): {stale}"


def test_add_profile_matches_golden() -> None:
    existing = (SPECS / "existing-config.yaml").read_text()
    text = add_profile(existing, load_spec(SPECS / "single.yaml"), source="kube-scheduler.yaml")
    _compare(GOLDEN / "add-profile" / "kube-scheduler.yaml", text)
