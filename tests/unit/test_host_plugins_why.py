"""`why` and the plugins of a kschedctl scheduler deployed as a service or static pod: the
scheduler publishes on its Lease the names and the hash of the plugin files it loaded; `why`
reads the files `deploy` installed (the paths recorded on the scheduler's objects) and, when
they hash to that, gives the exact ``--plugin`` flags that run them; it never runs them by
itself (the recorded paths, the lab and the hash are the cluster's word). Otherwise it says,
in its findings, why no copy can be shown."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kschedctl.hosts.host import SystemdHost
from kschedctl.model.filters import NodeInfoSnapshot
from kschedctl.model.scheduling.pluginload import load_plugin, load_plugins
from kschedctl.model.scheduling.plugins import (
    PLUGIN_FILES_LEASE_ANNOTATION,
    PLUGINS_HASH_LEASE_ANNOTATION,
    PluginSet,
)
from kschedctl.observe.schedulers import HOST_FILES_ANNOTATION, LAB_ANNOTATION, Scheduler
from kschedctl.ops import why_plugins as why
from kschedctl.ops.run_scheduler import plugin_files_annotations
from kschedctl.render.builtin import bundle_hash
from kschedctl.spec import Spec, load_spec

RACK = 'def filter(pod, node, ctx):\n    return None if node else "no node"\n'
SCORE = "WEIGHT = 2\n\n\ndef score(pod, node, ctx):\n    return 50.0\n"
ENTRY = Scheduler("racks", "service", managed=True)


def _spec(workspace: Path) -> Spec:
    for rel, text in {"plugins/rack.py": RACK, "score.py": SCORE}.items():
        (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
        (workspace / rel).write_text(text)
    doc = {"apiVersion": "kschedctl.io/v1alpha1", "kind": "Scheduler",
           "metadata": {"name": "racks"},
           "spec": {"program": "builtin", "builtin": {"plugins": ["plugins/rack.py", "score.py"]}}}  # fmt: skip
    (workspace / "scheduler.yaml").write_text(yaml.safe_dump(doc))
    return load_spec(workspace / "scheduler.yaml")


@pytest.fixture()
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The service form deployed on a host under tmp_path/root; the scheduler loaded its
    installed files in its order; `why` finds the deploy's record on a ClusterRole."""
    spec = _spec(tmp_path / "ws")
    host = SystemdHost(tmp_path / "root")
    files = host.files(spec, "service")
    host.write_files(files)
    plugin_dir = tmp_path / "root/etc/kubernetes/config/racks-plugins"
    loaded = PluginSet(load_plugins([str(plugin_dir / "rack.py"), str(plugin_dir / "score.py")]))
    lease = plugin_files_annotations(loaded)
    record = {"kind": "ClusterRole", "metadata": {"name": "racks", "annotations": {
        HOST_FILES_ANNOTATION: json.dumps(sorted(str(p) for p in files))}}}  # fmt: skip
    objects = [record]
    monkeypatch.setattr(why, "managed_objects", lambda _cluster, name: objects)
    return {"lease": lease, "dir": plugin_dir, "objects": objects, "record": record}


def _published(lease: dict[str, str]) -> Any:
    return why.published_plugin_files(lease)


def test_the_scheduler_publishes_its_plugin_files_and_their_hash(
    installed: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lease = installed["lease"]
    assert lease[PLUGIN_FILES_LEASE_ANNOTATION] == "rack.py,score.py"
    texts = [(f, (installed["dir"] / f).read_text()) for f in ("rack.py", "score.py")]
    assert lease[PLUGINS_HASH_LEASE_ANNOTATION] == bundle_hash("", texts)
    # A plugin imported as a module has no text to prove: nothing is published.
    (tmp_path / "mods").mkdir()
    (tmp_path / "mods" / "host_plugin_mod.py").write_text(SCORE)
    monkeypatch.syspath_prepend(str(tmp_path / "mods"))
    rack = load_plugin(str(installed["dir"] / "rack.py"))
    mixed = PluginSet((rack, load_plugin("host_plugin_mod")))
    assert plugin_files_annotations(mixed) == {}
    assert plugin_files_annotations(PluginSet()) == {}


def test_why_uses_the_installed_files_when_they_are_what_the_scheduler_loaded(
    installed: Any,
) -> None:
    files, unread = why.verified_host_plugin_files(None, ENTRY, _published(installed["lease"]))  # type: ignore[arg-type]
    assert unread is None
    assert [(f, str(Path(p).parent)) for f, _t, p in files] == [
        ("rack.py", str(installed["dir"])),
        ("score.py", str(installed["dir"])),
    ]
    state = why.ClusterState(NodeInfoSnapshot([]), [ENTRY], (1, 36))
    state.plugin_hashes["racks"] = _published(installed["lease"])
    unrun = why.unrun_plugins(None, state, "racks", ENTRY)  # type: ignore[arg-type]
    assert unrun is not None
    assert (unrun.source, unrun.files) == (str(installed["dir"]), ("rack.py", "score.py"))
    assert unrun.digest == installed["lease"][PLUGINS_HASH_LEASE_ANNOTATION]
    assert unrun.run_with == (
        f"--plugin {installed['dir'] / 'rack.py'} --plugin {installed['dir'] / 'score.py'}"
    )
    # static-pod: the same files, the same way
    static = Scheduler("racks", "static-pod", managed=True)
    assert why.verified_host_plugin_files(None, static, _published(installed["lease"]))[1] is None  # type: ignore[arg-type]


def test_an_edited_installed_file_is_not_run(installed: Any) -> None:
    rack = installed["dir"] / "rack.py"
    rack.write_text("import os\n" + rack.read_text())  # still ends with kschedctl's trailer
    files, unread = why.verified_host_plugin_files(None, ENTRY, _published(installed["lease"]))  # type: ignore[arg-type]
    assert files == []
    assert unread == (
        f"the files in {installed['dir']} differ from the ones it loaded (changed since it "
        "started: re-deploy, or restart it)"
    )


def test_files_absent_from_this_machine_are_named(installed: Any) -> None:
    (installed["dir"] / "score.py").unlink()
    files, unread = why.verified_host_plugin_files(None, ENTRY, _published(installed["lease"]))  # type: ignore[arg-type]
    assert files == []
    assert unread == (
        f"score.py not found in {installed['dir']} on this machine (it runs on another host, "
        "or the files were removed)"
    )


def test_files_of_a_lab_that_is_not_here_are_not_read(installed: Any, tmp_path: Path) -> None:
    installed["record"]["metadata"]["annotations"][LAB_ANNOTATION] = str(tmp_path / "gone-lab")
    files, unread = why.verified_host_plugin_files(None, ENTRY, _published(installed["lease"]))  # type: ignore[arg-type]
    assert files == [] and unread is not None and "not found in" in unread


def test_without_a_published_hash_or_a_record_nothing_is_read(installed: Any) -> None:
    files, unread = why.verified_host_plugin_files(None, ENTRY, None)  # type: ignore[arg-type]
    assert files == [] and unread is not None and "publishes no hash" in unread
    installed["objects"].clear()
    files, unread = why.verified_host_plugin_files(None, ENTRY, _published(installed["lease"]))  # type: ignore[arg-type]
    assert files == []
    assert unread == "no plugin directory racks-plugins/ is recorded on its deployed objects"


def test_the_finding_says_which_plugins_could_not_be_read_and_how_to_supply_them(
    installed: Any,
) -> None:
    from kschedctl.observe.findings import plugins_not_run

    (installed["dir"] / "score.py").unlink()
    state = why.ClusterState(NodeInfoSnapshot([]), [ENTRY], (1, 36))
    state.plugin_hashes["racks"] = _published(installed["lease"])
    unrun = why.unrun_plugins(None, state, "racks", ENTRY)  # type: ignore[arg-type]
    assert unrun is not None and unrun.run_with is None and unrun.source == "its Lease"
    finding = plugins_not_run(unrun, {"name": "p", "namespace": "ns"}, decides=True)
    assert finding.code == "plugins-not-run"
    assert finding.severity == "warning"
    digest = installed["lease"][PLUGINS_HASH_LEASE_ANNOTATION]
    assert finding.message == (
        f"scheduler racks runs the Python plugins [rack.py, score.py] (its Lease, sha256:"
        f"{digest}), which `why` did not run (code read from the cluster is run only when you "
        "name it): they may reject every node that passes the built-in filters, so `why` "
        "cannot say that it fits"
    )
    assert finding.fix == (
        f"score.py not found in {installed['dir']} on this machine (it runs on another host, "
        "or the files were removed); pass each of its plugin files with --plugin FILE, in the "
        "scheduler's order"
    )
    assert why.plugins_differ("racks", ("rack",), ()).message == (
        "scheduler racks runs the plugins [rack] but this evaluation ran []: its verdict and "
        "summary may differ from the scheduler's"
    )
