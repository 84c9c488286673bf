"""The lab's binaries: helm is built like the others but optional for `lab up`."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from kschedctl.errors import NotFoundError
from kschedctl.lab import binaries


def _fake_bin(directory: Path, name: str) -> None:
    path = directory / name
    path.write_text("#!/bin/sh\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def test_helm_is_a_pinned_optional_module() -> None:
    (helm,) = [m for m in binaries.MODULES if "helm" in m.commands]
    assert helm.upstream == "helm.sh/helm/v4" and helm.version().startswith("v4.")
    assert not helm.required
    assert "helm" not in binaries.BINARIES  # what `lab up` needs
    assert f"version={helm.version()}" in binaries._ldflags(helm)


def test_locate_without_an_optional_binary(tmp_path: Path) -> None:
    for name in binaries.BINARIES:
        _fake_bin(tmp_path, name)
    found = binaries.locate(tmp_path)
    assert set(found) == set(binaries.BINARIES)
    _fake_bin(tmp_path, "helm")
    assert binaries.locate(tmp_path)["helm"] == (tmp_path / "helm").resolve()


def test_locate_names_only_the_missing_required_binaries(tmp_path: Path) -> None:
    for name in binaries.BINARIES:
        if name != "etcd":
            _fake_bin(tmp_path, name)
    with pytest.raises(NotFoundError) as info:
        binaries.locate(tmp_path)
    assert info.value.message.endswith(": etcd")
