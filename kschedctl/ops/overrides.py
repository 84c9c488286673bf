"""Deploy a source and keep its ``scheduler.yaml`` true: the command line's overrides
(``--replicas``, ``--image``, ``--program``, ``--namespace``, ``--kubernetes-version``) change
what runs, so after a successful deploy they are written back to the workspace's or spec
file's ``scheduler.yaml``; with ``--no-save`` (or a bare name, which has no file) they are
recorded in the revision instead. Nothing is written on a dry run or a failed deploy.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

from kschedctl.base import userfile
from kschedctl.base.yamltext import to_yaml
from kschedctl.hosts import Host
from kschedctl.kubeclient.client import Cluster
from kschedctl.ops.deploy import DeployRequest, DeployResult, Plan, deploy, is_bare_name
from kschedctl.ops.reporter import QUIET, Reporter
from kschedctl.spec import SPEC_FILE, Spec, spec_from_source


def spec_file(src: str) -> Path | None:
    """The ``scheduler.yaml`` a deploy source is (None: a bare name)."""
    if is_bare_name(src):
        return None
    path = Path(src)
    return path / SPEC_FILE if userfile.path_kind(path) == "directory" else path


def deploy_source(
    cluster: Cluster, host: Host, request: DeployRequest, src: str, *,
    save: bool = True, report: Reporter = QUIET, planned: Plan | None = None,
) -> tuple[DeployResult, list[str]]:  # fmt: skip
    """Deploy, then write the overrides back to ``src``'s file (``save``); the result and the
    ``spec`` fields written."""
    target = spec_file(src) if save and request.overrides else None
    if target is not None:
        request = replace(request, overrides={})  # the file will hold them: not overrides
    result = deploy(cluster, host, request, report, planned)
    if target is None or result.server_dry_run:
        return result, []
    written = write_back(target, spec_from_source(src), request.spec)
    if written:
        report.info(f"wrote {', '.join(f'spec.{k}' for k in written)} to {target}")
    return result, written


def write_back(path: Path, loaded: Spec, deployed: Spec) -> list[str]:
    """Set in ``path`` the top-level ``spec`` fields where ``deployed`` differs from what the
    file ``loaded`` to; its other content (comments at its head, key order) is kept."""
    have, want = loaded.to_dict()["spec"], deployed.to_dict()["spec"]
    changed = [k for k in want if have.get(k) != want[k]]
    if not changed:
        return []
    text = userfile.read_user_file(path)
    doc: dict[str, Any] = yaml.safe_load(text)  # loaded above: one mapping
    spec = doc.setdefault("spec", {}) or {}
    doc["spec"] = spec
    for key in changed:
        spec[key] = want[key]
    head = "".join(line + "\n" for line in _head_comments(text))
    with userfile.writing("the overrides", path):
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(head + to_yaml(doc, document=True))
            os.chmod(tmp, path.stat().st_mode & 0o7777)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    return changed


def _head_comments(text: str) -> list[str]:
    lines = []
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        lines.append(line)
    return lines
