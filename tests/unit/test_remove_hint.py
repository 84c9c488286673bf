"""remove's hint when a scheduler's pods do not stop: its kubectl command finds them however
the scheduler was installed."""

from __future__ import annotations

import pytest

from kschedctl.model.filters.selectors import parse_label_selector
from kschedctl.observe.schedulers import SCHEDULER_LABEL
from kschedctl.ops.remove import pods_command

# the labels of a pod as each installer leaves them (templates/, helm-chart form)
DEPLOYED = {
    "app.kubernetes.io/managed-by": "kschedctl",
    "app.kubernetes.io/instance": "s",
    "app.kubernetes.io/component": "scheduler",
    SCHEDULER_LABEL: "s",
}
HELM_RELEASE = {
    "app.kubernetes.io/managed-by": "Helm",
    "app.kubernetes.io/instance": "my-release",
    "helm.sh/chart": "s-0.1.0",
    "app.kubernetes.io/component": "scheduler",
    SCHEDULER_LABEL: "s",
}
OTHER = {**DEPLOYED, "app.kubernetes.io/instance": "t", SCHEDULER_LABEL: "t"}


def _selector(command: str) -> str:
    words = command.split()
    assert words[:4] == ["kubectl", "get", "pods", "-A"] and words[4] == "-l"
    return words[5]


@pytest.mark.parametrize(
    ("labels", "found"),
    [(DEPLOYED, True), (HELM_RELEASE, True), (OTHER, False)],
    ids=["deployed by kschedctl", "installed by helm", "another scheduler"],
)
def test_the_hint_finds_the_schedulers_pods_however_installed(
    labels: dict[str, str], found: bool
) -> None:
    selector = parse_label_selector(_selector(pods_command("s")))
    assert selector.matches(labels) is found
