"""write_workspace: atomic placement, nothing left behind when writing fails, and --force
replaces only a kschedctl workspace (or an empty directory)."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from kschedctl.base.errors import KschedError, NotFoundError, UsageError
from kschedctl.render.workspace import SPEC_READ_LIMIT, write_workspace

SPEC = "apiVersion: kschedctl.io/v1alpha1\nkind: Scheduler\nmetadata:\n  name: ws\n"


def _workspace(path: Path, spec: str = SPEC) -> None:
    path.mkdir()
    (path / "scheduler.yaml").write_text(spec)
    (path / "notes.txt").write_text("mine")


def test_writes_into_place(tmp_path: Path) -> None:
    paths = write_workspace(tmp_path / "ws", {"a.yaml": "a\n", "b.yaml": "b\n"})
    assert [p.read_text() for p in paths] == ["a\n", "b\n"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ws"]
    assert (tmp_path / "ws").stat().st_mode & 0o777 == 0o755


def test_failure_while_writing_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = Path.write_text
    calls = []

    def failing(self: Path, *args: object, **kwargs: object) -> int:
        calls.append(self)
        if len(calls) == 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        return original(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "write_text", failing)
    with pytest.raises(KschedError, match="No space left") as caught:
        write_workspace(tmp_path / "ws", {"a": "1", "b": "2", "c": "3"})
    assert caught.value.exit_code == 1
    assert caught.value.hint == "the disk is full: free some space and try again"
    assert list(tmp_path.iterdir()) == []


def test_failed_force_keeps_the_old_workspace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _workspace(tmp_path / "ws")
    original = Path.rename

    def failing(self: Path, target: Path) -> Path:
        if self.name.startswith(".ws.new-"):
            raise OSError("rename failed")
        return original(self, target)

    monkeypatch.setattr(Path, "rename", failing)
    with pytest.raises(KschedError, match="rename failed"):
        write_workspace(tmp_path / "ws", {"new": "2"}, force=True)
    assert [p.name for p in tmp_path.iterdir()] == ["ws"]
    assert sorted(p.name for p in (tmp_path / "ws").iterdir()) == ["notes.txt", "scheduler.yaml"]


def test_refusals(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError):
        write_workspace(tmp_path / "missing" / "ws", {"a": "1"})
    (tmp_path / "file").write_text("")
    with pytest.raises(UsageError, match="is not a directory"):
        write_workspace(tmp_path / "file" / "ws", {"a": "1"})
    (tmp_path / "ws").mkdir()
    with pytest.raises(KschedError, match="already exists"):
        write_workspace(tmp_path / "ws", {"a": "1"})


@pytest.mark.parametrize(
    "spec",
    [
        SPEC,
        SPEC.replace("kschedctl.io/v1alpha1", '"kschedctl.io/v1alpha1"'),
        "# a comment\n" + SPEC,
    ],
    ids=["as-written", "quoted", "commented"],
)
def test_force_replaces_a_workspace(tmp_path: Path, spec: str) -> None:
    _workspace(tmp_path / "ws", spec)
    write_workspace(tmp_path / "ws", {"new": "2"}, force=True)
    assert [p.name for p in (tmp_path / "ws").iterdir()] == ["new"]
    assert [p.name for p in tmp_path.iterdir()] == ["ws"]


def test_force_replaces_an_empty_directory(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    write_workspace(tmp_path / "ws", {"new": "2"}, force=True)
    assert [p.name for p in (tmp_path / "ws").iterdir()] == ["new"]


def _git_checkout(ws: Path) -> None:
    (ws / ".git").mkdir(parents=True)
    (ws / "scheduler.yaml").write_text(SPEC)  # even with a spec: a repository is not replaced


def _other_files(ws: Path) -> None:
    ws.mkdir()
    (ws / "thesis.tex").write_text("years of work")


def _regular_file(ws: Path) -> None:
    ws.write_text("x")


def _symlink(ws: Path) -> None:
    (ws.parent / "real").mkdir()
    (ws.parent / "real" / "scheduler.yaml").write_text(SPEC)
    ws.symlink_to(ws.parent / "real")


def _dangling_symlink(ws: Path) -> None:
    ws.symlink_to(ws.parent / "nowhere")


def _spec_of(text: str | bytes) -> object:
    def make(ws: Path) -> None:
        ws.mkdir()
        path = ws / "scheduler.yaml"
        path.write_bytes(text if isinstance(text, bytes) else text.encode())

    return make


def _spec_fifo(ws: Path) -> None:
    ws.mkdir()
    os.mkfifo(ws / "scheduler.yaml")


def _spec_symlink(ws: Path) -> None:
    ws.mkdir()
    (ws.parent / "elsewhere.yaml").write_text(SPEC)
    (ws / "scheduler.yaml").symlink_to(ws.parent / "elsewhere.yaml")


def _spec_directory(ws: Path) -> None:
    (ws / "scheduler.yaml").mkdir(parents=True)


ALIAS_BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
    for p, c in zip("abcdefgh", "bcdefghi", strict=True)
)

NOT_REPLACED = {
    "git-checkout": (_git_checkout, "holds a .git directory"),
    "other-files": (_other_files, "no scheduler.yaml (it holds thesis.tex)"),
    "regular-file": (_regular_file, "exists and is not a directory"),
    "symlink": (_symlink, "is a symlink"),
    "dangling-symlink": (_dangling_symlink, "is a symlink"),
    "a-kubernetes-manifest": (_spec_of("apiVersion: v1\nkind: Pod\n"), "is not a kschedctl spec"),
    "a-config": (
        _spec_of("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"),
        "is not a kschedctl spec",
    ),
    "kind-only-nested": (
        _spec_of("x:\n  apiVersion: kschedctl.io/v1alpha1\n  kind: Scheduler\n"),
        "is not a kschedctl spec",
    ),
    "binary": (_spec_of(b"\xff\xfe\x00"), "is not UTF-8 text"),
    "too-large": (_spec_of(SPEC + "#" * SPEC_READ_LIMIT), "is larger than 64 KiB"),
    "alias-bomb": (_spec_of(ALIAS_BOMB), "is not a kschedctl spec"),
    "fifo": (_spec_fifo, "is not a regular file"),
    "spec-symlink": (_spec_symlink, "cannot be read"),
    "spec-directory": (_spec_directory, "is not a regular file"),
}


@pytest.mark.parametrize("case", NOT_REPLACED, ids=list(NOT_REPLACED))
def test_force_refuses_anything_but_a_workspace_and_touches_nothing(
    tmp_path: Path, case: str
) -> None:
    make, found = NOT_REPLACED[case]
    ws = tmp_path / "ws"
    make(ws)  # type: ignore[operator]
    before = sorted((str(p), p.is_symlink()) for p in tmp_path.rglob("*"))
    with pytest.raises(KschedError) as caught:
        write_workspace(ws, {"new": "2"}, force=True)
    assert caught.value.exit_code == 1
    assert found in caught.value.message
    assert "--force replaces only a kschedctl workspace" in (caught.value.hint or "")
    assert sorted((str(p), p.is_symlink()) for p in tmp_path.rglob("*")) == before


@pytest.mark.parametrize(
    ("error", "code", "hint"),
    [
        (errno.EACCES, 1, "you may not write there"),
        (errno.EROFS, 1, "read-only"),
        (errno.ENAMETOOLONG, 1, "shorter path"),
        (errno.ELOOP, 1, "symlink"),
        (errno.ENOENT, 5, None),
    ],
    ids=["EACCES", "EROFS", "ENAMETOOLONG", "ELOOP", "ENOENT"],
)
def test_os_errors_become_kschedctl_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: int, code: int, hint: str | None
) -> None:
    def failing(*args: object, **kwargs: object) -> str:
        raise OSError(error, os.strerror(error), str(tmp_path))

    monkeypatch.setattr("tempfile.mkdtemp", failing)
    with pytest.raises(KschedError) as caught:
        write_workspace(tmp_path / "ws", {"a": "1"})
    assert caught.value.exit_code == code
    assert os.strerror(error) in caught.value.message
    assert hint is None or hint in (caught.value.hint or "")
    assert list(tmp_path.iterdir()) == []
