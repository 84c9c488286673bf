"""Hostile files at every input boundary: an error and an exit code, never a traceback or a hang.

Every command that reads a user's file — ``validate``, ``render`` (a spec, ``--add-to`` a
config), ``scheduler run --policy``, ``lab up --nodes-file`` — is run in-process over a corpus
of hostile files written here: wrong shapes everywhere, YAML bombs, binary junk, huge and
special files, keys and file names that try to forge output lines. Each run must exit with a
documented code (3 invalid, 5 not found; 0 when the file happens to be valid), print
``error:`` first on stderr, keep every ``validate`` line a real ``FILE: path: message`` line,
and never show a traceback or a terminal escape sequence.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click
import pytest
import typer.main
import yaml
from click.testing import CliRunner, Result

from kschedctl.base.userfile import MAX_FILE_BYTES
from kschedctl.cli import app

ROOT = Path(__file__).resolve().parents[2]

SPEC: dict[str, Any] = {
    "apiVersion": "kschedctl.io/v1alpha1",
    "kind": "Scheduler",
    "metadata": {"name": "demo"},
    "spec": {
        "kubernetesVersion": "1.36",
        "namespace": "kube-system",
        "image": "registry.k8s.io/kube-scheduler:v1.36.3",
        "program": "kube-scheduler",
        "replicas": 1,
        "leaderElection": {
            "leaderElect": True,
            "resourceName": "demo",
            "resourceNamespace": "kube-system",
            "leaseDuration": "15s",
            "renewDeadline": "10s",
            "retryPeriod": "2s",
        },
        "profiles": [
            {
                "schedulerName": "demo",
                "plugins": {"score": {"enabled": [{"name": "NodeResourcesFit", "weight": 1}]}},
                "pluginConfig": [
                    {
                        "name": "NodeResourcesFit",
                        "args": {
                            "scoringStrategy": {
                                "type": "LeastAllocated",
                                "resources": [{"name": "cpu", "weight": 1}],
                            }
                        },
                    },
                    {
                        "name": "PodTopologySpread",
                        "args": {
                            "defaultingType": "List",
                            "defaultConstraints": [
                                {
                                    "maxSkew": 1,
                                    "topologyKey": "zone",
                                    "whenUnsatisfiable": "ScheduleAnyway",
                                }
                            ],
                        },
                    },
                ],
            }
        ],
        "clientConnection": {"qps": 50, "burst": 100},
        "parallelism": 16,
        "percentageOfNodesToScore": 50,
        "extenders": [
            {
                "urlPrefix": "http://127.0.0.1:8888/",
                "filterVerb": "filter",
                "weight": 1,
                "managedResources": [{"name": "example.com/foo", "ignoredByScheduler": True}],
            }
        ],
        "extraArgs": ["--feature-gates=A=true"],
        "service": {
            "binary": "/usr/local/bin/kube-scheduler",
            "configDir": "/etc/kubernetes/config",
            "kubeconfig": "/etc/kubernetes/scheduler.conf",
            "bindAddress": "127.0.0.1",
            "securePort": 10260,
            "verbosity": 2,
            "user": "system:kube-scheduler",
        },
        "pod": {
            "resources": {"requests": {"cpu": "100m"}},
            "nodeSelector": {"disk": "ssd"},
            "tolerations": [{"key": "k", "operator": "Exists"}],
            "priorityClassName": "system-cluster-critical",
            "verbosity": 2,
        },
    },
}

BUILTIN = copy.deepcopy(SPEC)
BUILTIN["spec"].update(
    program="builtin",
    builtin={
        "strategy": "spread",
        "metricsPort": 10259,
        "policy": {
            "strictPreferences": True,
            "fallbacks": [
                {"name": "ssd", "nodeSelector": {"disk": "ssd"}, "tolerate": [{"key": "k"}]},
                {"name": "any", "relax": ["podAffinity"]},
            ],
        },
    },
)
for key in ("profiles", "extenders", "extraArgs", "parallelism", "percentageOfNodesToScore"):
    BUILTIN["spec"].pop(key)
BUILTIN["spec"]["profiles"] = [{"schedulerName": "demo"}]
BUILTIN["spec"]["image"] = ""

CONFIG: dict[str, Any] = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "leaderElection": {"leaderElect": True, "resourceName": "demo"},
    "profiles": SPEC["spec"]["profiles"],
    "extenders": SPEC["spec"]["extenders"],
}

POLICY: dict[str, Any] = {
    "apiVersion": "kschedctl.io/v1alpha1",
    "kind": "FallbackPolicy",
    **BUILTIN["spec"]["builtin"]["policy"],
}

NODES: dict[str, Any] = {
    "nodes": [
        {
            "name": "gpu",
            "count": 2,
            "labels": {"accelerator": "gpu"},
            "taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}],
            "capacity": {"cpu": "16", "memory": "64Gi"},
            "unschedulable": False,
        }
    ]
}

# Values that do not belong where they are put: each replaces every field in turn.
HOSTILE_VALUES: list[Any] = [
    None,
    [],
    ["a", ["b"]],
    {},
    {"a": {"b": [None]}},
    True,
    1.5,
    float("inf"),
    -1,
    2**63 - 1,
    "",
    "x" * 5000,
    "a\nfake.yaml: spec.image: forged line",
    "\x1b[31mred\x1b[0m",
    "[bold]markup[/bold]",
]

# A 442-byte billion laughs: 10**9 strings from nine levels of nine aliases.
ALIAS_BOMB = (
    'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    + "".join(
        f"{c}: &{c} [{','.join(['*' + p] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True)
    )
    + "# " + "-" * 97 + "\n"
)  # fmt: skip

# Raw YAML (or not YAML at all) that breaks a loader rather than a field.
RAW: dict[str, str | bytes] = {
    "empty": "",
    "comment-only": "# nothing\n",
    "empty-documents": "---\n---\n",
    "scalar": "42\n",
    "string": "hello\n",
    "null": "null\n",
    "list": "- a\n- b\n",
    "two-documents": "a: 1\n---\nb: 2\n",
    "alias-bomb": ALIAS_BOMB,
    "recursive-alias": "&a [*a]\n",
    "recursive-map": "&a {spec: *a}\n",
    "merge-bomb": "a: &a {x: 1}\n" + "".join(f"k{i}: &k{i} {{<<: [*a]}}\n" for i in range(5)),
    "unhashable-key-block": "? [a]\n: b\n",
    "unhashable-key-flow": "{[1]: 2}\n",
    "mapping-key": "? {a: 1}\n: b\n",
    "int-key": "1: 2\n",
    "null-key": "? \n: 2\n",
    "bool-key": "on: 1\n",
    "5000-digits": "apiVersion: kschedctl.io/v1alpha1\nkind: Scheduler\nmetadata: {name: x}\n"
    "spec: {replicas: " + "9" * 5000 + "}\n",
    "int64-overflow": "spec: {replicas: 9223372036854775808}\n",
    "hex-underscore": "spec: {replicas: 0x_}\n",
    "bad-timestamp": "spec: {image: !!timestamp 2001-13-45}\n",
    "deep-flow": "[" * 100_000 + "]" * 100_000,
    "deep-block": "".join("  " * i + "a:\n" for i in range(2000)),
    "python-object": "!!python/object/apply:os.system ['touch pwned']\n",
    "python-name": "!!python/name:os.system\n",
    "set": "!!set {a, b}\n",
    "binary": "!!binary aGVsbG8=\n",
    "omap": "!!omap [a: 1]\n",
    "duplicate-key": "kind: Scheduler\nkind: Scheduler\n",
    "malformed": "a: [b\n",
    "tab-indent": "a:\n\tb: 1\n",
    "nul-byte": "a: \x00\n",
    "escape-key": "\x1b]0;title\x07: 1\n",
    "forged-line-key": 'spec: {"x\\nFAKE.yaml: spec.image: forged": 1}\n',
    "csi-key": 'spec: {"\\e[2J\\e[H": 1}\n',
    "u2028-key": 'spec: {"a\\u2028b\\u0085c\\rd": 1}\n',
    "bidi-key": 'spec: {"\\u202eevil": 1}\n',
    "long-key": "spec: {" + "k" * 100_000 + ": 1}\n",
    "long-value": "apiVersion: kschedctl.io/v1alpha1\nkind: " + "v" * 500_000 + "\n",
    "many-problems": "spec:\n" + "".join(f"  unknown{i}: {i}\n" for i in range(2000)),
    "not-utf8": b"kind: \xff\xfe Scheduler\n",
    "utf16": "kind: Scheduler\n".encode("utf-16"),
    "latin1": "name: caf\xe9\n".encode("latin-1"),
    "binary-junk": bytes(range(256)) * 8,
    "random-junk": bytes((i * 7919 + 13) % 256 for i in range(5000)),
    "bom-then-junk": b"\xef\xbb\xbf\x00\x01\x02",
}


def _spec_doc(base: dict[str, Any], every: bool) -> Iterator[tuple[str, dict[str, Any]]]:
    """``base`` with each of its fields (at every depth) replaced by each hostile value
    (``every``) or by three of them, taken in turn so that each value meets many fields."""
    for number, path in enumerate(_paths(base)):
        if every:
            chosen = list(enumerate(HOSTILE_VALUES))
        else:
            chosen = [
                (i % len(HOSTILE_VALUES), HOSTILE_VALUES[i % len(HOSTILE_VALUES)])
                for i in range(3 * number, 3 * number + 3)
            ]
        for index, value in chosen:
            doc = copy.deepcopy(base)
            _set(doc, path, value)
            yield f"{'.'.join(map(str, path))}={index}", doc


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if prefix:
        yield prefix
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _paths(value, (*prefix, i))


def _set(doc: Any, path: tuple[Any, ...], value: Any) -> None:
    for step in path[:-1]:
        doc = doc[step]
    doc[path[-1]] = value


def _yaml(doc: Any) -> str:
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=10_000)


@pytest.fixture(scope="module")
def command() -> click.Command:
    return typer.main.get_command(app)  # built once: typer's per-call build is most of a run


@pytest.fixture
def cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: click.Command
) -> Callable[..., Result]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "no-kubeconfig"))
    runner = CliRunner()

    def invoke(*args: str) -> Result:
        return runner.invoke(command, list(args), prog_name="kschedctl")

    return invoke


def _commands(file: Path, tmp: Path) -> dict[str, list[str]]:
    return {
        "validate": ["validate", str(file)],
        "validate-json": ["validate", "-o", "json", str(file)],
        "render": ["render", str(file), "--as", "config"],
        "render-service": ["render", str(file), "--as", "service"],
        "render-add-to": ["render", "demo", "--as", "config", "--add-to", str(file)],
        "policy": ["scheduler", "run", "--name", "demo", "--policy", str(file)],
        "nodes": [
            "lab", "up", "--nodes-file", str(file),
            "--dir", str(tmp / "lab"), "--bin-dir", str(tmp / "no-binaries"),
        ],
    }  # fmt: skip


def assert_clean(result: Result, command: str, file: Path, allowed: set[int]) -> None:
    """No traceback, a documented exit code, ``error:`` first, no forged or escaped output."""
    where = f"{command} on {file.name!r}: exit {result.exit_code}\n{result.stderr[:2000]}"
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"{where}: raised {result.exception!r}") from result.exception
    assert result.exit_code in allowed, where
    out, err = result.stdout, result.stderr
    # What render writes when it succeeds is the rendered files: their escaping is the spec
    # field shapes' and the templates' business (tests/unit: the property test). Here: what
    # the commands say about the input.
    said = (err,) if command.startswith("render") and result.exit_code == 0 else (out, err)
    for text in said:
        assert "Traceback" not in text, where
        assert "\x1b" not in text and "\r" not in text and "\x07" not in text, where
        assert "\u2028" not in text and "\x85" not in text and "\u202e" not in text, where
    assert len(out) + len(err) < 1_000_000, f"{where}: {len(out) + len(err)} characters"
    if result.exit_code:
        assert err.startswith("error:"), where
    if command == "validate":
        for line in out.splitlines():
            assert line.startswith(f"{file}: "), f"{where}: forged line {line!r}"
    if command == "validate-json":
        reports = json.loads(out)
        assert [r["file"] for r in reports] == [str(file)], where


def _run_all(
    cli: Callable[..., Result], file: Path, tmp: Path, allowed: set[int], only: tuple[str, ...] = ()
) -> None:
    for command, args in _commands(file, tmp).items():
        if only and command not in only:
            continue
        assert_clean(cli(*args), command, file, allowed)


@pytest.mark.parametrize("name", list(RAW))
def test_raw_hostile_files_are_refused_cleanly(
    cli: Callable[..., Result], tmp_path: Path, name: str
) -> None:
    file = tmp_path / f"{name}.yaml"
    content = RAW[name]
    file.write_bytes(content if isinstance(content, bytes) else content.encode())
    started = time.monotonic()
    _run_all(cli, file, tmp_path, {3, 5})
    assert time.monotonic() - started < 20, "hostile input must be refused quickly"
    assert not (tmp_path / "pwned").exists()


BASES: dict[str, tuple[dict[str, Any], tuple[str, ...]]] = {
    "spec": (SPEC, ("validate", "render", "render-service")),
    "builtin": (BUILTIN, ("validate", "render", "render-service")),
    "config": (CONFIG, ("validate", "render-add-to")),
    "policy": (POLICY, ("policy",)),
    "nodes": (NODES, ("nodes",)),
}


def _sweep(cli: Callable[..., Result], tmp_path: Path, base: str, every: bool) -> int:
    doc_base, only = BASES[base]
    file = tmp_path / "hostile.yaml"
    runs = 0
    for case, doc in _spec_doc(doc_base, every):
        file.write_text(_yaml(doc))
        for command, args in _commands(file, tmp_path).items():
            if command not in only:
                continue
            result = cli(*args)
            runs += 1
            # A valid policy or nodes file goes on to need a cluster or binaries: exit 1/4/5.
            allowed = {0, 3, 5} if command not in ("policy", "nodes") else {1, 3, 4, 5}
            try:
                assert_clean(result, command, file, allowed)
            except AssertionError as err:
                raise AssertionError(f"case {base}:{case}: {err}") from err
    return runs


@pytest.mark.parametrize("base", list(BASES))
def test_wrong_shapes_in_every_field_never_crash(
    cli: Callable[..., Result], tmp_path: Path, base: str
) -> None:
    """Every field of every base document, three hostile values each (in turn)."""
    assert _sweep(cli, tmp_path, base, every=False) > 30


@pytest.mark.slow
@pytest.mark.parametrize("base", list(BASES))
def test_every_hostile_value_in_every_field_never_crashes(
    cli: Callable[..., Result], tmp_path: Path, base: str
) -> None:
    """The full product: each hostile value in each field (about 3,000 documents)."""
    assert _sweep(cli, tmp_path, base, every=True) > 100


def test_valid_bases_are_valid(cli: Callable[..., Result], tmp_path: Path) -> None:
    """The corpus starts from documents that pass, so each failure is the hostile value's."""
    for doc, args in (
        (SPEC, ["validate"]),
        (BUILTIN, ["validate"]),
        (CONFIG, ["validate"]),
    ):
        file = tmp_path / "base.yaml"
        file.write_text(_yaml(doc))
        result = cli(*args, str(file))
        assert result.exit_code == 0, result.stdout + result.stderr


def test_alias_bomb_is_refused_at_once(cli: Callable[..., Result], tmp_path: Path) -> None:
    assert len(ALIAS_BOMB) == 442
    file = tmp_path / "bomb.yaml"
    file.write_text(ALIAS_BOMB)
    started = time.monotonic()
    result = cli("validate", str(file))
    assert time.monotonic() - started < 2
    assert result.exit_code == 3
    assert "aliases expand to more than 100,000 nodes" in result.stdout
    assert len(result.stdout) < 1000


def test_a_huge_spec_is_refused_by_its_size(cli: Callable[..., Result], tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    with big.open("w") as f:  # 56 MB of a real spec: the took 131 s and 3.9 GB
        f.write(_yaml(SPEC))
        line = "# " + "x" * 1021 + "\n"
        for _ in range(56 * 1024):
            f.write(line)
    sparse = tmp_path / "sparse.yaml"
    with sparse.open("wb") as f:
        f.truncate(56 * 1024 * 1024)
    just_over = tmp_path / "over.yaml"
    just_over.write_text(_yaml(SPEC) + "#" * MAX_FILE_BYTES)
    for file in (big, sparse, just_over):
        started = time.monotonic()
        for args in (["validate", str(file)], ["render", str(file), "--as", "config"]):
            result = cli(*args)
            assert result.exit_code == 3, result.stderr
            assert "too large" in result.stdout + result.stderr
            assert "limit is 1,048,576" in result.stdout + result.stderr
        assert time.monotonic() - started < 2


def test_a_directory_without_a_spec(cli: Callable[..., Result], tmp_path: Path) -> None:
    (tmp_path / "dir.yaml").mkdir()
    result = cli("validate", str(tmp_path / "dir.yaml"))
    assert result.exit_code == 5  # as render's below: a missing file
    assert result.stdout == f"{tmp_path / 'dir.yaml' / 'scheduler.yaml'}: no such file\n"
    result = cli("render", str(tmp_path / "dir.yaml"), "--as", "config")
    assert result.exit_code == 5 and "no scheduler.yaml in this directory" in result.stderr
    for args in (
        ["scheduler", "run", "--name", "x", "--policy", str(tmp_path)],
        ["render", "x", "--as", "config", "--add-to", str(tmp_path)],
        ["lab", "up", "--nodes-file", str(tmp_path), "--dir", str(tmp_path / "lab")],
    ):
        result = cli(*args)
        assert result.exit_code == 3, result.stderr
        assert "is a directory, not a regular file" in result.stderr


def test_missing_files_are_not_found(cli: Callable[..., Result], tmp_path: Path) -> None:
    missing = tmp_path / "missing.yaml"
    (tmp_path / "dangling.yaml").symlink_to(missing)
    for name in ("missing.yaml", "dangling.yaml"):
        for args in (
            ["render", str(tmp_path / name), "--as", "config"],
            ["render", "x", "--as", "config", "--add-to", str(tmp_path / name)],
            ["lab", "up", "--nodes-file", str(tmp_path / name), "--dir", str(tmp_path / "lab")],
        ):
            result = cli(*args)
            assert result.exit_code == 5, (args, result.stderr)
            assert result.stderr.startswith("error:")
    result = cli("render", "x", "--add-to", str(tmp_path / "dangling.yaml"), "--as", "config")
    assert "a symbolic link to a missing file" in result.stderr


def test_a_path_longer_than_path_max(cli: Callable[..., Result], tmp_path: Path) -> None:
    long = f"{tmp_path}/" + ("a" * 300 + "/") * 20 + "x.yaml"
    for args in (
        ["validate", long],
        ["render", long, "--as", "config"],
        ["render", "x", "--as", "config", "--add-to", long],
        ["scheduler", "run", "--name", "x", "--policy", long],
    ):
        result = cli(*args)
        assert result.exit_code in (3, 5), (args, result.stderr)
        assert result.stderr.startswith("error:")


def test_unreadable_file(cli: Callable[..., Result], tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads every file")
    file = tmp_path / "secret.yaml"
    file.write_text(_yaml(SPEC))
    file.chmod(0)
    result = cli("render", str(file), "--as", "config")
    assert result.exit_code == 3
    assert "cannot read: Permission denied" in result.stderr


@pytest.mark.parametrize(
    "name",
    ["evil\nFAKE.yaml: spec.image: forged.yaml", "\x1b[31mred\x1b[0m.yaml", "tab\there.yaml"],
    ids=["newline", "escape", "tab"],
)
def test_file_names_cannot_forge_lines(
    cli: Callable[..., Result], tmp_path: Path, name: str
) -> None:
    file = tmp_path / name
    file.write_text("kind: Scheduler\nspec: []\n")
    result = cli("validate", str(file))
    assert result.exit_code == 3
    lines = result.stdout.splitlines()
    assert lines and all(line.startswith(repr(str(tmp_path))[1:-1]) for line in lines), lines
    assert "\x1b" not in result.stdout + result.stderr
    result = cli("render", str(file), "--as", "config")
    assert result.exit_code == 3
    assert "\x1b" not in result.stderr, result.stderr
    assert not any(line.startswith("FAKE") for line in result.stderr.splitlines())


def test_a_note_about_a_file_name_is_plain_text(cli: Callable[..., Result], tmp_path: Path) -> None:
    file = tmp_path / "[bold red]x\x1b[2J.yaml"
    file.write_text("kind: Service\n")  # a manifest with nothing of ours: validate notes it
    result = cli("validate", str(file))
    assert result.exit_code == 0
    assert result.stderr.startswith(f"note: {tmp_path}/[bold red]x^[[2J.yaml: no scheduler")


def test_keys_with_newlines_stay_on_their_line(cli: Callable[..., Result], tmp_path: Path) -> None:
    doc = copy.deepcopy(CONFIG)
    doc["profiles"][0]["pluginConfig"][0]["args"]["x\nFAKE.yaml: profiles: forged"] = 1
    file = tmp_path / "config.yaml"
    file.write_text(_yaml(doc))
    result = cli("validate", str(file))
    assert result.exit_code == 3
    # One line, the key escaped (the spec-wide walk refuses the line break before any rule).
    assert result.stdout.count("\n") == 1, result.stdout
    assert result.stdout.startswith(f"{file}: profiles[0].pluginConfig[0].args")
    assert "x\\nFAKE.yaml" in result.stdout


def test_messages_quote_user_values_bounded(cli: Callable[..., Result], tmp_path: Path) -> None:
    doc = copy.deepcopy(CONFIG)
    doc["kind"] = ["x" * 100] * 10_000
    file = tmp_path / "config.yaml"
    file.write_text(_yaml(doc))
    result = cli("validate", str(file))
    assert result.exit_code == 3
    assert len(result.stdout) < 2000, result.stdout


def _subprocess(args: list[str], timeout: float = 30) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "KUBECONFIG": "/nonexistent"}
    return subprocess.run(
        [sys.executable, "-m", "kschedctl", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def _special_file_commands(path: str, tmp_path: Path) -> list[list[str]]:
    return [
        ["validate", path],
        ["render", path, "--as", "config"],
        ["render", "x", "--as", "config", "--add-to", path],
        ["scheduler", "run", "--name", "x", "--policy", path],
        ["lab", "up", "--nodes-file", path, "--dir", str(tmp_path / "lab")],
    ]


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_special_files_answer_at_once(tmp_path: Path, kind: str) -> None:
    """Real processes: a FIFO with no writer must not block, /dev/zero must not be read."""
    if kind == "fifo":
        path = str(tmp_path / "pipe.yaml")
        os.mkfifo(path)
        expected = "is a FIFO (named pipe), not a regular file"
    else:
        path = "/dev/zero"
        expected = "is a character device, not a regular file"
    for args in _special_file_commands(path, tmp_path):
        started = time.monotonic()
        proc = _subprocess(args)
        assert time.monotonic() - started < 20
        assert proc.returncode == 3, (args, proc.stderr)
        assert expected in proc.stdout + proc.stderr, (args, proc.stdout, proc.stderr)
        assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("path", ["/dev/null", "/dev/urandom"])
def test_devices_are_not_files(cli: Callable[..., Result], tmp_path: Path, path: str) -> None:
    for args in _special_file_commands(path, tmp_path):
        result = cli(*args)
        assert result.exit_code == 3, (args, result.stderr)
        assert "not a regular file" in result.stdout + result.stderr


def test_lab_nodes_beyond_the_limit_are_a_usage_error(
    cli: Callable[..., Result], tmp_path: Path
) -> None:
    """`--nodes 1000000000` is refused by the option, before a node or a lab exists."""
    result = cli("lab", "up", "--nodes", "1000000000", "--dir", str(tmp_path / "lab"))
    assert result.exit_code == 2, result.stderr
    assert "1000000000 is not in the range 0<=x<=5000" in result.stderr
    assert not (tmp_path / "lab").exists()
