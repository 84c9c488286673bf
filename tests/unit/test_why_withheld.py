"""`why` when the pod's scheduler runs Python plugins that `why` did not run (code from the
cluster runs only when the caller names it): a pod the built-in filters pass gets no verdict,
since the plugins may reject every node; one they reject stays rejected (a plugin can only
reject nodes). Plain-dict fixtures, the real decision tree."""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_diagnosis_fallback import POLICY, fb, ours
from test_diagnosis_fallback import cluster as fallback_cluster
from test_filters_support import node, pod

from kschedctl.model.filters import NodeInfoSnapshot
from kschedctl.observe.diagnosis import WITHHELD, diagnose
from kschedctl.observe.failedscheduling import Reported
from kschedctl.observe.pending import pending_reasons
from kschedctl.observe.plugin_files import UnrunPlugins
from kschedctl.ops.why import Explanation

DIGEST = "ab" * 32
UNRUN = UnrunPlugins(
    "fb",
    "ConfigMap team-b/fb-config",
    ("rack.py",),
    DIGEST,
    run_with=f"--run-cluster-plugins team-b/fb-config@sha256:{DIGEST}",
)


def _snapshot() -> NodeInfoSnapshot:
    return NodeInfoSnapshot([node("roomy", labels={"pool": "main"}), node("tiny", cpu="100m")], [])


def _ours(**kw: Any) -> dict[str, Any]:
    return pod("p", schedulerName="fb", namespace="team-b", **kw)


def codes(d: Any) -> list[str]:
    return [f.code for f in d.findings]


def test_a_pod_the_built_in_filters_pass_gets_no_verdict() -> None:
    d = diagnose(_ours(cpu="500m"), _snapshot(), [fb()], fallback=POLICY, unrun=UNRUN)
    assert d.schedulable is None
    assert "fits" not in codes(d)
    (passes,) = [f for f in d.findings if f.code == "builtin-filters-pass"]
    assert passes.message == (
        "passes the built-in filters on 1 of 2 node(s): roomy; plugins not run"
    )
    (unrun,) = [f for f in d.findings if f.code == "plugins-not-run"]
    assert unrun.severity == "warning"
    assert unrun.message == (
        "scheduler fb runs the Python plugins [rack.py] (ConfigMap team-b/fb-config, "
        f"sha256:{DIGEST}), which `why` did not run (code read from the cluster is run only "
        "when you name it): they may reject every node that passes the built-in filters, so "
        "`why` cannot say that it fits"
    )
    assert unrun.fix == (
        "only if you trust that code (it runs in your process, with your credentials): "
        f"kschedctl why p -n team-b --run-cluster-plugins team-b/fb-config@sha256:{DIGEST}"
    )


def test_the_json_withholds_fits_for_every_node_the_built_in_filters_pass() -> None:
    data = diagnose(_ours(cpu="500m"), _snapshot(), [fb()], fallback=POLICY, unrun=UNRUN).to_dict()
    json.dumps(data)
    assert data["schedulable"] is None
    assert {n["name"]: n["fits"] for n in data["nodes"]} == {"roomy": None, "tiny": False}
    assert {(g["fits"], g["count"]) for g in data["nodeGroups"]} == {(False, 1), (None, 1)}
    assert data["pluginsNotRun"] == {
        "scheduler": "fb",
        "source": "ConfigMap team-b/fb-config",
        "files": ["rack.py"],
        "sha256": DIGEST,
        "runWith": f"--run-cluster-plugins team-b/fb-config@sha256:{DIGEST}",
        "note": None,
    }


def test_without_unrun_plugins_the_verdict_is_given() -> None:
    data = diagnose(_ours(cpu="500m"), _snapshot(), [fb()], fallback=POLICY).to_dict()
    assert data["schedulable"] is True and data["pluginsNotRun"] is None
    assert {n["name"]: n["fits"] for n in data["nodes"]} == {"roomy": True, "tiny": False}


def test_a_pod_the_built_in_filters_reject_stays_rejected() -> None:
    d = diagnose(_ours(cpu="64"), _snapshot(), [fb()], fallback=POLICY, unrun=UNRUN)
    assert d.schedulable is False
    assert "no-node-fits" in codes(d)
    (unrun,) = [f for f in d.findings if f.code == "plugins-not-run"]
    assert unrun.severity == "info"
    assert unrun.message.endswith(
        "the verdict stands without them (a plugin can only reject a node)"
    )


def test_a_fallback_placement_is_withheld_too() -> None:
    """The plugins run in the fallback steps as well: a step's placement is theirs to refuse."""
    d = diagnose(ours(cpu="2"), fallback_cluster(), [fb()], fallback=POLICY, unrun=UNRUN)
    assert "fallback-applies" in codes(d)
    assert d.schedulable is None


def test_a_gated_pod_is_blocked_whatever_the_plugins_say() -> None:
    gated = _ours(cpu="500m", schedulingGates=[{"name": "wait"}])
    d = diagnose(gated, _snapshot(), [fb()], fallback=POLICY, unrun=UNRUN)
    assert d.schedulable is False
    (gate,) = [f for f in d.findings if f.code == "scheduling-gated"]
    assert f"once they are: it {WITHHELD}" in gate.message


def test_an_old_failure_is_not_called_stale_when_the_plugins_were_not_run() -> None:
    """The event is likely the plugins' own reason: "the pod now fits" is not known."""
    reported = Reported(event="0/2 nodes are available: 2 only rack r9.", event_time="t")
    withheld = diagnose(
        _ours(cpu="500m"), _snapshot(), [fb()], fallback=POLICY, unrun=UNRUN, reported=reported
    )
    assert "reported-stale" not in codes(withheld)
    given = diagnose(_ours(cpu="500m"), _snapshot(), [fb()], fallback=POLICY, reported=reported)
    assert "reported-stale" in codes(given)


def test_why_all_counts_withheld_pods_apart_and_exits_6() -> None:
    withheld = diagnose(_ours(cpu="500m"), _snapshot(), [fb()], fallback=POLICY, unrun=UNRUN)
    fits = diagnose(
        pod("q", schedulerName="fb", namespace="team-b", cpu="500m"),
        _snapshot(),
        [fb()],
        fallback=POLICY,
    )
    [row] = [r for r in pending_reasons([withheld, fits]) if r.code == "plugins-not-run"]
    assert (row.reason, row.pods, row.nodes) == (WITHHELD, ("team-b/p",), 1)
    assert Explanation([fits], one_pod=False, namespace=None).schedulable
    both = Explanation([withheld, fits], one_pod=False, namespace=None)
    assert not both.schedulable  # exit 6: `why` does not vouch for the withheld pod


@pytest.mark.parametrize("decides", [True, False], ids=["withheld", "rejected"])
def test_without_an_exact_flag_the_fix_says_how_to_pass_the_files(decides: bool) -> None:
    from kschedctl.observe.findings import plugins_not_run

    lease_only = UnrunPlugins("fb", "its Lease", ("rack",), note="no copy found")
    finding = plugins_not_run(lease_only, {"name": "p", "namespace": "ns"}, decides)
    assert finding.fix == (
        "no copy found; pass each of its plugin files with --plugin FILE, in the scheduler's order"
    )
    assert "[rack] (its Lease)" in finding.message
