"""`remove` deletes only files kschedctl rendered for the scheduler, whatever the cluster's
``kschedctl.io/host-files`` annotation lists (anyone who can annotate an object writes it)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kschedctl.hosts import systemd
from kschedctl.hosts.host import SystemdHost
from kschedctl.ops.deploy import load_target


@pytest.mark.parametrize("program", ["kube-scheduler", "builtin"])
@pytest.mark.parametrize("form", ["service", "static-pod"])
def test_every_rendered_host_file_is_recognised(tmp_path: Path, program: str, form: str) -> None:
    spec = load_target("edge", program=program)
    host = SystemdHost(tmp_path, tmp_path / "etc/kubernetes/manifests")
    files = host.files(spec, form)
    host.write_files(files)
    assert sorted(host.remove_files(sorted(files), "edge")) == sorted(files)
    assert not any(path.exists() for path in files)


def test_files_the_annotation_names_but_kschedctl_did_not_render_stay(tmp_path: Path) -> None:
    spec = load_target("edge")
    host = SystemdHost(tmp_path)
    ours = host.files(spec, "service")
    host.write_files(ours)
    victims = {
        "passwd": "root:x:0:0:root:/root:/bin/bash\n",
        "edge.yaml": "apiVersion: v1\nkind: ConfigMap\n",  # the right name, not our file
        "edge.service": "[Service]\nExecStart=/bin/true\n",
        "other.yaml": next(iter(ours.values())),  # our text under another name
    }
    paths = []
    for file_name, text in victims.items():
        path = tmp_path / "victims" / file_name
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
        paths.append(path)
    # A symlink named like our file, pointing at a file of ours: the link is not removed.
    link = tmp_path / "victims" / "link" / "edge.yaml"
    link.parent.mkdir()
    os.symlink(next(iter(ours)), link)
    paths.append(link)
    # Another scheduler's file: edge-2's config, under edge's name.
    other = load_target("edge-2")
    theirs = tmp_path / "victims" / "two" / "edge.yaml"
    theirs.parent.mkdir()
    theirs.write_text(SystemdHost(tmp_path).files(other, "service").popitem()[1])
    paths.append(theirs)
    assert host.remove_files(paths, "edge") == []
    assert all(os.path.lexists(path) for path in paths)
    assert not systemd.is_scheduler_file(tmp_path / "missing" / "edge.yaml", "edge")
