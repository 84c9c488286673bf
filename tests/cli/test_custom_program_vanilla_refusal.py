"""program: custom with scheduler-plugins releases, judged by the lab's VANILLA kube-scheduler.

For each release the spec is written by ``create --program custom --image …`` and given
profiles using that release's plugins; validate accepts it for the scheduler-plugins image and
every form renders. The rendered config, handed to the lab's upstream kube-scheduler (which
has none of those plugins), is refused — and validate, asked about the same config for a
vanilla image (a bare config file, or the spec with ``program: kube-scheduler``), predicts
kube-scheduler's own message: the ``… does not exist`` line after its ``creating profile for
scheduler name NAME:`` prefix starts validate's first error.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import Run

from kschedctl.lab import binaries
from kschedctl.ops.judge import judge

pytestmark = pytest.mark.lab

IMAGE = "registry.k8s.io/scheduler-plugins/kube-scheduler:{release}"
# release -> (Kubernetes version it is built on, profile plugins, pluginConfig,
#             the out-of-tree plugin kube-scheduler reports first)
CASES: dict[str, tuple[str, dict[str, Any], list[dict[str, Any]], str]] = {
    # gang scheduling as the release's manifests/coscheduling/scheduler-config.yaml sets it up
    "v0.25.7": (
        "1.25",
        {
            "multiPoint": {"enabled": [{"name": "Coscheduling"}]},
            "queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]},
        },
        [{"name": "Coscheduling", "args": {"permitWaitingTimeSeconds": 10}}],
        'QueueSortPlugin "Coscheduling" does not exist',
    ),
    "v0.33.5": (
        "1.33",
        {"multiPoint": {"enabled": [{"name": "CapacityScheduling"}]}},
        [],
        'PreFilterPlugin "CapacityScheduling" does not exist',
    ),
    "v0.34.7": (
        "1.34",
        {
            "filter": {"enabled": [{"name": "NodeResourceTopologyMatch"}]},
            "score": {"enabled": [{"name": "NodeResourceTopologyMatch"}]},
        },
        [
            {
                "name": "NodeResourceTopologyMatch",
                "args": {"scoringStrategy": {"type": "LeastAllocated"}},
            }
        ],
        'FilterPlugin "NodeResourceTopologyMatch" does not exist',
    ),
}
FORMS = ("config", "service", "pod", "deployment", "static-pod")


@pytest.fixture(scope="module")
def vanilla() -> Path:
    k8s = next(m for m in binaries.MODULES if m.key == "k8s")
    binary = k8s.cache_path() / "kube-scheduler"
    if not binary.is_file():
        pytest.skip(f"no kube-scheduler at {binary}: `kschedctl lab build` builds it")
    return binary


def _first_error(run: Run, *args: str) -> str:
    result = run("validate", *args, "-o", "json")
    assert result.exit_code == 3, result.output
    (entry,) = json.loads(result.stdout)
    errors = [p["message"] for p in entry["problems"] if p["severity"] == "error"]
    assert errors, entry
    return str(errors[0])


@pytest.mark.slow
@pytest.mark.parametrize("release", list(CASES))
def test_vanilla_kube_scheduler_refuses_what_validate_predicts(
    run: Run, tmp_path: Path, vanilla: Path, release: str
) -> None:
    version, plugins, plugin_config, refused = CASES[release]
    name = "gang-" + release.replace(".", "-")
    image = IMAGE.format(release=release)
    created = run(
        "create", name, "--program", "custom", "--image", image, "--kubernetes-version", version
    )
    assert created.exit_code == 0, created.output
    spec_path = tmp_path / name / "scheduler.yaml"
    doc = yaml.safe_load(spec_path.read_text())
    profile = {"schedulerName": name, "plugins": plugins}
    if plugin_config:
        profile["pluginConfig"] = plugin_config
    doc["spec"]["profiles"] = [profile]
    spec_path.write_text(yaml.safe_dump(doc, sort_keys=False))

    # For the scheduler-plugins image: valid, and every form renders.
    valid = run("validate", name)
    assert valid.exit_code == 0, valid.output
    rendered = {}
    for form in FORMS:
        result = run("render", name, "--as", form)
        assert result.exit_code == 0, (form, result.output)
        rendered[form] = result.stdout
    config = yaml.safe_load(rendered["config"])
    assert config["profiles"][0]["plugins"] == plugins

    # The lab's upstream kube-scheduler has none of these plugins.
    verdict = judge(vanilla, rendered["config"])
    assert not verdict.accepted
    (message,) = verdict.messages
    prefix = f"initializing profiles: creating profile for scheduler name {name}: "
    assert message == prefix + refused, message

    # validate for a vanilla image predicts that line: the bare config (kube-scheduler's own
    # release, 1.36) and the spec switched to program kube-scheduler (its own version).
    (tmp_path / "config.yaml").write_text(rendered["config"])
    assert _first_error(run, "config.yaml").startswith(refused + " (")
    doc["spec"]["program"] = "kube-scheduler"
    del doc["spec"]["custom"]
    (tmp_path / "vanilla.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    assert _first_error(run, "vanilla.yaml").startswith(refused + " (")

    # And validate --kube-scheduler on the bare config: both refuse, so they agree.
    both = run("validate", "--kube-scheduler", str(vanilla), "config.yaml", "-o", "json")
    assert both.exit_code == 3, both.output
    (entry,) = json.loads(both.stdout)
    assert entry["kubeScheduler"] == {"accepted": False, "messages": [message]}
    assert entry["agrees"] is True
