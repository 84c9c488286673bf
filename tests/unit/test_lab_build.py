"""``lab build`` builds each module's binaries in one ``go build`` and says which, with the
elapsed time.

Runs the real ``go build`` on a two-command module written in the test (a second or two with
Go's build cache), so the progress seen is the one a cold build shows for each module.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kschedctl.base.errors import KschedError
from kschedctl.cli import app
from kschedctl.lab import binaries

pytestmark = pytest.mark.skipif(shutil.which("go") is None, reason="needs the Go toolchain")


class Recorder:
    def __init__(self) -> None:
        self.steps: list[str] = []
        self.beats: list[tuple[str, float]] = []

    def step(self, message: str) -> None:
        self.steps.append(message)

    def waiting(self, what: str, elapsed: float) -> None:
        self.beats.append((what, elapsed))


def _module(root: Path, body: str = 'println("hi")') -> binaries.GoModule:
    mod = root / "gomod" / "tiny"
    for name in ("one", "two"):
        (mod / "cmd" / name).mkdir(parents=True)
        (mod / "cmd" / name / "main.go").write_text(f"package main\n\nfunc main() {{ {body} }}\n")
    (mod / "go.mod").write_text("module example.com/tiny\n\ngo 1.22\n")
    (mod / "go.sum").write_text("")
    return binaries.GoModule("tiny", "example.com/tiny", {"one": "./cmd/one", "two": "./cmd/two"})


@pytest.fixture
def tiny(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> binaries.GoModule:
    monkeypatch.setenv("KSCHEDCTL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(binaries, "GOMOD_DIR", tmp_path / "gomod")
    module = _module(tmp_path)
    monkeypatch.setattr(binaries, "MODULES", (module,))
    monkeypatch.setattr(binaries.GoModule, "version", lambda self: "v0.0.1")
    return module


def test_a_modules_binaries_are_built_together_and_named(tiny: binaries.GoModule) -> None:
    seen = Recorder()
    [(module, target, seconds)] = binaries.build(progress=seen)
    assert module is tiny and seconds is not None
    assert sorted(p.name for p in target.iterdir()) == ["one", "two"]
    assert seen.steps[0] == "building one, two (example.com/tiny v0.0.1)"
    assert seen.steps[-1].startswith("example.com/tiny v0.0.1: built in ")
    assert seen.beats and {what for what, _ in seen.beats} == {"one, two (example.com/tiny v0.0.1)"}

    again = Recorder()
    [(_, _, cached)] = binaries.build(progress=again)
    assert cached is None and again.steps == [f"example.com/tiny v0.0.1: cached in {target}"]


def test_a_failed_build_names_the_binary_and_leaves_nothing(
    tiny: binaries.GoModule, tmp_path: Path
) -> None:
    (tiny.path / "cmd" / "two" / "main.go").write_text("package main\n\nfunc main() { nope }\n")
    with pytest.raises(KschedError) as err:
        binaries.build()
    assert "building one, two (example.com/tiny v0.0.1) failed" in str(err.value)
    assert "undefined: nope" in str(err.value)
    cache = tmp_path / "cache" / "bin"
    assert not binaries.is_built(tiny) and list(cache.iterdir()) == []  # no staging left over


def test_the_cli_prints_each_step_on_stderr_and_the_paths_on_stdout(
    tiny: binaries.GoModule,
) -> None:
    result = CliRunner().invoke(app, ["lab", "build"])
    assert result.exit_code == 0, result.output
    assert result.stdout == f"example.com/tiny v0.0.1\t{tiny.cache_path()}\n"
    assert "building one, two (example.com/tiny v0.0.1)" in result.stderr


@pytest.mark.parametrize(
    ("package", "name"),
    [
        ("k8s.io/kubernetes/cmd/kube-apiserver", "kube-apiserver"),
        ("go.etcd.io/etcd/server/v3", "server"),
        ("helm.sh/helm/v4/cmd/helm", "helm"),
        ("./cmd/one", "one"),
    ],
)
def test_the_file_go_build_writes_is_named_as_go_names_it(package: str, name: str) -> None:
    assert binaries._go_binary_name(package) == name
