"""The lab runner's pure parts: image matching, argv/env/path rewriting, CRI logs, back-off,
probes, status and volumes (with a fake API)."""

from __future__ import annotations

import base64
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from kschedctl.lab import images
from kschedctl.lab.runner import crilog, podenv, programs, status, volumes
from kschedctl.lab.runner.probes import ProbeSpec, ProbeTracker, parse_probe
from kschedctl.lab.runner.restarts import Backoff, exit_code
from kschedctl.model.config import shapes

# -- image matching -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("image", "program"),
    [
        ("registry.k8s.io/kube-scheduler:v1.36.3", "kube-scheduler"),
        ("registry.k8s.io/kube-scheduler:v1.35.0@sha256:" + "a" * 64, "kube-scheduler"),
        ("localhost:5000/mirror/kube-scheduler", "kube-scheduler"),
        ("kube-scheduler", "kube-scheduler"),
        ("registry.k8s.io/kube-apiserver:v1.36.3", None),
        ("example.com/kube-scheduler-custom:1", None),
        ("registry.k8s.io/pause:3.10", None),
        ("", None),
        ("kschedctl:0.1.0", "kschedctl"),
        ("ghcr.io/example/kschedctl:v1", "kschedctl"),
        (images.CUSTOM_KUBE_SCHEDULER_IMAGE, "custom-kube-scheduler"),
        ("registry.example.com/team/custom-kube-scheduler:v2", "custom-kube-scheduler"),
    ],
    ids=[
        "release",
        "digest",
        "registry-port",
        "bare",
        "apiserver",
        "suffix",
        "pause",
        "empty",
        "kschedctl",
        "kschedctl-registry",
        "custom",
        "custom-registry",
    ],
)
def test_program_for_matches_on_the_repository_last_element(image: str, program: str) -> None:
    assert images.program_for({"name": "c", "image": image}) == program


def test_image_repository_and_tag() -> None:
    assert shapes.image_repository("localhost:5000/a/b:v1@sha256:x") == "localhost:5000/a/b"
    assert shapes.image_tag("localhost:5000/a/b:v1@sha256:x") == "v1"
    assert shapes.image_tag("localhost:5000/a/b") == ""


# -- env, expansion, paths ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("--v=$(LEVEL)", "--v=4"),
        ("$(MISSING)", "$(MISSING)"),
        ("$$(LEVEL)", "$(LEVEL)"),
        ("a$b$(", "a$b$("),
        ("$(LEVEL)$(LEVEL)", "44"),
    ],
    ids=["known", "unknown-kept", "escaped", "unterminated", "twice"],
)
def test_expand_follows_kubernetes_rules(text: str, expected: str) -> None:
    assert podenv.expand(text, {"LEVEL": "4"}) == expected


MOUNTS = [("/etc/kubernetes", "/lab/pod/volumes/kube"), ("/etc/kubernetes/x", "/lab/pod/volumes/x")]


@pytest.mark.parametrize(
    ("arg", "expected"),
    [
        ("--config=/etc/kubernetes/x/config.yaml", "--config=/lab/pod/volumes/x/config.yaml"),
        ("--kubeconfig=/etc/kubernetes/scheduler.conf",
         "--kubeconfig=/lab/pod/volumes/kube/scheduler.conf"),
        ("/etc/kubernetes", "/lab/pod/volumes/kube"),
        ("/etc/kubernetes2/a", "/etc/kubernetes2/a"),
        ("--v=2", "--v=2"),
        ("relative/etc/kubernetes/a", "relative/etc/kubernetes/a"),
    ],
    ids=["longest-mount", "flag-value", "mount-itself", "sibling-prefix", "no-path", "relative"],
)  # fmt: skip
def test_rewrite_arg_maps_paths_under_mounts(arg: str, expected: str) -> None:
    assert podenv.rewrite_arg(arg, MOUNTS) == expected


def test_flag_values_and_replace_flag_handle_both_spellings() -> None:
    argv = ["--config=/a", "--v=2", "--config", "/b"]
    assert podenv.flag_values(argv, "config") == ["/a", "/b"]
    assert podenv.replace_flag(argv, "config", "/c") == ["--config=/c", "--v=2", "--config=/c"]


def test_pod_hostname_is_cut_like_kubelet() -> None:
    long_name = "a" * 62 + "-b"
    assert podenv.pod_hostname({"metadata": {"name": long_name}, "spec": {}}) == "a" * 62
    assert podenv.pod_hostname({"metadata": {"name": "p"}, "spec": {"hostname": "h"}}) == "h"
    host_network = {"hostNetwork": True, "nodeName": "lab-node-1"}
    assert podenv.pod_hostname({"metadata": {"name": "p"}, "spec": host_network}) == "lab-node-1"


POD = {
    "metadata": {"name": "sched-0", "namespace": "ns", "uid": "u-1", "labels": {"app": "s"}},
    "spec": {"nodeName": "node-1", "serviceAccountName": "sa"},
    "status": {"podIP": "10.0.0.5"},
}


def _lookup(kind: str, namespace: str, name: str) -> dict[str, str] | None:
    store = {("ConfigMap", "ns", "cm"): {"LEVEL": "3", "MODE": "fast"},
             ("Secret", "ns", "s"): {"TOKEN": "t0p"}}  # fmt: skip
    return store.get((kind, namespace, name))


def test_container_env_resolves_every_source_in_order() -> None:
    container = {
        "envFrom": [{"configMapRef": {"name": "cm"}, "prefix": "CM_"}],
        "env": [
            {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
            {"name": "APP", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['app']"}}},
            {"name": "LEVEL", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "LEVEL"}}},
            {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "s", "key": "TOKEN"}}},
            {"name": "OPT", "valueFrom": {"configMapKeyRef": {"name": "nope", "key": "x",
                                                             "optional": True}}},
            {"name": "ID", "value": "$(POD)-$(CM_MODE)"},
        ],
    }  # fmt: skip
    env = podenv.container_env(POD, container, _lookup, {"BASE": "1"})
    assert env == {"BASE": "1", "CM_LEVEL": "3", "CM_MODE": "fast", "POD": "sched-0",
                   "APP": "s", "LEVEL": "3", "TOKEN": "t0p", "ID": "sched-0-fast"}  # fmt: skip


def test_container_env_missing_key_is_a_config_error() -> None:
    container = {"env": [{"name": "X", "valueFrom": {"configMapKeyRef": {"name": "cm",
                                                                         "key": "NOPE"}}}]}  # fmt: skip
    with pytest.raises(podenv.ContainerConfigError, match="couldn't find key NOPE"):
        podenv.container_env(POD, container, _lookup, {})


# -- kube-scheduler launch ------------------------------------------------------------------------


def _ctx(tmp_path: Path, mounts: list[tuple[str, str]] | None = None) -> programs.LaunchContext:
    return programs.LaunchContext(
        binaries={"kube-scheduler": Path("/bin/ks/kube-scheduler")},
        lab_version="v1.36.3",
        kubeconfig=tmp_path / "sa.kubeconfig",
        run_dir=tmp_path / "run",
        mounts=mounts or [],
        local_port=40001,
    )


def test_kube_scheduler_config_gets_the_service_account_kubeconfig(tmp_path: Path) -> None:
    config = tmp_path / "vol" / "config.yaml"
    config.parent.mkdir()
    config.write_text("apiVersion: kubescheduler.config.k8s.io/v1\n"
                      "kind: KubeSchedulerConfiguration\nprofiles: [{schedulerName: s}]\n")  # fmt: skip
    ctx = _ctx(tmp_path)
    launch = programs.launch("kube-scheduler", "registry.k8s.io/kube-scheduler:v1.36.3",
                             ["kube-scheduler", f"--config={config}"], ["--v=2"], ctx)  # fmt: skip
    copy = tmp_path / "run" / "config" / "config.yaml"
    assert launch.argv == [
        "/bin/ks/kube-scheduler", f"--config={copy}", "--v=2",
        f"--authentication-kubeconfig={ctx.kubeconfig}",
        f"--authorization-kubeconfig={ctx.kubeconfig}",
        "--secure-port=40001", "--bind-address=127.0.0.1",
    ]  # fmt: skip
    assert yaml.safe_load(copy.read_text())["clientConnection"] == {
        "kubeconfig": str(ctx.kubeconfig)
    }
    assert (launch.exe, launch.serving_port, launch.local_port, launch.notes) == (
        "/bin/ks/kube-scheduler", 10259, 40001, [],
    )  # fmt: skip


def test_kube_scheduler_config_kubeconfig_under_a_mount_is_rewritten(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("clientConnection: {kubeconfig: /etc/kubernetes/scheduler.conf}\n")
    ctx = _ctx(tmp_path, [("/etc/kubernetes", "/lab/host/etc/kubernetes")])
    programs.launch("kube-scheduler", "kube-scheduler:v1.35.2", ["kube-scheduler"],
                    [f"--config={config}", "--secure-port=10300"], ctx)  # fmt: skip
    written = yaml.safe_load((tmp_path / "run" / "config" / "config.yaml").read_text())
    assert written["clientConnection"]["kubeconfig"] == "/lab/host/etc/kubernetes/scheduler.conf"


def test_kube_scheduler_without_config_and_with_own_port(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path)
    launch = programs.launch("kube-scheduler", "kube-scheduler:v1.35.2", [],
                             ["--secure-port=10300", "--leader-elect=false"], ctx)  # fmt: skip
    assert f"--kubeconfig={ctx.kubeconfig}" in launch.argv
    assert launch.argv[-2:] == ["--secure-port=40001", "--bind-address=127.0.0.1"]
    assert launch.serving_port == 10300
    assert launch.notes and "v1.35.2" in launch.notes[0] and "v1.36.3" in launch.notes[0]


def test_kube_scheduler_serving_disabled_keeps_it_off(tmp_path: Path) -> None:
    launch = programs.launch("kube-scheduler", "kube-scheduler", ["kube-scheduler"],
                             ["--secure-port=0", "--kubeconfig=/k"], _ctx(tmp_path))  # fmt: skip
    assert "--bind-address=127.0.0.1" not in launch.argv
    assert (launch.serving_port, launch.local_port) == (None, None)


def test_kube_scheduler_image_with_another_command_is_refused(tmp_path: Path) -> None:
    with pytest.raises(programs.LaunchError, match="'/bin/sh'"):
        programs.launch("kube-scheduler", "kube-scheduler", ["/bin/sh", "-c", "x"], [],
                        _ctx(tmp_path))  # fmt: skip


def test_custom_kube_scheduler_runs_like_kube_scheduler_with_its_own_binary(
    tmp_path: Path,
) -> None:
    custom = tmp_path / "bin" / "custom-kube-scheduler"
    custom.parent.mkdir()
    custom.write_text("")
    custom.chmod(0o755)
    ctx = programs.LaunchContext(
        binaries={"kube-scheduler": custom.parent / "kube-scheduler"},  # a --bin-dir holding both
        lab_version="v1.36.3",
        kubeconfig=tmp_path / "sa.kubeconfig",
        run_dir=tmp_path / "run",
        mounts=[],
        local_port=40001,
    )
    # scheduler-plugins-style images name their binary kube-scheduler: both names run it
    for command in (["custom-kube-scheduler"], ["/bin/kube-scheduler"], []):
        launch = programs.launch("custom-kube-scheduler", images.CUSTOM_KUBE_SCHEDULER_IMAGE,
                                 command, ["--kubeconfig=/k"], ctx)  # fmt: skip
        assert launch.argv[0] == launch.exe == str(custom.resolve())
        assert launch.argv[1] == "--kubeconfig=/k" and launch.notes == []
        assert launch.argv[-2:] == ["--secure-port=40001", "--bind-address=127.0.0.1"]
    with pytest.raises(programs.LaunchError, match="'/bin/sh'"):
        programs.launch("custom-kube-scheduler", "custom-kube-scheduler", ["/bin/sh"], [], ctx)


def test_missing_custom_kube_scheduler_fails_only_its_container(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KSCHEDCTL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(programs.LaunchError) as caught:
        programs.launch("custom-kube-scheduler", images.CUSTOM_KUBE_SCHEDULER_IMAGE, [], [],
                        _ctx(tmp_path))  # fmt: skip
    message = str(caught.value)
    assert "custom-kube-scheduler is not built" in message and "/bin/ks" in message
    assert "kschedctl lab build" in message


# -- CRI logs -----------------------------------------------------------------------------------

CRI_LINE = re.compile(rb"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z (stdout|stderr) [PF] .*$")


def test_cri_records_format_and_long_lines() -> None:
    assert crilog.timestamp(1_475_712_000_000_000_001) == "2016-10-06T00:00:00.000000001Z"
    assert crilog.cri_records("stderr", b"hello", 0) == (
        b"1970-01-01T00:00:00.000000000Z stderr F hello\n"
    )
    long = crilog.cri_records("stdout", b"x" * (crilog.MAX_LINE + 5), 0).splitlines()
    assert [line.split(b" ")[2] for line in long] == [b"P", b"F"]
    assert all(CRI_LINE.match(line) for line in long)


def test_container_log_tails_rotates_and_resumes(tmp_path: Path) -> None:
    log = crilog.ContainerLog(tmp_path / "logs", tmp_path / "run", "c")
    assert log.path.exists() and log.path.read_bytes() == b""
    raw = log.new_run()
    raw["stderr"].write_bytes(b"one\ntw")
    log.pump()
    assert [line.split(b" ", 3)[3] for line in log.path.read_bytes().splitlines()] == [b"one"]
    # A new runner (after a crash) resumes at the unfinished line.
    again = crilog.ContainerLog(tmp_path / "logs", tmp_path / "run", "c")
    again.resume()
    with open(raw["stderr"], "ab") as out:
        out.write(b"o\nthree")
    again.finish()
    lines = again.path.read_bytes().splitlines()
    assert [line.split(b" ", 3)[3] for line in lines] == [b"one", b"two", b"three"]
    assert all(CRI_LINE.match(line) for line in lines)
    again.new_run()
    assert again.previous.read_bytes() == b"\n".join(lines) + b"\n"
    assert again.path.read_bytes() == b""


# -- back-off, exit codes, probes -------------------------------------------------------------------


def test_backoff_is_the_kubelets() -> None:
    backoff = Backoff(10, 40)
    assert backoff.delay(100, 100) == 0  # first restart: at once
    backoff.restarted(100)
    delays = []
    now = 101.0
    for _ in range(4):
        delay = backoff.delay(now, now)
        delays.append(delay)
        now += delay
        backoff.restarted(now)
        now += 1
    assert delays == [10, 20, 40, 40]
    assert backoff.delay(now + 81, now + 81) == 0  # ran longer than 2 x max: starts over


def test_exit_code_of_a_signal_is_128_plus_it() -> None:
    assert (exit_code(-9), exit_code(-15), exit_code(2)) == (137, 143, 2)


def test_parse_probe_named_port_defaults_and_cap() -> None:
    container = {"ports": [{"name": "https", "containerPort": 10259}]}
    probe = {"httpGet": {"path": "/readyz", "port": "https", "scheme": "HTTPS"},
             "initialDelaySeconds": 10, "periodSeconds": 10}  # fmt: skip
    spec = parse_probe(probe, container, max_period=1)
    assert spec == ProbeSpec("http", 10259, "/readyz", "HTTPS", (), 1, 1, 1, 1, 3)
    assert parse_probe({"exec": {"command": ["true"]}}, container).action == "exec"
    assert parse_probe(None, container) is None


def test_probe_tracker_thresholds() -> None:
    tracker = ProbeTracker(ProbeSpec("http", 1, failure_threshold=2, period=5), 0, initial=True)
    assert tracker.due(0) and not tracker.due(-1)
    assert not tracker.record(False, "boom", 0) and tracker.result  # one failure: not yet
    assert tracker.record(False, "boom", 5) and not tracker.result
    assert tracker.record(True, "", 10) and tracker.result and not tracker.due(14)


# -- status ---------------------------------------------------------------------------------------


def _pod_with(statuses: list[dict[str, Any]], ready: str) -> dict[str, Any]:
    return {
        "spec": {"containers": [{"name": "c"}]},
        "status": {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": ready, "lastTransitionTime": "T0"},
                           {"type": "ContainersReady", "status": ready,
                            "lastTransitionTime": "T0"}],
            "containerStatuses": statuses,
        },
    }  # fmt: skip


def test_desired_status_and_needs_patch() -> None:
    running = {"name": "c", "image": "i", "imageID": "", "ready": False, "started": True,
               "restartCount": 1, "state": {"running": {"startedAt": "T1"}}, "lastState": {}}  # fmt: skip
    before = _pod_with([dict(running, ready=True, restartCount=0)], "True")
    desired = status.desired_status(before, [running], "Running", "127.0.0.1", 0)
    conditions = {c["type"]: c for c in desired["conditions"]}
    assert conditions["Ready"]["status"] == "False"
    assert conditions["Ready"]["reason"] == "ContainersNotReady"
    assert conditions["Ready"]["message"] == "containers with unready status: [c]"
    assert conditions["Ready"]["lastTransitionTime"] == "1970-01-01T00:00:00Z"
    assert conditions["Initialized"]["status"] == "True"
    assert (desired["podIP"], desired["hostIPs"]) == ("127.0.0.1", [{"ip": "127.0.0.1"}])
    assert status.needs_patch(before, desired)

    after = _pod_with([running], "False")
    after["status"].update({k: v for k, v in desired.items() if k != "conditions"})
    after["status"]["conditions"] = desired["conditions"]
    again = status.desired_status(after, [running], "Running", "127.0.0.1", 9)
    assert not status.needs_patch(after, again)
    assert again["conditions"][3]["lastTransitionTime"] == "1970-01-01T00:00:00Z"  # kept
    assert again["startTime"] == desired["startTime"]
    assert status.needs_patch(after, status.desired_status(after, [running], "Failed", "", 9))


def test_init_and_sidecar_containers_are_simulated() -> None:
    pod = {"spec": {"initContainers": [{"name": "i", "image": "x"},
                                       {"name": "s", "image": "y", "restartPolicy": "Always"}]},
           "status": {}}  # fmt: skip
    init = status.desired_status(pod, [], "Running", "", 0)["initContainerStatuses"]
    assert init[0]["state"]["terminated"]["reason"] == "Completed"
    assert init[1]["state"]["running"] and init[1]["ready"]


def test_kwok_selector_key_is_the_program_for_rule() -> None:
    key = images.kwok_selector_key()
    assert key == (
        '.spec.containers.[].image | split("@") | .[0] | split("/") | .[-1] | split(":") '
        '| .[0] | select(. == "kube-scheduler" or . == "kschedctl" or . == "custom-kube-scheduler")'
    )
    # a new program changes both
    assert set(images.PROGRAMS) == {"kube-scheduler", "kschedctl", "custom-kube-scheduler"}


# -- volumes ----------------------------------------------------------------------------------------


class FakeApi:
    def __init__(self) -> None:
        self.tokens = 0

    def get_object(self, kind: str, namespace: str, name: str) -> dict[str, Any] | None:
        if (kind, name) == ("ConfigMap", "cfg"):
            return {"data": {"config.yaml": "a: 1\n", "other": "x"}}
        if (kind, name) == ("ConfigMap", "kube-root-ca.crt"):
            return {"data": {"ca.crt": "CERT"}}
        if (kind, name) == ("Secret", "sec"):
            return {"data": {"key": base64.b64encode(b"\x00secret").decode()}}
        return None

    def request_token(self, pod: Any, audience: str | None, expiration: int) -> tuple[str, float]:
        self.tokens += 1
        return f"token-{self.tokens}", 100.0


def test_materialise_every_supported_volume(tmp_path: Path) -> None:
    pod = {
        "metadata": {"name": "p", "namespace": "ns", "uid": "u"},
        "spec": {"volumes": [
            {"name": "config", "configMap": {"name": "cfg", "items": [
                {"key": "config.yaml", "path": "sub/config.yaml"}]}},
            {"name": "secret", "secret": {"secretName": "sec", "defaultMode": 0o600}},
            {"name": "kube-api-access-x", "projected": {"sources": [
                {"serviceAccountToken": {"path": "token", "expirationSeconds": 3607}},
                {"configMap": {"name": "kube-root-ca.crt",
                               "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {
                    "fieldPath": "metadata.namespace"}}]}},
            ]}},
            {"name": "scratch", "emptyDir": {}},
            {"name": "kubeconfig", "hostPath": {"path": "/etc/kubernetes/s.conf",
                                                "type": "FileOrCreate"}},
            {"name": "optional", "configMap": {"name": "absent", "optional": True}},
        ]},
    }  # fmt: skip
    api = FakeApi()
    made = volumes.materialise(pod, tmp_path / "pod", tmp_path / "lab", api)
    vol = tmp_path / "pod" / "volumes"
    assert (vol / "config" / "sub" / "config.yaml").read_text() == "a: 1\n"
    assert not (vol / "config" / "other").exists()
    assert (vol / "secret" / "key").read_bytes() == b"\x00secret"
    assert (vol / "secret" / "key").stat().st_mode & 0o777 == 0o600
    access = vol / "kube-api-access-x"
    assert [(access / f).read_text() for f in ("token", "ca.crt", "namespace")] == [
        "token-1", "CERT", "ns",
    ]  # fmt: skip
    assert made.paths["kubeconfig"] == tmp_path / "lab" / "host" / "etc" / "kubernetes" / "s.conf"
    assert made.paths["kubeconfig"].is_file() and made.paths["scratch"].is_dir()
    (token,) = made.tokens
    volumes.refresh_token(token, pod, api)
    assert (access / "token").read_text() == "token-2"


def test_materialise_missing_configmap_is_a_mount_failure(tmp_path: Path) -> None:
    pod = {"metadata": {"name": "p", "namespace": "ns", "uid": "u"},
           "spec": {"volumes": [{"name": "c", "configMap": {"name": "absent"}}]}}  # fmt: skip
    with pytest.raises(volumes.VolumeError, match='configmap "absent" not found'):
        volumes.materialise(pod, tmp_path / "pod", tmp_path / "lab", FakeApi())


def test_a_new_runner_carries_on_the_restart_count(tmp_path: Path) -> None:
    from kschedctl.lab.runner.container import ContainerRunner, Options

    def runner() -> ContainerRunner:
        return ContainerRunner(POD, {"name": "c", "image": "kube-scheduler"}, "kube-scheduler",
                               tmp_path / "pod", tmp_path, Options(), prepare=_never,
                               log=lambda _m: None, event=lambda *_a: None)  # fmt: skip

    ours = runner()
    ours.carry_on({"name": "c", "restartCount": 4, "containerID": "kschedctl-lab://1",
                   "lastState": {"terminated": {"exitCode": 1}}})  # fmt: skip
    assert (ours.restart_count, ours.ever_ran) == (4, True)
    assert ours.status()["lastState"] == {"terminated": {"exitCode": 1}}
    fresh = runner()
    fresh.carry_on({"name": "c", "restartCount": 0, "state": {"waiting": {}}})
    assert (fresh.restart_count, fresh.ever_ran) == (0, False)
    assert fresh.status()["state"] == {"waiting": {"reason": "ContainerCreating"}}


def _never(_container: Any) -> Any:
    raise AssertionError("not started in this test")
