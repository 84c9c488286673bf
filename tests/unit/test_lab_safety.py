"""The lab as a good citizen: private modes for what it writes, its mark on what it starts, and
`lab down` stopping only its own processes — never one that merely names its directory, never
its own parent."""

from __future__ import annotations

import base64
import json
import os
import shutil
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kschedctl.base.errors import LabError
from kschedctl.lab import pki, private, processes
from kschedctl.lab.cluster import Lab
from kschedctl.lab.runner import spawn, volumes
from kschedctl.lab.state import MARKER, STATE, ComponentState, LabState


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


@pytest.fixture()
def open_umask() -> Iterator[None]:
    """umask 000: whatever is private must be so by its own mode, not by the umask."""
    previous = os.umask(0)
    yield
    os.umask(previous)


# -- private files --------------------------------------------------------------------------------


@pytest.mark.usefixtures("open_umask")
def test_private_dir_makes_every_missing_level_0700(tmp_path: Path) -> None:
    (tmp_path / "existing").mkdir(mode=0o755)
    made = private.private_dir(tmp_path / "existing" / "a" / "b")
    assert [mode(p) for p in (made.parent, made)] == [0o700, 0o700]
    assert mode(tmp_path / "existing") == 0o755  # not ours to change
    loose = tmp_path / "loose"
    loose.mkdir(mode=0o777)
    private.private_dir(loose)
    assert mode(loose) == 0o700


@pytest.mark.usefixtures("open_umask")
def test_private_dir_leaves_what_a_symlink_points_to(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.mkdir(mode=0o755)
    (tmp_path / "link").symlink_to(target)
    private.private_dir(tmp_path / "link")
    assert mode(target) == 0o755


@pytest.mark.usefixtures("open_umask")
def test_write_private_is_never_wider_than_0600_while_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[int] = []
    real_write = os.write

    def spying_write(fd: int, data: Any) -> int:
        seen.append(stat.S_IMODE(os.fstat(fd).st_mode))
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", spying_write)
    target = tmp_path / "token"
    target.write_text("old")
    target.chmod(0o644)
    private.write_private(target, "secret")
    assert seen and set(seen) == {0o600}
    assert target.read_text() == "secret" and mode(target) == 0o600
    private.write_private(target, b"public", 0o444)
    assert mode(target) == 0o444
    assert sorted(p.name for p in tmp_path.iterdir()) == ["token"]  # no temporary file left


@pytest.mark.parametrize(
    ("requested", "applied"),
    [(0o644, 0o600), (0o400, 0o400), (0o444, 0o400), (0o755, 0o700), (0o044, 0o400), (0, 0)],
    ids=["default", "owner-read", "all-read", "executable", "others-only", "none"],
)
def test_owner_mode_gives_the_owner_what_any_class_had(requested: int, applied: int) -> None:
    assert private.owner_mode(requested) == applied


class FakeApi:
    def get_object(self, kind: str, namespace: str, name: str) -> dict[str, Any] | None:
        if kind == "ConfigMap":
            return {"data": {"config.yaml": "a: 1\n", "ca.crt": "CERT"}}
        return {"data": {"key": base64.b64encode(b"secret").decode()}}

    def request_token(self, pod: Any, audience: str | None, expiration: int) -> tuple[str, float]:
        return "token", 100.0


@pytest.mark.usefixtures("open_umask")
def test_materialised_tokens_and_secrets_are_0600_in_0700_directories(tmp_path: Path) -> None:
    lab_dir = private.private_dir(tmp_path / "lab")
    pod_dir = lab_dir / "pods" / "ns_p_u"
    pod = {
        "metadata": {"name": "p", "namespace": "ns", "uid": "u"},
        "spec": {"volumes": [
            {"name": "config", "configMap": {"name": "cfg", "items": [
                {"key": "config.yaml", "path": "sub/config.yaml"}]}},
            {"name": "secret", "secret": {"secretName": "sec"}},  # default mode 0644
            {"name": "readonly", "secret": {"secretName": "sec", "defaultMode": 0o400}},
            {"name": "kube-api-access-x", "projected": {"sources": [
                {"serviceAccountToken": {"path": "token"}},
                {"configMap": {"name": "kube-root-ca.crt"}},
                {"secret": {"name": "sec", "items": [{"key": "key", "path": "deep/key"}]}},
            ]}},
            {"name": "scratch", "emptyDir": {}},
            {"name": "made", "hostPath": {"path": "/var/lib/x", "type": "DirectoryOrCreate"}},
            {"name": "file", "hostPath": {"path": "/etc/k/s.conf", "type": "FileOrCreate"}},
        ]},
    }  # fmt: skip
    made = volumes.materialise(pod, pod_dir, lab_dir, FakeApi())
    (token,) = made.tokens
    volumes.refresh_token(token, pod, FakeApi())  # a refresh keeps the mode
    files = [p for p in (lab_dir / "pods").rglob("*") if not p.is_dir()]
    dirs = [p for p in (lab_dir / "pods").rglob("*") if p.is_dir()]
    assert len(files) == 7 and len(dirs) >= 9
    assert {str(p.relative_to(pod_dir)): mode(p) for p in files} == {
        "volumes/config/sub/config.yaml": 0o600,
        "volumes/secret/key": 0o600,
        "volumes/readonly/key": 0o400,
        "volumes/kube-api-access-x/token": 0o600,
        "volumes/kube-api-access-x/config.yaml": 0o600,
        "volumes/kube-api-access-x/ca.crt": 0o600,
        "volumes/kube-api-access-x/deep/key": 0o600,
    }
    assert {mode(d) for d in dirs} == {0o700}
    assert mode(made.paths["made"]) == mode(made.paths["made"].parent) == 0o700
    assert mode(made.paths["file"]) == 0o600


@pytest.mark.usefixtures("open_umask")
def test_the_runner_kubeconfig_config_copy_and_records_are_private(tmp_path: Path) -> None:
    from kschedctl.lab.runner import programs

    run_dir = tmp_path / "run"
    source = tmp_path / "config.yaml"
    source.write_text("apiVersion: kubescheduler.config.k8s.io/v1\n")
    ctx = programs.LaunchContext({}, "v1.36.3", tmp_path / "kc", run_dir, [], 1)
    copy = programs._config_copy(source, ctx)
    record = tmp_path / "lab" / "procs" / "r.json"
    spawn.write_record(record, {"pid": 1})
    assert [mode(p) for p in (copy, copy.parent, record, record.parent)] == [
        0o600, 0o700, 0o600, 0o700,
    ]  # fmt: skip


@pytest.mark.skipif(shutil.which("openssl") is None, reason="the lab needs openssl")
@pytest.mark.usefixtures("open_umask")
def test_pki_keys_are_0600_and_etcd_has_a_ca_of_its_own(tmp_path: Path) -> None:
    directory = tmp_path / "pki"
    pki.generate(directory, "127.0.0.1")
    keys = sorted(directory.rglob("*.key"))
    assert {p.name for p in keys} >= {
        "ca.key",
        "admin.key",
        "sa.key",
        "server.key",
        "apiserver-etcd-client.key",
        "healthcheck-client.key",
    }
    assert {mode(k) for k in keys} == {0o600}
    assert mode(directory) == mode(directory / "etcd") == 0o700
    etcd_ca = str(pki.etcd_file(directory, "ca", "crt"))

    def verifies(cert: Path) -> bool:
        result = subprocess.run(
            ["openssl", "verify", "-CAfile", etcd_ca, str(cert)], capture_output=True
        )
        return result.returncode == 0

    assert verifies(pki.etcd_file(directory, pki.ETCD_APISERVER_CLIENT, "crt"))
    # No Kubernetes identity (the admin, the scheduler) can reach etcd with its certificate.
    assert not [c for c in directory.glob("*.crt") if verifies(c)]


@pytest.mark.usefixtures("open_umask")
def test_lab_kubeconfigs_and_state_are_private(tmp_path: Path) -> None:
    lab = Lab(tmp_path / "lab")
    private.private_dir(lab.dir)
    lab._write_kubeconfigs(6443)
    written = sorted(lab.dir.glob("*kubeconfig"))
    assert len(written) == 3 and {mode(p) for p in written} == {0o600}
    processes.new_identity(lab.dir)
    assert mode(lab.dir / processes.IDENTITY_FILE) == 0o600


# -- the mark and `lab down` --------------------------------------------------------------------


@pytest.fixture()
def fake_lab(tmp_path: Path) -> Iterator[Lab]:
    """A lab directory with an identity and no control plane; every process a test starts in it
    is stopped afterwards (by pid)."""
    lab = Lab(tmp_path / "lab")
    private.private_dir(lab.dir)
    (lab.dir / MARKER).write_text("test\n")
    processes.new_identity(lab.dir)
    started: list[subprocess.Popen[bytes]] = []
    lab.started = started  # type: ignore[attr-defined]
    yield lab
    for proc in started:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def popen(lab: Lab, argv: list[str], env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    lab.started.append(proc)  # type: ignore[attr-defined]
    return proc


def marked_pids(lab: Lab) -> set[int]:
    identity = processes.read_identity(lab.dir)
    assert identity is not None
    return {m.pid for m in processes.marked(identity)}


def wait_exe(pid: int, name: str) -> None:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if Path(os.readlink(f"/proc/{pid}/exe")).name == name:
            return
        time.sleep(0.02)


PYTHON_SLEEP = [sys.executable, "-c", "import time; time.sleep(60)"]


def test_processes_started_in_a_lab_carry_its_mark_and_only_its(fake_lab: Lab) -> None:
    other = {**os.environ, processes.MARKER_ENV: "f" * 32}  # inherited from another lab
    pid = processes.start(PYTHON_SLEEP, fake_lab.dir / "logs" / "x.log", other, fake_lab.dir)
    try:
        environ = processes.process_environment(pid)
        identity = processes.read_identity(fake_lab.dir)
        assert identity is not None
        assert [e for e in environ if e.startswith(processes.MARKER_ENV.encode())] == [
            f"{processes.MARKER_ENV}={identity.id}".encode()
        ]
        assert pid in marked_pids(fake_lab)
    finally:
        processes.stop(pid, os.path.realpath(sys.executable), timeout=2)
    assert mode(fake_lab.dir / "logs") == 0o700


def test_a_process_that_has_just_started_is_found_by_its_mark(fake_lab: Lab) -> None:
    """Right after exec its environment reads empty for a moment: the search waits for it."""
    for _ in range(10):
        pid = processes.start(PYTHON_SLEEP, fake_lab.dir / "logs" / "x.log", {}, fake_lab.dir)
        try:
            assert pid in marked_pids(fake_lab)
        finally:
            processes.stop(pid, os.path.realpath(sys.executable), timeout=2)


def test_a_pod_process_is_marked_whatever_its_env_says(fake_lab: Lab, tmp_path: Path) -> None:
    outputs = {s: tmp_path / s for s in ("stdout", "stderr")}
    env = {"PATH": os.environ["PATH"], processes.MARKER_ENV: "0" * 32}
    proc = spawn.spawn(PYTHON_SLEEP, "pod", env, outputs, tmp_path, fake_lab.dir)
    fake_lab.started.append(proc)  # type: ignore[attr-defined]
    wait_exe(proc.pid, Path(os.path.realpath(sys.executable)).name)
    assert proc.pid in marked_pids(fake_lab)


def test_only_marked_lab_programs_are_found(fake_lab: Lab) -> None:
    identity = processes.read_identity(fake_lab.dir)
    assert identity is not None
    mark = {**os.environ, processes.MARKER_ENV: identity.id}
    ours = popen(fake_lab, PYTHON_SLEEP, mark)
    log = private.private_dir(fake_lab.dir / "logs") / "x.log"
    log.write_text("")
    names_the_lab = popen(fake_lab, ["tail", "-f", str(log)])
    unmarked_python = popen(fake_lab, [*PYTHON_SLEEP, str(fake_lab.dir)])
    marked_sleep = popen(fake_lab, ["sleep", "60"], mark)  # not a lab program
    other_lab = popen(fake_lab, PYTHON_SLEEP, {**os.environ, processes.MARKER_ENV: "e" * 32})
    time.sleep(0.2)
    assert names_the_lab.poll() is None
    found = marked_pids(fake_lab)
    assert ours.pid in found
    assert not found & {p.pid for p in (names_the_lab, unmarked_python, marked_sleep, other_lab)}
    # A lab made after the process started does not own it, whatever its environment.
    later = processes.Identity(identity.id, time.time() + 60)
    assert ours.pid not in {m.pid for m in processes.marked(later)}


CHILD = """
import json, os, sys
from kschedctl.lab import processes
identity = processes.read_identity(__import__("pathlib").Path(sys.argv[1]))
found = [m.pid for m in processes.marked(identity)]
parent = os.getppid()
refused = processes.stop(parent, os.readlink(f"/proc/{parent}/exe"), timeout=1)
print(json.dumps({"me": os.getpid(), "parent": parent, "found": found, "stopped": refused}))
"""

PARENT = """
import signal, subprocess, sys
signal.signal(signal.SIGTERM, lambda *a: print("SIGNALLED", flush=True))
out = subprocess.run([sys.executable, "-c", sys.argv[1], sys.argv[2]], capture_output=True,
                     text=True)
print(out.stdout.strip() or out.stderr, flush=True)
"""


def test_neither_itself_nor_its_marked_parent_is_ever_found_or_stopped(fake_lab: Lab) -> None:
    identity = processes.read_identity(fake_lab.dir)
    assert identity is not None
    env = {**os.environ, processes.MARKER_ENV: identity.id,
           "PYTHONPATH": str(Path(__file__).parents[2])}  # fmt: skip
    result = subprocess.run(
        [sys.executable, "-c", PARENT, CHILD, str(fake_lab.dir)],
        env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert "SIGNALLED" not in result.stdout, result.stdout
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["me"] not in report["found"] and report["parent"] not in report["found"]
    assert report["stopped"] is False


def test_down_with_lost_records_stops_marked_processes_and_spares_the_rest(
    fake_lab: Lab,
) -> None:
    """The rule the e2e test proves on a real lab, without one."""
    python = os.path.realpath(sys.executable)
    ours = processes.start(PYTHON_SLEEP, fake_lab.dir / "logs" / "a.log", os.environ, fake_lab.dir)
    tail = popen(fake_lab, ["tail", "-f", str(fake_lab.dir / "logs" / "a.log")])
    (fake_lab.dir / STATE).write_text("{not json")  # the records are lost
    (fake_lab.dir / "procs").mkdir()
    (fake_lab.dir / "procs" / "x.json").write_text('["not", "a", "record"]')
    try:
        stopped = fake_lab.down()
    finally:
        processes.stop(ours, python, timeout=1)
    assert stopped == [f"pid {ours} ({Path(python).name})"]
    assert not processes.is_running(ours, python)
    assert tail.poll() is None  # it merely names a lab file: alive
    assert not fake_lab.dir.exists()


def test_a_held_component_stays_stopped_until_released(fake_lab: Lab) -> None:
    """``hold`` stops a component by its recorded pid and the runner's revive leaves it
    stopped (a drill replacing the lab's kube-scheduler); ``release`` starts it as it was."""
    exe = os.path.realpath(sys.executable)
    pid = processes.start(PYTHON_SLEEP, fake_lab.log("kube-scheduler"), {}, cwd=fake_lab.dir)
    component = ComponentState(
        pid=pid, exe=exe, port=1, log=str(fake_lab.log("kube-scheduler")),
        argv=PYTHON_SLEEP, started=processes.start_ticks(pid),
    )  # fmt: skip
    state = LabState(api_port=1, versions={}, started=0.0, ready=True)
    state.components["kube-scheduler"] = component
    fake_lab._save(state)
    try:
        fake_lab.hold("kube-scheduler")
        assert not processes.is_running(pid, exe, component.started)
        assert fake_lab.revive() == []
        assert fake_lab.running_components() == {}
        fake_lab.release("kube-scheduler")
        again = fake_lab.running_components()["kube-scheduler"]
        assert again.pid != pid and (fake_lab.state() or state).held == []
        fake_lab.release("kube-scheduler")  # already running: nothing more is started
        assert fake_lab.running_components()["kube-scheduler"].pid == again.pid
        processes.stop(again.pid, again.exe, started=again.started)
        assert fake_lab.revive() == ["kube-scheduler"]  # an exit is revived again
        with pytest.raises(LabError, match="no component 'etcd'"):
            fake_lab.hold("etcd")
    finally:
        for c in (fake_lab.state() or state).components.values():
            processes.stop(c.pid, c.exe, started=c.started)
