"""What to deploy, as flags declared once for `deploy` and `diff` (``target: Target``): the
source argument, the form (``--as FORM`` or ``--as-FORM``) and the spec's overrides, host
paths included.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NamedTuple

import typer

from kschedctl.base.errors import UsageError
from kschedctl.cli import cluster_completers
from kschedctl.cli.options import Flag, flag, flag_group
from kschedctl.render import forms

if TYPE_CHECKING:
    from kschedctl.ops.deploy import DeployRequest

Source = Annotated[
    str,
    typer.Argument(
        help="Workspace directory, spec file, or a scheduler name (all defaults).",
        autocompletion=cluster_completers.deploy_sources,
    ),
]


class Program(str, Enum):
    kube_scheduler = "kube-scheduler"
    builtin = "builtin"


# --as choices: the deployable forms of the one forms table (new forms appear by themselves).
DeployForm = Enum("DeployForm", {name: name for name in forms.DEPLOY_FORMS}, type=str)  # type: ignore[misc]


class Target(NamedTuple):
    """The form flags and the spec's overrides, as given."""

    as_form: DeployForm | None = None
    as_pod: bool = False
    as_deployment: bool = False
    as_service: bool = False
    as_static_pod: bool = False
    namespace: str | None = None
    kubernetes_version: str | None = None
    image: str | None = None
    program: Program | None = None
    replicas: int | None = None
    root: Path = Path("/")
    manifests_dir: Path | None = None

    def form(self) -> str:
        """The form from ``--as FORM`` or its documented aliases ``--as-FORM``: one form,
        named once or consistently; two different ones are a usage error (exit 2)."""
        aliases = {"pod": self.as_pod, "deployment": self.as_deployment,
                   "service": self.as_service, "static-pod": self.as_static_pod}  # fmt: skip
        named = {f"--as-{form}": form for form, on in aliases.items() if on}
        if self.as_form is not None:
            named[f"--as {self.as_form.value}"] = self.as_form.value
        chosen = set(named.values())
        if len(chosen) > 1:
            raise UsageError(
                f"{' and '.join(sorted(named))} name different forms: choose one",
                hint=f"kschedctl deploy SRC --as {'|'.join(forms.DEPLOY_FORMS)}",
            )
        if not chosen:
            raise UsageError(
                "choose a form: --as " + "|".join(forms.DEPLOY_FORMS),
                hint="--as-pod, --as-deployment, --as-service and --as-static-pod are aliases",
            )
        return chosen.pop()

    def request(self, src: str, **settings: Any) -> DeployRequest:
        """The deploy request of ``src`` with these overrides (``settings``: the wait's)."""
        # Imported here: the use case pulls in the cluster, host and render layers, which
        # `kschedctl --help` and the offline commands must not pay for.
        from kschedctl.ops import deploy as use_case

        form = self.form()
        spec = use_case.load_target(
            src, namespace=self.namespace, image=self.image, replicas=self.replicas,
            program=self.program.value if self.program else None,
            kubernetes_version=self.kubernetes_version,
        )  # fmt: skip
        bare = not self.kubernetes_version and use_case.is_bare_name(src)
        return use_case.DeployRequest(
            spec, form, follow_server_version=bare, overrides=self.overrides(), **settings
        )

    def overrides(self) -> dict[str, Any]:
        """The flags given that change the deployed state, by their spec field (a revision
        records them, or deploy writes them back to the spec's file)."""
        given = {
            "namespace": self.namespace, "image": self.image, "replicas": self.replicas,
            "program": self.program.value if self.program else None,
            "kubernetesVersion": self.kubernetes_version,
        }  # fmt: skip
        return {field: value for field, value in given.items() if value is not None}


ROOT_HELP = "Host forms: install files under this root."
MANIFESTS_DIR_HELP = (
    "Static-pod form: kubelet's manifest directory (default ROOT/etc/kubernetes/manifests)."
)

# How deploy and rollback wait (one declaration for both commands).
Wait = Annotated[bool, typer.Option("--wait/--no-wait", help="Wait until the scheduler serves.")]
Verify = Annotated[
    bool, typer.Option("--verify/--no-verify", help="Prove it with a canary pod it must schedule.")
]
Timeout = Annotated[float, typer.Option("--timeout", help="Seconds to wait.")]
CanaryNamespace = Annotated[
    str, typer.Option("--canary-namespace", help="Namespace of the canary pod.")
]
Root = Annotated[Path, typer.Option("--root", help=ROOT_HELP)]
ManifestsDir = Annotated[Path | None, typer.Option("--manifests-dir", help=MANIFESTS_DIR_HELP)]


_FORM_FLAGS: dict[str, Flag] = {
    "as_form": flag(
        DeployForm | None,
        None,
        "--as",
        "The form: " + "; ".join(f"{f.name}: {f.holds}" for f in forms.FORMS if f.deploy) + ".",
        case_sensitive=False,
        show_default=False,
    ),
    "as_pod": flag(
        bool, False, "--as-pod", "Same as --as pod (a bare Pod, its ConfigMap and RBAC)."
    ),
    "as_deployment": flag(
        bool,
        False,
        "--as-deployment",
        "Same as --as deployment (ServiceAccount, RBAC, ConfigMap, Deployment).",
    ),
    "as_service": flag(
        bool,
        False,
        "--as-service",
        "Same as --as service (a systemd unit on this host, Lease RBAC).",
    ),
    "as_static_pod": flag(
        bool,
        False,
        "--as-static-pod",
        "Same as --as static-pod (a kubeadm static pod manifest on this host).",
    ),
}
_OVERRIDE_FLAGS: dict[str, Flag] = {
    "namespace": flag(
        str | None,
        None,
        ("-n", "--namespace"),
        "Namespace of the scheduler (default: the spec's, kube-system).",
    ),
    "kubernetes_version": flag(
        str | None,
        None,
        "--kubernetes-version",
        "Target version (default: the spec's; for a bare name the server's).",
    ),
    "image": flag(
        str | None,
        None,
        "--image",
        "Scheduler image (default: registry.k8s.io/kube-scheduler:<version>; for --program "
        "builtin the repository's Dockerfile image, kschedctl:<version>).",
    ),
    "program": flag(
        Program | None,
        None,
        "--program",
        "kube-scheduler, or builtin: kschedctl's own scheduler (default: the spec's).",
    ),
    "replicas": flag(int | None, None, "--replicas", "Replicas of the deployment form.", min=1),
    "root": flag(Path, Path("/"), "--root", ROOT_HELP),
    "manifests_dir": flag(Path | None, None, "--manifests-dir", MANIFESTS_DIR_HELP),
}

# deploy's and diff's flags, where a command's ``target: Target`` parameter stands.
target_flags = flag_group("target", {**_FORM_FLAGS, **_OVERRIDE_FLAGS}, Target)
DEFAULT_TARGET = Target()
