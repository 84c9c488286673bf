"""write_workspace: atomic placement, and nothing left behind when writing fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from kschedctl.errors import KschedError, NotFoundError
from kschedctl.render.workspace import write_workspace


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
            raise OSError(28, "No space left on device")
        return original(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "write_text", failing)
    with pytest.raises(OSError, match="No space left"):
        write_workspace(tmp_path / "ws", {"a": "1", "b": "2", "c": "3"})
    assert list(tmp_path.iterdir()) == []


def test_failed_force_keeps_the_old_workspace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_workspace(tmp_path / "ws", {"old": "1"})
    original = Path.rename

    def failing(self: Path, target: Path) -> Path:
        if self.name.startswith(".ws.new-"):
            raise OSError("rename failed")
        return original(self, target)

    monkeypatch.setattr(Path, "rename", failing)
    with pytest.raises(OSError, match="rename failed"):
        write_workspace(tmp_path / "ws", {"new": "2"}, force=True)
    assert [p.name for p in tmp_path.iterdir()] == ["ws"]
    assert [p.name for p in (tmp_path / "ws").iterdir()] == ["old"]


def test_refusals(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError):
        write_workspace(tmp_path / "missing" / "ws", {"a": "1"})
    (tmp_path / "ws").mkdir()
    with pytest.raises(KschedError, match="already exists"):
        write_workspace(tmp_path / "ws", {"a": "1"})
