"""``validate FILE…``: which rules apply to which file, and what each file holds.

It reads the files it is given (:func:`validate_files` is the use case) and, when asked, runs
a kube-scheduler binary on their configs as a second judge (:mod:`kschedctl.ops.judge`). A file
may be a kschedctl spec, a KubeSchedulerConfiguration, or Kubernetes manifests: ConfigMaps holding a
config are checked like a config file, and pods/workloads running kube-scheduler are checked
for the flags and ports of old tutorials (``--scheduler-name``, ``--address``, 10251,
``k8s.gcr.io``).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from kschedctl import clustersnapshot as snapshot_file
from kschedctl.base import userfile
from kschedctl.base.errors import NotFoundError, Problem, SpecError, errors_in, quote
from kschedctl.model.config import versions
from kschedctl.model.config.decode import Decoded, decode_config_text, holds_config, is_json
from kschedctl.model.config.schema import AliasBudget, YamlError, key_segment, key_text, parse_yaml
from kschedctl.model.config.validation import check_config
from kschedctl.ops.validate_hostfiles import extender_file_problems
from kschedctl.ops.validate_report import FileReport, Validation
from kschedctl.render.builtin import configmap_problems
from kschedctl.spec import API_VERSION, KIND, SPEC_FILE, spec_from_dict

_WORKLOAD_KINDS = ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job")


def validate_files(
    files: list[str],
    kubernetes_version: str | None = None,
    *,
    replaces_default: bool = False,
    kube_scheduler: str | None = None,
) -> Validation:
    """Check each file for ``kubernetes_version`` (1.X or 1.X.Y; ValueError if unsupported);
    with ``kube_scheduler`` (a binary: NotFoundError before any file is read if unusable), that
    binary judges each file's configs too."""
    binary = None
    if kube_scheduler is not None:
        from kschedctl.ops import judge  # subprocess and friends only for this option

        binary = judge.check_binary(kube_scheduler)
    version = versions.parse_version(kubernetes_version) if kubernetes_version else None
    reports = [check_path(f, version, replaces_default=replaces_default) for f in files]
    if binary is not None:
        for report in reports:
            report.verdict = judge.judge_file(binary, report.path)
    return Validation(reports, kubernetes_version)


def check_path(
    path: str,
    version: versions.KubeVersion | None = None,
    *,
    replaces_default: bool = False,
) -> FileReport:
    """Check one file (or a workspace directory's scheduler.yaml)."""
    report = FileReport(path)
    target = Path(path)
    if userfile.path_kind(target) == "directory":
        target = target / SPEC_FILE
    try:
        text = userfile.read_user_file(target)
    except NotFoundError:
        report.problems.append(Problem("", "no such file", str(target)))
        report.found = False
        return report
    except SpecError as err:
        if err.detail.startswith("too large") and _snapshot_head(target):
            return _check_snapshot_file(target, report)
        report.problems.append(Problem("", err.detail, str(target)))
        return report
    report.path = str(target)
    budget = AliasBudget()  # one for the file and the configs inside its ConfigMaps
    try:
        # kube-scheduler's own reading first: a config file is decoded as it decodes it
        # (JSON or go-yaml, the first document only). Anything else is a YAML stream of specs
        # or manifests, read like every kschedctl file.
        decoded = _decode_probe(text)
        if decoded is not None and (decoded.is_json or _is_config(decoded.doc)):
            report.problems += [p.moved(source=report.path) for p in decoded.problems]
            _check_document(decoded.doc, "", version, replaces_default, report, budget)
            return report
        docs = parse_yaml(text, budget)
        if decoded is not None and decoded.doc is None and any(_is_config(d) for d in docs):
            # An empty first document (a stray '---' or 'null' before the config): it is the
            # one kube-scheduler reads, and it holds no Kind.
            report.problems.append(
                Problem(
                    "",
                    "the first YAML document is empty: kube-scheduler reads only the first "
                    "document of its --config file (Object 'Kind' is missing); remove what "
                    "precedes the configuration's own '---'",
                    report.path,
                )
            )
            return report
        if decoded is not None and any(_is_config(d) for d in docs):
            # A KubeSchedulerConfiguration after another document: kube-scheduler reads the
            # first one only (e.g. no kind "Namespace" is registered for version "v1"), and
            # kubectl cannot apply it (it is no API object).
            report.problems.append(
                Problem(
                    "",
                    "a KubeSchedulerConfiguration that is not the first YAML document: "
                    "kube-scheduler reads only the first document of its --config file, and "
                    "it is no object kubectl can apply; put the configuration in a file of its "
                    "own (or in a ConfigMap's data)",
                    report.path,
                )
            )
        if decoded is None and docs and _is_config(docs[0]):
            decode_config_text(text)  # kube-scheduler's reader refuses it: raises why
    except YamlError as err:
        report.problems.append(Problem("", str(err), report.path))
        return report
    if not docs:
        report.problems.append(Problem("", "empty: nothing to validate", report.path))
    for index, doc in enumerate(docs):
        where = f"[{index}]." if len(docs) > 1 else ""
        _check_document(doc, where, version, replaces_default, report, budget)
    return report


def _check_document(
    doc: Any,
    where: str,
    version: versions.KubeVersion | None,
    replaces_default: bool,
    report: FileReport,
    budget: AliasBudget,
) -> None:
    source = report.path
    if not isinstance(doc, dict) or not doc.get("kind"):
        report.problems.append(
            Problem(
                where.rstrip("."),
                "not a KubeSchedulerConfiguration, a kschedctl spec (kind: Scheduler) or a "
                "Kubernetes manifest",
                source,
            )
        )
        return
    kind = doc["kind"]
    target = version or versions.parse_version(versions.DEFAULT_VERSION)
    if kind == snapshot_file.KIND and str(doc.get("apiVersion")).startswith(_SPEC_GROUP + "/"):
        _check_snapshot(doc, where, report)
        return
    if _is_spec(doc):
        # The same function render, create and deploy load a spec with: whatever they would
        # refuse (a misspelled apiVersion, kind: [a], builtin extraArgs: [1]) is reported here.
        report.checked.append("kschedctl spec")
        if version is not None:
            doc = _retarget(doc, version)
        # Plugin files are read relative to the spec's own directory (its workspace), and
        # their ConfigMap is size-checked with render's own check.
        spec, problems = spec_from_dict(doc, source, Path(source).parent)
        if spec is not None and not errors_in(problems):
            problems = problems + configmap_problems(spec)
        report.problems += [p.moved(where + p.path, source) for p in problems]
        return
    if not isinstance(kind, str) or not isinstance(doc.get("apiVersion", ""), str):
        report.problems.append(
            Problem(
                where.rstrip("."),
                "apiVersion and kind must be strings: not a KubeSchedulerConfiguration, a "
                "kschedctl spec or a Kubernetes manifest",
                source,
            )
        )
        return
    api_version = str(doc.get("apiVersion", ""))
    if api_version.startswith(versions.CONFIG_GROUP + "/") or kind == "KubeSchedulerConfiguration":
        report.checked.append(f"KubeSchedulerConfiguration ({target.minor_version} rules)")
        report.problems += check_config(
            doc, target, replaces_default=replaces_default, prefix=where, source=source
        )
        report.problems += extender_file_problems(doc, where, source)
    elif kind == "ConfigMap":
        _check_configmap(doc, where, target, replaces_default, report, budget)
    elif kind == "Pod" or kind in _WORKLOAD_KINDS:
        _check_workload(doc, where, report)


_SPEC_GROUP = API_VERSION.partition("/")[0]
_SNAPSHOT_HEAD = 4096  # bytes where a snapshot file names its kind (it comes first)
# `kind: Snapshot` on a YAML line of its own, or "kind":"Snapshot" in (one-line) JSON
_SNAPSHOT_KIND = re.compile(r'^kind:\s*["\']?Snapshot["\']?\s*$|"kind"\s*:\s*"Snapshot"', re.M)


def _check_snapshot(doc: dict[str, Any], where: str, report: FileReport) -> None:
    """A cluster snapshot, checked by the loader ``simulate`` reads it with."""
    try:
        snap = snapshot_file.snapshot_from_dict(doc, report.path)
    except SpecError as err:
        report.problems += [p.moved(where + p.path, report.path) for p in err.problems]
        return
    report.checked.append(_snapshot_summary(snap))


def _snapshot_summary(snap: snapshot_file.ClusterSnapshot) -> str:
    return (
        f"cluster snapshot: {len(snap.nodes)} nodes, {len(snap.pods)} bound pods, "
        f"{len(snap.pending_pods)} pending pods"
    )


def _snapshot_head(path: Path) -> bool:
    """Whether the (too large for a spec) file at ``path`` starts like a snapshot file, which
    may be larger (:data:`kschedctl.clustersnapshot.reading.MAX_SNAPSHOT_BYTES`)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except (OSError, ValueError):
        return False
    try:
        head = os.read(fd, _SNAPSHOT_HEAD).decode("utf-8", "replace")
    except OSError:
        return False
    finally:
        os.close(fd)
    return _SNAPSHOT_KIND.search(head) is not None


def _check_snapshot_file(path: Path, report: FileReport) -> FileReport:
    report.path = str(path)
    try:
        snap = snapshot_file.load_snapshot(str(path))
    except SpecError as err:
        report.problems += [p.moved(source=report.path) for p in err.problems]
        return report
    report.checked.append(_snapshot_summary(snap))
    return report


def _decode_probe(text: str) -> Decoded | None:
    """``text`` as kube-scheduler decodes it; None if that fails on a YAML file (which may be
    a spec or manifests, read the kschedctl way next). A JSON file is decoded the one way."""
    try:
        return decode_config_text(text)
    except YamlError:
        if is_json(text):
            raise
        return None


def _is_config(doc: Any) -> bool:
    """Whether ``doc`` is (meant as) a KubeSchedulerConfiguration."""
    if not isinstance(doc, dict):
        return False
    api_version = doc.get("apiVersion")
    group = api_version.partition("/")[0] if isinstance(api_version, str) else ""
    return group == versions.CONFIG_GROUP or doc.get("kind") == "KubeSchedulerConfiguration"


def _is_spec(doc: dict[str, Any]) -> bool:
    """A kschedctl spec, or one with a typo in its apiVersion or kind (then checked as one, so
    the typo is reported instead of the document passing as some other manifest)."""
    import difflib  # only here: keeps start-up lean

    api_version, kind = doc.get("apiVersion"), doc.get("kind")
    group = api_version.partition("/")[0] if isinstance(api_version, str) else ""
    if kind == KIND or group == _SPEC_GROUP:
        return True
    if group and difflib.SequenceMatcher(None, group, _SPEC_GROUP).ratio() >= 0.8:
        return True
    if isinstance(kind, str) and kind != "KubeSchedulerConfiguration":
        return difflib.SequenceMatcher(None, kind, KIND).ratio() >= 0.8
    return not isinstance(kind, str) and (group == "" or "kschedctl" in group)


def _retarget(doc: dict[str, Any], version: versions.KubeVersion) -> dict[str, Any]:
    """The spec document aimed at ``version``; an image that followed the old one follows."""
    spec = doc.get("spec")
    if not isinstance(spec, dict):
        return doc
    spec = dict(spec)
    try:
        old = versions.parse_version(str(spec.get("kubernetesVersion", versions.DEFAULT_VERSION)))
        if spec.get("image") == versions.default_image(old):
            del spec["image"]
    except ValueError:
        pass
    spec["kubernetesVersion"] = version.minor_version
    return {**doc, "spec": spec}


def _mapping(value: Any) -> dict[str, Any]:
    """``value`` if it is a mapping, else empty: manifests are read, not trusted."""
    return value if isinstance(value, dict) else {}


def _items(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _object_path(doc: dict[str, Any], where: str) -> str:
    kind = key_segment(doc["kind"])
    name = _mapping(doc.get("metadata")).get("name")
    return f"{where}{kind}/{key_segment(name)}" if name else f"{where}{kind}"


def _check_configmap(
    doc: dict[str, Any],
    where: str,
    version: versions.KubeVersion,
    replaces_default: bool,
    report: FileReport,
    budget: AliasBudget,
) -> None:
    for key, value in _mapping(doc.get("data")).items():
        if not isinstance(value, str) or not holds_config(value):
            continue
        path = f"{_object_path(doc, where)}.data[{key_text(key)}]"
        report.checked.append(f"KubeSchedulerConfiguration in {path}")
        try:
            # Mounted as a file, the value is what kube-scheduler decodes.
            decoded = decode_config_text(value, budget)
        except YamlError as err:
            report.problems.append(Problem(path, str(err), report.path))
            continue
        report.problems += [p.moved(path, report.path) for p in decoded.problems]
        report.problems += check_config(
            decoded.doc,
            version,
            replaces_default=replaces_default,
            prefix=f"{path}.",
            source=report.path,
        )
        # Not its extenders' TLS files: a pod reads them from its own volumes, not this machine.


def _pod_spec(doc: dict[str, Any]) -> tuple[dict[str, Any], str]:
    if doc["kind"] == "Pod":
        return _mapping(doc.get("spec")), "spec"
    template = _mapping(_mapping(_mapping(doc.get("spec")).get("template")).get("spec"))
    return template, "spec.template.spec"


def _check_workload(doc: dict[str, Any], where: str, report: FileReport) -> None:
    pod, pod_path = _pod_spec(doc)
    if not isinstance(pod, dict):
        return
    base = f"{_object_path(doc, where)}.{pod_path}"
    schedulers = [
        (i, c)
        for i, c in enumerate(_items(pod.get("containers")))
        if isinstance(c, dict) and _runs_kube_scheduler(c)
    ]
    if not schedulers:
        return  # an ordinary workload (e.g. the example pod): nothing of ours to check
    report.checked.append(f"kube-scheduler in {_object_path(doc, where)}")
    out = report.problems
    own = pod.get("schedulerName")
    if own and own != versions.DEFAULT_SCHEDULER_NAME:
        out.append(
            Problem(
                f"{base}.schedulerName",
                f"{quote(own)}: a scheduler's own pod should be scheduled by default-scheduler "
                "(if it names itself it can never start)",
                report.path,
            )
        )
    for i, container in schedulers:
        cpath = f"{base}.containers[{i}]"
        image = str(container.get("image", ""))
        if image.startswith("k8s.gcr.io/"):
            out.append(
                Problem(
                    f"{cpath}.image",
                    "k8s.gcr.io is frozen since April 2023: use registry.k8s.io",
                    report.path,
                )
            )
        for key in ("command", "args"):
            for j, arg in enumerate(_items(container.get(key))):
                flag = str(arg).split("=", 1)[0]
                if flag in versions.REMOVED_FLAGS:
                    out.append(
                        Problem(
                            f"{cpath}.{key}[{j}]",
                            f"{flag} no longer exists: {versions.REMOVED_FLAGS[flag]}",
                            report.path,
                        )
                    )
        for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
            get = _mapping(_mapping(container.get(probe)).get("httpGet"))
            if get.get("port") == versions.INSECURE_PORT:
                out.append(
                    Problem(
                        f"{cpath}.{probe}.httpGet.port",
                        "10251 was the insecure port, gone since 1.23: probe HTTPS 10259",
                        report.path,
                    )
                )
            elif get and str(get.get("scheme", "HTTP")).upper() != "HTTPS":
                out.append(
                    Problem(
                        f"{cpath}.{probe}.httpGet.scheme",
                        "kube-scheduler serves HTTPS only: set scheme: HTTPS",
                        report.path,
                    )
                )


def _runs_kube_scheduler(container: dict[str, Any]) -> bool:
    command = [str(c) for c in _items(container.get("command"))]
    return "kube-scheduler" in str(container.get("image", "")) or any(
        c.rsplit("/", 1)[-1] == "kube-scheduler" for c in command[:1]
    )
