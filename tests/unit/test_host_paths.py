"""Host files are written only under the resolved root: ``..`` and symlinks resolved, anything
that ends outside refused (exit 3, the field and the real path named) before a file is written.

The spec loader refuses ``..`` and relative host paths on its own; these tests set the fields
on a loaded spec, so they prove the write-time check holds without it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kschedctl.base.errors import KschedError, SpecError, UsageError
from kschedctl.hosts import LabHost, SystemdHost, systemd
from kschedctl.lab.cluster import Lab
from kschedctl.lab.state import MARKER
from kschedctl.ops.deploy import DeployRequest, client_dry_run, load_target
from kschedctl.spec import Spec, thawed


@pytest.fixture
def spec() -> Spec:
    return thawed(load_target("s"))


def _tree(path: Path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*"))


@pytest.mark.parametrize(
    "config_dir",
    ["/../../../../tmp/x", "/etc/../../..", "/etc/kubernetes/../../../outside", "/.."],
)
@pytest.mark.parametrize("form", ["service", "static-pod"])
def test_dot_dot_in_config_dir_is_refused(
    tmp_path: Path, spec: Spec, form: str, config_dir: str
) -> None:
    root = tmp_path / "root"
    spec.service.config_dir = config_dir
    with pytest.raises(SpecError) as caught:
        SystemdHost(root).files(spec, form)
    assert caught.value.exit_code == 3
    assert caught.value.path == "spec.service.configDir"
    assert "outside the host root" in caught.value.message
    assert not root.exists()


def test_a_symlink_inside_root_pointing_outside_is_refused(tmp_path: Path, spec: Spec) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "etc").mkdir(parents=True)
    outside.mkdir()
    (root / "etc" / "kubernetes").symlink_to(outside)
    with pytest.raises(SpecError, match=f"resolves to '{outside}/config/s.yaml'"):
        SystemdHost(root).files(spec, "service")
    (root / "etc" / "kubernetes").unlink()
    (root / "etc" / "systemd").symlink_to(outside)  # the unit's directory this time
    with pytest.raises(SpecError, match="metadata.name: .*outside the host root"):
        SystemdHost(root).files(spec, "service")
    assert _tree(outside) == []


def test_a_symlinked_file_pointing_outside_is_refused(tmp_path: Path, spec: Spec) -> None:
    root, target = tmp_path / "root", tmp_path / "passwd"
    target.write_text("keep")
    (root / "etc/systemd/system").mkdir(parents=True)
    (root / "etc/systemd/system/s.service").symlink_to(target)
    with pytest.raises(SpecError, match="outside the host root"):
        SystemdHost(root).files(spec, "service")
    assert target.read_text() == "keep"


def test_symlinks_that_stay_inside_root_are_followed(tmp_path: Path, spec: Spec) -> None:
    root = tmp_path / "root"
    (root / "real").mkdir(parents=True)
    (root / "etc").mkdir()
    (root / "etc" / "kubernetes").symlink_to(root / "real")
    host = SystemdHost(root)
    files = host.files(spec, "service")
    assert root / "real" / "config" / "s.yaml" in files
    assert host.write_files(files)
    assert (root / "real" / "config" / "s.yaml").is_file()


def test_a_root_that_is_a_symlink_is_resolved(tmp_path: Path, spec: Spec) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    files = SystemdHost(tmp_path / "link").files(spec, "service")
    assert all(p.is_relative_to(tmp_path / "real") for p in files)


def test_manifests_dir_must_be_a_directory(tmp_path: Path, spec: Spec) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(UsageError, match="--manifests-dir .* is not a directory"):
        SystemdHost(tmp_path / "root", tmp_path / "file").files(spec, "static-pod")


def test_a_manifest_symlinked_out_of_the_manifests_dir_is_refused(
    tmp_path: Path, spec: Spec
) -> None:
    manifests = tmp_path / "manifests"
    manifests.mkdir()
    (manifests / "s.yaml").symlink_to(tmp_path / "elsewhere.yaml")
    with pytest.raises(SpecError, match="--manifests-dir: .*outside"):
        SystemdHost(tmp_path / "root", manifests).files(spec, "static-pod")


def test_write_files_checks_again_and_writes_nothing_when_one_is_outside(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    files = {root / "a" / "ok": "1", root / "b" / ".." / ".." / "escape": "2"}
    with pytest.raises(SpecError, match="refusing to write"):
        systemd.write_files(files, [root])
    assert not (tmp_path / "escape").exists()
    assert not (root / "a" / "ok").exists()


def test_write_files_is_all_or_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "root"
    (root / "a").mkdir(parents=True)
    (root / "a" / "old").write_text("old")
    calls: list[str] = []

    def fdopen_failing(fd: int, *args: object, **kwargs: object) -> object:
        calls.append("open")
        if len(calls) == 2:
            os.close(fd)
            raise OSError(28, "No space left on device")
        return real_fdopen(fd, *args, **kwargs)

    real_fdopen = os.fdopen
    monkeypatch.setattr(systemd.os, "fdopen", fdopen_failing)
    with pytest.raises(KschedError, match="No space left on device") as caught:
        systemd.write_files({root / "a" / "old": "new", root / "a" / "second": "2"}, [root])
    assert caught.value.hint and "disk is full" in caught.value.hint
    assert (root / "a" / "old").read_text() == "old"
    assert sorted(p.name for p in (root / "a").iterdir()) == ["old"]  # no temp file left


def test_unwritable_host_files_are_an_error_not_a_traceback(
    tmp_path: Path, spec: Spec, monkeypatch: pytest.MonkeyPatch
) -> None:
    def denied(*args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied", "/etc/systemd/system")

    monkeypatch.setattr(Path, "mkdir", denied)
    host = SystemdHost(tmp_path / "root")
    with pytest.raises(KschedError, match="Permission denied") as caught:
        host.write_files(host.files(spec, "service"))
    assert caught.value.exit_code == 1


def test_the_client_dry_run_refuses_too(tmp_path: Path, spec: Spec) -> None:
    spec.service.config_dir = "/../../../../tmp/x"
    with pytest.raises(SpecError, match="spec.service.configDir"):
        client_dry_run(DeployRequest(spec, "service"), SystemdHost(tmp_path))


def _lab(tmp_path: Path) -> Lab:
    lab_dir = tmp_path / "lab"
    lab_dir.mkdir()
    (lab_dir / MARKER).write_text("")
    (lab_dir / "kubeconfig").write_text("")
    (lab_dir / "scheduler.kubeconfig").write_text("client-key: secret\n")
    return Lab(lab_dir)


@pytest.mark.parametrize(
    ("field", "value"),
    [("kubeconfig", "/../../../stolen.conf"), ("config_dir", "/../../../../tmp/x")],
)
def test_the_lab_host_refuses_before_writing_anything(
    tmp_path: Path, spec: Spec, field: str, value: str
) -> None:
    lab = _lab(tmp_path)
    setattr(spec.service, field, value)
    with pytest.raises(SpecError, match="outside the host root"):
        LabHost(lab).prepare(spec, "service")
    assert not (lab.dir / "host").exists()
    assert not (tmp_path / "stolen.conf").exists()


def test_the_lab_host_copies_its_kubeconfig_privately(tmp_path: Path, spec: Spec) -> None:
    lab = _lab(tmp_path)
    LabHost(lab).prepare(spec, "static-pod")
    copied = lab.dir / "host" / "etc" / "kubernetes" / "scheduler.conf"
    assert copied.read_text() == "client-key: secret\n"
    assert copied.stat().st_mode & 0o777 == 0o600
