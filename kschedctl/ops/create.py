"""``create``: write a scheduler workspace and say what to do next (offline).

The spec comes from the CLI (:func:`kschedctl.spec.default_spec` filled with the flags): it is
checked, every form is rendered in memory, then the workspace is written all at once
(:func:`kschedctl.render.workspace.write_workspace`): a failure leaves nothing behind. The
result carries the next steps as text for the CLI to print on stderr (the commands in them say
``kschedctl``; the CLI spells them as the user called it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from kschedctl.render import forms
from kschedctl.render.workspace import write_workspace
from kschedctl.spec import (
    SPEC_FILE,
    CheckedSpec,
    Spec,
    add_plugin_files,
    builtin_image,
    ensure_valid,
)

__all__ = ["Created", "create_workspace", "next_steps", "unbuilt_image_warning"]


@dataclass
class Created:
    """A written workspace: its directory, the files (in the order written), the checked spec,
    warnings (the image must be built first) and notes for the human (stderr)."""

    target: Path
    paths: list[Path]
    spec: CheckedSpec
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def create_workspace(
    spec: Spec, parent: Path, *, plugins: list[str] | None = None, force: bool = False
) -> Created:
    """Write workspace ``parent/<spec name>`` from ``spec`` (:func:`default_spec` filled with
    create's flags), with the plugin files ``plugins`` copied in."""
    if plugins:
        add_plugin_files(spec, plugins)
    checked = ensure_valid(spec, source="create")
    files = forms.render_workspace(checked)  # all in memory first: nothing written if this fails
    target = parent / spec.name
    paths = write_workspace(target, files, force=force)
    created = Created(target, paths, checked)
    if checked.program == "builtin" and checked.image == builtin_image():
        created.warnings.append(unbuilt_image_warning(checked.image))
    if checked.replaces_default:
        created.notes.append(
            "It replaces the default scheduler: stop kube-scheduler first (kubeadm: move "
            "/etc/kubernetes/manifests/kube-scheduler.yaml out of the manifests directory); "
            "one left running waits as a standby while this holds the Lease "
            "kube-system/kube-scheduler."
        )
    created.notes.append(next_steps(checked, target))
    return created


def unbuilt_image_warning(image: str) -> str:
    """Program builtin's default image is built from kschedctl's repository, in no registry."""
    repository = image.partition(":")[0]
    tag = image.rpartition(":")[2]
    return (
        f"the image {image} (kschedctl's own scheduler, program builtin) is in no public "
        "registry: "
        "build it from kschedctl's repository with its Dockerfile "
        f"(`docker build -t REGISTRY/{repository}:{tag} .`), push it where the cluster's nodes "
        f"pull images from, and name it with --image REGISTRY/{repository}:{tag} (here or on "
        f"`kschedctl deploy`); on a kind cluster `docker build -t {image} .` then "
        f"`kind load docker-image {image}` is enough."
    )


def next_steps(spec: CheckedSpec, target: Path) -> str:
    """What to run after ``create``: deploy it (kschedctl waits until it serves), try it with the
    example pod, or render it for a GitOps repository."""
    name = spec.name
    example = target / forms.by_name("example-pod").file_name(name)
    host_forms = " or ".join(f"--as {f.name} ({f.host})" for f in forms.FORMS if f.host)
    if spec.program == "builtin":  # the chart renders kube-scheduler images only
        gitops = f"kschedctl render {target} --as kustomize ./deploy/{name}"
    else:
        others = " or ".join(f"--as {f}" for f in forms.DIRECTORY_FORMS if f != "helm-chart")
        gitops = f"kschedctl render {target} --as helm-chart ./charts/{name} (or {others} DIR)"
    return (
        f"\nWrote scheduler workspace {target}/ (Kubernetes {spec.kubernetes_version}, "
        f"{spec.image}). Next:\n"
        f"  kschedctl deploy {target} --as deployment   # run it in the cluster, wait until "
        "it serves\n"
        f"  kubectl apply -f {example}   # a pod that uses it\n"
        f"  kschedctl status {name}   # and kschedctl why {name}-example if that pod stays "
        "Pending\n"
        f"On a host: kschedctl deploy {target} {host_forms}.\n"
        f"GitOps: {gitops}.\n"
        f"After editing {target / SPEC_FILE}: kschedctl render {target} --as deployment"
    )
