"""create, render, validate and deploy given hostile paths and names: ``error:`` and the
documented exit code, never a traceback, nothing half-written.

(The ``run`` fixture re-raises any exception that is not an exit, so a traceback fails.)
"""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path

import pytest

from kschedctl.cli import output

LONG_COMPONENT = "a" * 300  # > NAME_MAX (255)
LONG_PATH = "/a" * 3000  # > PATH_MAX (4096)
SPEC = """\
apiVersion: kschedctl.io/v1alpha1
kind: Scheduler
metadata:
  name: evil
spec:
  service:
    configDir: {config_dir}
"""


def _entries(path: Path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*"))


def _refused(result, codes: tuple[int, ...]) -> None:
    assert result.exit_code in codes, (result.exit_code, result.stderr)
    assert result.stderr.startswith("error: "), result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


# -- create -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("args", "codes", "message"),
    [
        (["s", "--dir", LONG_COMPONENT], (1,), "File name too long"),
        (["s", "--dir", LONG_PATH], (1,), "File name too long"),
        ([LONG_COMPONENT], (3,), "at most 63 characters"),
        ([LONG_PATH], (3,), "at most 63 characters"),
        (["[a]"], (3,), "is not a DNS-1123 label"),
        (["['a', 'b']"], (3,), "is not a DNS-1123 label"),
        (["a/b"], (3,), "is not a DNS-1123 label"),
        (["../s"], (3,), "is not a DNS-1123 label"),
        (["s", "--dir", "afile"], (2,), "afile is not a directory"),
        (["s", "--dir", "dangling"], (2,), "dangling is not a directory"),
        (["s", "--dir", "nowhere"], (5,), "nowhere: no such directory"),
    ],
    ids=["dir-name-max", "dir-path-max", "name-name-max", "name-path-max", "name-list",
         "name-python-list", "name-slash", "name-dot-dot", "dir-is-a-file", "dir-dangling",
         "dir-missing"],
)  # fmt: skip
def test_create_refuses_hostile_paths_and_names(
    run, tmp_path: Path, args: list[str], codes: tuple[int, ...], message: str
) -> None:
    (tmp_path / "afile").write_text("")
    (tmp_path / "dangling").symlink_to(tmp_path / "gone")
    before = _entries(tmp_path)
    result = run("create", *args)
    _refused(result, codes)
    assert message in result.stderr
    assert _entries(tmp_path) == before


@pytest.mark.parametrize("name", ["dangling", "loop"])
def test_create_never_replaces_a_symlink_named_like_the_scheduler(
    run, tmp_path: Path, name: str
) -> None:
    (tmp_path / "dangling").symlink_to(tmp_path / "gone")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    for force in ([], ["--force"]):
        result = run("create", name, *force)
        _refused(result, (1,))
        assert f"{name} is a symlink" in result.stderr
    assert (tmp_path / name).is_symlink()
    assert _entries(tmp_path) == ["dangling", "loop"]


@pytest.mark.parametrize(
    ("error", "code", "hint"),
    [
        (errno.EACCES, 1, "you may not write there"),
        (errno.EROFS, 1, "read-only"),
        (errno.ENOSPC, 1, "disk is full"),
        (errno.ENAMETOOLONG, 1, "shorter path"),
        (errno.ELOOP, 1, "symlink"),
    ],
    ids=["read-only-parent", "read-only-fs", "disk-full", "name-too-long", "symlink-loop"],
)
def test_create_turns_os_errors_into_errors(
    run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: int, code: int, hint: str
) -> None:
    """As root a read-only directory is writable, so the OS's answer is simulated."""
    real = tempfile.mkdtemp

    def failing(*args: object, **kwargs: object) -> str:
        raise OSError(error, os.strerror(error), str(kwargs.get("dir", "")))

    monkeypatch.setattr(tempfile, "mkdtemp", failing)
    result = run("create", "s")
    monkeypatch.setattr(tempfile, "mkdtemp", real)
    _refused(result, (code,))
    assert os.strerror(error) in result.stderr
    assert f"hint: {hint}" in result.stderr or hint in result.stderr
    assert _entries(tmp_path) == []


def test_create_in_a_read_only_directory(run, tmp_path: Path) -> None:
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        result = run("create", "s", "--dir", "ro")
    finally:
        ro.chmod(0o755)
    if os.geteuid() == 0:  # root may write anyway: then it must simply work
        assert result.exit_code == 0, result.stderr
    else:
        _refused(result, (1,))
        assert "Permission denied" in result.stderr
        assert _entries(ro) == []


def test_create_disk_full_midway_leaves_nothing(
    run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    written = []
    real = Path.write_text

    def full(self: Path, *args: object, **kwargs: object) -> int:
        written.append(self)
        if len(written) == 3:
            raise OSError(errno.ENOSPC, "No space left on device", str(self))
        return real(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "write_text", full)
    result = run("create", "s")
    _refused(result, (1,))
    assert "No space left on device" in result.stderr
    assert _entries(tmp_path) == []


@pytest.mark.parametrize(
    "setup",
    ["git-checkout", "other-files", "regular-file", "symlink-to-workspace", "not-a-spec"],
)
def test_create_force_replaces_only_a_workspace(run, tmp_path: Path, setup: str) -> None:
    ws = tmp_path / "s"
    if setup == "git-checkout":
        (ws / ".git").mkdir(parents=True)
        (ws / "README").write_text("code")
    elif setup == "other-files":
        ws.mkdir()
        (ws / "data.csv").write_text("1,2")
    elif setup == "regular-file":
        ws.write_text("x")
    elif setup == "symlink-to-workspace":
        (tmp_path / "real").mkdir()
        (tmp_path / "real" / "scheduler.yaml").write_text(
            "apiVersion: kschedctl.io/v1alpha1\nkind: Scheduler\n"
        )
        ws.symlink_to(tmp_path / "real")
    else:
        ws.mkdir()
        (ws / "scheduler.yaml").write_text("apiVersion: v1\nkind: ConfigMap\n")
    before = _entries(tmp_path)
    result = run("create", "s", "--force")
    _refused(result, (1,))
    assert "--force replaces only a kschedctl workspace" in result.stderr
    assert _entries(tmp_path) == before


def test_create_force_replaces_a_workspace_and_an_empty_directory(run, tmp_path: Path) -> None:
    assert run("create", "s").exit_code == 0
    assert run("create", "s", "--force", "--replicas", "2").exit_code == 0
    (tmp_path / "empty").mkdir()
    assert run("create", "empty", "--force").exit_code == 0
    assert (tmp_path / "empty" / "scheduler.yaml").is_file()


def test_create_prints_an_image_with_brackets_literally(run, tmp_path: Path) -> None:
    """rich markup in user text: a MarkupError after the files were written, before."""
    result = run("create", "s", "--image", "foo[/bar]")
    assert "Traceback" not in result.stderr
    if result.exit_code == 0:  # the image is accepted here; the spec loader may refuse it
        assert "foo[/bar]" in result.stderr
    else:
        _refused(result, (3,))
        assert _entries(tmp_path) == []


# -- render / validate --------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("args", "codes"),
    [
        # A bare name that long is no DNS name (3); a path that long names nothing (5).
        ([LONG_COMPONENT], (1, 3)),
        ([LONG_PATH], (1, 5)),
        (["./dangling"], (5,)),
        (["./loop"], (1, 5)),
        (["a/b"], (5,)),
        (["[a]"], (3,)),
        (["afile/x.yaml"], (1, 5)),
    ],
    ids=["name-max", "path-max", "dangling-symlink", "symlink-loop", "slash", "list-like",
         "under-a-file"],
)  # fmt: skip
def test_render_refuses_hostile_sources(
    run, tmp_path: Path, args: list[str], codes: tuple[int, ...]
) -> None:
    (tmp_path / "afile").write_text("")
    (tmp_path / "dangling").symlink_to(tmp_path / "gone")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    _refused(run("render", *args, "--as", "pod"), codes)


@pytest.mark.parametrize(
    "path", [LONG_COMPONENT, LONG_PATH, "dangling", "loop", "afile/x.yaml"],
    ids=["name-max", "path-max", "dangling-symlink", "symlink-loop", "under-a-file"],
)  # fmt: skip
def test_validate_refuses_hostile_paths(run, tmp_path: Path, path: str) -> None:
    (tmp_path / "afile").write_text("")
    (tmp_path / "dangling").symlink_to(tmp_path / "gone")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    result = run("validate", path)
    assert result.exit_code in (1, 3, 5), result.stderr
    assert "error: " in result.stderr
    assert "Traceback" not in result.stderr


# -- deploy (client dry run: offline) ------------------------------------------------------------
@pytest.mark.parametrize("form", ["--as-service", "--as-static-pod"])
@pytest.mark.parametrize("config_dir", ["/../../../../tmp/x", "/etc/../../../escape"])
def test_deploy_refuses_a_config_dir_outside_root(
    run, tmp_path: Path, form: str, config_dir: str
) -> None:
    (tmp_path / "spec.yaml").write_text(SPEC.format(config_dir=config_dir))
    result = run("deploy", "spec.yaml", form, "--dry-run", "client", "--root", "root")
    _refused(result, (3,))
    assert "spec.service.configDir" in result.stderr
    assert not (tmp_path / "root").exists()


def test_deploy_refuses_a_symlink_out_of_root_naming_the_real_path(run, tmp_path: Path) -> None:
    (tmp_path / "root" / "etc").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    (tmp_path / "root" / "etc" / "systemd").symlink_to(tmp_path / "outside")
    result = run("deploy", "s", "--as-service", "--dry-run", "client", "--root", "root")
    _refused(result, (3,))
    assert f"resolves to '{tmp_path}/outside/system/s.service'" in result.stderr
    assert _entries(tmp_path / "outside") == []


def test_deploy_refuses_a_manifests_dir_that_is_a_file(run, tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("")
    result = run(
        "deploy", "s", "--as-static-pod", "--dry-run", "client", "--root", "root",
        "--manifests-dir", "afile",
    )  # fmt: skip
    _refused(result, (2,))
    assert "--manifests-dir 'afile' is not a directory" in result.stderr


@pytest.mark.parametrize("src", [LONG_COMPONENT, LONG_PATH, "./dangling", "[a]"])
def test_deploy_refuses_hostile_sources(run, tmp_path: Path, src: str) -> None:
    (tmp_path / "dangling").symlink_to(tmp_path / "gone")
    result = run("deploy", src, "--as-pod", "--dry-run", "client")
    _refused(result, (1, 3, 5))


# -- rich markup ---------------------------------------------------------------------------------
@pytest.mark.parametrize("text", ["foo[/bar]", "[bold]x", "a\\[b]", "[red]oops[/red]", "end\\"])
def test_messages_are_never_read_as_markup(capsys: pytest.CaptureFixture[str], text: str) -> None:
    output.info(f"image {text}")
    output.warn(f"image {text}")
    output.print_table(["col"], [[text]])
    out, err = capsys.readouterr()
    assert f"image {text}\nwarning: image {text}\n" == err
    assert out == f"COL\n{text}\n"
