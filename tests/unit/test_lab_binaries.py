"""Which lab binaries are required, where they are looked up, and what names a build."""

from __future__ import annotations

from pathlib import Path

import pytest

from kschedctl.base.errors import NotFoundError
from kschedctl.lab import binaries


def _executables(directory: Path, names: tuple[str, ...]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for name in names:
        (directory / name).write_text("")
        (directory / name).chmod(0o755)


@pytest.fixture(autouse=True)
def _no_cache_no_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KSCHEDCTL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))


def test_the_custom_scheduler_is_built_but_not_required() -> None:
    assert "custom-kube-scheduler" in binaries.OPTIONAL_BINARIES
    assert "custom-kube-scheduler" not in binaries.BINARIES
    assert "kube-scheduler" in binaries.BINARIES


def test_locate_without_the_optional_binary(tmp_path: Path) -> None:
    _executables(tmp_path / "bin", binaries.BINARIES)
    found = binaries.locate(tmp_path / "bin")
    assert set(found) == set(binaries.BINARIES)
    _executables(tmp_path / "bin", binaries.OPTIONAL_BINARIES)
    assert set(binaries.locate(tmp_path / "bin")) == {
        *binaries.BINARIES,
        *binaries.OPTIONAL_BINARIES,
    }


def test_locate_names_only_the_missing_required_binaries(tmp_path: Path) -> None:
    _executables(tmp_path / "bin", tuple(n for n in binaries.BINARIES if n != "kwok"))
    with pytest.raises(NotFoundError, match=r"not found in .*: kwok$"):
        binaries.locate(tmp_path / "bin")


def test_find_optional_looks_beside_then_in_the_cache(tmp_path: Path) -> None:
    module = next(m for m in binaries.MODULES if m.optional)
    with pytest.raises(NotFoundError) as caught:
        binaries.find_optional("custom-kube-scheduler", beside=tmp_path / "lab-bin")
    assert "custom-kube-scheduler is not built" in caught.value.message
    assert str(tmp_path / "lab-bin") in caught.value.message
    assert caught.value.hint and "kschedctl lab build" in caught.value.hint
    _executables(module.cache_path(), ("custom-kube-scheduler",))
    assert (
        binaries.find_optional("custom-kube-scheduler", beside=tmp_path / "lab-bin")
        == (module.cache_path() / "custom-kube-scheduler").resolve()
    )
    _executables(tmp_path / "lab-bin", ("custom-kube-scheduler",))
    assert (
        binaries.find_optional("custom-kube-scheduler", beside=tmp_path / "lab-bin")
        == (tmp_path / "lab-bin" / "custom-kube-scheduler").resolve()
    )


def test_fingerprint_follows_the_plugin_source_not_the_tools_pin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(binaries, "GOMOD_DIR", tmp_path)
    module = binaries.GoModule("m", "k8s.io/kubernetes", {"x": "example/x"}, optional=True)
    (tmp_path / "m").mkdir(exist_ok=True)
    (tmp_path / "m" / "go.mod").write_text("module example\nrequire k8s.io/kubernetes v1.36.3\n")
    (tmp_path / "m" / "go.sum").write_text("")
    (tmp_path / "m" / "plugin").mkdir()
    (tmp_path / "m" / "plugin" / "p.go").write_text("package plugin\n")
    before = module.fingerprint()
    (tmp_path / "m" / "tools.go").write_text("//go:build tools\npackage tools\n")
    (tmp_path / "m" / "plugin" / "p_test.go").write_text("package plugin\n")
    assert module.fingerprint() == before
    (tmp_path / "m" / "plugin" / "p.go").write_text("package plugin\n\nconst A = 1\n")
    assert module.fingerprint() != before
    assert module.version() == "v1.36.3"
    assert module.title() == "m (k8s.io/kubernetes v1.36.3)"


def test_the_custom_module_is_stamped_with_the_kubernetes_version() -> None:
    module = next(m for m in binaries.MODULES if m.optional)
    k8s = next(m for m in binaries.MODULES if m.key == "k8s")
    assert module.version() == k8s.version()
    assert binaries._ldflags(module) == binaries._ldflags(k8s)
    assert "-X k8s.io/component-base/version.gitVersion=" + k8s.version() in binaries._ldflags(
        module
    )


def test_the_custom_module_pins_what_the_k8s_module_pins() -> None:
    """Same versions and replace directives: its build reuses the k8s build's compiled
    packages from the Go build cache (a drifted pin would rebuild Kubernetes)."""

    def pins(path: Path) -> dict[str, str]:
        lines = (path / "go.sum").read_text().splitlines()
        return {f[0]: f[1] for f in (line.split() for line in lines) if "/go.mod" not in f[1]}

    def replaces(path: Path) -> str:
        text = (path / "go.mod").read_text()
        return text[text.index("replace (") :]

    custom = binaries.GOMOD_DIR / "custom-scheduler"
    k8s = binaries.GOMOD_DIR / "k8s"
    assert replaces(custom) == replaces(k8s)
    for name, version in pins(custom).items():
        assert pins(k8s).get(name) == version, name


def test_helm_is_a_pinned_optional_module() -> None:
    (helm,) = [m for m in binaries.MODULES if "helm" in m.commands]
    assert helm.upstream == "helm.sh/helm/v4" and helm.version().startswith("v4.")
    assert helm.optional and "helm" in binaries.OPTIONAL_BINARIES
    assert "helm" not in binaries.BINARIES  # what `lab up` needs
    assert f"version={helm.version()}" in binaries._ldflags(helm)
