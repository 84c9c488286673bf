"""deploy's overrides written back to scheduler.yaml (ops/overrides.py): only the fields the
flags changed, the file's head comments and key order kept."""

from __future__ import annotations

from pathlib import Path

import yaml

from kschedctl.ops.deploy import load_target
from kschedctl.ops.overrides import spec_file, write_back
from kschedctl.spec import spec_from_source

SPEC = """\
# my notes about this scheduler
# (kept)
apiVersion: kschedctl.io/v1alpha1
kind: Scheduler
metadata:
  name: s1
spec:
  replicas: 1
  profiles:
  - schedulerName: s1
"""


def test_replicas_written_back_the_rest_kept(tmp_path: Path) -> None:
    path = tmp_path / "scheduler.yaml"
    path.write_text(SPEC)
    deployed = load_target(str(path), replicas=2)
    assert write_back(path, spec_from_source(str(path)), deployed) == ["replicas"]
    text = path.read_text()
    assert text.startswith("# my notes about this scheduler\n# (kept)\napiVersion:")
    doc = yaml.safe_load(text)
    assert doc["spec"] == {"replicas": 2, "profiles": [{"schedulerName": "s1"}]}
    assert spec_from_source(str(path)).replicas == 2  # still a valid spec


def test_a_namespace_moves_the_lease_with_it(tmp_path: Path) -> None:
    path = tmp_path / "scheduler.yaml"
    path.write_text(SPEC)
    deployed = load_target(str(tmp_path), namespace="sched")
    written = write_back(path, spec_from_source(str(tmp_path)), deployed)
    assert written == ["namespace", "leaderElection"]
    loaded = spec_from_source(str(tmp_path))
    assert (loaded.namespace, loaded.leader_election.resource_namespace) == ("sched", "sched")


def test_nothing_changed_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "scheduler.yaml"
    path.write_text(SPEC)
    assert write_back(path, spec_from_source(str(path)), load_target(str(path), replicas=1)) == []
    assert path.read_text() == SPEC


def test_the_file_a_source_is(tmp_path: Path) -> None:
    (tmp_path / "scheduler.yaml").write_text(SPEC)
    assert spec_file(str(tmp_path)) == tmp_path / "scheduler.yaml"
    assert spec_file(str(tmp_path / "scheduler.yaml")) == tmp_path / "scheduler.yaml"
    assert spec_file("bare-name") is None
