"""The host seam: which host a command gets, and what each host does without a cluster."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from kschedctl import hosts
from kschedctl.hosts import LabHost, SystemdHost
from kschedctl.hosts.lab import running
from kschedctl.lab.cluster import Lab
from kschedctl.lab.state import MARKER
from kschedctl.observe.schedulers import LAB_ANNOTATION
from kschedctl.ops.deploy import load_target
from kschedctl.spec import Spec


def _lab(tmp_path: Path) -> Lab:
    (tmp_path / "lab").mkdir()
    (tmp_path / "lab" / MARKER).write_text("")
    (tmp_path / "lab" / "kubeconfig").write_text("")
    return Lab(tmp_path / "lab")


@pytest.fixture
def spec() -> Spec:
    return load_target("my-scheduler")


def test_a_lab_kubeconfig_picks_the_lab_and_ignores_root(tmp_path: Path) -> None:
    lab = _lab(tmp_path)
    host = hosts.for_target(str(lab.kubeconfig), Path("/elsewhere"))
    assert isinstance(host, LabHost)
    assert (host.root, host.manifests_dir) == (lab.dir / "host", lab.dir / "manifests")
    assert host.annotations() == {LAB_ANNOTATION: str(lab.dir)}


def test_the_lab_kubeconfig_comes_from_the_environment_when_not_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lab = _lab(tmp_path)
    monkeypatch.setenv("KUBECONFIG", str(lab.kubeconfig))
    assert isinstance(hosts.for_target(None), LabHost)


def test_manifests_dir_is_kept_in_the_lab(tmp_path: Path) -> None:
    lab = _lab(tmp_path)
    host = hosts.for_target(str(lab.kubeconfig), manifests_dir=tmp_path / "m")
    assert host.manifests_dir == tmp_path / "m"


@pytest.mark.parametrize(
    "name",
    ["config", "kubeconfig-in-a-plain-dir"],
    ids=["not-named-kubeconfig", "no-lab-marker"],
)
def test_other_kubeconfigs_pick_this_machine(tmp_path: Path, name: str) -> None:
    _lab(tmp_path)
    path = tmp_path / "lab" / "config" if name == "config" else tmp_path / "kubeconfig"
    path.write_text("")
    host = hosts.for_target(str(path), tmp_path / "root")
    assert isinstance(host, SystemdHost)
    assert host.root == tmp_path / "root"
    assert host.manifests_dir == tmp_path / "root" / "etc/kubernetes/manifests"
    assert host.annotations() == {}


def test_the_recorded_lab_is_the_host_remove_undoes(tmp_path: Path) -> None:
    recorded = hosts.for_record(str(tmp_path / "lab"))
    assert isinstance(recorded, LabHost) and recorded.lab.dir == (tmp_path / "lab").resolve()
    machine = hosts.for_record(None)
    assert isinstance(machine, SystemdHost) and machine.root == Path("/")


def test_host_files_go_under_root(tmp_path: Path, spec: Spec) -> None:
    host = SystemdHost(tmp_path, tmp_path / "manifests")
    service = host.files(spec, "service")
    assert sorted(service) == [
        tmp_path / "etc/kubernetes/config/my-scheduler.yaml",
        tmp_path / "etc/systemd/system/my-scheduler.service",
    ]
    static = host.files(spec, "static-pod")
    assert tmp_path / "manifests" / "my-scheduler.yaml" in static


def test_without_systemd_the_commands_are_printed_instead(tmp_path: Path, spec: Spec) -> None:
    host = SystemdHost(tmp_path)  # a --root other than / never runs systemctl
    files = host.files(spec, "service")
    warnings: list[str] = []
    assert host.write_files(files) is True
    assert host.start_service(spec, files, True, print, warnings.append) is False
    assert host.write_files(files) is False
    assert host.start_service(spec, files, False, print, warnings.append) is True
    assert warnings[0].endswith(
        "run on the host:\n  sudo systemctl daemon-reload\n"
        "  sudo systemctl enable --now my-scheduler.service"
    )
    assert host.remove_files(sorted(files), spec.name) == sorted(files)
    assert host.remove_files(sorted(files), spec.name) == []


def test_lab_logs_are_files_and_a_machine_without_journal_has_none(tmp_path: Path) -> None:
    lab = _lab(tmp_path)
    host = LabHost(lab)
    assert host.log_file("s", "service") is None  # not started yet
    log = lab.log("service_s.service")
    log.parent.mkdir(parents=True)
    old = "I0102 15:04:05.000000       1 a.go:1] old"
    now = f"I{datetime.now():%m%d %H:%M:%S}.000000       1 a.go:1] now"
    log.write_text(f"{old}\n{now}\nplain two\n")
    assert host.log_file("s", "service") == log
    assert host.log_file("s", "pod") is None
    lines = host.log_lines("s", "service", follow=False, since_seconds=None, tail=1)
    assert lines is not None and [line.text for line in lines] == ["plain two"]
    assert host.recent_log_lines("s", "service") == [now, "plain two"]  # ten minutes
    assert host.log_lines("other", "process", follow=False, since_seconds=None, tail=None) is None
    assert host.recent_log_lines("other", "process") == []


def test_the_lab_default_scheduler_log(tmp_path: Path) -> None:
    lab = _lab(tmp_path)
    lab.log("kube-scheduler").parent.mkdir(parents=True)
    lab.log("kube-scheduler").write_text("x\n")
    assert LabHost(lab).log_file("default-scheduler", "process") == lab.log("kube-scheduler")


def test_a_stopped_lab_service_fails_the_wait(tmp_path: Path, spec: Spec) -> None:
    lab = _lab(tmp_path)
    host = LabHost(lab)
    assert host.liveness(spec, "static-pod") is None
    alive = host.liveness(spec, "service")
    assert alive is not None and running(lab, "my-scheduler.service") is None
    with pytest.raises(Exception, match="my-scheduler.service exited"):
        alive()
