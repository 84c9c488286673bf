"""Which containers the lab really runs, and the command line each one gets.

:func:`program_for` (:mod:`kschedctl.lab.images`) is the one place images are matched:
kube-scheduler images run the lab's kube-scheduler binary, custom-kube-scheduler images the
custom one built beside it (kube-scheduler + NodeLabelMatch), kschedctl images (kschedctl's own
scheduler) run ``python -m kschedctl`` with the lab's interpreter. To run another program, add
its rule there and a launch function to ``LAUNCHERS``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml

import kschedctl
from kschedctl.base.errors import NotFoundError
from kschedctl.lab.binaries import find_optional
from kschedctl.lab.images import CUSTOM_KUBE_SCHEDULER, KSCHEDCTL, KUBE_SCHEDULER
from kschedctl.lab.private import private_dir, write_private
from kschedctl.lab.runner.podenv import flag_values, replace_flag, rewrite_path
from kschedctl.model.config.shapes import image_tag

KUBE_SCHEDULER_PORT = 10259  # kube-scheduler's default --secure-port


class LaunchError(Exception):
    """The container cannot be run in the lab (what a kubelet reports as RunContainerError)."""


class ImagePullError(Exception):
    """The container's image cannot be pulled (ErrImagePull, then ImagePullBackOff)."""


KSCHEDCTL_PORT = 10259  # `kschedctl scheduler run --metrics-port` default


@dataclass(frozen=True)
class LaunchContext:
    binaries: Mapping[str, Path]
    lab_version: str  # the Kubernetes version the lab's binaries were built from
    kubeconfig: Path  # authenticates as the pod's ServiceAccount
    run_dir: Path  # per-container scratch directory (config copies)
    mounts: Sequence[tuple[str, str]]  # (mountPath, lab path)
    local_port: int  # a free port on 127.0.0.1 for the program to serve on


@dataclass
class Launch:
    argv: list[str]
    exe: str  # what /proc/<pid>/exe shows once the program runs
    serving_port: int | None  # the port the program serves on inside the pod (probe target)
    local_port: int | None  # where it really listens here
    notes: list[str] = field(default_factory=list)
    # Set in the process's environment over the container's own (what the image would hold).
    env: dict[str, str] = field(default_factory=dict)


def _kube_scheduler(
    image: str, command: Sequence[str], args: Sequence[str], ctx: LaunchContext
) -> Launch:
    return _scheduler_binary(
        KUBE_SCHEDULER, ctx.binaries[KUBE_SCHEDULER], image, command, args, ctx
    )


def _custom_kube_scheduler(
    image: str, command: Sequence[str], args: Sequence[str], ctx: LaunchContext
) -> Launch:
    """kube-scheduler with NodeLabelMatch compiled in: looked up when a pod runs it (next to
    the lab's kube-scheduler, else the build cache), so the lab starts without it."""
    try:
        binary = ctx.binaries.get(CUSTOM_KUBE_SCHEDULER) or find_optional(
            CUSTOM_KUBE_SCHEDULER, beside=ctx.binaries[KUBE_SCHEDULER].parent
        )
    except NotFoundError as err:
        raise LaunchError(f"{err.message}; {err.hint}") from err
    return _scheduler_binary(CUSTOM_KUBE_SCHEDULER, binary, image, command, args, ctx)


def _scheduler_binary(
    name: str,
    binary: Path,
    image: str,
    command: Sequence[str],
    args: Sequence[str],
    ctx: LaunchContext,
) -> Launch:
    """A kube-scheduler build: the upstream one or one with plugins compiled in; both take
    kube-scheduler's flags and KubeSchedulerConfiguration."""
    notes = []
    tag = image_tag(image)
    if tag and tag != ctx.lab_version:
        notes.append(
            f"image tag {tag} differs from the lab's {name} {ctx.lab_version}; "
            "running the lab's binary"
        )
    # Without a command the image's entrypoint runs: the scheduler. Images of custom builds
    # often name their binary kube-scheduler (scheduler-plugins' do), so both names run it.
    command = list(command) or [name]
    if Path(command[0]).name not in (name, KUBE_SCHEDULER):
        raise LaunchError(
            f"the lab runs {name} images by their {name} binary only, "
            f"but the command is {command[0]!r}"
        )
    args = [*command[1:], *args]
    configs = flag_values(args, "config")
    if configs:
        args = replace_flag(args, "config", str(_config_copy(Path(configs[-1]), ctx)))
    elif not flag_values(args, "kubeconfig") and not flag_values(args, "master"):
        # No --config and no --kubeconfig: kube-scheduler would use in-cluster config.
        args.append(f"--kubeconfig={ctx.kubeconfig}")
    for flag in ("authentication-kubeconfig", "authorization-kubeconfig"):
        # Unset, these fall back to in-cluster config too (delegated authn/authz of /metrics).
        if not flag_values(args, flag):
            args.append(f"--{flag}={ctx.kubeconfig}")
    ports = flag_values(args, "secure-port")
    try:
        serving = int(ports[-1]) if ports else KUBE_SCHEDULER_PORT
    except ValueError as err:
        raise LaunchError(f"--secure-port={ports[-1]} is not a number") from err
    local: int | None = None
    if serving:
        # Appended, so they win over the pod's own: replicas must not collide on one port.
        local = ctx.local_port
        args += [f"--secure-port={local}", "--bind-address=127.0.0.1"]
    return Launch([str(binary), *args], str(binary), serving or None, local, notes)


def _config_copy(source: Path, ctx: LaunchContext) -> Path:
    """A copy of the KubeSchedulerConfiguration whose clientConnection works in the lab.

    An empty ``clientConnection.kubeconfig`` means in-cluster config, which reads the token
    from a fixed path (/var/run/secrets/kubernetes.io/serviceaccount/token) no lab process
    has: it gets the ServiceAccount kubeconfig instead. A path under a mount is rewritten.
    """
    try:
        config = yaml.safe_load(source.read_text())
    except (OSError, yaml.YAMLError) as err:
        raise LaunchError(f"cannot read --config {source}: {err}") from err
    if not isinstance(config, dict):
        raise LaunchError(f"--config {source} is not a KubeSchedulerConfiguration")
    connection = config.get("clientConnection")
    if not isinstance(connection, dict):
        connection = config["clientConnection"] = {}
    kubeconfig = connection.get("kubeconfig")
    connection["kubeconfig"] = (
        rewrite_path(kubeconfig, ctx.mounts) if kubeconfig else str(ctx.kubeconfig)
    )
    target = private_dir(ctx.run_dir / "config") / source.name
    return write_private(target, yaml.safe_dump(config, sort_keys=False))


def _kschedctl(
    image: str, command: Sequence[str], args: Sequence[str], ctx: LaunchContext
) -> Launch:
    """``kschedctl …`` (the image's entrypoint) as ``python -m kschedctl …``: the code of this
    checkout, run by the interpreter the lab runs with (the image cannot be built here)."""
    argv = [*command, *args]
    if not argv or Path(argv[0]).name == KSCHEDCTL:
        argv = argv[1:]  # without a command the entrypoint is kschedctl too
    elif argv[0].startswith("-") or argv[0] == "scheduler":
        pass  # args only: they follow the entrypoint
    else:
        raise LaunchError(
            f"the lab runs kschedctl images by their kschedctl entrypoint only, "
            f"but the command is {argv[0]!r}"
        )
    if argv[:2] == ["scheduler", "run"] and not flag_values(argv, "kubeconfig"):
        # In-cluster config would read a token file no lab process has.
        argv.append(f"--kubeconfig={ctx.kubeconfig}")
    serving: int | None = None
    local: int | None = None
    if argv[:2] == ["scheduler", "run"]:
        ports = flag_values(argv, "metrics-port")
        try:
            serving = int(ports[-1]) if ports else KSCHEDCTL_PORT
        except ValueError as err:
            raise LaunchError(f"--metrics-port={ports[-1]} is not a number") from err
        # Appended, so they win over the pod's own: replicas must not collide on one port.
        local = ctx.local_port
        argv += [f"--metrics-port={local}", "--metrics-address=127.0.0.1"]
    python = os.path.realpath(sys.executable)  # what /proc/<pid>/exe shows
    # The kschedctl this runner runs (a checkout on PYTHONPATH, or the installed one), not
    # whichever one the interpreter would find from the pod's directory: the image's code is
    # the code under test.
    package_root = str(Path(kschedctl.__file__).resolve().parents[1])
    return Launch(
        [sys.executable, "-m", "kschedctl", *argv], python, serving, local,
        env={"PYTHONPATH": package_root},
    )  # fmt: skip


Launcher = Callable[[str, Sequence[str], Sequence[str], LaunchContext], Launch]
LAUNCHERS: dict[str, Launcher] = {
    KUBE_SCHEDULER: _kube_scheduler,
    KSCHEDCTL: _kschedctl,
    CUSTOM_KUBE_SCHEDULER: _custom_kube_scheduler,
}


def launch(
    program: str, image: str, command: Sequence[str], args: Sequence[str], ctx: LaunchContext
) -> Launch:
    """The command line for a container (command and args already expanded and rewritten)."""
    return LAUNCHERS[program](image, command, args, ctx)
