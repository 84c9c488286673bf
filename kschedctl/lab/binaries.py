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
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kschedctl.errors import KschedError, NotFoundError
from kschedctl.lab.paths import cache_dir

GOMOD_DIR = Path(__file__).parent / "gomod"


@dataclass(frozen=True)
class GoModule:
    """A wrapper module and the commands built from it."""

    key: str  # directory under gomod/
    upstream: str  # the module whose version names the build
    commands: dict[str, str]  # binary name -> Go package
    # `lab up` needs it; an optional tool (helm, for the chart tests) may be absent.
    required: bool = True

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
        digest = hashlib.sha256()
        for name in ("go.mod", "go.sum"):
            digest.update((self.path / name).read_bytes())
        return digest.hexdigest()[:12]

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
    GoModule("helm", "helm.sh/helm/v4", {"helm": "helm.sh/helm/v4/cmd/helm"}, required=False),
)

BINARIES = tuple(name for module in MODULES if module.required for name in module.commands)


def _ldflags(module: GoModule) -> str:
    """Version stamps upstream's hack/lib/version.sh sets, so /version reports the real release."""
    if module.key == "helm":
        # helm's Makefile stamps the release; unstamped, `helm version` says only "v4.3".
        return f"-s -w -X helm.sh/helm/v4/internal/version.version={module.version()}"
    if module.key != "k8s":
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


def build(
    *, force: bool = False, progress: Callable[[str], None] = lambda _msg: None
) -> list[tuple[GoModule, Path, float | None]]:
    """Build every module not yet in the cache; returns (module, dir, seconds or None if cached)."""
    results: list[tuple[GoModule, Path, float | None]] = []
    for module in MODULES:
        target = module.cache_path()
        if is_built(module) and not force:
            progress(f"{module.upstream} {module.version()}: cached in {target}")
            results.append((module, target, None))
            continue
        go = find_go()
        progress(f"{module.upstream} {module.version()}: building {', '.join(module.commands)}")
        started = time.monotonic()
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{module.key}-", dir=target.parent))
        try:
            # One command: name the output; several: `-o dir/` names each after its package
            # (the k8s commands' package names are their binary names).
            out = (
                f"{staging}/{next(iter(module.commands))}"
                if len(module.commands) == 1
                else f"{staging}/"
            )
            cmd = [go, "build", "-trimpath", "-ldflags", _ldflags(module), "-o", out]
            cmd += list(module.commands.values())
            proc = subprocess.run(
                cmd, cwd=module.path, env=go_environment(), capture_output=True, text=True
            )
            if proc.returncode != 0:
                raise KschedError(
                    f"building {module.upstream} {module.version()} failed:\n"
                    + proc.stderr.strip()[-4000:],
                    hint="check that Go >= 1.26 is installed and the Go module proxy is "
                    "reachable (GOPROXY), then run `kschedctl lab build` again",
                )
            if target.exists():
                shutil.rmtree(target)
            staging.rename(target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        elapsed = time.monotonic() - started
        progress(f"{module.upstream} {module.version()}: built in {elapsed:.0f}s")
        results.append((module, target, elapsed))
    return results


def locate(bin_dir: str | Path | None = None) -> dict[str, Path]:
    """Paths of every lab binary: from ``bin_dir`` if given, else the build cache, else PATH.

    An optional binary (``GoModule.required`` false) is in the result only when found; its
    absence is no error.
    """
    found: dict[str, Path] = {}
    missing: list[str] = []
    for module in MODULES:
        for name in module.commands:
            candidates: list[Path] = []
            if bin_dir is not None:
                candidates.append(Path(bin_dir) / name)
            else:
                candidates.append(module.cache_path() / name)
                on_path = shutil.which(name)
                if on_path:
                    candidates.append(Path(on_path))
            path = next((c for c in candidates if c.is_file() and os.access(c, os.X_OK)), None)
            if path is None:
                if module.required:
                    missing.append(name)
            else:
                found[name] = path.resolve()
    if missing:
        where = f"in {bin_dir}" if bin_dir is not None else "in the build cache or on PATH"
        raise NotFoundError(
            f"lab binaries not found {where}: {', '.join(missing)}",
            hint="run `kschedctl lab build` (needs Go >= 1.26), or pass a directory holding "
            f"{', '.join(BINARIES)} with --bin-dir",
        )
    return found


def versions() -> dict[str, str]:
    return {module.upstream: module.version() for module in MODULES}
