"""The lab's control-plane binaries: build them from the committed Go modules, or find them.

Each upstream project has its own wrapper module under ``gomod/`` (one module per upstream so
Go's minimal version selection never builds Kubernetes against etcd's or kwok's dependency
versions). Built binaries live in the per-user cache under a directory named after the
module's pinned version and a hash of its go.mod + go.sum, so a changed pin rebuilds and an
unchanged one is reused.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from kschedctl.base.errors import KschedError, NotFoundError
from kschedctl.lab.images import CUSTOM_KUBE_SCHEDULER
from kschedctl.lab.paths import cache_dir

GOMOD_DIR = Path(__file__).parent / "gomod"


@dataclass(frozen=True)
class GoModule:
    """A wrapper module and the commands built from it."""

    key: str  # directory under gomod/
    upstream: str  # the module whose version names the build
    commands: dict[str, str]  # binary name -> Go package
    # Not part of the control plane: `lab up` starts without it, and only the pods that run it
    # need it (a missing one fails their container, not the lab).
    optional: bool = False

    @property
    def path(self) -> Path:
        return GOMOD_DIR / self.key

    def version(self) -> str:
        text = (self.path / "go.mod").read_text()
        match = re.search(rf"^\s*(?:require\s+)?{re.escape(self.upstream)}\s+(v\S+)", text, re.M)
        if not match:
            raise KschedError(f"{self.path}/go.mod does not require {self.upstream}")
        return match.group(1)

    def fingerprint(self) -> str:
        """A hash of what the build compiles: the pins and the module's own Go code (a
        plugin's source changes the binary); tools.go only pins, behind the ``tools`` tag."""
        digest = hashlib.sha256()
        for name in ("go.mod", "go.sum"):
            digest.update((self.path / name).read_bytes())
        for source in sorted(self.path.rglob("*.go")):
            if source.name != "tools.go" and not source.name.endswith("_test.go"):
                digest.update(str(source.relative_to(self.path)).encode() + b"\0")
                digest.update(source.read_bytes())
        return digest.hexdigest()[:12]

    def title(self) -> str:
        """``k8s.io/kubernetes v1.36.3``; an optional module (a program of kschedctl's own
        built on an upstream, not a control-plane component) names itself first."""
        built = f"{self.upstream} {self.version()}"
        return f"{self.key} ({built})" if self.optional else built

    def cache_path(self) -> Path:
        return cache_dir() / "bin" / f"{self.key}-{self.version()}-{self.fingerprint()}"


MODULES = (
    GoModule(
        "k8s",
        "k8s.io/kubernetes",
        {
            "kube-apiserver": "k8s.io/kubernetes/cmd/kube-apiserver",
            "kube-controller-manager": "k8s.io/kubernetes/cmd/kube-controller-manager",
            "kube-scheduler": "k8s.io/kubernetes/cmd/kube-scheduler",
            "kubectl": "k8s.io/kubernetes/cmd/kubectl",
        },
    ),
    GoModule("etcd", "go.etcd.io/etcd/server/v3", {"etcd": "go.etcd.io/etcd/server/v3"}),
    GoModule("kwok", "sigs.k8s.io/kwok", {"kwok": "sigs.k8s.io/kwok/cmd/kwok"}),
    # kube-scheduler with the repository's own out-of-tree plugin (NodeLabelMatch), built the
    # way scheduler-plugins is; same k8s.io/kubernetes pin as "k8s", so the build reuses its
    # compiled packages from the Go build cache.
    GoModule(
        "custom-scheduler",
        "k8s.io/kubernetes",
        {CUSTOM_KUBE_SCHEDULER: "kschedctl.io/labbin/custom-scheduler"},
        optional=True,
    ),
    # helm, for the chart tests (render --as helm-chart): a tool, not the control plane.
    GoModule("helm", "helm.sh/helm/v4", {"helm": "helm.sh/helm/v4/cmd/helm"}, optional=True),
)

BINARIES = tuple(name for module in MODULES for name in module.commands if not module.optional)
OPTIONAL_BINARIES = tuple(name for module in MODULES for name in module.commands if module.optional)


def _ldflags(module: GoModule) -> str:
    """Version stamps upstream's hack/lib/version.sh sets, so /version reports the real release."""
    if module.key == "helm":
        # helm's Makefile stamps the release; unstamped, `helm version` says only "v4.3".
        return f"-s -w -X helm.sh/helm/v4/internal/version.version={module.version()}"
    if module.upstream != "k8s.io/kubernetes":
        return "-s -w"  # etcd and kwok carry their version as a constant
    version = module.version()
    major, minor = version.lstrip("v").split(".")[:2]
    flags = ["-s", "-w"]
    for pkg in ("k8s.io/component-base/version", "k8s.io/client-go/pkg/version"):
        flags += [
            f"-X {pkg}.gitVersion={version}",
            f"-X {pkg}.gitMajor={major}",
            f"-X {pkg}.gitMinor={minor}",
            f"-X {pkg}.gitTreeState=clean",
        ]
    return " ".join(flags)


def go_environment() -> dict[str, str]:
    env = dict(os.environ)
    # Never let the go command fetch another toolchain; fail loudly instead.
    env.update(GOTOOLCHAIN="local", CGO_ENABLED="0", GOFLAGS="-mod=readonly")
    return env


def find_go() -> str:
    go = shutil.which("go")
    if not go:
        raise NotFoundError(
            "the Go toolchain is not installed; `kschedctl lab build` compiles the control plane "
            "from Go modules",
            hint="install Go >= 1.26 (https://go.dev/dl) and put `go` on PATH, or skip the build "
            "and pass release binaries with `kschedctl lab up --bin-dir DIR`",
        )
    return go


def is_built(module: GoModule) -> bool:
    target = module.cache_path()
    return all((target / name).is_file() for name in module.commands)


class BuildProgress(Protocol):
    """How ``build`` reports: a line per step, and a beat about once a second while Go works."""

    def step(self, message: str) -> None: ...

    def waiting(self, what: str, elapsed: float) -> None: ...


class _Quiet:
    def step(self, message: str) -> None:
        pass

    def waiting(self, what: str, elapsed: float) -> None:
        pass


def build(
    *, force: bool = False, progress: BuildProgress | None = None
) -> list[tuple[GoModule, Path, float | None]]:
    """Build every module not yet in the cache; returns (module, dir, seconds or None if cached).

    A module's binaries come from one ``go build``: Go compiles the packages they share once
    and links them in parallel (four serial links of Kubernetes binaries cost minutes cold).
    """
    report = progress or _Quiet()
    results: list[tuple[GoModule, Path, float | None]] = []
    for module in MODULES:
        target = module.cache_path()
        label = module.title()
        if is_built(module) and not force:
            report.step(f"{label}: cached in {target}")
            results.append((module, target, None))
            continue
        go = find_go()
        started = time.monotonic()
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{module.key}-", dir=target.parent))
        try:
            what = f"{', '.join(module.commands)} ({label})"
            report.step(f"building {what}")
            cmd = [
                go,
                "build",
                "-trimpath",
                "-ldflags",
                _ldflags(module),
                "-o",
                f"{staging}{os.sep}",
            ]
            _run_go([*cmd, *module.commands.values()], module, what, report)
            for name, package in module.commands.items():
                (staging / _go_binary_name(package)).rename(staging / name)
            if target.exists():
                shutil.rmtree(target)
            staging.rename(target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        elapsed = time.monotonic() - started
        report.step(f"{label}: built in {_elapsed(elapsed)} into {target}")
        results.append((module, target, elapsed))
    return results


def _go_binary_name(package: str) -> str:
    """The file ``go build -o DIR/`` writes: the package path's last element, or the one
    before a major-version suffix (``go.etcd.io/etcd/server/v3`` -> ``server``)."""
    parts = package.split("/")
    return parts[-2] if re.fullmatch(r"v[0-9]+", parts[-1]) else parts[-1]


def _candidates(module: GoModule, name: str, bin_dir: str | Path | None) -> list[Path]:
    if bin_dir is not None:
        return [Path(bin_dir) / name]
    on_path = shutil.which(name)
    return [module.cache_path() / name, *([Path(on_path)] if on_path else [])]


def _first_executable(candidates: list[Path]) -> Path | None:
    path = next((c for c in candidates if c.is_file() and os.access(c, os.X_OK)), None)
    return path.resolve() if path is not None else None


def _run_go(cmd: list[str], module: GoModule, what: str, report: BuildProgress) -> None:
    """Run one ``go build``, beating ``report.waiting`` until it ends; its errors, bounded."""
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            cmd, cwd=module.path, env=go_environment(), stdout=subprocess.DEVNULL, stderr=err
        )
        began = time.monotonic()
        try:
            while proc.poll() is None:
                report.waiting(what, time.monotonic() - began)
                try:
                    proc.wait(timeout=1)
                except subprocess.TimeoutExpired:
                    pass
        finally:
            if proc.poll() is None:  # interrupted (Ctrl-C): stop the compiler too
                proc.kill()
                proc.wait()
        if proc.returncode != 0:
            err.seek(0)
            detail = err.read().decode(errors="replace").strip()[-4000:]
            raise KschedError(
                f"building {what} failed:\n{detail}",
                hint="check that Go >= 1.26 is installed and the Go module proxy is "
                "reachable (GOPROXY), then run `kschedctl lab build` again",
            )


def _elapsed(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def locate(bin_dir: str | Path | None = None) -> dict[str, Path]:
    """Paths of every lab binary: from ``bin_dir`` if given, else the build cache, else PATH.

    The optional binaries are in the result when found; only the control plane's are required.
    """
    found: dict[str, Path] = {}
    missing: list[str] = []
    for module in MODULES:
        for name in module.commands:
            path = _first_executable(_candidates(module, name, bin_dir))
            if path is not None:
                found[name] = path
            elif not module.optional:
                missing.append(name)
    if missing:
        where = f"in {bin_dir}" if bin_dir is not None else "in the build cache or on PATH"
        raise NotFoundError(
            f"lab binaries not found {where}: {', '.join(missing)}",
            hint="run `kschedctl lab build` (needs Go >= 1.26), or pass a directory holding "
            f"{', '.join(BINARIES)} with --bin-dir",
        )
    return found


def find_optional(name: str, beside: Path | None = None) -> Path:
    """An optional binary, looked up when a pod needs it: next to the lab's own binaries
    (``beside``: a ``--bin-dir`` may hold it too), else the build cache, else PATH."""
    module = next(m for m in MODULES if name in m.commands and m.optional)
    candidates = [beside / name] if beside is not None else []
    path = _first_executable(candidates + _candidates(module, name, None))
    if path is None:
        raise NotFoundError(
            f"{name} is not built: not in {module.cache_path()}"
            + (f", {beside}" if beside is not None else "")
            + " or on PATH",
            hint=f"run `kschedctl lab build` (it builds {name} from "
            f"kschedctl/lab/gomod/{module.key}), or put it next to the lab's binaries",
        )
    return path


def versions() -> dict[str, str]:
    return {module.upstream: module.version() for module in MODULES}
