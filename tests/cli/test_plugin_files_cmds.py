"""``spec.builtin.plugins`` through the CLI: create --plugin, and validate and render refusing
(exit 3) the same plugin files, with the same messages."""

from __future__ import annotations

from pathlib import Path

import yaml

from kschedctl.spec import load_spec

FILTER = "def filter(pod, node, ctx):\n    return None\n"


def _workspace(root: Path, plugins: list[str], files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    spec = {
        "apiVersion": "kschedctl.io/v1alpha1",
        "kind": "Scheduler",
        "metadata": {"name": "racks"},
        "spec": {"program": "builtin", "builtin": {"plugins": plugins}},
    }
    (root / "scheduler.yaml").write_text(yaml.safe_dump(spec))
    return root


def test_create_copies_the_plugins_into_the_workspace(run, tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "rack.py").write_text(FILTER)
    (tmp_path / "src" / "score.py").write_text("def score(pod, node, ctx):\n    return 1.0\n")
    result = run("create", "racks", "--program", "builtin",
                 "--plugin", "src/rack.py", "--plugin", "src/score.py")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert "racks/plugins/rack.py" in result.stdout
    assert (tmp_path / "racks/plugins/rack.py").read_text() == FILTER
    spec = load_spec(tmp_path / "racks/scheduler.yaml")
    assert spec.builtin.plugins == ["plugins/rack.py", "plugins/score.py"]
    deployment = (tmp_path / "racks/deployment.yaml").read_text()
    assert "--plugin=/etc/kschedctl/plugins/rack.py" in deployment
    # The workspace renders what create wrote.
    again = run("render", "racks", "--as", "deployment")
    assert again.exit_code == 0 and again.stdout == deployment


def test_create_refuses_plugins_for_another_program(run, tmp_path: Path) -> None:
    (tmp_path / "rack.py").write_text(FILTER)
    result = run("create", "racks", "--plugin", "rack.py")
    assert result.exit_code == 2
    assert "--plugin needs --program builtin" in result.stderr
    assert not (tmp_path / "racks").exists()


def test_create_refuses_a_plugin_file_name_that_is_no_module(run, tmp_path: Path) -> None:
    (tmp_path / "rack-match.py").write_text(FILTER)
    result = run("create", "racks", "--program", "builtin", "--plugin", "rack-match.py")
    assert result.exit_code == 3
    assert "spec.builtin.plugins[0]: 'plugins/rack-match.py': the file name must be a Python" in (
        result.stderr
    )
    assert not (tmp_path / "racks").exists()
    missing = run("create", "racks", "--program", "builtin", "--plugin", "nope.py")
    assert missing.exit_code == 5


def test_validate_and_render_refuse_the_same_plugin_problems(run, tmp_path: Path) -> None:
    _workspace(tmp_path / "ws", ["../escape.py", "missing.py"], {})
    validated = run("validate", "ws")
    assert validated.exit_code == 3
    lines = [line for line in validated.stdout.splitlines() if "spec.builtin.plugins" in line]
    assert lines == [
        "ws/scheduler.yaml: spec.builtin.plugins[0]: '../escape.py' must be a clean path inside "
        "the workspace: no '..' or '.' components and no '//'",
        "ws/scheduler.yaml: spec.builtin.plugins[1]: missing.py: no such file in ws",
    ]
    rendered = run("render", "ws", "--as", "pod")
    assert rendered.exit_code == 3
    assert rendered.stdout == ""
    for line in lines:
        assert line.split(": ", 1)[1] in rendered.stderr


def test_validate_and_render_refuse_a_configmap_past_one_mebibyte(run, tmp_path: Path) -> None:
    big = "#" * (600 * 1024) + "\n"
    _workspace(tmp_path / "ws", ["a.py", "b.py"], {"a.py": big, "b.py": big})
    validated = run("validate", "ws")
    assert validated.exit_code == 3
    said = (
        "spec.builtin.plugins: the ConfigMap racks-config would hold 1,228,980 bytes "
        "(policy.yaml 178 bytes, a.py 614,401 bytes, b.py 614,401 bytes): Kubernetes refuses "
        "a ConfigMap over 1,048,576 bytes (1 MiB); make the plugins smaller or fewer"
    )
    assert f"ws/scheduler.yaml: {said}" in validated.stdout
    for form in ("deployment", "service"):
        rendered = run("render", "ws", "--as", form)
        assert rendered.exit_code == 3 and rendered.stdout == ""
        assert said in rendered.stderr


def test_validate_accepts_a_workspace_with_plugins(run, tmp_path: Path) -> None:
    _workspace(tmp_path / "ws", ["plugins/rack.py"], {"plugins/rack.py": FILTER})
    result = run("validate", "ws")
    assert result.exit_code == 0, result.stdout + result.stderr
