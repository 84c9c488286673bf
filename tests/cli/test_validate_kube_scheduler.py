"""validate --kube-scheduler PATH: kube-scheduler's verdict next to validate's.

The fast tests use a stand-in binary that speaks kube-scheduler's protocol (exit 0 after
--write-config-to, else klog's "command failed" line); the slow one runs the lab's real build.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from conftest import Run

from kschedctl.lab import binaries

VALID = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  resourceName: my-scheduler
profiles:
- schedulerName: my-scheduler
"""
UNKNOWN_PLUGIN = (
    VALID
    + """\
  plugins:
    filter:
      enabled:
      - name: NodeNames
"""
)
# What kube-scheduler v1.36.3 prints for UNKNOWN_PLUGIN (run.go:72, klog text format).
REFUSAL = (
    'E1203 06:11:54.211844   19168 run.go:72] "command failed" err="initializing profiles: '
    'creating profile for scheduler name my-scheduler: FilterPlugin \\"NodeNames\\" does not exist"'
)


@pytest.fixture
def fake(tmp_path: Path) -> Path:
    """A kube-scheduler stand-in: refuses a config naming NodeNames, accepts any other."""
    script = tmp_path / "kube-scheduler"
    script.write_text(
        "#!/bin/sh\n"
        'for a in "$@"; do case "$a" in --config=*) cfg="${a#--config=}";; esac; done\n'
        'if grep -q NodeNames "$cfg"; then\n'
        f"  echo '{REFUSAL}' >&2; exit 1\n"
        "fi\nexit 0\n"
    )
    script.chmod(0o755)
    return script


def test_agreement_is_a_note_on_stderr(run: Run, fake: Path, tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(VALID)
    result = run("validate", "--kube-scheduler", str(fake), "c.yaml")
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    assert "c.yaml: kube-scheduler: accepted" in result.stderr


def test_disagreement_is_reported_with_kube_schedulers_message(
    run: Run, fake: Path, tmp_path: Path
) -> None:
    (tmp_path / "c.yaml").write_text(UNKNOWN_PLUGIN)
    result = run("validate", "--kube-scheduler", str(fake), "c.yaml")
    problems = result.stdout.splitlines()
    if result.exit_code == 3:  # validate found the unknown plugin itself: both refuse
        assert "c.yaml: kube-scheduler: refused" in result.stderr
        return
    assert result.exit_code == 0
    assert problems == [
        "c.yaml: kube-scheduler refused it, validate says valid: disagreement",
        "c.yaml: kube-scheduler: initializing profiles: creating profile for scheduler name "
        'my-scheduler: FilterPlugin "NodeNames" does not exist',
    ]


def test_json_carries_the_verdict_and_agreement(run: Run, fake: Path, tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(VALID)
    (tmp_path / "b.yaml").write_text(UNKNOWN_PLUGIN)
    result = run("validate", "--kube-scheduler", str(fake), "a.yaml", "b.yaml", "-o", "json")
    entries = {e["file"]: e for e in json.loads(result.stdout)}
    assert entries["a.yaml"]["kubeScheduler"] == {"accepted": True, "messages": []}
    assert entries["a.yaml"]["agrees"] is True
    refused = entries["b.yaml"]["kubeScheduler"]
    assert refused["accepted"] is False
    assert refused["messages"] == [
        "initializing profiles: creating profile for scheduler name my-scheduler: "
        'FilterPlugin "NodeNames" does not exist'
    ]
    assert entries["b.yaml"]["agrees"] is (not entries["b.yaml"]["valid"])


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_disagreement_keeps_machine_output_parseable(run: Run, tmp_path: Path, fmt: str) -> None:
    # A kube-scheduler build that refuses every config (as a vanilla binary refuses a custom
    # image's plugins): the disagreement goes to stderr, stdout stays one document.
    script = tmp_path / "kube-scheduler"
    script.write_text(f"#!/bin/sh\necho '{REFUSAL}' >&2; exit 1\n")
    script.chmod(0o755)
    (tmp_path / "c.yaml").write_text(VALID)
    result = run("validate", "--kube-scheduler", str(script), "c.yaml", "-o", fmt)
    assert result.exit_code == 0, result.output
    (entry,) = json.loads(result.stdout) if fmt == "json" else yaml.safe_load(result.stdout)
    assert (entry["valid"], entry["agrees"]) == (True, False)
    assert entry["kubeScheduler"]["accepted"] is False
    assert "c.yaml: kube-scheduler refused it, validate says valid: disagreement" in result.stderr
    assert 'FilterPlugin "NodeNames" does not exist' in result.stderr


def test_configmap_hands_over_its_config(run: Run, fake: Path, tmp_path: Path) -> None:
    indented = "".join(f"    {line}\n" for line in UNKNOWN_PLUGIN.splitlines())
    (tmp_path / "cm.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  config.yaml: |\n"
        + indented
    )
    result = run("validate", "--kube-scheduler", str(fake), "cm.yaml", "-o", "json")
    (entry,) = json.loads(result.stdout)
    assert entry["kubeScheduler"]["accepted"] is False


def test_spec_is_judged_by_its_rendered_config(run: Run, fake: Path) -> None:
    assert run("create", "my-scheduler").exit_code == 0
    result = run("validate", "--kube-scheduler", str(fake), "my-scheduler", "-o", "json")
    (entry,) = json.loads(result.stdout)
    assert entry["kubeScheduler"] == {"accepted": True, "messages": []}
    assert entry["agrees"] is True


@pytest.mark.parametrize("kind", ["missing", "not-executable"])
def test_unusable_binary_exits_5_with_a_hint(run: Run, tmp_path: Path, kind: str) -> None:
    (tmp_path / "c.yaml").write_text(VALID)
    binary = tmp_path / "kube-scheduler"
    if kind == "not-executable":
        binary.write_text("#!/bin/sh\n")
        binary.chmod(0o644)
    result = run("validate", "--kube-scheduler", str(binary), "c.yaml")
    assert result.exit_code == 5
    assert result.stdout == ""
    assert "kschedctl lab build" in result.stderr
    assert "Traceback" not in result.output


@pytest.mark.slow
@pytest.mark.lab
def test_real_kube_scheduler_refuses_an_unknown_plugin(run: Run, tmp_path: Path) -> None:
    k8s = next(m for m in binaries.MODULES if m.key == "k8s")
    binary = k8s.cache_path() / "kube-scheduler"
    if not binary.is_file():
        pytest.skip(f"no kube-scheduler at {binary}: `kschedctl lab build` builds it")
    (tmp_path / "a.yaml").write_text(VALID)
    (tmp_path / "b.yaml").write_text(UNKNOWN_PLUGIN)
    result = run("validate", "--kube-scheduler", str(binary), "a.yaml", "b.yaml", "-o", "json")
    entries = {e["file"]: e for e in json.loads(result.stdout)}
    assert entries["a.yaml"]["kubeScheduler"] == {"accepted": True, "messages": []}
    assert entries["b.yaml"]["kubeScheduler"]["messages"] == [
        "initializing profiles: creating profile for scheduler name my-scheduler: "
        'FilterPlugin "NodeNames" does not exist'
    ]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_terminating_signal_leaves_no_kube_scheduler(tmp_path: Path, signum: int) -> None:
    # A kube-scheduler that takes its time; the signal comes while validate waits for it.
    started, finished = tmp_path / "started", tmp_path / "finished"
    slow = tmp_path / "kube-scheduler"
    slow.write_text(f"#!/bin/sh\necho $$ > {started}.tmp\nmv {started}.tmp {started}\n"
                    f"sleep 30\ntouch {finished}\n")  # fmt: skip
    slow.chmod(0o755)
    (tmp_path / "c.yaml").write_text(VALID)
    validate = subprocess.Popen(
        [sys.executable, "-m", "kschedctl", "validate", "--kube-scheduler", str(slow), "c.yaml"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not started.exists() and validate.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        pid = int(started.read_text())
        validate.send_signal(signum)
        _, stderr = validate.communicate(timeout=60)
        left = Path(f"/proc/{pid}").exists()
    finally:
        if validate.poll() is None:
            validate.kill()
            validate.wait()
    if left:
        os.kill(pid, signal.SIGKILL)
    assert not left  # killed, not left to finish on its own
    assert validate.returncode == 128 + signum, stderr
    assert not finished.exists()
