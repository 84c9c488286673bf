"""The rendered forms of a scheduler: ONE table (:data:`FORMS`), and rendering them.

Everything that lists forms derives from :data:`FORMS`: ``render --as`` (choices and help),
the files ``create`` writes (:func:`render_workspace`, in row order) and its help,
:data:`DEPLOY_FORMS` and :data:`HOST_FORMS` for ``deploy``. A drift test checks that the README
and the completion scripts name exactly these forms.

A directory form (``exporter`` set: the GitOps exports, a Helm chart and a kustomize base) is
written by ``render --as NAME DIR`` as a directory of files, from the function of
:mod:`kschedctl.render.export` it names; it is no file of a ``create`` workspace.

How to add a rendered form: add one :class:`Form` row to :data:`FORMS` (its place is its place
in the workspace; say whether ``deploy`` can deploy it and whether it runs on a host) and its
template under ``templates/`` (rendered with the context of :mod:`kschedctl.render.context`);
a form ``deploy`` sends to the API server names the objects it holds (``objects``, rows of
:mod:`kschedctl.render.objects`): deploy applies those and refuses anything else.
Then give its file a line in ``templates/workspace-README.md.j2`` and in the README's
``create`` table, and regenerate the completion scripts (``python -m
kschedctl.cli.completion_scripts``); the drift and golden tests say what else is stale.

This module is imported at start-up (the ``--as`` choices), so it imports nothing beyond the
standard library (and the standard-library-only objects table) at module level; the renderer
is imported by the functions that render.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kschedctl.render.objects import (
    DEPLOYMENT_OBJECTS,
    HOST_RBAC_OBJECTS,
    POD_OBJECTS,
    ROUTING_OBJECTS,
    Expected,
    host_rbac,
)

if TYPE_CHECKING:
    from kschedctl.spec import CheckedSpec, Spec

__all__ = [
    "DEPLOY_FORMS",
    "DIRECTORY_FORMS",
    "FORMS",
    "HOST_FORMS",
    "HOST_HELPERS",
    "RENDER_FORMS",
    "WORKSPACE_README",
    "WORKSPACE_SCHEMA",
    "Form",
    "applied",
    "by_name",
    "render",
    "render_directory",
    "render_workspace",
]


@dataclass(frozen=True)
class Form:
    """One rendered form: a row of :data:`FORMS`."""

    name: str
    """``render --as NAME``."""
    file: str
    """Its file in a ``create`` workspace; ``{name}`` stands for the scheduler's name."""
    holds: str
    """One line: what it holds."""
    template: str | None = None
    """Its template in ``templates/``; None for pure data, finished in the template context
    as ``<name>_text`` (the config files: no Jinja import for ``render --as config``)."""
    deploy: bool = False
    """``kschedctl deploy --as-NAME`` deploys it."""
    host: str = ""
    """A host form (put on a machine, not applied to the API server): what runs it there."""
    host_helper: bool = False
    """A file the host forms need besides their unit or manifest (``render`` lists these last)."""
    needs_leader_election: bool = False
    """Only rendered into a workspace whose host forms send API objects (leader election,
    program custom plugins that read more, spec.metrics: render.objects.host_rbac)."""
    needs_routing: bool = False
    """Only written into the workspace of a spec with ``spec.routing`` (for another, ``render
    --as`` prints a comment saying there is none, as host-rbac does without leader election)."""
    help: str = ""
    """A few words for ``render --as`` help, when the name does not say it."""
    objects: tuple[Expected, ...] = ()
    """The API objects it holds (:mod:`kschedctl.render.objects`): ``deploy`` applies these
    and nothing else."""
    applies: str = ""
    """A deployable form whose objects are another form's: that form (host forms: host-rbac;
    each applies the rows of its objects meant for it: render.objects.for_form)."""
    exporter: str = ""
    """A directory form: the function of :mod:`kschedctl.render.export` giving its files
    (relative path → text); ``render --as NAME DIR`` writes them, ``create`` does not."""

    @property
    def directory(self) -> bool:
        """Written as a directory (``render --as NAME DIR``), not printed."""
        return bool(self.exporter)

    def file_name(self, scheduler: str) -> str:
        """Its workspace file name for scheduler ``scheduler``."""
        return self.file.format(name=scheduler)

    @property
    def text_key(self) -> str:
        """The template-context entry holding its text, for a form without a template."""
        return self.name.replace("-", "_") + "_text"


FORMS: tuple[Form, ...] = (
    Form(
        "config",
        "config.yaml",
        "the KubeSchedulerConfiguration (builtin: fallback policy) of the pod and deployment forms",
    ),
    Form(
        "service",
        "{name}.service",
        "a systemd unit running the scheduler on a host",
        template="scheduler.service.j2",
        deploy=True,
        host="systemd",
        help="systemd unit",
        applies="host-rbac",
    ),
    Form(
        "host-config",
        "host-config.yaml",
        "the config the service and static-pod forms read on the host",
        host_helper=True,
        help="config file",
    ),
    Form(
        "host-rbac",
        "host-rbac.yaml",
        "RBAC letting the host kubeconfig's user hold the scheduler's Lease; spec.metrics' objects",
        template="host-rbac.yaml.j2",
        host_helper=True,
        needs_leader_election=True,
        help="Lease RBAC",
        objects=HOST_RBAC_OBJECTS,
    ),
    Form(
        "pod",
        "pod.yaml",
        "ServiceAccount, RBAC, ConfigMap and a bare Pod",
        template="pod.yaml.j2",
        deploy=True,
        objects=POD_OBJECTS,
    ),
    Form(
        "deployment",
        "deployment.yaml",
        "ServiceAccount, RBAC, ConfigMap and a Deployment",
        template="deployment.yaml.j2",
        deploy=True,
        objects=DEPLOYMENT_OBJECTS,
    ),
    Form(
        "routing",
        "routing.yaml",
        "spec.routing: the MutatingAdmissionPolicy sending new pods to it (also in pod/deployment)",
        template="routing.yaml.j2",
        needs_routing=True,
        help="MutatingAdmissionPolicy",
        objects=ROUTING_OBJECTS,
    ),
    Form(
        "static-pod",
        "static-pod.yaml",
        "a kubeadm control-plane static pod (host network, host paths)",
        template="static-pod.yaml.j2",
        deploy=True,
        host="kubeadm",
        applies="host-rbac",
    ),
    Form(
        "example-pod",
        "example-pod.yaml",
        "a pod with schedulerName NAME, to try the scheduler",
        template="example-pod.yaml.j2",
    ),
    Form(
        "helm-chart",
        "helm-chart/",
        "a Helm chart of the deployment form, its values the spec's fields",
        help="directory DIR",
        exporter="helm_chart",
    ),
    Form(
        "kustomize",
        "kustomize/",
        "a kustomize base of the deployment form (kube-system objects as a Component)",
        help="directory DIR",
        exporter="kustomize_base",
    ),
)

# `render --as` choices: the forms, then the files the host forms need besides them.
RENDER_FORMS: tuple[str, ...] = tuple(
    f.name
    for f in sorted(FORMS, key=lambda f: f.host_helper)  # sorted() is stable
)
# `deploy --as-NAME` flags: in-cluster forms first, then host forms.
DEPLOY_FORMS: tuple[str, ...] = tuple(
    f.name for f in sorted(FORMS, key=lambda f: bool(f.host)) if f.deploy
)
HOST_FORMS: tuple[str, ...] = tuple(f.name for f in FORMS if f.host)
HOST_HELPERS: tuple[str, ...] = tuple(f.name for f in FORMS if f.host_helper)
# `render --as NAME DIR`: the forms written as a directory.
DIRECTORY_FORMS: tuple[str, ...] = tuple(f.name for f in FORMS if f.directory)
# The workspace's own README, written after every form (it lists them).
WORKSPACE_README = "README.md"
# The spec's JSON Schema, written beside scheduler.yaml (kschedctl.render.schemas, "spec").
WORKSPACE_SCHEMA = "scheduler.schema.json"


def by_name(name: str) -> Form:
    """The row of form ``name``; ValueError for an unknown one."""
    for form in FORMS:
        if form.name == name:
            return form
    raise ValueError(f"unknown form {name!r}; expected one of {', '.join(RENDER_FORMS)}")


def applied(form: str) -> Form:
    """The row whose rendered documents ``deploy --as-FORM`` sends to the API server."""
    row = by_name(form)
    return by_name(row.applies) if row.applies else row


def render(spec: CheckedSpec, form: str) -> str:
    """One rendered form (a name of :data:`FORMS`) of ``spec`` as text; ValueError for a
    directory form (:func:`render_directory`)."""
    row = by_name(form)
    if row.directory:
        raise ValueError(f"form {form!r} is a directory: render_directory() writes it")
    # the renderer on first render: the CLI reads only the table at start-up
    from kschedctl.render.context import form_context, require_renderable

    return _text(row, form_context(require_renderable(spec)))


def render_directory(spec: CheckedSpec, form: str) -> dict[str, str]:
    """The files of directory form ``form`` (relative path → text); ValueError for another."""
    row = by_name(form)
    if not row.directory:
        raise ValueError(f"form {form!r} is a single document: render() prints it")
    # the renderer on first render: the CLI reads only the table at start-up
    from kschedctl.render import export
    from kschedctl.render.context import require_renderable

    exporter: Callable[[Spec], dict[str, str]] = getattr(export, row.exporter)
    return exporter(require_renderable(spec))


def render_workspace(spec: CheckedSpec) -> dict[str, str]:
    """Every file of a workspace: relative name → content (``create`` writes these)."""
    # the renderer on first render: the CLI reads only the table at start-up
    from kschedctl.render.context import form_context, require_renderable

    # the renderer on first render: the CLI reads only the table at start-up
    from kschedctl.render.schemas import schema_text
    from kschedctl.render.templates import render_template
    from kschedctl.spec import SPEC_FILE

    ctx = form_context(require_renderable(spec))
    # The spec's JSON Schema beside it, named by its first line: editors check the spec
    # offline, against the schema of the kschedctl that wrote it.
    schema_file = WORKSPACE_SCHEMA
    files = {
        SPEC_FILE: render_template(
            "scheduler.yaml.j2", spec=spec, data=spec.to_dict(), schema_file=schema_file
        ),
        schema_file: schema_text("spec"),
    }
    for form in FORMS:
        if form.directory:
            continue  # exports, not workspace files: `render --as NAME DIR` writes them
        if form.needs_leader_election and not host_rbac(spec):
            continue
        if form.needs_routing and spec.routing is None:
            continue
        files[form.file_name(spec.name)] = _text(form, ctx)
    # spec.builtin.plugins at the paths the spec names, relative to it: the workspace renders
    # the same again.
    for path, source in spec.builtin.plugin_sources.items():
        if path in spec.builtin.plugins:
            files[path] = source
    files[WORKSPACE_README] = render_template(
        "workspace-README.md.j2", files=list(files), schema_file=schema_file, **ctx
    )
    return files


def _text(form: Form, ctx: dict[str, Any]) -> str:
    if form.template is None:
        return str(ctx[form.text_key])
    # the renderer on first render: the CLI reads only the table at start-up
    from kschedctl.render.templates import render_template

    return render_template(form.template, **ctx)
