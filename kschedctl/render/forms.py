"""Spec → rendered files, through the Jinja templates in the top-level ``templates/``.

Pure (reads templates, writes nothing). Structure lives in the templates; user data goes
through the ``to_yaml`` filter so nothing is indented by hand. Rendering is deterministic:
the same spec always gives byte-identical output (golden tests rely on it).
"""

from __future__ import annotations

import copy
import functools
import hashlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from kschedctl.config import versions
from kschedctl.config.schema import YamlError, parse_yaml
from kschedctl.config.validation import check_config
from kschedctl.errors import SpecError
from kschedctl.spec import SPEC_FILE, Spec, ensure_valid

if TYPE_CHECKING:
    import jinja2

FORMS = ("config", "service", "pod", "deployment", "static-pod", "example-pod")
# Files the host forms need besides the unit / manifest (see README "Offline commands").
HOST_OUTPUTS = ("host-config", "host-rbac")
RENDERABLE = FORMS + HOST_OUTPUTS

_TEMPLATES = {
    "service": "scheduler.service.j2",
    "pod": "pod.yaml.j2",
    "deployment": "deployment.yaml.j2",
    "static-pod": "static-pod.yaml.j2",
    "example-pod": "example-pod.yaml.j2",
    "host-rbac": "host-rbac.yaml.j2",
}
IN_CLUSTER_CONFIG_DIR = "/etc/kubernetes/{name}"
MANAGED_BY = "kschedctl"


def templates_dir() -> Path:
    """Templates shipped in the wheel, or the source tree's for an editable install."""
    installed = Path(__file__).parents[1] / "_data" / "templates"
    if installed.is_dir():
        return installed
    return Path(__file__).resolve().parents[2] / "templates"


# libyaml's emitter is ~10x faster and emits the same text for our data (goldens check it).
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def to_yaml(value: Any) -> str:
    """YAML for a template slot: block style for collections, one line for scalars."""
    if isinstance(value, (dict, list)) and value:
        text = yaml.dump(value, Dumper=_DUMPER, sort_keys=False, default_flow_style=False)
        return text.rstrip("\n")
    text = yaml.dump(value, Dumper=_DUMPER, default_flow_style=True, width=10_000)
    return text.removesuffix("\n...\n").rstrip("\n")


@functools.lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    import jinja2  # on first template: `render --as config` needs none (start-up budget)

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,  # noqa: S701 - YAML and systemd units, not HTML
    )
    env.filters["to_yaml"] = to_yaml
    return env


def _render_template(template: str, **context: Any) -> str:
    return environment().get_template(template).render(**context)


def config_file(spec: Spec, config: dict[str, Any]) -> str:
    """A KubeSchedulerConfiguration file: pure data, so no template (and no Jinja import)."""
    return (
        f"# KubeSchedulerConfiguration of scheduler {spec.name}, rendered by kschedctl from "
        f"scheduler.yaml.\n{to_yaml(config)}\n"
    )


def labels(spec: Spec, component: str = "scheduler") -> dict[str, str]:
    return {
        "app.kubernetes.io/name": spec.name,
        "app.kubernetes.io/instance": spec.name,
        "app.kubernetes.io/component": component,
        "app.kubernetes.io/managed-by": MANAGED_BY,
    }


def _context(spec: Spec) -> dict[str, Any]:
    version = spec.version
    config_dir = IN_CLUSTER_CONFIG_DIR.format(name=spec.name)
    config_text = config_file(spec, spec.scheduler_config())
    host_config = spec.scheduler_config(kubeconfig=spec.service.kubeconfig)
    host_config_text = config_file(spec, host_config)
    svc = spec.service
    host_flags = [
        f"--config={spec.host_config_path}",
        f"--authentication-kubeconfig={svc.kubeconfig}",
        f"--authorization-kubeconfig={svc.kubeconfig}",
        f"--bind-address={svc.bind_address}",
        f"--secure-port={svc.secure_port}",
        f"--v={svc.verbosity}",
        *spec.extra_args,
    ]
    # kubeadm probes the bind address, except a wildcard one (then the pod IP is right).
    probe_host = "" if svc.bind_address in ("0.0.0.0", "::") else svc.bind_address
    return {
        "spec": spec,
        "name": spec.name,
        "namespace": spec.namespace,
        "version": version,
        "labels": labels(spec),
        "selector": {k: v for k, v in labels(spec).items() if k.endswith(("/name", "/instance"))},
        "le": spec.leader_election,
        "lease_verbs": list(versions.lease_verbs(version)),
        "probes": versions.probes(version),
        "probe_port_name": versions.PROBE_PORT_NAME,
        "secure_port": versions.DEFAULT_SECURE_PORT,
        "config_dir": config_dir,
        "config_text": config_text,
        "config_hash": hashlib.sha256(config_text.encode()).hexdigest(),
        "command": [
            "kube-scheduler",
            f"--config={config_dir}/config.yaml",
            f"--v={spec.pod.verbosity}",
            *spec.extra_args,
        ],
        "host_config_text": host_config_text,
        "host_config_hash": hashlib.sha256(host_config_text.encode()).hexdigest(),
        "host_command": ["kube-scheduler", *host_flags],
        "exec_start": " ".join([svc.binary, *host_flags]).replace("%", "%%"),
        "probe_host": probe_host,
        "example_pod": {
            "name": f"{spec.name}-example",
            "labels": labels(spec, component="example"),
            "image": versions.PAUSE_IMAGE,
        },
        # What differs for program builtin (render_builtin.builtin_context).
        "builtin": False,
        "container_name": "kube-scheduler",
        "probe_scheme": "HTTPS",
        "config_key": "config.yaml",
        "config_what": "KubeSchedulerConfiguration",
        "program_what": "kube-scheduler",
        "runs": "kube-scheduler --config",
        "rbac_template": "_rbac.yaml.j2",
    }


def _require_renderable(spec: Spec) -> Spec:
    ensure_valid(spec)
    if spec.program == "custom":
        raise SpecError(
            "spec.program",
            "rendering program 'custom' is not supported yet; "
            "kube-scheduler and builtin render in this release",
        )
    return spec


def _form_context(spec: Spec) -> dict[str, Any]:
    context = _context(spec)
    if spec.program == "builtin":
        from kschedctl.render.builtin import builtin_context

        context.update(builtin_context(spec, context))
    return context


def render(spec: Spec, form: str) -> str:
    """One rendered form (see FORMS; HOST_OUTPUTS too) as text."""
    if form not in RENDERABLE:
        raise ValueError(f"unknown form {form!r}; expected one of {', '.join(RENDERABLE)}")
    return _render_form(_form_context(_require_renderable(spec)), form)


def _render_form(ctx: dict[str, Any], form: str) -> str:
    if form == "config":
        return str(ctx["config_text"])
    if form == "host-config":
        return str(ctx["host_config_text"])
    return _render_template(_TEMPLATES[form], **ctx)


def render_workspace(spec: Spec) -> dict[str, str]:
    """Every file of a workspace: relative name → content (``create`` writes these)."""
    ctx = _form_context(_require_renderable(spec))
    files = {
        SPEC_FILE: _render_template("scheduler.yaml.j2", spec=spec, data=spec.to_dict()),
        "config.yaml": _render_form(ctx, "config"),
        f"{spec.name}.service": _render_form(ctx, "service"),
        "host-config.yaml": _render_form(ctx, "host-config"),
    }
    if spec.leader_election.leader_elect:
        files["host-rbac.yaml"] = _render_form(ctx, "host-rbac")
    for form in ("pod", "deployment", "static-pod", "example-pod"):
        files[f"{form}.yaml"] = _render_form(ctx, form)
    files["README.md"] = _render_template("workspace-README.md.j2", files=list(files), **ctx)
    return files


def add_profile(existing_config_text: str, spec: Spec, source: str = "") -> str:
    """The existing KubeSchedulerConfiguration, also serving ``spec``'s profiles.

    One kube-scheduler with several profiles (names) is what upstream recommends: the profiles
    share one cache, so they cannot double-book a node. The result is validated like any
    config; the existing leader election and client connection stay as they are.
    """
    spec = _require_renderable(spec)
    if spec.program != "kube-scheduler":
        raise SpecError(
            "spec.program",
            f"program {spec.program} is a scheduler of its own; only kube-scheduler profiles "
            "can be added to a KubeSchedulerConfiguration",
        )
    try:
        docs = parse_yaml(existing_config_text)
    except YamlError as err:
        raise SpecError("", str(err), source=source) from err
    if len(docs) != 1 or not isinstance(docs[0], dict):
        raise SpecError("", "expected one KubeSchedulerConfiguration document", source=source)
    config = copy.deepcopy(docs[0])
    profiles = config.get("profiles")
    if profiles is None or profiles == []:
        # kube-scheduler would default to one profile; keep it, now that there are two.
        profiles = [{"schedulerName": versions.DEFAULT_SCHEDULER_NAME}]
    elif isinstance(profiles, list) and len(profiles) == 1 and isinstance(profiles[0], dict):
        # A lone profile without a name defaults to default-scheduler; with a second profile
        # that defaulting stops, so write the name down.
        profiles[0] = {"schedulerName": versions.DEFAULT_SCHEDULER_NAME, **profiles[0]}
    if not isinstance(profiles, list):
        raise SpecError("profiles", "must be a list", source=source)
    existing = {p.get("schedulerName") for p in profiles if isinstance(p, dict)}
    for name in spec.scheduler_names:
        if name in existing:
            raise SpecError(
                "profiles",
                f"already has a profile named {name!r}",
                hint="pick another scheduler name, or edit that profile instead",
                source=source,
            )
    config["profiles"] = profiles + copy.deepcopy(spec.profiles)
    # The combined config runs as the cluster's scheduler: default names and lease are fine.
    problems = check_config(config, spec.version, replaces_default=True, source=source)
    if problems:
        raise SpecError.from_problems(problems)
    return _render_template(
        "added-profile.yaml.j2", config=config, added=spec.scheduler_names, source=source
    )
