"""``FILTERS``: the one ordered table of kube-scheduler's filters, and what derives from it."""

from __future__ import annotations

import ast
from pathlib import Path

from test_filters_support import container, host_port, node, pod

from kschedctl.model.filters import FILTER_ORDER, FILTERS, NodeInfoSnapshot, evaluate
from kschedctl.model.filters.cycle import CycleState
from kschedctl.model.filters.nodefilters import Incoming
from kschedctl.model.filters.unevaluated import UNEVALUATED

PACKAGE = Path(__file__).resolve().parents[2] / "kschedctl"


def test_filter_order_is_the_tables_plugin_names() -> None:
    assert FILTER_ORDER == tuple(f.plugin for f in FILTERS)
    assert len(set(FILTER_ORDER)) == len(FILTER_ORDER)


def test_unmodelled_rows_are_the_ones_reported_as_not_evaluated() -> None:
    unmodelled = {f.plugin for f in FILTERS if f.explain is None}
    # VolumeRestrictions (ReadWriteOncePod), VolumeBinding and VolumeZone are modelled when
    # the snapshot has the claims, volumes and classes; without them they are not evaluated
    # (DynamicResources likewise without the DeviceClasses, ResourceSlices and claims).
    assert unmodelled == {"NodeVolumeLimits"}
    assert unmodelled <= set(UNEVALUATED)  # each declared, with what goes unchecked
    claims = pod("p", volumes=[{"name": "v", "persistentVolumeClaim": {"claimName": "c"}}])
    claims["spec"]["resourceClaims"] = [{"name": "gpu"}]
    reported = [n.plugin for n in evaluate(claims, NodeInfoSnapshot([node("a")])).not_evaluated]
    assert reported == [p for p in FILTER_ORDER if p in reported]  # in table order


def test_a_cycle_runs_only_the_rows_that_apply_in_table_order() -> None:
    snap = NodeInfoSnapshot([node("a")])
    plain = CycleState(Incoming(pod("p", cpu="1")), snap)
    assert [f.plugin for f in plain.filters] == [
        "NodeUnschedulable",
        "TaintToleration",
        "NodeResourcesFit",
    ]
    ported = pod("q", node_name="a", containers=[container(ports=[host_port(80)])])
    ported["spec"]["nodeSelector"] = {"zone": "z1"}
    names = [f.plugin for f in CycleState(Incoming(ported), snap).filters]
    assert names == [p for p in FILTER_ORDER if p in names]
    assert {"NodeName", "NodeAffinity", "NodePorts"} <= set(names)


def test_no_module_imports_another_modules_private_name() -> None:
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        for stmt in ast.walk(ast.parse(path.read_text())):
            if isinstance(stmt, ast.ImportFrom) and stmt.module != "__future__":
                for alias in stmt.names:
                    if alias.name.startswith("_") and not alias.name.startswith("__"):
                        offenders.append(f"{path.relative_to(PACKAGE)}: {alias.name}")
    assert offenders == []
