"""kschedctl.ops.judge: reading kube-scheduler's verdict from its output (no binary needed)."""

from __future__ import annotations

import pytest

from kschedctl.base.errors import Problem
from kschedctl.ops.judge import error_messages, is_valid, split_aggregate, targets

PREFIX = "E1203 06:11:59.146155   19216 run.go:72] "


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        pytest.param(
            [
                "E1203 06:11:54.096233   19158 options.go:205] The manifest file is empty, ignoring.",
                PREFIX + '"command failed" err="strict decoding error: unknown field \\"foo\\""',
            ],
            ['strict decoding error: unknown field "foo"'],
            id="one-error",
        ),
        pytest.param(
            [
                PREFIX + '"command failed" err="[parallelism: Invalid value: -1: should be an '
                "integer value greater than zero, profiles[1].schedulerName: Duplicate value: {}, "
                'percentageOfNodesToScore: Invalid value: 200: not in valid range [0-100]]"'
            ],
            [
                "parallelism: Invalid value: -1: should be an integer value greater than zero",
                "profiles[1].schedulerName: Duplicate value: {}",
                "percentageOfNodesToScore: Invalid value: 200: not in valid range [0-100]",
            ],
            id="aggregate",
        ),
        pytest.param(
            [
                PREFIX + '"command failed" err=<',
                "\tObject 'Kind' is missing in 'profiles:",
                "\t'",
                " >",
            ],
            ["Object 'Kind' is missing in 'profiles:\n'"],
            id="multi-line-value",
        ),
        pytest.param(
            ["F1203 06:11:59.1   1 main.go:1] panic: boom"], ["panic: boom"], id="no-command-failed"
        ),
    ],
)
def test_error_messages(lines: list[str], expected: list[str]) -> None:
    assert error_messages(lines) == expected


def test_split_aggregate_keeps_commas_inside_a_message() -> None:
    message = '[a: Invalid value: "x, y": must be 1, b: Required value]'
    assert split_aggregate(message) == ['a: Invalid value: "x, y": must be 1', "b: Required value"]


def test_a_plain_message_is_one_part() -> None:
    assert split_aggregate("couldn't get version/kind; json parse error") == [
        "couldn't get version/kind; json parse error"
    ]


def test_targets_config_file_is_handed_over_whole() -> None:
    text = (
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n---\nx: 1\n"
    )
    assert [(t.where, t.text) for t in targets(text, "f")] == [("", text)]


def test_targets_unparsable_text_is_handed_over_whole() -> None:
    text = '{"kind": "KubeSchedulerConfiguration",}'
    assert [t.text for t in targets(text, "f")] == [text]


def test_targets_configmap_values_and_no_other_manifests() -> None:
    text = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n"
        "  a.yaml: 'kind: KubeSchedulerConfiguration'\n  b.txt: hello\n"
        "---\napiVersion: v1\nkind: Service\nmetadata: {name: s}\n"
    )
    assert [(t.where, t.text) for t in targets(text, "f")] == [
        ("[0].ConfigMap/c.data[a.yaml]", "kind: KubeSchedulerConfiguration")
    ]


def test_a_problem_without_severity_is_an_error() -> None:
    assert not is_valid([Problem("x", "bad", "f")])
    assert is_valid([])


@pytest.mark.parametrize(
    ("program", "extra", "judged"),
    [
        ("kube-scheduler", "", True),
        (
            "custom",
            "  image: kschedctl.local/custom-kube-scheduler:v1.36.3\n"
            "  custom: {plugins: [{name: NodeLabelMatch, extensionPoints: [Filter]}]}\n",
            True,
        ),
        (
            "custom",
            "  image: registry.k8s.io/scheduler-plugins/kube-scheduler:v0.34.7\n",
            True,
        ),
        ("builtin", "", False),
    ],
    ids=["kube-scheduler", "custom-own-plugins", "custom-scheduler-plugins", "builtin"],
)
def test_targets_spec_is_judged_by_its_rendered_config_when_it_runs_kube_scheduler(
    program: str, extra: str, judged: bool
) -> None:
    # program custom runs a kube-scheduler build too: its rendered config is what it reads
    text = (
        "apiVersion: kschedctl.io/v1alpha1\nkind: Scheduler\nmetadata: {name: s}\n"
        f"spec:\n  program: {program}\n{extra}"
    )
    found = targets(text, "s.yaml")
    assert [t.where for t in found] == (["rendered config"] if judged else [])
    if judged:
        assert "kind: KubeSchedulerConfiguration" in found[0].text
        assert "schedulerName: s" in found[0].text
